"""``spark_adapter.select_sql``: a projection's SQL texts reach the JVM as one
string, and the frame is the one ``selectExpr`` makes of the same texts."""

from __future__ import annotations

import random

import pytest

from .py4j_commands import sent_commands


def _texts(rng: random.Random, width: int) -> list[str]:
    """Projection texts over columns a, b, s of the test frame: names,
    arithmetic, string literals holding commas, quotes and a backslash,
    backquoted aliases, a star."""
    pool = [
        lambda i: "a",
        lambda i: f"a * {rng.randint(-5, 5)} + b AS `x, {i}`",
        lambda i: f"concat(s, ', ''q'' \\\\ {i}') AS s{i}",
        lambda i: f"CASE WHEN b > {rng.randint(0, 3)} THEN 'y' ELSE NULL END AS c{i}",
        lambda i: f"CAST(a AS STRING) AS `we``ird {i}`",
        lambda i: "*",
    ]
    return [rng.choice(pool)(i) for i in range(width)]


@pytest.mark.parametrize("seed", range(6))
def test_a_projection_gives_what_select_expr_gives(spark, seed):
    from runtime.spark_adapter import select_sql

    rng = random.Random(seed)
    df = spark.createDataFrame(
        [(i, i % 4, f"r{i}" if i % 3 else None) for i in range(7)], "a long, b int, s string"
    )
    for width in (1, 2, rng.randint(3, 40)):
        texts = _texts(rng, width)
        got, want = select_sql(df, texts), df.selectExpr(*texts)
        assert got.schema == want.schema, texts
        assert got.collect() == want.collect(), texts


def test_a_wide_projection_is_a_few_round_trips_whatever_its_width(spark):
    from runtime.spark_adapter import select_sql

    df = spark.range(3).selectExpr("id AS a")
    texts = [f"a + {i} AS c{i}" for i in range(30)]
    select_sql(df, texts)  # (the JVM's helpers found once)
    with sent_commands(spark.sparkContext._gateway._gateway_client) as sent:  # noqa: SLF001
        select_sql(df, texts)
        ours = len(sent)
        sent.clear()
        df.selectExpr(*texts)
        theirs = len(sent)
    assert ours <= 4, ours
    assert theirs >= len(texts), theirs


def test_a_text_holding_the_separator_goes_pysparks_way(spark):
    from runtime.spark_adapter import select_sql

    df = spark.range(2).selectExpr("id AS a")
    texts = ["a", "concat('x', char(0)) AS z", "'\x00' AS nul"]
    assert select_sql(df, texts).collect() == df.selectExpr(*texts).collect()
