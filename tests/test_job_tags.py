"""A cancel reaches every Spark job of the statement it cancels: the jobs
running when it comes, and any the statement starts after it, until the
statement ends (``runtime.jobs.JobTags``)."""

from __future__ import annotations

import threading
import time


def _long_count(spark):
    """A count of 10^10 rows that takes minutes: a thousand rows, each crossed
    with 10^7 (a task sees its kill flag between the thousand's rows)."""
    frame = spark.createDataFrame([(i,) for i in range(1000)], "x int")
    for k in range(7):
        ten = spark.createDataFrame([(i,) for i in range(10)], f"y{k} int")
        frame = frame.crossJoin(ten)
    return frame.count()


def test_a_job_the_statement_starts_after_the_cancel_is_cancelled_too(spark):
    from runtime.jobs import JobTags

    jobs = JobTags()
    between = threading.Event()
    cancelled = threading.Event()
    outcome: dict[str, object] = {}

    def statement():
        with jobs.tagged(spark):
            outcome["first"] = spark.range(3).count()  # a job done before the cancel
            between.set()
            assert cancelled.wait(30)
            started = time.monotonic()
            try:
                outcome["count"] = _long_count(spark)
            except Exception as err:  # noqa: BLE001 - Spark's error for a cancelled job
                outcome["error"] = str(err)
            outcome["seconds"] = time.monotonic() - started

    worker = threading.Thread(target=statement)
    worker.start()
    assert between.wait(60)
    jobs.cancel(spark)  # between the statement's two jobs: none runs now
    cancelled.set()
    worker.join(60)
    assert not worker.is_alive(), "the job started after the cancel ran on"
    assert outcome["first"] == 3 and "count" not in outcome, outcome
    assert "cancel" in str(outcome["error"]).lower(), outcome
    # The next statement's jobs run.
    with jobs.tagged(spark):
        assert spark.range(2).count() == 2
