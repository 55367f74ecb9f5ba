"""Big statements on Spark: long VALUES, long chains, deep nesting.

INSERT ... VALUES of constants reaches Spark as one local relation; its rows
must be the ones the expression path gives (same values, types, NULLs), and a
VALUES with anything but constants still takes the expression path (as one
SQL text).  Chains of thousands of terms and nesting up to the parser's limit
run in Spark, whose own SQL parser has a depth limit of its own.
"""

from __future__ import annotations

import random

import pytest
from sqlglot import exp

from geaflow_sql.core import types as T
from planner.expressions import cast_to, literal_for, typed
from planner.logical import Field, Values
from runtime.operators.literal_rows import python_rows


def _row_text(r: tuple) -> str:
    def lit(v):
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        return repr(v)

    return "(" + ", ".join(lit(v) for v in r) + ")"


def test_twenty_thousand_rows_insert_and_read_back(session, tmp_path):
    rng = random.Random(7)
    rows = [
        (
            i - 10_000,
            f"name'{i}",  # (a NULL text does not survive the text format)
            None if i % 89 == 0 else rng.choice([-1.5, 0.25, 1e10, 3.0, -0.0]),
            i % 3 == 0,
        )
        for i in range(20_000)
    ]
    out = tmp_path / "out"
    session.execute(
        f"CREATE TABLE big (a bigint, b varchar, c double, d boolean) "
        f"WITH (type='file', geaflow.dsl.file.path='{out}')"
    )
    session.execute("INSERT INTO big VALUES " + ", ".join(_row_text(r) for r in rows))
    got = session.sql("SELECT count(*), sum(a), count(b), count(c), sum(c) FROM big").collect()[0]
    want_c = [r[2] for r in rows if r[2] is not None]
    assert tuple(got) == (
        20_000,
        sum(r[0] for r in rows),
        sum(r[1] is not None for r in rows),
        len(want_c),
        pytest.approx(sum(want_c)),
    )
    sample = session.sql("SELECT a, b, c, d FROM big WHERE a IN (-10000, -9903, 0, 9999)").collect()
    assert sorted(tuple(r) for r in sample) == sorted(
        r for r in rows if r[0] in (-10000, -9903, 0, 9999)
    )


@pytest.mark.parametrize("count", [3, 3000])
def test_constant_rows_give_what_the_expression_path_gives(session, count):
    rows = [(1, "'a''b'", "1.5", "true"), (-2, "NULL", "-2.5", "NULL"), (3, "'c'", "4", "false")]
    rows = [(k * 10 + a, b, c, d) for k in range(count // 3) for a, b, c, d in rows]

    def values(first) -> str:
        return "VALUES " + ", ".join(
            f"({first(a) if k == 0 else a}, {b}, {c}, {d})" for k, (a, b, c, d) in enumerate(rows)
        )

    constants = values(str)
    mixed = values(lambda a: f"abs({a})")  # no constant: the expression path for all rows
    a = session.sql(f"SELECT * FROM ({constants}) AS t(w, x, y, z)")
    b = session.sql(f"SELECT * FROM ({mixed}) AS t(w, x, y, z)")
    assert a.columns == b.columns
    got = sorted(map(tuple, a.collect()), key=repr)
    assert got == sorted(map(tuple, b.collect()), key=repr)
    assert len(got) == count and (-2, None, -2.5, None) in got and (1, "a'b", 1.5, True) in got


def _values(*rows: tuple[exp.Expression, ...], types: tuple) -> Values:
    return Values(tuple(rows), tuple(Field(f"f{i}", t) for i, t in enumerate(types)))


def test_which_values_are_constants():
    one = literal_for(1)
    big = cast_to(one, T.BIGINT)
    dbl = cast_to(one, T.DOUBLE)
    text = typed(exp.Literal.string("x"), T.VARCHAR)
    null = typed(exp.Null(), T.NULL)
    node = _values(
        (big, dbl, text, null),
        (big, dbl, null, text),
        types=(T.BIGINT, T.DOUBLE, T.VARCHAR, T.VARCHAR),
    )
    assert python_rows(node) == [(1, 1.0, "x", None), (1, 1.0, None, "x")]
    for value, t in [
        (cast_to(typed(exp.Literal.number("1.5D"), T.DOUBLE), T.BIGINT), T.BIGINT),  # truncates
        (cast_to(one, T.VARCHAR), T.VARCHAR),  # a number as text
        (typed(exp.Anonymous(this="now"), T.BIGINT), T.BIGINT),
        (literal_for(2**40), T.INTEGER),  # out of the column's range
    ]:
        assert python_rows(_values((value,), types=(t,))) is None


def test_long_chains_and_nesting_up_to_the_limit_run_in_spark(session, tmp_path):
    from grammar.depth import MAX_DEPTH

    data = tmp_path / "u.txt"
    data.write_text("1,30\n2,40\n")
    session.execute(
        f"CREATE TABLE u (id bigint, age int) WITH (type='file', geaflow.dsl.file.path='{data}')"
    )
    ors = " OR ".join(f"age = {i}" for i in [*range(1000, 4000), 30])
    assert session.sql(f"SELECT id FROM u WHERE {ors}").collect() == [(1,)]
    nots = "NOT " * 481
    assert session.sql(f"SELECT id FROM u WHERE {nots} age > 35").collect() == [(1,)]
    depth = MAX_DEPTH - 10
    nested = "abs(" * depth + "-age" + ")" * depth
    got = session.sql(f"SELECT {nested} AS x FROM u").collect()
    assert sorted(r[0] for r in got) == [30, 40]
    total = " + ".join("age" for _ in range(depth))
    got = session.sql(f"SELECT {total} AS x FROM u").collect()
    assert sorted(r[0] for r in got) == [30 * depth, 40 * depth]
