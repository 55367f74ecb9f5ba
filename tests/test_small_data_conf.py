"""What makes a run of many small queries cheaper on the driver: the settings
of such a run (the test suite, the corpus runner) reach the driver JVM whole,
the quick JIT tier beside the engine's own driver options, not instead of
them; and a class PySpark looks up by name on each DataFrame call is found in
the JVM once (``runtime.spark_adapter.keep_class_lookups``)."""

from __future__ import annotations

from .py4j_commands import sent_commands


def _driver_jvm_arguments(spark) -> list[str]:
    jvm = spark.sparkContext._jvm  # noqa: SLF001 - reading the JVM's own flags
    args = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    return [str(a) for a in args]


def test_the_test_workers_driver_runs_the_quick_tier_and_keeps_the_engines_options(spark):
    from runtime.spark_adapter import QUICK_JIT

    args = _driver_jvm_arguments(spark)
    for flag in QUICK_JIT.split():
        assert flag in args, args
    # (the engine's own: Java's time zone, Spark's log settings)
    assert "-Duser.timezone=UTC" in args, args
    assert any(a.startswith("-Dlog4j2.configurationFile=") for a in args), args
    jvm = spark.sparkContext._jvm  # noqa: SLF001
    assert str(jvm.java.util.TimeZone.getDefault().getID()) == "UTC"


def _asked(sent: list[str], sub_command: str, name) -> list[str]:
    """The names asked for by the reflection commands of ``sub_command``
    among the commands ``sent`` (``name`` reads one from a command's lines)."""
    from py4j import protocol

    prefix = protocol.REFLECTION_COMMAND_NAME + sub_command
    return [name(c[len(prefix) :].split("\n")) for c in sent if c.startswith(prefix)]


def _lookups(sent: list[str]) -> list[str]:
    """The names the JVM is asked to find (py4j's command for an unknown
    member: a class, a package)."""
    from py4j import protocol

    return _asked(sent, protocol.REFL_GET_UNKNOWN_SUB_COMMAND_NAME, lambda lines: lines[0])


def _member_lookups(sent: list[str]) -> list[str]:
    """``Class.member`` names the JVM is asked to tell (a method, a field or
    an inner class)."""
    from py4j import protocol

    return _asked(
        sent,
        protocol.REFL_GET_MEMBER_SUB_COMMAND_NAME,
        lambda lines: f"{lines[0].rsplit('.', 1)[-1]}.{lines[1]}",
    )


def test_a_class_pyspark_looks_up_by_name_is_found_once_per_jvm(spark):
    from py4j.java_gateway import JavaClass, JavaPackage
    from pyspark.sql import functions as F

    jvm = spark.sparkContext._jvm  # noqa: SLF001
    with sent_commands(jvm._gateway_client) as sent:  # noqa: SLF001
        # DataFrame calls that look up PythonUtils and functions in PySpark
        df = spark.range(3).selectExpr("id", "id * 2 AS twice")
        df = df.where(F.expr("twice > 1")).select(F.col("id"))
        assert sorted(r.id for r in df.collect()) == [1, 2]
        first = _lookups(sent)
        df.selectExpr("id + 1 AS n").where(F.expr("n > 0")).collect()
        # (nothing asked again: the classes were kept)
        assert _lookups(sent) == first, _lookups(sent)
        assert isinstance(jvm.PythonUtils, JavaClass)
        # a package is still a package, and is asked each time
        sent.clear()
        assert isinstance(jvm.java, JavaPackage)
        assert isinstance(jvm.java, JavaPackage)
        assert _lookups(sent) == ["java", "java"], _lookups(sent)
        # a fully qualified class through its packages, as before
        assert str(jvm.java.lang.Integer.toString(7)) == "7"


def test_a_kept_class_keeps_its_methods_and_asks_for_its_fields_each_time(spark):
    from pyspark.sql import functions as F

    jvm = spark.sparkContext._jvm  # noqa: SLF001
    with sent_commands(jvm._gateway_client) as sent:  # noqa: SLF001
        df = spark.range(4).select(F.col("id"), F.expr("id * 3 AS t")).where(F.col("t") > 2)
        assert sorted(r.id for r in df.collect()) == [1, 2, 3]
        sent.clear()
        df = spark.range(4).select(F.col("id"), F.expr("id * 5 AS t")).where(F.col("t") > 5)
        assert sorted(r.id for r in df.collect()) == [2, 3]
        # (the same calls again: no method asked for again)
        assert _member_lookups(sent) == [], _member_lookups(sent)
        assert str(jvm.Long.toHexString(255)) == "ff"
        first = _member_lookups(sent)  # (asked once, unless an earlier test asked already)
        assert first in ([], ["Long.toHexString"]), first
        assert str(jvm.Long.toHexString(16)) == "10"
        assert _member_lookups(sent) == first, _member_lookups(sent)
        # a static field's value is read from the JVM each time
        assert jvm.Long.SIZE == 64
        assert jvm.Long.SIZE == 64
        assert _member_lookups(sent) == [*first, "Long.SIZE", "Long.SIZE"], _member_lookups(sent)
