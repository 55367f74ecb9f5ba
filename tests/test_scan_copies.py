"""On Spark, a graph label defined USING a small table is matched over the
table's rows read once on the driver (``runtime/connectors/scan_copies.py``),
not over its files parsed again at every hop: the same rows, the same errors,
and a change to the files is read."""

from __future__ import annotations

import random

import pytest

from geaflow_sql.core.errors import DataError
from tests.spark_plans import plan_leaves

GRAPH = """
CREATE TABLE people (id bigint, age int, name varchar)
  WITH (type='file', geaflow.dsl.file.path='people.txt');
CREATE TABLE friends (src bigint, dst bigint, w double)
  WITH (type='file', geaflow.dsl.file.path='friends.txt');
CREATE GRAPH u (
  Vertex person USING people WITH ID(id),
  Edge knows USING friends WITH ID(src, dst)
) WITH (storeType='memory');
USE GRAPH u;
SET geaflow.dsl.query.engine = distributed;
"""
QUERIES = (
    "MATCH (a:person)-[e:knows]->(b:person)-[f:knows]->(c:person) "
    "RETURN a.id, b.name, c.age, e.w + f.w",
    "MATCH (a:person WHERE a.age > 30)-[e]-(b) RETURN a.name, b.id, e.w",
    "MATCH (a:person)<-[e:knows]-(b:person) WHERE b.age < a.age RETURN a.id, b.id, b.age",
)


def _session(spark, folder, people: str, friends: str, copy_limit: int | None = None):
    from geaflow_sql import Session

    (folder / "people.txt").write_text(people)
    (folder / "friends.txt").write_text(friends)
    session = Session(spark=spark, base_dir=str(folder))
    session.execute(GRAPH)
    if copy_limit is not None:
        session.execute(f"SET geaflow.dsl.query.local.max.bytes = {copy_limit}")
    return session


def _random_graph(seed: int) -> tuple[str, str]:
    rnd = random.Random(seed)
    ids = rnd.sample(range(1, 60), 12)
    people = "".join(
        f"{i},{rnd.choice(['', str(rnd.randint(10, 60))])},{rnd.choice(['ann', 'bo', ''])}\n"
        for i in ids
    )
    friends = "".join(
        f"{rnd.choice(ids)},{rnd.choice(ids + [99])},{rnd.choice(['', '0.5', '-1.25', '3'])}\n"
        for _ in range(30)
    )
    return people, friends


def test_a_small_table_is_matched_over_its_rows_read_once(spark, tmp_path):
    session = _session(spark, tmp_path, "1,20,ann\n2,31,bo\n3,40,cy\n", "1,2,0.5\n2,3,1.5\n")
    (result,) = session.execute(QUERIES[0])
    assert result.extra["engine"].startswith("distributed")
    assert sorted(result.collect()) == [(1, "bo", 40, 2.0)]
    # Every hop reads rows held on the driver: no file is read in the plan.
    assert plan_leaves(result) == {"LocalRelation"}

    # A change to a file is read: its scan, and so its copy, is a new one.
    (tmp_path / "friends.txt").write_text("1,2,0.5\n2,3,1.5\n3,1,2.5\n")
    (result,) = session.execute(QUERIES[0])
    assert sorted(result.collect()) == [(1, "bo", 40, 2.0), (2, "cy", 20, 4.0), (3, "ann", 31, 3.0)]


@pytest.mark.parametrize("limit", ["query", "relation"])
def test_a_table_above_the_limit_is_read_from_its_files(spark, tmp_path, monkeypatch, limit):
    import runtime.stores.memory as memory

    # Either limit holds: geaflow.dsl.query.local.max.bytes, or the relation's
    # own below it (a local relation's rows go with the plan to every task).
    if limit == "relation":
        monkeypatch.setattr(memory, "RELATION_MAX_BYTES", 8)
    copy_limit = 8 if limit == "query" else None
    session = _session(spark, tmp_path, "1,20,ann\n2,31,bo\n", "1,2,0.5\n", copy_limit)
    (result,) = session.execute(QUERIES[1])
    assert sorted(result.collect()) == [("bo", 1, 0.5)]
    # The limit is per table: friends.txt (8 bytes) is held, people.txt (18) is read.
    assert plan_leaves(result) == {"LocalRelation", "LogicalRelation"}


def test_a_table_of_thousands_of_edges_is_read_from_its_files_by_default(spark, tmp_path):
    # 40,000 edges (320 KB of text, under geaflow.dsl.query.local.max.bytes):
    # over a local relation such a MATCH ran slower than over the files
    # (a relation's rows go with the plan to every task).
    rnd = random.Random(5)
    friends = "".join(f"{rnd.randint(1, 3)},{rnd.randint(1, 3)},0.5\n" for _ in range(40_000))
    session = _session(spark, tmp_path, "1,20,ann\n2,31,bo\n3,40,cy\n", friends)
    (result,) = session.execute(QUERIES[2])
    expected = sum(1 for line in friends.splitlines() if line.startswith(("2,3,", "1,3,", "1,2,")))
    assert len(result.collect()) == expected
    assert plan_leaves(result) == {"LocalRelation", "LogicalRelation"}


@pytest.mark.parametrize("seed", [1, 2])
def test_matches_over_the_copy_equal_matches_over_the_files(spark, tmp_path, seed):
    people, friends = _random_graph(seed)
    (tmp_path / "held").mkdir()
    (tmp_path / "files").mkdir()
    held = _session(spark, tmp_path / "held", people, friends)
    files = _session(spark, tmp_path / "files", people, friends, copy_limit=0)
    found = 0
    for query in QUERIES:
        (a,) = held.execute(query)
        (b,) = files.execute(query)
        assert plan_leaves(a) == {"LocalRelation"} and "LocalRelation" not in plan_leaves(b)
        rows = sorted(a.collect(), key=repr)
        assert rows == sorted(b.collect(), key=repr), query
        found += len(rows)
    assert found > 0  # the graphs are not so sparse that every answer is empty


@pytest.mark.parametrize("copy_limit", [None, 0])
def test_a_bad_line_fails_the_match_with_its_file_and_line(spark, tmp_path, copy_limit):
    session = _session(spark, tmp_path, "1,20,ann\n2,x,bo\n", "1,2,0.5\n", copy_limit)
    with pytest.raises(DataError) as raised:
        session.execute(QUERIES[1])
    assert "people.txt line 2: cannot read a row of people" in str(raised.value)
