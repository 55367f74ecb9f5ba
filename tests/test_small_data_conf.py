"""The settings of a run of many small queries (the test suite, the corpus
runner) reach the driver JVM whole: the quick JIT tier beside the engine's
own driver options, not instead of them."""

from __future__ import annotations


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
