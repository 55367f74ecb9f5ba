"""On Spark, a label of a persistent graph whose parts are small is matched
over the parts' rows read on the driver (``PersistentStore._label_frame``),
not over a Parquet scan and a ranking of its rows per hop: the same rows as
reading the parts with Spark, the newest row of a vertex written again, and
the version a reader asks for."""

from __future__ import annotations

import random

import pytest

from tests.spark_plans import plan_leaves

GRAPH = """
CREATE GRAPH p (
  Vertex person (id bigint ID, name varchar, age int),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, w double)
) WITH (storeType='rocksdb');
USE GRAPH p;
SET geaflow.dsl.query.engine = distributed;
"""
QUERIES = (
    "MATCH (a:person)-[e:knows]->(b:person)-[f:knows]->(c:person) "
    "RETURN a.id, b.name, c.age, e.w + f.w",
    "MATCH (a:person WHERE a.age > 30)-[e]-(b) RETURN a.name, b.id, e.w",
    "MATCH (a:person) RETURN a.id, a.name, a.age",
)


def _session(spark, folder, limit: int | None = None):
    from geaflow_sql import Session

    conf = {"geaflow.file.persistent.root": str(folder / "root")}
    if limit is not None:
        conf["geaflow.dsl.query.local.max.bytes"] = str(limit)
    session = Session(spark=spark, base_dir=str(folder), conf=conf)
    session.execute(GRAPH)
    return session


def _rows(session, query: str) -> tuple[list[tuple], set[str]]:
    (result,) = session.execute(query)
    assert result.extra["engine"].startswith("distributed")
    return sorted(result.collect(), key=repr), plan_leaves(result)


def test_small_parts_are_matched_as_rows_on_the_driver(spark, tmp_path):
    session = _session(spark, tmp_path)
    session.execute(
        "INSERT INTO p.person VALUES (1, 'ann', 20), (2, 'bo', 31), (3, 'cy', 40);"
        "INSERT INTO p.knows VALUES (1, 2, 0.5), (2, 3, 1.5)"
    )
    rows, leaves = _rows(session, QUERIES[0])
    assert rows == [(1, "bo", 40, 2.0)] and leaves == {"LocalRelation"}
    # A vertex written again: its newest row is matched.
    session.execute("INSERT INTO p.person VALUES (3, 'cy', 50), (2, 'bee', 31)")
    rows, leaves = _rows(session, QUERIES[0])
    assert rows == [(1, "bee", 50, 2.0)] and leaves == {"LocalRelation"}
    # Another session reads the graph's parts from its files, as rows too.
    other = _session(spark, tmp_path)
    assert _rows(other, QUERIES[0]) == (rows, leaves)


def test_parts_above_the_limit_are_read_by_spark(spark, tmp_path):
    session = _session(spark, tmp_path, limit=0)
    session.execute("INSERT INTO p.person VALUES (1, 'ann', 20), (1, 'al', 35)")
    rows, leaves = _rows(session, QUERIES[2])
    assert rows == [(1, "al", 35)] and "LocalRelation" not in leaves


@pytest.mark.parametrize("seed", [3, 4])
def test_matches_over_held_parts_equal_matches_over_spark_reads(spark, tmp_path, seed):
    rnd = random.Random(seed)
    ids = rnd.sample(range(1, 40), 10)
    (tmp_path / "held").mkdir()
    (tmp_path / "read").mkdir()
    held = _session(spark, tmp_path / "held")
    read = _session(spark, tmp_path / "read", limit=0)
    for _ in range(3):  # several writes: vertices written again, edges added
        names = ["NULL", "'ann'", "'bo'"]
        people = ", ".join(
            f"({rnd.choice(ids)}, {rnd.choice(names)}, "
            f"{rnd.choice(['NULL', str(rnd.randint(10, 60))])})"
            for _ in range(6)
        )
        knows = ", ".join(
            f"({rnd.choice(ids)}, {rnd.choice(ids)}, {rnd.choice(['NULL', '0.5', '-2.0'])})"
            for _ in range(8)
        )
        script = f"INSERT INTO p.person VALUES {people}; INSERT INTO p.knows VALUES {knows}"
        held.execute(script)
        read.execute(script)
    found = 0
    for query in QUERIES:
        a, a_leaves = _rows(held, query)
        b, b_leaves = _rows(read, query)
        assert a_leaves == {"LocalRelation"} and "LocalRelation" not in b_leaves
        assert a == b, query
        found += len(a)
    assert found > 0
