"""Real Spark servers on 127.0.0.1 for the scale-out tests: a standalone
cluster (a master and two workers, one core and 1 GiB each) and a Spark
Connect server, each started from the Spark that pip's pyspark ships (its
``bin/spark-class`` and ``bin/spark-submit``; pip's pyspark has no
``sbin/start-master.sh``) and stopped with the test session.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark

from .jvm_env import checkout_env, cluster_quick_jit

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env() -> dict[str, str]:
    """The environment every server (and the Python workers it starts) runs in:
    this checkout importable, this Python for the workers, loopback only, the
    quick JIT tier for the JVMs (``jvm_env``)."""
    return checkout_env(
        SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable
    )


def run_ok(args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    """Run a command in ``cwd`` with the servers' environment (or ``env``);
    it must succeed; its standard output."""
    proc = subprocess.run(
        args,
        cwd=cwd,
        env=env if env is not None else server_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def python_json(script: str, cwd: Path, timeout: float) -> Any:
    """Run a Python script in its own process; the JSON of its last line."""
    return json.loads(run_ok([sys.executable, "-c", script], cwd, timeout).strip().splitlines()[-1])


def _wait(what: str, ready: Any, procs: list[subprocess.Popen[bytes]], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited ({proc.returncode}): {log.read_text()[-3000:]}")
        with contextlib.suppress(OSError, ValueError):
            if ready():
                return
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not start in 90 s: {log.read_text()[-3000:]}")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2) -> Iterator[str]:
    """A standalone master and ``workers`` workers; yields the master URL."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "cluster.log"
    port, ui = free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs: list[subprocess.Popen[bytes]] = []
    with open(log, "ab") as out:
        procs.append(
            subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
                + ["--port", str(port), "--webui-port", str(ui)],
                env=cluster_quick_jit(server_env()),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        )
        url = f"spark://127.0.0.1:{port}"
        try:
            for i in range(workers):
                work = folder / f"worker{i}"
                work.mkdir(exist_ok=True)
                procs.append(
                    subprocess.Popen(
                        [spark_class, "org.apache.spark.deploy.worker.Worker", url]
                        + ["--host", "127.0.0.1", "--cores", "1", "--memory", "1g"]
                        + ["--webui-port", str(free_port()), "--work-dir", str(work)],
                        env=cluster_quick_jit(server_env()),
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )

            def alive() -> bool:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                    return int(json.load(r).get("aliveworkers", 0)) >= workers

            _wait("the standalone cluster", alive, procs, log)
            yield url
        finally:
            _stop(procs)


@contextlib.contextmanager
def connect_server(folder: Path, conf: dict[str, str] | None = None) -> Iterator[str]:
    """A Spark Connect server (``local[2]`` inside); yields its ``sc://`` URL."""
    from runtime.spark_adapter import DEFAULT_SPARK_CONF, local_jars

    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "connect.log"
    port = free_port()
    settings = {
        # What geaflow-sql sets on a session it starts and a client cannot
        # (static settings), as an operator would start the server for it.
        "spark.driver.extraJavaOptions": DEFAULT_SPARK_CONF["spark.driver.extraJavaOptions"],
        "spark.executor.extraJavaOptions": DEFAULT_SPARK_CONF["spark.executor.extraJavaOptions"],
        "spark.ui.enabled": "false",
        "spark.jars": local_jars({}),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        **(conf or {}),
    }
    args = [a for k, v in settings.items() if v for a in ("--conf", f"{k}={v}")]
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[2]"]
            + ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
            + [*args, "spark-internal"],
            env=server_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=folder,
        )
        try:

            def listening() -> bool:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True

            _wait("the Spark Connect server", listening, [proc], log)
            yield f"sc://127.0.0.1:{port}"
        finally:
            _stop([proc])
