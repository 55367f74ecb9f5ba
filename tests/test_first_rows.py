"""ORDER BY with LIMIT and OFFSET on the distributed path: the first rows in
order, whatever is planned above them.

Spark keeps a limit next to its sort only while at most one projection
separates them; a sink's formatting added above pushes projections below the
limit, and the limit then takes the first rows of the sorted partitions in the
order a single-partition shuffle delivers them (on a cluster, the order they
arrive in: GQLReturnTest.testReturn_005 wrote ids 2,1,1,1,6 for 6,5,4,4,3 on
the two-worker cluster).  ``relational.first_rows`` numbers the rows in order
instead.  The answers are checked against a Python oracle on generated tables
with ties, and the plan under two non-collapsing projections has no limit
that takes rows in arrival order.
"""

from __future__ import annotations

import random

import pytest

from tests.conftest import write


def table(session, tmp_path, rows: list[tuple[int, int, float]]) -> None:
    path = write(tmp_path / "t.txt", "".join(f"{i},{k},{v!r}\n" for i, k, v in rows))
    session.execute(
        "SET geaflow.dsl.query.engine = distributed;"
        f"CREATE TABLE t (id bigint, k int, v double) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}')"
    )


@pytest.mark.parametrize("seed", range(4))
def test_first_rows_match_an_oracle(session, tmp_path, seed):
    rng = random.Random(seed)
    rows = [(i, rng.randrange(6), rng.randrange(-50, 50) / 4) for i in range(rng.randrange(5, 60))]
    table(session, tmp_path, rows)
    for _ in range(6):
        limit, offset = rng.randrange(0, 12), rng.choice([0, 0, 1, 3, 7])
        # (k DESC, id) is a total order: the oracle's answer is the only one.
        want = sorted(rows, key=lambda r: (-r[1], r[0]))[offset : offset + limit]
        got = session.sql(
            f"SELECT id, v + 1000 AS w FROM t ORDER BY k DESC, id LIMIT {limit} OFFSET {offset}"
        ).collect()
        assert got == [(i, v + 1000) for i, _, v in want]
        # Ties on k alone: any rows of the boundary's k, but the same keys.
        keys = session.sql(f"SELECT k FROM t ORDER BY k LIMIT {limit}").collect()
        assert [k for (k,) in keys] == sorted(k for _, k, _ in rows)[:limit]


def test_a_limit_stays_with_its_sort_under_projections(session, tmp_path):
    from pyspark.sql import functions as F

    table(session, tmp_path, [(i, i % 3, i * 1.5) for i in range(40)])
    df = session.sql("SELECT id, v + 1000 AS w FROM t ORDER BY id DESC LIMIT 5").dataframe
    # As a text sink formats a double: its column read twice, which Spark
    # will not merge into the projection below (it would compute it twice).
    cols = df.columns
    w = F.col(cols[1]) * 2
    text = df.select(F.col(cols[0]).alias("a"), w.alias("b")).select(
        F.concat_ws(",", "a", F.when(F.isnan("b"), "NaN").otherwise(F.col("b").cast("string")))
    )
    plan = text._jdf.queryExecution().executedPlan().toString()
    assert "TakeOrderedAndProject" in plan
    assert "CollectLimit" not in plan and "GlobalLimit" not in plan
    got = [r[0] for r in text.collect()]
    assert got == [f"{i},{(i * 1.5 + 1000) * 2}" for i in range(39, 34, -1)]
