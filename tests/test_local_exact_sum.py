"""SUM and AVG of doubles on the local engine give Spark's exact sums, to the bit.

Spark's path sums doubles exactly (``runtime.operators.exact_sum``); the
local engine does the same steps in DuckDB (``runtime.local.exact_sum``).
Generated groups mix values whose plain sum depends on the order of
addition (0.1, 1e16 and 1, -0.0, values near the bands' edges at 2^-128
and 2^128, tiny and huge ones); every sum and average is compared by its
``repr`` with the Spark path's.
"""

from __future__ import annotations

import random

import pytest

from geaflow_sql import Session

EDGES = [2.0**-128, 2.0**128, 2.0**-96, 2.0**96, 2.0**32, 2.0**-32]


def _value(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        return ""  # null
    if kind == 1:
        return repr(rng.choice([0.1, 0.2, 0.3, 1e16, 1.0, -1e16, -0.0, 0.0]))
    if kind == 2:
        edge = rng.choice(EDGES)
        return repr(edge * rng.choice([1.0, 1.0 - 2.0**-53, 1.0 + 2.0**-52]) * rng.choice([1, -1]))
    if kind == 3:
        return repr(rng.uniform(-1, 1) * 10.0 ** rng.randrange(-40, 39))
    if kind == 4:
        return str(rng.randrange(-1000, 1000))
    return repr(rng.uniform(-100, 100))


def _outside(x: float) -> bool:
    """Is a nonzero ``x`` outside the exact sum's bands (2^-128 <= |x| < 2^128)?"""
    return x != 0 and not 2.0**-128 <= abs(x) < 2.0**128


@pytest.fixture(scope="module")
def session(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("exact_sum")
    s = Session(spark=spark, base_dir=str(folder))
    s.folder = folder  # type: ignore[attr-defined]
    return s


def _run(session, query: str, engine: str) -> tuple[list[str], str]:
    session.execute(f"SET geaflow.dsl.query.engine = {engine}")
    (result,) = session.execute(query)
    rows = sorted(repr(tuple(r)) for r in result.collect())
    return rows, result.extra.get("engine", "")


def _table(session, name: str, lines: list[str]) -> None:
    path = session.folder / f"{name}.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    session.execute(
        f"CREATE TABLE {name} (g bigint, x double, f float) "
        f"WITH (type='file', geaflow.dsl.file.path='{path}')"
    )


QUERY = (
    "SELECT g, sum(x) AS s, avg(x) AS a, sum(f) AS sf, avg(f) AS af, count(x) AS n "
    "FROM {t} GROUP BY g"
)


@pytest.mark.parametrize("seed", range(6))
def test_sums_of_doubles_are_sparks_exact_sums_on_the_local_engine(session, seed):
    rng = random.Random(seed)
    lines = []
    beyond: set[int] = set()  # groups that have a value outside the bands
    for _ in range(rng.randrange(50, 300)):
        g, x = rng.randrange(8), _value(rng)
        if x and _outside(float(x)):
            if g in beyond:
                continue  # (a second one goes to Spark: the next test)
            beyond.add(g)
        f = x if rng.random() < 0.5 and x and 1e-30 < abs(float(x)) < 1e30 else ""
        lines.append(f"{g},{x},{f}")
    # One value beyond the bands in a group is still summed locally.
    lines.append(f"8,{1e300!r},")
    _table(session, f"t{seed}", lines)
    query = QUERY.format(t=f"t{seed}")
    local, where = _run(session, query, "local")
    assert where == "local", where
    on_spark, _ = _run(session, query, "distributed")
    session.execute("SET geaflow.dsl.query.engine = auto")
    assert local == on_spark


def test_two_values_beyond_the_bands_in_a_group_are_summed_by_spark(session):
    # Their double sum depends on the order: Spark's answer, from Spark.
    _table(session, "beyond", ["1,1e300,", "1,-1e300,", "1,1.5,", "2,2.5,"])
    session.execute("SET geaflow.dsl.query.engine = auto")
    (result,) = session.execute(QUERY.format(t="beyond"))
    assert result.extra.get("engine", "").startswith("distributed"), result.extra
    rows = sorted(tuple(r) for r in result.collect())
    assert rows[0][:2] == (1, 1.5) and rows[1][:2] == (2, 2.5)


def test_without_exact_sums_a_sum_of_doubles_runs_on_spark(session):
    _table(session, "plain", ["1,0.1,", "1,0.2,"])
    session.execute("SET geaflow.dsl.sum.exact = false")
    try:
        session.execute("SET geaflow.dsl.query.engine = auto")
        (result,) = session.execute("SELECT sum(x) FROM plain")
        where = result.extra.get("engine", "")
        assert where.startswith("distributed") and "sum.exact" in where, where
    finally:
        session.execute("SET geaflow.dsl.sum.exact = true")
