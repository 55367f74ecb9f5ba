"""Random SQL against DuckDB: geaflow-sql and DuckDB must return the same rows.

``tests/sqlgen.py`` builds random table sets (2-3 tables of small ints, strings,
doubles and NULLs) and random queries over them: inner, outer, cross and
three-way joins (equi and non-equi ON), WHERE with AND/OR/NOT, comparisons,
IS [NOT] NULL, IN lists, BETWEEN, LIKE, IS [NOT] DISTINCT FROM, EXISTS / IN /
scalar subqueries (uncorrelated and correlated through equalities), CASE,
COALESCE, NULLIF, integer and double arithmetic, string functions, GROUP BY
with HAVING, global aggregates (count(*), count(x), count(DISTINCT x), sum,
min, max, avg), DISTINCT, derived tables, UNION [ALL] and ORDER BY ... LIMIT
[OFFSET] over a total order.  Each query is written twice: in GeaFlow SQL and,
with GeaFlow's documented differences translated (integer division, SUM of no
values, default NULL order...; the list is in ``sqlgen``'s docstring), in
DuckDB SQL.  Results are compared as multisets of rows (as lists under ORDER
BY), numbers rounded to 6 significant digits so ``1`` equals ``1.0``.

A fixed number of queries runs by default (``DEFAULT_COUNT``, seed 0), in table
sets of ``QUERIES_PER_SET`` queries sharing one Session; every third set runs
with the optimizer off.  On demand::

    GEAFLOW_SQL_FUZZ=10000 pytest tests/test_sql_differential.py -n 2
    GEAFLOW_SQL_FUZZ_SEED=123 pytest \
        "tests/test_sql_differential.py::test_random_queries_agree_with_duckdb[set_4]"

``GEAFLOW_SQL_FUZZ`` without a seed picks a random one; a failure prints the
seed, the table set, both SQL texts and both results.  Table set ``i`` of a
seed is the same whatever the count, so its test id ``[set_i]`` reproduces it.
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from decimal import Decimal

import pytest

from tests import sqlgen

duckdb = pytest.importorskip("duckdb")

DEFAULT_COUNT = 300
QUERIES_PER_SET = 30
COUNT = int(os.environ.get("GEAFLOW_SQL_FUZZ") or DEFAULT_COUNT)


def _seed() -> int:
    if os.environ.get("GEAFLOW_SQL_FUZZ_SEED"):
        return int(os.environ["GEAFLOW_SQL_FUZZ_SEED"])
    if not os.environ.get("GEAFLOW_SQL_FUZZ"):
        return 0
    # A random seed, the same in every xdist worker of one run.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return int(run[:8], 16) if run else random.SystemRandom().randrange(10**9)


SEED = _seed()
SETS = math.ceil(COUNT / QUERIES_PER_SET)
SHOWN_FAILURES = 3  # failures printed per table set


def norm(v: object) -> object:
    """A value comparable across engines: numbers as 6-significant-digit floats."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "<true>" if v else "<false>"
    if isinstance(v, (int, float, Decimal)):
        f = float(v)
        if math.isnan(f):
            return "<NaN>"
        # -0.0 is 0.0 (SQL equality; Spark's DISTINCT and GROUP BY normalise it too).
        return f if math.isinf(f) else float(f"{f:.6g}") + 0.0
    return repr(v)


def sort_key(row: tuple) -> tuple:
    return tuple((v is not None, str(v)) for v in row)


def normalised(rows: list, ordered: bool) -> list[tuple]:
    out = [tuple(norm(v) for v in row) for row in rows]
    return out if ordered else sorted(out, key=sort_key)


def describe(
    seed: int,
    index: int,
    tables: list[sqlgen.Table],
    n: int,
    query: sqlgen.Query,
    mine: object,
    theirs: object,
) -> str:
    lines = [
        f"seed {seed}, table set {index}, query {n} "
        f"(GEAFLOW_SQL_FUZZ_SEED={seed} pytest "
        f"'{__file__}::test_random_queries_agree_with_duckdb[set_{index}]')",
        "tables:",
        sqlgen.geaflow_setup(tables),
        f"geaflow-sql: {query.geaflow}",
        f"duckdb:      {query.duckdb}",
        f"geaflow-sql rows: {mine}",
        f"duckdb rows:      {theirs}",
    ]
    if isinstance(mine, list) and isinstance(theirs, list) and not query.ordered:
        a, b = Counter(mine), Counter(theirs)
        lines.append(f"only in geaflow-sql: {sorted((a - b).elements(), key=sort_key)}")
        lines.append(f"only in duckdb:      {sorted((b - a).elements(), key=sort_key)}")
    return "\n".join(lines)


def run_set(spark, base_dir: str, index: int, count: int) -> list[str]:
    from geaflow_sql import Session

    rng = random.Random(f"{SEED}:{index}")
    tables = sqlgen.random_tables(rng)
    conf = {"geaflow.dsl.optimizer.enabled": "false"} if index % 3 == 2 else {}
    if index % 2:
        # Spark itself: else the queries the local engine translates run in DuckDB.
        conf["geaflow.dsl.query.engine"] = "distributed"
    session = Session(spark=spark, conf=conf, base_dir=base_dir)
    session.execute(sqlgen.geaflow_setup(tables))
    con = duckdb.connect()
    sqlgen.duckdb_setup(con, tables)
    gen = sqlgen.Gen(rng, tables)
    failures = []
    for n in range(count):
        query = gen.query()
        try:
            theirs: object = normalised(con.execute(query.duckdb).fetchall(), query.ordered)
        except duckdb.Error as err:  # a generator bug: report it like a disagreement
            theirs = f"DuckDB error: {err}"
        try:
            mine: object = normalised(session.sql(query.geaflow).collect(), query.ordered)
        except Exception as err:  # noqa: BLE001 - any engine error is a finding
            mine = f"{type(err).__name__}: {err}"
        if mine != theirs:
            failures.append(describe(SEED, index, tables, n, query, mine, theirs))
    con.close()
    return failures


@pytest.mark.parametrize("index", [pytest.param(i, id=f"set_{i}") for i in range(SETS)])
def test_random_queries_agree_with_duckdb(spark, tmp_path, index):
    count = min(QUERIES_PER_SET, COUNT - index * QUERIES_PER_SET)
    failures = run_set(spark, str(tmp_path), index, count)
    if failures:
        shown = "\n\n".join(failures[:SHOWN_FAILURES])
        pytest.fail(f"{len(failures)} of {count} queries disagree with DuckDB:\n\n{shown}")


def test_geaflow_side_of_each_translation(session):
    """The differences ``sqlgen`` translates are still the engine's behaviour.

    If one of these changes, the translation in ``sqlgen`` must change with it.
    """
    row = session.sql(
        "SELECT -7 / 2, 7 / (-2), -7 % 2, 7 / 0, 7 % 0, "
        "(SELECT sum(x) FROM (VALUES (CAST(NULL AS INT))) v(x)), "
        "(SELECT x FROM (VALUES (1), (CAST(NULL AS INT))) v(x) ORDER BY x LIMIT 1), "
        "(SELECT x FROM (VALUES (1), (CAST(NULL AS INT))) v(x) ORDER BY x DESC LIMIT 1)"
    ).collect()
    assert row == [(-3, -3, -1, None, None, 0, None, 1)]
