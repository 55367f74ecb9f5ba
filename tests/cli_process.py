"""Starting a real ``geaflow-sql`` process on a script, for the tests that kill one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .jvm_env import checkout_env


def start_cli(
    folder: Path,
    conf: dict[str, str],
    env_extra: dict[str, str] | None = None,
    quiet: bool = True,
) -> subprocess.Popen[str]:
    """``geaflow-sql -f job.gql -q`` in ``folder`` on one local core, with
    ``--conf`` for each of ``conf`` (and one shuffle partition), this checkout
    first on the Python path, the quick JIT tier for its JVM (``jvm_env``: these
    processes live seconds; the tests kill them), without ``-q`` unless
    ``quiet``."""
    env = checkout_env()
    env.update(env_extra or {})
    settings = {**conf, "spark.sql.shuffle.partitions": "1"}
    args = [a for key, value in settings.items() for a in ("--conf", f"{key}={value}")]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "geaflow_sql.cli",
            "-f",
            "job.gql",
            *(["-q"] if quiet else []),
            "--master",
            "local[1]",
            *args,
        ],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
