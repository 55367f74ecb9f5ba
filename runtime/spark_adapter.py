"""The one module that talks to Spark below the DataFrame API.

Everything else in the runtime uses DataFrames only, so a job runs on local
Spark, a cluster, or a Spark Connect endpoint (``sc://host:port``).  Here live
session creation, Java checks, job tags for cancellation, GraphFrames
detection and the checkpoint directory.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from geaflow_sql.core.errors import ConfigError, ExecutionError

from . import jvm_archive

_lock = threading.Lock()
_shared: dict[str, Any] = {}

DEFAULT_SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # Spark keeps the status of past jobs, stages, tasks and SQL executions in
    # the driver's heap even with the UI off; a job of many small windows
    # and statements would keep a thousand of each.
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.ui.retainedTasks": "2000",
    "spark.sql.ui.retainedExecutions": "20",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    # GeaFlow (Java) semantics: a bad cast gives null, integer arithmetic wraps.
    "spark.sql.ansi.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC -Dlog4j2.configurationFile="
    + os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties"),
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.pythonUDF.arrow.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.sql.crossJoin.enabled": "true",
    # Spark would replace ${name} inside string literals (and bound parameters).
    "spark.sql.variable.substitute": "false",
    # A csv table's rows are checked whole (field count, every value's type),
    # whatever columns a query reads: see runtime/connectors/file.py.
    "spark.sql.csv.parser.columnPruning.enabled": "false",
    # Spark 4.3 compiles a UNION into its consumer's generated code, and a task
    # of such a stage can fail to read its plan back ("cannot assign instance
    # of DefaultSerializationProxy to field UnionExec.children"): met with a
    # union of two labels' vertices streamed through a cross join.
    "spark.sql.codegen.wholeStage.union.enabled": "false",
}

# The JVM's quick JIT tier only (C1; its code cache at the usual size, which
# the quick tier would cut to 48 MB).
QUICK_JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"

# For a run of many queries over a few rows each (the test suite, the
# conformance corpus): compiling generated code and re-planning adaptively cost
# more than they save there (measured on 33 conformance cases: about 20% of the
# time).  Results are the same; large jobs want Spark's defaults.
#
# The driver JVM of such a run spends its time planning, and over its first
# minutes the JIT's optimizing tier (C2) compiles Catalyst's code paths: 36% of
# a test worker JVM's CPU over its first four minutes went to C2's threads.
# With the quick tier only, runs of a few minutes take less CPU: the corpus
# (python -m geaflow_sql.conformance) 137 s instead of 186 s; the graph suites
# with rules off (python -m pytest -n 0 tests/test_rules_off_graph.py) 154 s
# instead of 223 s; two workers running that file and test_search_both_ways.py
# 169 s of wall time instead of 260 s.  Over the whole test suite (each worker's
# JVM lives 33 minutes) the two tiers came out even (pytest 1959 s against
# 2002 s): later on, C2's code pays back what compiling it cost.
SMALL_DATA_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.driver.extraJavaOptions": (
        DEFAULT_SPARK_CONF["spark.driver.extraJavaOptions"] + " " + QUICK_JIT
    ),
}

# Spark's own defaults for what SMALL_DATA_CONF changes (DEFAULT_SPARK_CONF
# lowers the shuffle partitions): to check that answers do not depend on them.
SPARK_DEFAULTS = {
    "spark.sql.shuffle.partitions": "200",
    "spark.sql.adaptive.enabled": "true",
}

# Settings under spark.sql. that only a starting Spark reads.
_STATIC_SQL_CONF = ("spark.sql.ui.retainedExecutions",)

# Runtime confs we set on a session we did not create ourselves.
_RUNTIME_CONF = (
    "spark.sql.ansi.enabled",
    "spark.sql.crossJoin.enabled",
    "spark.sql.variable.substitute",
    "spark.sql.csv.parser.columnPruning.enabled",
    "spark.sql.codegen.wholeStage.union.enabled",
)


def java_version() -> tuple[int, str] | None:
    """(major version, text) of the ``java`` Spark would start, or None if none."""
    java_home = os.environ.get("JAVA_HOME")
    candidates = []
    if java_home:
        candidates.append(os.path.join(java_home, "bin", "java"))
    found = shutil.which("java")
    if found:
        candidates.append(found)
    for exe in candidates:
        try:
            out = subprocess.run(
                [exe, "-version"], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.SubprocessError):
            continue
        text = (out.stderr or out.stdout).strip()
        m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
        if m:
            major = int(m.group(1))
            if major == 1 and m.group(2):
                major = int(m.group(2))
            # The version line (JAVA_TOOL_OPTIONS adds a "Picked up" line first).
            line = next(x for x in text.splitlines() if m.group(0) in x)
            return major, line
    return None


JAVA_HINT = (
    "Spark needs Java 17 or newer: install it (Debian/Ubuntu: 'apt-get install openjdk-17-jre-headless'; "
    "macOS: 'brew install openjdk@17') and put it on PATH or set JAVA_HOME."
)


def _driver_memory_chosen(spark_conf: dict[str, str]) -> bool:
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    return (
        "spark.driver.memory" in spark_conf
        or bool(os.environ.get("SPARK_DRIVER_MEMORY"))
        or "--driver-memory" in submit_args
        or "spark.driver.memory" in submit_args
    )


def check_java() -> str:
    """The version line of ``java -version`` of the Java Spark would start;
    a ConfigError when there is none or it is older than 17."""
    found = java_version()
    if found is None:
        raise ConfigError("no Java found. " + JAVA_HINT)
    major, text = found
    if major < 17:
        raise ConfigError(f"Java {major} found ({text}); " + JAVA_HINT)
    return text


def default_driver_memory() -> str:
    """The heap a local Spark gets when nobody chose one: a quarter of the
    machine's memory, between 1 GiB and 4 GiB.

    In local mode the driver JVM also runs every task, and Spark's own default
    (1 GiB) is too small for a long job that keeps graph versions and
    checkpointed windows: task serialization then fails with "Java heap space".
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "1g"
    gib = max(1, min(4, int(total // 4 // (1 << 30))))
    return f"{gib}g"


# The time zone each SparkSession had before a job set its own (by id).
_STARTING_ZONE: dict[int, str] = {}


def statement_time_zone(spark: Any, zone: str | None) -> str | None:
    """The zone a statement planned after ``use_time_zone(spark, zone)`` runs
    in (None when not known here), without asking Spark again."""
    return zone or _STARTING_ZONE.get(id(spark))


def use_time_zone(spark: Any, zone: str | None) -> None:
    """Make ``zone`` the session's time zone for the statements about to be
    planned, or give back the zone the session started with when None.

    Spark fixes a timestamp expression's zone when its DataFrame is analysed,
    so setting it before planning is enough, even for rows fetched later."""
    key = "spark.sql.session.timeZone"
    current = spark.conf.get(key)
    starting = _STARTING_ZONE.setdefault(id(spark), current)
    wanted = zone or starting
    if wanted == current:
        return
    try:
        spark.conf.set(key, wanted)
    except Exception as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ConfigError(
            f"time zone {wanted!r} is not one Spark knows (a region like 'Asia/Shanghai' "
            f"or an offset like '+08:00'): {text}"
        ) from None


def choose_master(master: str | None = None, remote: str | None = None) -> str | None:
    """The Spark to run on, from a master URL or a Spark Connect ``remote``
    (``sc://host:port``); at most one of them.  None: the default
    (``GEAFLOW_SQL_MASTER``, else ``SPARK_REMOTE``, else ``local[*]``)."""
    if remote is None:
        if master is not None and not master.strip():
            raise ConfigError("the Spark master URL is empty")
        return master
    if master is not None:
        raise ConfigError(
            f"give either a Spark master ({master}) or a Spark Connect remote ({remote}), not both"
        )
    if not remote.startswith("sc://") or len(remote) <= len("sc://"):
        raise ConfigError(
            f"a Spark Connect remote is a URL sc://host:port (Spark Connect's default "
            f"port is 15002), got {remote!r}"
        )
    return remote


def default_master() -> str:
    """The Spark used when none is named: ``GEAFLOW_SQL_MASTER``, else PySpark's
    own ``SPARK_REMOTE`` (a Spark Connect URL), else ``local[*]``."""
    return os.environ.get("GEAFLOW_SQL_MASTER") or os.environ.get("SPARK_REMOTE") or "local[*]"


def create_session(master: str | None = None, conf: dict[str, Any] | None = None) -> Any:
    """A SparkSession for ``master`` (local by default, or ``sc://`` for Spark Connect)."""
    from pyspark.sql import SparkSession

    spark_conf = dict(DEFAULT_SPARK_CONF)
    for k, v in (conf or {}).items():
        if k.startswith("spark."):
            spark_conf[k] = str(v)
    quiet_python_loggers()
    master = master or default_master()
    if master.startswith("sc://"):
        builder = SparkSession.builder.remote(master)
        for k, v in spark_conf.items():
            # The server's static settings were fixed when it started.
            if k in _RUNTIME_CONF or (k.startswith("spark.sql.") and k not in _STATIC_SQL_CONF):
                builder = builder.config(k, v)
        spark = builder.getOrCreate()
        job_progress(spark)  # starts listening to the server's progress reports
        return spark
    java_text = check_java()
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", _python())
    builder = SparkSession.builder.master(master).appName("geaflow-sql")
    if master.startswith("local") and not _driver_memory_chosen(spark_conf):
        spark_conf["spark.driver.memory"] = default_driver_memory()
    if not master.startswith("local"):
        # On a cluster, an executor whose cancelled task will not stop (a
        # nested-loop join looks at its kill flag only between the rows of
        # its streamed side: SPARK-33409) is replaced after a minute rather
        # than keeping the core busy (Spark's task reaper; in local mode the
        # executor is the driver, and the task runs on to its next row).
        spark_conf.setdefault("spark.task.reaper.enabled", "true")
        spark_conf.setdefault("spark.task.reaper.killTimeout", "60s")
    extra_jars = local_jars(spark_conf)
    if extra_jars:
        spark_conf["spark.jars"] = extra_jars
    archive = jvm_archive.driver_options(java_text, spark_conf)
    if archive:  # the driver JVM maps its classes from an archive (runtime.jvm_archive)
        options = spark_conf.get("spark.driver.extraJavaOptions", "")
        spark_conf["spark.driver.extraJavaOptions"] = f"{options} {archive}".strip()
    for k, v in spark_conf.items():
        builder = builder.config(k, v)
    try:
        with _jvm_stderr_to_log():
            spark = builder.getOrCreate()
    except Exception as err:  # Java gateway failures etc.
        raise ExecutionError(f"could not start Spark: {err}") from None
    try:
        spark.sparkContext.setLogLevel(os.environ.get("GEAFLOW_SQL_SPARK_LOG_LEVEL", "OFF"))
        checkpoint_dir = tempfile.mkdtemp(prefix="geaflow-sql-checkpoint-")
        spark.sparkContext.setCheckpointDir(checkpoint_dir)
    except Exception:  # pragma: no cover - Spark Connect has no SparkContext
        pass
    keep_class_lookups(spark)
    return spark


def keep_class_lookups(spark: Any) -> None:
    """Make the classes PySpark looks up by name on every DataFrame call
    (``PythonUtils`` for each list of columns or expressions, ``functions``
    for each function call, ``PythonSQLUtils`` for each Arrow transfer)
    found once per driver JVM instead of once per call.

    py4j answers each such lookup in the JVM, where a short name
    (``PythonUtils``, ``PythonSQLUtils``) is tried under each package PySpark
    imported until a class loads, and each miss searches every jar on the
    driver's classpath (about 280).  Those searches were 9% of the driver
    JVM's samples (JFR) while the graph suites ran on Spark with rules off,
    and a ``selectExpr`` plus a ``where(F.expr(...))`` on a small frame took
    8.3 ms with the lookups, 6.2 ms without (median of 10 runs of 100).  A
    class found stays the same class for the JVM's life, so the JVM view
    keeps what it found (packages and failures are asked again, as before).

    Each such class also keeps the static methods and inner classes it found
    by name: py4j asks the JVM what ``functions.col`` or ``PythonUtils.toSeq``
    is (a method, a field or a class) before every call, one more round trip
    (about 0.2 ms on a 2-core machine) per function in a column expression
    and per list handed to the JVM; ``select("*")`` made 7 round trips, 5
    with the members kept.  Nothing to do over Spark Connect (no JVM here)."""
    if is_connect(spark):
        return
    from py4j.java_gateway import JVMView

    try:
        jvm = spark.sparkContext._jvm  # noqa: SLF001 - the one allowed place
    except Exception:  # (a stopped session, or a stand-in: only a saving is lost)
        return
    view = _kept_classes_view()
    if isinstance(jvm, JVMView) and not isinstance(jvm, view):
        jvm.__class__ = view


@functools.lru_cache(maxsize=1)
def _kept_classes_view() -> type:
    from py4j.java_gateway import JavaClass, JavaMember, JVMView

    class KeptMembersClass(JavaClass):
        """A class that keeps each static method and inner class it found by
        name (a field's value is asked for each time: it may change)."""

        def __getattr__(self, name: str) -> Any:
            found = super().__getattr__(name)
            if isinstance(found, (JavaMember, JavaClass)):
                self.__dict__[name] = found
            return found

    class KeptClassesView(JVMView):
        """A JVM view that keeps each class it found by name."""

        def __getattr__(self, name: str) -> Any:
            found = super().__getattr__(name)
            if isinstance(found, JavaClass):
                found.__class__ = KeptMembersClass
                self.__dict__[name] = found
            return found

    return KeptClassesView


@contextlib.contextmanager
def _jvm_stderr_to_log() -> Any:
    """Send the Spark JVM's own stderr (start-up chatter, log lines) to a log file.

    The JVM inherits file descriptor 2 when it starts, so pointing fd 2 at a
    file while the session starts keeps the terminal for geaflow-sql's output.
    Set GEAFLOW_SQL_SPARK_STDERR=1 to see Spark's output instead.
    """
    if os.environ.get("GEAFLOW_SQL_SPARK_STDERR"):
        yield
        return
    log_dir = os.path.join(tempfile.gettempdir(), "geaflow-sql-logs")
    os.makedirs(log_dir, exist_ok=True)
    log_path = os.path.join(log_dir, f"spark-{os.getpid()}.log")
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(log_path, "ab") as log:
            os.dup2(log.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def quiet_python_loggers() -> None:
    """PySpark logs SQL errors as JSON on its own loggers; we report errors ourselves."""
    import logging

    for name in ("pyspark", "SQLQueryContextLogger", "py4j"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def prepare_session(spark: Any) -> None:
    """Apply the runtime settings GeaFlow semantics need to a session we were given."""
    quiet_python_loggers()
    keep_class_lookups(spark)
    if is_connect(spark):
        job_progress(spark)  # starts listening to the server's progress reports
    for key in _RUNTIME_CONF:
        # Some clusters make these read-only; GeaFlow semantics then rest on them.
        with contextlib.suppress(Exception):
            spark.conf.set(key, DEFAULT_SPARK_CONF[key])


def _python() -> str:
    import sys

    return sys.executable


def local_jars(conf: dict[str, Any]) -> str:
    """JDBC drivers installed by Debian packages, so jdbc tables work out of the box."""
    jars = [j for j in conf.get("spark.jars", "").split(",") if j]
    for path in KNOWN_DRIVER_JARS.values():
        if os.path.exists(path) and path not in jars:
            jars.append(path)
    extra = os.environ.get("GEAFLOW_SQL_JARS")
    if extra:
        jars += [j for j in extra.split(",") if j]
    return ",".join(jars)


# SparkSessions geaflow-sql started, with how many open Sessions use each:
# id -> [SparkSession, users].  The last Session to close stops it.
_started: dict[int, list[Any]] = {}


def acquire_session(master: str | None = None, conf: dict[str, Any] | None = None) -> Any:
    """A SparkSession for a geaflow-sql Session that was given none.

    If no Spark runs in this process yet, this starts one and counts the
    Sessions using it; ``release_session`` stops it when the last one closes.
    A Spark that was already running (the user's, a notebook's) is only used."""
    from pyspark import SparkContext

    with _lock:
        running = SparkContext._active_spark_context is not None
        spark = create_session(master, conf)
        entry = _started.get(id(spark))
        if entry is not None:
            entry[1] += 1
        elif not running:
            _started[id(spark)] = [spark, 1]
        return spark


def release_session(spark: Any) -> None:
    """A Session that acquired ``spark`` is done with it (see ``acquire_session``)."""
    with _lock:
        entry = _started.get(id(spark))
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _started[id(spark)]
    with contextlib.suppress(Exception):  # already stopped by the user
        spark.stop()


def shared_session(master: str | None = None, conf: dict[str, Any] | None = None) -> Any:
    """One SparkSession per process (tests and the conformance runner share it)."""
    with _lock:
        spark = _shared.get("spark")
        if spark is None:
            spark = create_session(master, conf)
            _shared["spark"] = spark
        return spark


def is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


# ---------------------------------------------------------------------------
# SQL projections handed to the JVM in one piece
# ---------------------------------------------------------------------------

# Between the texts of one projection: a NUL, which Spark's parser refuses
# outside a string literal (a text holding one, inside a literal of a
# user's value, goes PySpark's way: see select_sql).
_TEXTS_APART = "\x00"


def select_sql(df: Any, exprs: Sequence[str]) -> Any:
    """``df.selectExpr(*exprs)``, with the texts reaching the JVM in one
    string.

    PySpark hands a list to the JVM one item at a time: a round trip to make
    a Java list and one per text (about 0.2 ms each on a 2-core machine), so
    a projection of ten columns made twelve before Spark saw it.  Joined
    into one string, split in the JVM and wrapped as the Scala sequence
    ``selectExpr`` takes, it makes three whatever its width.  Over Spark
    Connect (a plan message, no round trips) and for a text holding the
    separator, PySpark's own call."""
    spark = df.sparkSession
    if len(exprs) < 2 or is_connect(spark) or any(_TEXTS_APART in e for e in exprs):
        return df.selectExpr(*exprs)
    from pyspark.sql.classic.dataframe import DataFrame

    split, wrap = _text_splitter(spark.sparkContext._gateway)  # noqa: SLF001
    texts = wrap(split(_TEXTS_APART.join(exprs)))
    return DataFrame(df._jdf.selectExpr(texts), spark)  # noqa: SLF001


@functools.lru_cache(maxsize=4)
def _text_splitter(gateway: Any) -> tuple[Any, Any]:
    """For one driver JVM: the call splitting a string at ``_TEXTS_APART``
    into a ``String[]`` and the one wrapping an array as a Scala ``Seq``
    (neither looked up again)."""
    from py4j.java_gateway import JavaMember
    from py4j.protocol import STATIC_PREFIX

    client = gateway._gateway_client  # noqa: SLF001
    pattern = gateway.jvm.java.util.regex.Pattern.compile(_TEXTS_APART)
    wrap = JavaMember(
        "unsafeWrapArray", None, STATIC_PREFIX + "scala.collection.immutable.ArraySeq", client
    )
    return pattern.split, wrap


# ---------------------------------------------------------------------------
# Floating-point numbers printed as the JVM prints them
# ---------------------------------------------------------------------------

# Values per batch handed to the JVM (one string of about 25 bytes each back).
_NUMBERS_PER_CALL = 1 << 20


def jvm_number_printer(spark: Any) -> Any | None:
    """A function printing a numpy array of doubles (or floats) as the
    driver's JVM does (``Double.toString``/``Float.toString``, which Spark's
    cast to string uses: ``1.0E-4``, ``1.0E7``, ``NaN``, ``-0.0``), for
    rows the driver writes itself; None over Spark Connect (no JVM here).

    No Spark job and no call per value: each batch goes to the JVM as one
    byte array, is read there as a DoubleBuffer into a double[], and comes
    back as one ``Arrays.toString`` text (a handful of py4j calls)."""
    if is_connect(spark):
        return None
    sc = spark.sparkContext
    jvm, gateway = sc._jvm, sc._gateway  # noqa: SLF001 - the one allowed place

    def printed(values: Any) -> list[str]:
        import numpy as np

        single = values.dtype == np.float32
        data = np.ascontiguousarray(values, dtype=">f4" if single else ">f8")
        out: list[str] = []
        for start in range(0, len(data), _NUMBERS_PER_CALL):
            chunk = data[start : start + _NUMBERS_PER_CALL]
            buffer = jvm.java.nio.ByteBuffer.wrap(bytearray(chunk.tobytes()))
            array = gateway.new_array(jvm.float if single else jvm.double, len(chunk))
            (buffer.asFloatBuffer() if single else buffer.asDoubleBuffer()).get(array)
            text = jvm.java.util.Arrays.toString(array)
            out.extend(text[1:-1].split(", ") if len(chunk) else [])
        return out

    return printed


# ---------------------------------------------------------------------------
# Job tags: cancel the Spark jobs of a statement
# ---------------------------------------------------------------------------


def _job_tags(spark: Any, connect_call: str, classic_call: str, tag: str) -> None:
    """Spark Connect keeps tags on the session, classic Spark on the SparkContext."""
    try:
        if is_connect(spark):
            getattr(spark, connect_call)(tag)
        else:
            getattr(spark.sparkContext, classic_call)(tag)
    except Exception:  # pragma: no cover - very old Spark
        pass


def tag_jobs(spark: Any, tag: str) -> None:
    """Tag the Spark jobs this thread starts from now on.

    Classic Spark keeps a session's operation tags per thread, so
    ``interruptTag`` called from another thread (a shell's UI thread) finds
    nothing to interrupt.  SparkContext job tags are also set per thread but
    cancelled globally, so classic sessions use those; Spark Connect resolves
    tags on the server and uses the session's tags.
    """
    _job_tags(spark, "addTag", "addJobTag", tag)


def untag_jobs(spark: Any, tag: str) -> None:
    _job_tags(spark, "removeTag", "removeJobTag", tag)


def cancel_jobs(spark: Any, tag: str) -> None:
    """Cancel every running Spark job tagged ``tag``, from any thread."""
    _job_tags(spark, "interruptTag", "cancelJobsWithTag", tag)


class _ConnectProgress:
    """Spark Connect's execution progress (the server reports it while an
    operation runs): the task counts of the running operation's stages."""

    def __init__(self) -> None:
        self.latest: tuple[int, int] | None = None

    def __call__(self, stages: Any, inflight_tasks: int, operation_id: Any, done: bool) -> None:
        if done or not stages:
            self.latest = None
            return
        self.latest = (
            sum(int(st.num_completed_tasks) for st in stages),
            sum(int(st.num_tasks) for st in stages),
        )


_connect_progress: weakref.WeakKeyDictionary[Any, _ConnectProgress] = weakref.WeakKeyDictionary()
# Its own lock: sessions are created (and start listening) under ``_lock``.
_progress_lock = threading.Lock()


def job_progress(spark: Any) -> tuple[int, int] | None:
    """(completed tasks, total tasks) of the running stages, for progress bars."""
    if is_connect(spark):
        with _progress_lock:
            handler = _connect_progress.get(spark)
            if handler is None:
                handler = _connect_progress[spark] = _ConnectProgress()
                with contextlib.suppress(Exception):  # a client without progress reports
                    spark.registerProgressHandler(handler)
        return handler.latest
    try:
        tracker = spark.sparkContext.statusTracker()
        return _stage_tasks(tracker, tracker.getActiveStageIds())
    except Exception:
        return None


def _stage_tasks(tracker: Any, stage_ids: Iterable[int]) -> tuple[int, int]:
    """(completed tasks, total tasks) of the stages ``stage_ids``."""
    done = total = 0
    for stage_id in stage_ids:
        stage = tracker.getStageInfo(stage_id)
        if stage is not None:
            done += stage.numCompletedTasks
            total += stage.numTasks
    return done, total


def tagged_job_progress(spark: Any, tags: list[str]) -> tuple[int, int]:
    """(completed tasks, total tasks) of the stages of the running jobs tagged
    with any of ``tags`` (so two sessions on one Spark each see their own);
    over Spark Connect, where jobs are not looked up by tag, those of every
    running stage (``job_progress``)."""
    if is_connect(spark):
        return job_progress(spark) or (0, 0)
    try:
        tracker = spark.sparkContext.statusTracker()
        scala_tracker = spark.sparkContext._jsc.sc().statusTracker()  # noqa: SLF001
        stages: set[int] = set()
        for tag in tags:
            for job_id in scala_tracker.getJobIdsForTag(tag):
                info = tracker.getJobInfo(int(job_id))
                if info is not None and info.status == "RUNNING":
                    stages.update(info.stageIds)
        return _stage_tasks(tracker, stages)
    except Exception:  # noqa: BLE001 - progress is shown when it can be had
        return 0, 0


# ---------------------------------------------------------------------------
# GraphFrames
# ---------------------------------------------------------------------------


def graphframes_available(spark: Any) -> bool:
    """Is GraphFrames' JVM package on the classpath (the Python package alone is not enough)?"""
    cached = _shared.get("graphframes")
    if cached is not None:
        return bool(cached)
    ok = False
    try:
        jvm = spark.sparkContext._jvm  # noqa: SLF001 - the one allowed place
        jvm.java.lang.Class.forName("org.graphframes.GraphFrame")
        ok = True
    except Exception:
        ok = False
    _shared["graphframes"] = ok
    return ok


# ---------------------------------------------------------------------------
# Iteration support: checkpoint folder, plan size
# ---------------------------------------------------------------------------


def set_checkpoint_dir(spark: Any, directory: str | None) -> None:
    """Point reliable checkpoints (``DataFrame.checkpoint``) at ``directory``."""
    if not directory or _shared.get("checkpoint_dir") == directory:
        return
    if "://" not in directory:
        os.makedirs(directory, exist_ok=True)
    if is_connect(spark):
        # A Connect server reads its checkpoint folder once, at start-up
        # (CANNOT_MODIFY_CONFIG when set later): when it has one, the
        # checkpoints go there; when not, say how to start the server.
        try:
            spark.conf.set("spark.checkpoint.dir", directory)
        except Exception:  # noqa: BLE001 - a static setting of the server
            current = None
            with contextlib.suppress(Exception):
                current = spark.conf.get("spark.checkpoint.dir", None)
            if current is None:
                raise ConfigError(
                    f"reliable checkpoints in {directory} need a Spark Connect server started "
                    f"with --conf spark.checkpoint.dir={directory} (the server reads it only "
                    "at start-up); or use geaflow.dsl.iteration.checkpoint.mode=local"
                ) from None
            # The server's folder holds them; geaflow-sql only needs them reliable.
    else:
        spark.sparkContext.setCheckpointDir(directory)
    _shared["checkpoint_dir"] = directory


def plan_size(df: Any) -> int:
    """Number of operators in a DataFrame's analyzed logical plan.

    Iterations use it to show that cutting lineage keeps plans from growing
    round after round.
    """
    if not is_connect(df.sparkSession):
        tree = df._jdf.queryExecution().analyzed().treeString()  # noqa: SLF001
        return sum(1 for line in tree.splitlines() if line.strip())
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain(extended=True)
    text = buffer.getvalue()
    section = text.split("== Analyzed Logical Plan ==", 1)[-1].split("== Optimized", 1)[0]
    lines = [line for line in section.splitlines()[2:] if line.strip()]
    return len(lines)


def known_empty(df: Any) -> bool:
    """Does Spark's optimizer already know the DataFrame has no rows (no job run)?

    A window past the end of a finite source is a filter that is always false,
    which the optimizer turns into an empty relation; incremental MATCH skips
    such writes.  False when unsure (and on Spark Connect, where the plan is
    not at hand).
    """
    if is_connect(df.sparkSession):
        return False
    try:
        rows = df._jdf.queryExecution().optimizedPlan().maxRows()  # noqa: SLF001
        return bool(rows.isDefined() and int(rows.get()) == 0)
    except Exception:  # noqa: BLE001 - an optimisation only
        return False


def collects_locally(df: Any) -> bool:
    """Is the frame's optimized plan rows Spark holds on the driver (a local
    relation: rows made there with projections and filters folded in), which
    ``collect`` returns without running a job?  (``toArrow`` always runs one.)
    False when unsure, and on Spark Connect."""
    if is_connect(df.sparkSession):
        return False
    try:
        plan = df._jdf.queryExecution().optimizedPlan()  # noqa: SLF001
        return str(plan.nodeName()) == "LocalRelation"
    except Exception:  # noqa: BLE001 - an optimisation only
        return False


def to_arrow(df: Any) -> Any:
    """``df``'s rows as an Arrow table.

    PySpark's ``toArrow`` refuses a NULL struct whose fields Spark types as
    never NULL (a vertex value's label, say, beside a NULL from the other
    side of a UNION): its children are NULL in those rows.  Such a frame is
    fetched again with every nested field typed as nullable (the values
    are the same; a cast that only loosens nullability)."""
    import pyarrow as pa

    try:
        return df.toArrow()
    except pa.ArrowInvalid:
        loosened = _nullable_nested(df)
        if loosened is None:
            raise
        return loosened.toArrow()


def _nullable_nested(df: Any) -> Any | None:
    """``df`` with the fields inside its structs, arrays and maps nullable,
    or None when they are all nullable already."""
    from pyspark.sql import functions as F

    fields = df.schema.fields
    loose = [loosened(f.dataType) for f in fields]
    if all(a == f.dataType for a, f in zip(loose, fields, strict=True)):
        return None
    names = [f"_c{i}" for i in range(len(fields))]
    cast = [F.col(n).cast(t).alias(n) for n, t in zip(names, loose, strict=True)]
    return df.toDF(*names).select(*cast).toDF(*[f.name for f in fields])


def loosened(dtype: Any) -> Any:
    """The Spark type ``dtype`` with every field, element and value inside it nullable."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(dtype, StructType):
        return StructType(
            [StructField(f.name, loosened(f.dataType), True, f.metadata) for f in dtype.fields]
        )
    if isinstance(dtype, ArrayType):
        return ArrayType(loosened(dtype.elementType), True)
    if isinstance(dtype, MapType):
        return MapType(loosened(dtype.keyType), loosened(dtype.valueType), True)
    return dtype


def observing(df: Any, **aggregates: str) -> tuple[Any, Callable[[Any], dict[str, int]]]:
    """``df`` with each SQL aggregate text of ``aggregates`` (``count(1)``,
    ``count_if(...)``) observed over its rows by name, and a function giving
    their values (a null as 0) once a job has run the returned frame.

    Classic Spark observes them within that job (a Spark Observation): no
    job of their own.  Spark Connect reports no observed metrics for a write
    or a checkpoint; there the function computes them by one job over the
    frame it is given (the rows as that job left them: the frame itself, or
    its checkpoint)."""
    import uuid

    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    if is_connect(df.sparkSession):

        def computed(over: Any) -> dict[str, int]:
            row = over.selectExpr(*[f"{sql} AS {name}" for name, sql in aggregates.items()]).first()
            return {name: int(row[name] or 0) for name in aggregates}

        return df, computed
    observed = Observation(f"geaflow_observed_{uuid.uuid4().hex[:12]}")
    out = df.observe(observed, *[F.expr(sql).alias(name) for name, sql in aggregates.items()])

    def values(_: Any) -> dict[str, int]:
        got = observed.get
        return {name: int(got.get(name) or 0) for name in aggregates}

    return out, values


def checkpoint_counting(df: Any, **counts: str) -> tuple[Any, dict[str, int]]:
    """``df`` checkpointed on the executors (``localCheckpoint``, eager), and
    the value of each SQL aggregate text of ``counts`` over its rows, by name
    (``observing``: taken by the checkpoint's own job, so an iteration that
    checkpoints a level and counts what it holds runs one job for both; over
    Spark Connect one more job, over the checkpointed rows)."""
    observed, values = observing(df, **counts)
    kept = observed.localCheckpoint(eager=True)
    return kept, values(kept)


def estimated_bytes(df: Any) -> int | None:
    """Spark's estimate of a frame's size (its optimized plan's statistics:
    file sizes scaled to the columns read, exact for local rows), or None
    when there is none to be had (Spark Connect's client has no statistics).
    An estimate, not a bound: a join's is its inputs' product, so large."""
    if is_connect(df.sparkSession):
        return None
    try:
        size = df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()  # noqa: SLF001
        return int(str(size))
    except Exception:  # noqa: BLE001 - an optimisation only
        return None


def has_unestimated_leaf(df: Any, unknown: int) -> bool:
    """Does a leaf of the frame's optimized plan estimate ``unknown`` bytes or
    more (Spark's ``defaultSizeInBytes`` for rows it knows nothing about)?"""
    try:
        leaves = df._jdf.queryExecution().optimizedPlan().collectLeaves().iterator()  # noqa: SLF001
        while leaves.hasNext():
            if int(str(leaves.next().stats().sizeInBytes())) >= unknown:
                return True
    except Exception:  # noqa: BLE001 - an optimisation only
        return False
    return False


def fits_broadcast(df: Any) -> bool:
    """Would Spark broadcast this frame as a join side on its own estimate?

    Spark's size estimate of the optimized plan (file sizes scaled to the
    columns read) against ``spark.sql.autoBroadcastJoinThreshold``.  False
    when unsure, when broadcasting is switched off, and on Spark Connect
    (whose client has no plan statistics): the join is then left to Spark.
    """
    if is_connect(df.sparkSession):
        return False
    try:
        # The session's value as Spark reads it (a user may write "10MB").
        conf = df.sparkSession._jsparkSession.sessionState().conf()  # noqa: SLF001
        threshold = int(conf.autoBroadcastJoinThreshold())
        if threshold <= 0:
            return False
    except Exception:  # noqa: BLE001 - an optimisation only
        return False
    size = estimated_bytes(df)
    return size is not None and size <= threshold


_PY4J_COUNTERS: list[Any] = []


def count_py4j_calls(counter: Any) -> None:
    """Call ``counter()`` on every py4j round trip from now on (once per
    counter; for the statement profile).  Nothing to count on Spark Connect."""
    if counter in _PY4J_COUNTERS:
        return
    try:
        from py4j.java_gateway import GatewayClient
    except ImportError:
        return
    if not _PY4J_COUNTERS:
        send = GatewayClient.send_command

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            for c in _PY4J_COUNTERS:
                c()
            return send(self, *args, **kwargs)

        GatewayClient.send_command = counted  # type: ignore[method-assign]
    _PY4J_COUNTERS.append(counter)


# ---------------------------------------------------------------------------
# User code and JDBC drivers on the executors
# ---------------------------------------------------------------------------

# The project's own packages and anything installed: executors have these
# as the driver does (geaflow-sql is installed on every worker, as PySpark is).
_NOT_SHIPPED = ("geaflow_sql", "grammar", "planner", "runtime", "pyspark")
_shipped: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def _installed(path: str) -> bool:
    import sysconfig

    installed = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(p) + os.sep) for p in installed)


def user_code_files(modules: Iterable[str]) -> list[str]:
    """The files that make ``modules`` importable elsewhere: a top-level
    module's ``.py`` file, or its package folder; none for the project's own
    packages, the standard library and installed packages."""
    import sys

    out: list[str] = []
    for name in modules:
        top = name.split(".", 1)[0]
        module = sys.modules.get(top)
        if top in _NOT_SHIPPED or module is None:
            continue
        file = getattr(module, "__file__", None)
        if file is None:  # a namespace package: its folder
            paths = list(getattr(module, "__path__", []))
            file = os.path.join(paths[0], "__init__.py") if paths else None
        if file is None or _installed(file):
            continue
        if os.path.basename(file) == "__init__.py":
            file = os.path.dirname(file)
        if file not in out:
            out.append(file)
    return out


def _zipped(folder: str) -> str:
    """A zip of a package folder (its .py files), for ``addPyFile``; made
    again when a file in it changes."""
    import hashlib
    import zipfile

    files = sorted(
        os.path.join(root, f)
        for root, _, names in os.walk(folder)
        if "__pycache__" not in root
        for f in names
        if f.endswith(".py")
    )
    stamp = hashlib.sha1(
        "".join(f"{f}:{os.stat(f).st_mtime_ns}" for f in files).encode()
    ).hexdigest()[:12]
    name = os.path.basename(folder.rstrip(os.sep))
    out_dir = os.path.join(tempfile.gettempdir(), "geaflow-sql-user-code", stamp)
    target = os.path.join(out_dir, f"{name}.zip")
    if not os.path.exists(target):
        os.makedirs(out_dir, exist_ok=True)
        parent = os.path.dirname(folder.rstrip(os.sep))
        partial = target + f".{os.getpid()}"
        with zipfile.ZipFile(partial, "w") as archive:
            for f in files:
                archive.write(f, os.path.relpath(f, parent))
        os.replace(partial, target)
    return target


def _runs_on_cluster(spark: Any) -> bool:
    """Classic Spark whose executors are other JVMs than the driver."""
    return not is_connect(spark) and not str(spark.sparkContext.master).startswith("local")


def ship_user_code(spark: Any, modules: Iterable[str]) -> list[str]:
    """Send the user's Python modules that define functions a job calls to
    the executors (``addPyFile`` on classic Spark, ``addArtifacts`` on Spark
    Connect), once per session; returns what was sent now.  Local Spark's
    Python workers start in the driver's folder with its PYTHONPATH, so
    nothing is sent there."""
    connect = is_connect(spark)
    if not connect and not _runs_on_cluster(spark):
        return []
    sent = _shipped.setdefault(spark, set())
    out = []
    for path in user_code_files(modules):
        if path in sent:
            continue
        file = _zipped(path) if os.path.isdir(path) else path
        try:
            if connect:
                spark.addArtifacts(file, pyfile=True)
            else:
                spark.sparkContext.addPyFile(file)
        except Exception as err:  # noqa: BLE001 - say which module could not go
            raise ExecutionError(
                f"could not send the Python code in {path} to the Spark executors: {err}"
            ) from None
        sent.add(path)
        out.append(path)
    return out


# Where Debian's packages put the JDBC drivers they ship, by driver class.
KNOWN_DRIVER_JARS = {
    "org.h2.Driver": "/usr/share/java/h2.jar",
    "org.postgresql.Driver": "/usr/share/java/postgresql.jar",
    "org.sqlite.JDBC": "/usr/share/java/sqlite-jdbc.jar",
}
_jars_added: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def driver_jar(driver_class: str | None, named: str | None) -> str | None:
    """The jar holding a JDBC driver: the one a table names, else where this
    machine's packages installed the driver (None when neither is known)."""
    if named:
        if "://" not in named and not os.path.exists(named):
            raise ConfigError(f"the JDBC driver jar {named} does not exist")
        return named
    jar = KNOWN_DRIVER_JARS.get(driver_class or "")
    return jar if jar is not None and os.path.exists(jar) else None


def add_jdbc_driver(spark: Any, jar: str) -> bool:
    """Put a JDBC driver jar on the session's class path and the executors'
    (``ADD JAR``; ``addArtifacts`` on Spark Connect, which uploads it), once
    per session, unless Spark was started with it in ``spark.jars``.  Works
    on a SparkSession the user built.  True when it was added now."""
    added = _jars_added.setdefault(spark, set())
    if jar in added:
        return False
    with contextlib.suppress(Exception):  # a session whose conf cannot be read
        if jar in str(spark.conf.get("spark.jars", "")).split(","):
            added.add(jar)
            return False
    try:
        if is_connect(spark):
            spark.addArtifacts(jar)
        else:
            spark.sql(f"ADD JAR '{jar}'")
    except Exception as err:  # noqa: BLE001 - name the jar in the error
        raise ExecutionError(f"could not add the JDBC driver jar {jar} to Spark: {err}") from None
    added.add(jar)
    return True


# The H2 TCP server started in a driver JVM for its in-memory databases, by
# SparkContext (one JVM): its port.
_h2_servers: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_h2_lock = threading.Lock()
_LOOPBACK = ("127.", "localhost", "::1", "[::1]")


def shared_memory_database(spark: Any, url: str) -> str:
    """The URL by which the driver and every executor reach the same
    in-memory H2 database ``jdbc:h2:mem:NAME``.

    Such a database lives in one JVM.  On local Spark (or a Spark Connect
    server, whose JVM this client cannot reach) every task runs in that JVM
    and the URL is kept.  On a cluster the executors are other JVMs, each of
    which would open an empty database of its own: the database is kept in
    the driver instead, which serves it with H2's TCP server, and the URL
    becomes ``jdbc:h2:tcp://DRIVER_HOST:PORT/mem:NAME``.  The server accepts
    connections from other machines only when the driver's host is not a
    loopback address, and serves while the driver runs.  A URL is kept as
    it is when the driver cannot load H2's server class (a user's session
    without the H2 jar on its class path), or names no database (a private
    one per connection)."""
    prefix = "jdbc:h2:mem:"
    name = url[len(prefix) :]
    if not url.lower().startswith(prefix) or name.split(";", 1)[0] == "":
        return url
    if not _runs_on_cluster(spark):
        return url
    sc = spark.sparkContext
    host = str(spark.conf.get("spark.driver.host", "127.0.0.1"))
    with _h2_lock:
        port = _h2_servers.get(sc)
        if port is None:
            args = ["-tcpPort", "0", "-ifNotExists"]
            if not host.startswith(_LOOPBACK):
                args.append("-tcpAllowOthers")
            try:
                array = sc._gateway.new_array(sc._jvm.java.lang.String, len(args))
                for i, arg in enumerate(args):
                    array[i] = arg
                port = int(sc._jvm.org.h2.tools.Server.createTcpServer(array).start().getPort())
            except Exception:  # noqa: BLE001 - no H2 server class: keep the URL
                return url
            _h2_servers[sc] = port
    return f"jdbc:h2:tcp://{host}:{port}/mem:{name}"
