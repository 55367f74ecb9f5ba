"""``spark_adapter.checkpoint_counting``: a frame checkpointed with counts
over its rows taken by the checkpoint's own job (what the searches' rounds
use instead of a count job each)."""

from __future__ import annotations

import random

import pytest


def _jobs(spark) -> int:
    ids = spark.sparkContext.statusTracker().getJobIdsForGroup(None) or []
    return max(ids, default=-1) + 1


@pytest.mark.parametrize("seed", range(4))
def test_counts_are_the_rows_counts_and_the_checkpoint_is_one_job(spark, seed):
    from runtime.spark_adapter import checkpoint_counting

    rng = random.Random(seed)
    rows = [(rng.randint(0, 9), rng.choice([True, False, None])) for _ in range(rng.randint(0, 60))]
    df = spark.createDataFrame(rows, "k int, ok boolean").where(f"k <> {rng.randint(0, 9)}")
    want = [tuple(r) for r in df.collect()]
    before = _jobs(spark)
    kept, counts = checkpoint_counting(df, rows="count(1)", ok="count_if(ok)", keys="max(k)")
    assert _jobs(spark) - before == 1
    assert sorted(map(tuple, kept.collect()), key=repr) == sorted(want, key=repr)
    assert counts["rows"] == len(want)
    assert counts["ok"] == sum(1 for _, ok in want if ok)
    # (no rows: the aggregate's null reads as 0)
    assert counts["keys"] == max((k for k, _ in want), default=0)
    # the rows are kept: reading them again runs no job of the rows' plan
    assert "LogicalRDD" in kept._jdf.queryExecution().analyzed().toString()  # noqa: SLF001
