"""The JIT setting of the throwaway JVMs the tests start.

A test that runs the CLI, a console server, a Spark Connect server or a
corpus run in a process of its own starts a Spark driver JVM that lives for
seconds.  Most of such a JVM's CPU goes to the JIT's optimizing tier (C2)
compiling Spark's start-up and planning code for a long run that never
comes: a one-statement script through ``geaflow-sql -f`` took 16-17 s of CPU
and 10 s of wall time with the JVM's defaults, 9 s and 7.5 s with the quick
tier only (``-XX:TieredStopAtLevel=1``).  CI is CPU-bound (both cores busy
throughout), so those JVMs get the quick tier, through ``SPARK_SUBMIT_OPTS``
(read by ``spark-submit`` for the driver it starts, beside the options
geaflow-sql sets).  The engine's own settings are unchanged, and so are the
JVMs whose start is what a test checks (``test_jvm_archive``), the executors
of a standalone cluster, and each test worker's own Spark (it lives for the
whole run and the optimizing tier pays for itself there).
"""

from __future__ import annotations

QUICK_JIT = "-XX:TieredStopAtLevel=1"


def quick_jit(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the quick JIT tier added for the Spark drivers and
    daemons started from it (changed in place and returned)."""
    for key in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
        options = env.get(key, "")
        if QUICK_JIT not in options.split():
            env[key] = f"{options} {QUICK_JIT}".strip()
    return env
