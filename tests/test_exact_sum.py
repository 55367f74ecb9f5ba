"""SUM and AVG of doubles give the same value however the rows are split
(``runtime/operators/exact_sum.py``): generated values of every magnitude
and sign, summed over different numbers of partitions, in different orders,
with adaptive execution on and off, against an exact reference
(``math.fsum``, correctly rounded)."""

from __future__ import annotations

import math
import random

import pytest

from runtime.operators.exact_sum import exact_avg_sql, exact_sum_sql, helper_columns


def values(seed: int, n: int) -> list[float | None]:
    rng = random.Random(seed)
    out: list[float | None] = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.05:
            out.append(None)
        elif kind < 0.1:
            out.append(0.0)
        elif kind < 0.5:
            out.append(round(rng.uniform(-100, 100), rng.randint(0, 3)))  # prices, scores
        else:
            out.append(rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-40, 40))
    return out


def sums(spark, xs: list[float | None], partitions: int, seed: int) -> tuple[float, float]:
    from pyspark.sql import functions as F

    rows = [(x,) for x in xs]
    random.Random(seed).shuffle(rows)
    df = spark.createDataFrame(rows, "x double")
    for step in helper_columns("x", "h"):
        df = df.selectExpr("*", *step)
    df = df.repartition(partitions)
    got = df.groupBy().agg(
        F.expr(exact_sum_sql("h")[0]).alias("s"), F.expr(exact_avg_sql("h")).alias("a")
    )
    s, a = got.collect()[0]
    return s, a


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_sum_on_any_partitioning(spark, seed):
    xs = values(seed, 400)
    present = [x for x in xs if x is not None]
    exact = math.fsum(present)
    seen = set()
    for partitions, order in [(1, 0), (3, 1), (7, 2), (16, 3)]:
        seen.add(sums(spark, xs, partitions, order))
    assert len(seen) == 1, seen
    ((s, a),) = seen
    # Each value keeps 17 significant digits: close to the exact sum.
    scale = math.fsum(abs(x) for x in present)
    assert abs(s - exact) <= 1e-15 * scale
    assert a == pytest.approx(s / len(present), rel=1e-15)


def test_small_and_integral_sums_are_exactly_right(spark):
    xs = [0.1] * 10 + [19.2] * 5 + [1e-30, -1e-30, 2.5e20, -2.5e20]
    for p in (1, 4):
        s, a = sums(spark, xs, p, p)
        assert s == math.fsum(xs) == 1.0 + 96.0
        assert a == pytest.approx(97.0 / len(xs))


def test_nulls_zeros_and_non_finite_values(spark):
    assert sums(spark, [None, None], 2, 0) == (None, None)
    assert sums(spark, [0.0, -0.0, None], 2, 0) == (0.0, 0.0)
    s, _ = sums(spark, [1.0, float("inf"), 2.0], 2, 0)
    assert s == float("inf")
    s, _ = sums(spark, [1.0, float("inf"), float("-inf")], 2, 0)
    assert math.isnan(s)
    s, _ = sums(spark, [1.0, float("nan")], 2, 0)
    assert math.isnan(s)
    # Beyond the bands: summed as doubles, still there.
    s, _ = sums(spark, [1e300, 1e300, 1.0], 2, 0)
    assert s == 2e300


def test_a_statement_gives_one_answer_under_any_shuffle_settings(session, spark, tmp_path):
    """SUM and AVG of a DOUBLE column through a statement: the table read in
    one file or many, 2 or 200 shuffle partitions, adaptive on or off."""
    xs = [v for v in values(9, 300) if v is not None]
    keys = [i % 3 for i in range(len(xs))]
    answers = set()
    for files, shuffles, adaptive in [(1, "2", "false"), (5, "200", "true"), (3, "7", "true")]:
        folder = tmp_path / f"t{files}_{shuffles}"
        spark.createDataFrame(list(zip(keys, xs, strict=True)), "k int, v double").repartition(
            files
        ).write.parquet(str(folder))
        saved = (
            spark.conf.get("spark.sql.shuffle.partitions"),
            spark.conf.get("spark.sql.adaptive.enabled"),
        )
        spark.conf.set("spark.sql.shuffle.partitions", shuffles)
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
        try:
            session.execute(
                f"CREATE TABLE t{files} (k int, v double) WITH (type='file', format='parquet', "
                f"geaflow.dsl.file.path='{folder}'); SET geaflow.dsl.query.engine = distributed;"
            )
            rows = session.sql(
                f"SELECT k, sum(v) AS s, avg(v) AS a FROM t{files} GROUP BY k ORDER BY k"
            ).collect()
        finally:
            spark.conf.set("spark.sql.shuffle.partitions", saved[0])
            spark.conf.set("spark.sql.adaptive.enabled", saved[1])
        answers.add(tuple(tuple(r) for r in rows))
    assert len(answers) == 1, answers
    ((first, *_),) = answers
    k0 = [x for x, k in zip(xs, keys, strict=True) if k == 0]
    assert first[1] == pytest.approx(math.fsum(k0), rel=1e-12, abs=1e-12 * max(map(abs, k0)))
