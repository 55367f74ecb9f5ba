"""The environment of the geaflow-sql processes the tests start, and the
JIT setting of their throwaway JVMs.

A test that runs the CLI, a console server, a Spark Connect server or a
corpus run in a process of its own starts a Spark driver JVM that lives for
seconds.  Most of such a JVM's CPU goes to the JIT's optimizing tier (C2)
compiling Spark's start-up and planning code for a long run that never
comes: a one-statement script through ``geaflow-sql -f`` took 16-17 s of CPU
and 10 s of wall time with the JVM's defaults, 9 s and 7.5 s with the quick
tier only (``-XX:TieredStopAtLevel=1``).  CI is CPU-bound (both cores busy
throughout), so those JVMs get the quick tier, through ``SPARK_SUBMIT_OPTS``
(read by ``spark-submit`` for the driver it starts, beside the options
geaflow-sql sets); a standalone cluster's master, workers and the executors
they start get it through ``JAVA_TOOL_OPTIONS`` (``cluster_quick_jit``: a
worker starts an executor with the worker's environment; the notice each
such JVM prints goes to the cluster's logs).  The engine's own settings are
unchanged, and so are the JVMs whose start is what a test checks
(``test_jvm_archive``).  Each test worker's own Spark runs with the quick tier
as well, through ``SMALL_DATA_CONF`` (see ``runtime.spark_adapter``, which
measured it: less CPU in runs of minutes, even over the whole suite).

With the quick tier only, the JVM's code cache is 48 MB instead of 240 MB,
and a Spark Connect server that served the corpus sample for two minutes had
filled 44 MB of it (``jcmd <pid> Compiler.codecache``); a full cache stops
the JIT, so the usual size is asked for (``QUICK_JIT``).
"""

from __future__ import annotations

import os
from pathlib import Path

from runtime.spark_adapter import QUICK_JIT

ROOT = Path(__file__).resolve().parent.parent


def quick_jit(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the quick JIT tier added for the Spark drivers and
    daemons started from it (changed in place and returned)."""
    for key in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
        _add(env, key)
    return env


def checkout_env(**extra: str) -> dict[str, str]:
    """The environment of a geaflow-sql process a test starts: this process's,
    with ``extra``, this checkout first on the Python path, and the quick JIT
    tier for the JVMs started from it."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return quick_jit(env)


def cluster_quick_jit(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a standalone cluster's processes: every JVM started from it
    (the master, the workers and their executors) with the quick JIT tier
    (changed in place and returned)."""
    _add(env, "JAVA_TOOL_OPTIONS")
    return env


def _add(env: dict[str, str], key: str) -> None:
    options = env.get(key, "")
    if QUICK_JIT not in options:
        env[key] = f"{options} {QUICK_JIT}".strip()
