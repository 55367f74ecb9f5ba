"""Failures inside Spark reach the user with the message of what failed.

Spark runs subqueries and broadcasts in their own threads and rethrows their
failures wrapped in "Exception thrown in awaitResult:", which says nothing;
the error a user sees carries the innermost cause too.
"""

from __future__ import annotations

import pytest


def test_a_failure_inside_a_subquery_names_its_cause(spark):
    from runtime.errors import translate

    query = (
        "SELECT id, (SELECT max(raise_error(concat('inner failure ', CAST(x.id AS STRING)))) "
        "FROM range(3) x) FROM range(2)"
    )
    with pytest.raises(Exception) as caught:
        spark.sql(query).collect()
    message = str(translate(caught.value))
    assert "inner failure" in message
    assert "\n" not in message and "\tat " not in message  # one line, no Java stack


def test_a_local_spark_gets_a_heap_sized_to_the_machine(spark):
    from runtime.spark_adapter import default_driver_memory

    chosen = default_driver_memory()
    assert chosen in {"1g", "2g", "3g", "4g"}
    assert spark.sparkContext.getConf().get("spark.driver.memory") == chosen
    heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
    assert heap >= int(chosen[:-1]) * (1 << 30) * 0.9


@pytest.mark.parametrize(
    "text,kind,words",
    [
        (
            "Job aborted due to stage failure: ... java.lang.OutOfMemoryError: Java heap space",
            "ExecutionError",
            "ran out of memory",
        ),
        (
            "Job 12 cancelled because SparkContext was shut down",
            "ExecutionError",
            "Spark stopped",
        ),
        ("Job 12 cancelled part of cancelled job group 7", "CancelledError", "cancelled"),
    ],
)
def test_a_spark_that_stopped_is_not_reported_as_a_cancel(text, kind, words):
    """A job Spark abandoned because its JVM ran out of heap is an execution
    error naming memory; only a job somebody cancelled is a cancel."""
    from runtime.errors import translate

    err = translate(RuntimeError(text))
    assert type(err).__name__ == kind
    assert words in str(err)
