"""A real ``geaflow-sql serve`` process, for the console's tests."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from .jvm_env import checkout_env
from .spark_servers import free_port


def environment() -> dict[str, str]:
    """The environment of a server process: this checkout first on the Python
    path, the quick JIT tier for its JVM (``jvm_env``)."""
    return checkout_env()


class Server:
    """``geaflow-sql serve`` on ``host`` (a free port) in ``folder``, on one
    local core (or on the Spark Connect server ``remote``), started and
    ready; ``call`` and ``run`` send it requests."""

    def __init__(self, folder: Path, host: str, *extra: str, remote: str | None = None) -> None:
        self.host = host
        self.port = free_port()
        env = environment()
        spark = ["--remote", remote] if remote else ["--master", "local[1]"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "geaflow_sql.cli", "serve", "--host", host]
            + ["--port", str(self.port), *spark]
            + ["--conf", "spark.sql.shuffle.partitions=1", *extra],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.printed: list[str] = []
        reader = threading.Thread(target=self._read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 180
        while not any("console on http://" in line for line in self.printed):
            assert self.process.poll() is None, "".join(self.printed)
            assert time.monotonic() < deadline, "".join(self.printed)
            time.sleep(0.2)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.printed.append(line)

    def call(
        self,
        path: str,
        body: object = None,
        raw: bytes | None = None,
        token: str | None = None,
        method: str | None = None,
    ) -> tuple[int, dict]:
        """Ask the API: (status, the JSON answered)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        status, _, answer = self.fetch(path, headers, data, method, timeout=120)
        return status, json.loads(answer)

    def fetch(
        self,
        path: str,
        headers: dict | None = None,
        data: bytes | None = None,
        method: str | None = None,
        timeout: float = 60,
    ) -> tuple[int, dict, bytes]:
        """Request ``path`` (GET without ``data``): (status, headers, body)."""
        request = urllib.request.Request(
            f"http://{self.host}:{self.port}{path}", data=data, headers=headers or {}, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    def run(self, statement: str, **fields: object) -> tuple[int, dict]:
        return self.call("/api/statements", {"statement": statement, **fields})

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
