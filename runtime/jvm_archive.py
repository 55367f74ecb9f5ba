"""A class-data-sharing archive for the driver JVM geaflow-sql starts.

A driver JVM spends most of its start loading and verifying Spark's classes
(about 8 s to a session on a 2-core machine, 5 s with an archive).  Java 17
can write the classes a run loaded to a file (``-XX:ArchiveClassesAtExit``)
and map that file at the next start (``-XX:SharedArchiveFile``).  Writing it
makes that run about twice as slow, so no user's run writes it: the first
driver that finds none starts a separate process that runs a small Spark
workload, writes the archive under a temporary name and renames it into the
cache directory (``geaflow_sql.core.cache``) once its JVM has exited, so no
JVM ever maps a half-written file.  Drivers started after that use it.

The archive is named by what it depends on: the ``java`` Spark starts and
its version, and PySpark's jars.  A JVM whose classpath or options do not
fit an archive runs without it (its warnings are switched off), so a stale
archive costs time, never an answer.  ``GEAFLOW_SQL_JVM_ARCHIVE=off`` turns
the archive off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from geaflow_sql.core.cache import cache_dir

from .processes import running

SWITCH = "GEAFLOW_SQL_JVM_ARCHIVE"

# What a JVM mapping an archive is told: the archive, and none of the CDS
# warnings it prints on stdout when the archive does not fit (it then runs
# without it).
_QUIET = "-Xlog:cds*=off"

# A build that has not finished after this long is taken for dead, and a
# failed one is not tried again for a day.
_BUILD_TIMEOUT_S = 900
_RETRY_AFTER_S = 86400

# The builder reads only these of a driver's settings: what fixes the JVM,
# its classpath and the jars a driver fetches.
_BUILDER_CONF = ("spark.driver.memory", "spark.driver.extraJavaOptions", "spark.jars")


def enabled() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() not in ("off", "0", "false", "no")


def _java() -> str | None:
    """The ``java`` spark-submit starts (``JAVA_HOME``, else the PATH's)."""
    home = os.environ.get("JAVA_HOME")
    exe = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(exe) if exe and os.path.exists(exe) else None


def archive_path(java_text: str) -> str | None:
    """Where the archive for this Java (``java -version``'s version line) and
    this Spark is kept; None when Java, Spark's jars or a cache directory of
    our own cannot be found."""
    import pyspark

    java = _java()
    home = os.path.realpath(
        os.environ.get("SPARK_HOME") or os.path.dirname(os.path.abspath(pyspark.__file__))
    )
    jars = os.path.join(home, "jars")
    folder = cache_dir()
    if java is None or folder is None or not os.path.isdir(jars):
        return None
    key = hashlib.sha256()
    for part in (java, java_text, pyspark.__version__, home, *sorted(os.listdir(jars))):
        key.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for name in ("SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR"):
        key.update(f"{name}={os.environ.get(name, '')}\0".encode())
    return os.path.join(folder, f"jvm-{key.hexdigest()[:20]}.jsa")


def driver_options(java_text: str, spark_conf: dict[str, str]) -> str:
    """JVM options for a driver about to start with ``spark_conf``: the
    archive's when it is ready; otherwise none, after starting its build (with
    the same JVM settings, on local Spark) if nobody has."""
    if not enabled():
        return ""
    try:
        path = archive_path(java_text)
        if path is None:
            return ""
        if os.path.exists(path):
            return f"-XX:SharedArchiveFile={path} {_QUIET}"
        _start_build(path, {k: v for k, v in spark_conf.items() if k in _BUILDER_CONF})
    except OSError:  # a cache directory we cannot write: run without
        pass
    return ""


def _stale(lock: str) -> bool:
    """Is the build holding ``lock`` gone (its process dead, or running
    past any build's time)?"""
    try:
        with open(lock, encoding="utf-8") as f:
            pid = int(f.read().strip() or 0)
        age = time.time() - os.path.getmtime(lock)
    except (OSError, ValueError):
        return False  # being written, or just removed
    return age > _BUILD_TIMEOUT_S or (pid > 0 and not running(pid))


def _start_build(path: str, conf: dict[str, str]) -> None:
    failed = path + ".failed"
    if os.path.exists(failed) and time.time() - os.path.getmtime(failed) < _RETRY_AFTER_S:
        return
    folder = os.path.dirname(path)
    for name in os.listdir(folder):  # what a killed builder's JVM left
        left = os.path.join(folder, name)
        if name.endswith(".partial") and time.time() - os.path.getmtime(left) > _BUILD_TIMEOUT_S:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(left)
    lock = path + ".lock"
    if os.path.exists(lock) and _stale(lock):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return  # another driver started it
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    env[SWITCH] = "off"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    try:
        with open(path + ".log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "runtime.jvm_archive", path, json.dumps(conf)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=folder,
                start_new_session=True,
            )
        os.write(fd, str(proc.pid).encode())
    finally:
        os.close(fd)
    # Reaped when it ends, whoever started it lives on.
    threading.Thread(target=proc.wait, name="jvm-archive-builder", daemon=True).start()


def build(path: str, spark_conf: dict[str, str]) -> None:
    """Run a small Spark workload on local Spark with ``spark_conf``, in a
    JVM that writes its classes to ``path`` when it exits (the builder
    process's whole work)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    lock, failed = path + ".lock", path + ".failed"
    partial = f"{path}.{os.getpid()}.partial"
    work = tempfile.mkdtemp(prefix="geaflow-sql-jvm-archive-")
    proc: Any = None
    try:
        options = spark_conf.get("spark.driver.extraJavaOptions", "")
        builder = SparkSession.builder.master("local[2]").appName("geaflow-sql-archive")
        quiet = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
        for k, v in {**spark_conf, **quiet}.items():
            builder = builder.config(k, v)
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            f"{options} -XX:ArchiveClassesAtExit={partial} {_QUIET}",
        )
        spark = builder.getOrCreate()
        gateway = SparkContext._gateway  # noqa: SLF001 - the JVM we started
        proc = getattr(gateway, "proc", None)
        if gateway is None or proc is None:
            raise RuntimeError("the JVM's process is not known")
        spark.sparkContext.setLogLevel("OFF")
        _exercise(spark, work)
        spark.stop()
        gateway.shutdown()
        if proc.stdin is not None:
            proc.stdin.close()  # the gateway exits when its stdin closes
        code = proc.wait(timeout=_BUILD_TIMEOUT_S)
        if code != 0 or not os.path.exists(partial) or os.path.getsize(partial) == 0:
            raise RuntimeError(f"the JVM exited with {code} and wrote no archive")
        os.replace(partial, path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(failed)
    except BaseException as err:
        with open(failed, "w", encoding="utf-8") as f:
            f.write(f"{type(err).__name__}: {err}\n")
        if proc is not None and proc.poll() is None:
            proc.kill()  # else it writes the archive at its exit, after us
            proc.wait()
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        shutil.rmtree(work, ignore_errors=True)


def _exercise(spark: Any, work: str) -> None:
    """What a geaflow-sql driver does, in small: SQL of every common
    operator, text and parquet files, Arrow both ways, a Python UDF."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    rows = spark.range(2000).selectExpr(
        "id", "id % 7 AS k", "CAST(id AS STRING) AS s", "id * 0.5 AS d", "id % 3 = 0 AS b"
    )
    rows.createOrReplaceTempView("r")
    for text in (
        "SELECT k, sum(d), count(*), max(s), avg(id) FROM r GROUP BY k ORDER BY k",
        "SELECT a.k, count(*) FROM r a JOIN r b ON a.k = b.k AND a.id < b.id + 3 GROUP BY a.k",
        "SELECT id, rank() OVER (PARTITION BY k ORDER BY d DESC) FROM r WHERE b LIMIT 20",
        "SELECT k, collect_list(s) FROM r WHERE id < 50 GROUP BY k",
        "SELECT * FROM r WHERE id IN (SELECT id FROM r WHERE k = 1) UNION ALL "
        "SELECT * FROM r WHERE NOT EXISTS (SELECT 1 FROM r x WHERE x.id = r.id + 1)",
        "SELECT CAST(s AS INT), substring(s, 1, 2), concat(s, '-'), d / 3, "
        "CASE WHEN b THEN 1 ELSE 2 END, to_timestamp('2024-01-01 10:00:00') FROM r LIMIT 5",
    ):
        spark.sql(text).collect()
    text_dir, parquet_dir = os.path.join(work, "text"), os.path.join(work, "parquet")
    rows.write.csv(text_dir)
    spark.read.schema(rows.schema).csv(text_dir).groupBy("k").count().collect()
    spark.read.text(text_dir).count()
    rows.write.parquet(parquet_dir)
    spark.read.parquet(parquet_dir).where("k = 2").toArrow()
    table = pa.table({"x": list(range(100)), "y": [str(i) for i in range(100)]})
    spark.createDataFrame(table.to_pandas()).selectExpr("x + 1", "upper(y)").toArrow()
    plus = F.udf(lambda v: v + 1, "long")
    rows.select(plus("id")).where("id < 10").collect()
    cached = rows.where("k < 3").localCheckpoint()
    cached.join(rows, "id").count()


if __name__ == "__main__":
    build(sys.argv[1], json.loads(sys.argv[2]))
