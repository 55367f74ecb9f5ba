"""A MATCH on Spark keeps the vertex and edge values it built for the next
statement that reads the same rows (``runtime/stores/frame_memo.py``): the
second run of a query asks the JVM for far less, and a write, a version
pinned with ``USE GRAPH g VERSION n``, another graph or a changed file under
a graph defined USING tables never reads values built before it."""

from __future__ import annotations

import pytest

from runtime.stores.frame_memo import FrameMemo

GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, age int),
  Vertex city (id bigint ID, age int),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, w bigint)
) WITH (storeType='{store}');
USE GRAPH g;
INSERT INTO g.person VALUES (1, 10), (2, 20), (3, 30);
INSERT INTO g.knows VALUES (1, 2, 5), (2, 3, 7);
"""
TWO_HOPS = "MATCH (a)-[e]->(b)-[f]->(c) RETURN a.id, c.id, e.w + f.w"
AGES = "MATCH (a:person)-[e]->(b) RETURN a.id, b.id, b.age"


def _run(session, query: str) -> tuple[list[tuple], int]:
    """The query's rows on Spark, and the py4j calls its DataFrames took to build."""
    (result,) = session.execute(query)
    rows = sorted(result.collect())
    assert result.extra["engine"].startswith("distributed")
    return rows, result.profile.calls["build"]


@pytest.mark.parametrize("store", ["memory", "rocksdb"])
def test_values_are_kept_until_the_rows_change(spark, tmp_path, store):
    from geaflow_sql import Session

    session = Session(spark=spark, base_dir=str(tmp_path))
    session.execute(GRAPH.format(store=store))
    session.execute("SET geaflow.dsl.profile = true; SET geaflow.dsl.query.engine = distributed")
    rows, first = _run(session, TWO_HOPS)
    assert rows == [(1, 3, 12)]
    again, second = _run(session, TWO_HOPS)
    assert again == rows
    # Each label's values (three vertex reads, two edge reads) are built once.
    assert second < first / 2, (first, second)

    # A write: the new rows are read (version 3 of a persistent graph).
    session.execute("INSERT INTO g.knows VALUES (3, 1, 1)")
    rows, _ = _run(session, TWO_HOPS)
    assert rows == [(1, 3, 12), (2, 1, 8), (3, 2, 6)]
    # A vertex written again replaces its row: its new age is read.
    session.execute("INSERT INTO g.person VALUES (2, 21)")
    assert _run(session, AGES)[0] == [(1, 2, 21), (2, 3, 30), (3, 1, 10)]
    if store != "memory":
        # A pinned version reads that version's rows, not the values kept.
        session.execute("USE GRAPH g VERSION 2")
        assert _run(session, TWO_HOPS)[0] == [(1, 3, 12)]
        assert _run(session, AGES)[0] == [(1, 2, 20), (2, 3, 30)]
        session.execute("USE GRAPH g")
        assert _run(session, AGES)[0] == [(1, 2, 21), (2, 3, 30), (3, 1, 10)]
    # The local engine agrees.
    session.execute("SET geaflow.dsl.query.engine = auto")
    (local,) = session.execute(AGES)
    assert local.extra["engine"] == "local"
    assert sorted(local.collect()) == [(1, 2, 21), (2, 3, 30), (3, 1, 10)]


def test_a_graph_of_the_same_shape_reads_its_own_rows(spark, tmp_path):
    from geaflow_sql import Session

    one = Session(spark=spark, base_dir=str(tmp_path / "one"))
    two = Session(spark=spark, base_dir=str(tmp_path / "two"))
    for session in (one, two):
        session.execute(GRAPH.format(store="memory"))
        session.execute("SET geaflow.dsl.query.engine = distributed")
    two.execute("INSERT INTO g.knows VALUES (3, 1, 1)")
    assert sorted(one.sql(TWO_HOPS).collect()) == [(1, 3, 12)]
    assert sorted(two.sql(TWO_HOPS).collect()) == [(1, 3, 12), (2, 1, 8), (3, 2, 6)]
    # Dropped and made again: the new graph's rows.
    one.execute("DROP GRAPH g")
    one.execute(GRAPH.format(store="memory").replace("(2, 3, 7)", "(2, 3, 9)"))
    assert sorted(one.sql(TWO_HOPS).collect()) == [(1, 3, 14)]


def test_the_memo_builds_once_per_input_objects_and_stays_bounded():
    memo = FrameMemo(size=2)
    built: list[str] = []

    def build(name: str):
        built.append(name)
        return object()

    a, b, c = object(), object(), object()
    first = memo.get((a,), "v", lambda: build("a"))
    assert memo.get((a,), "v", lambda: build("a again")) is first
    assert memo.get((a,), "e", lambda: build("a as e")) is not first  # another build of a
    memo.get((b,), "v", lambda: build("b"))  # evicts (a, v), the least recently used
    assert memo.get((a,), "v", lambda: build("a once more")) is not first
    memo.get((c, b), "v", lambda: build("c, b"))
    assert built == ["a", "a as e", "b", "a once more", "c, b"]


USING_GRAPH = """
CREATE TABLE people (id bigint, age int) WITH (type='file', geaflow.dsl.file.path='people.txt');
CREATE TABLE friends (src bigint, dst bigint, w bigint)
  WITH (type='file', geaflow.dsl.file.path='friends.txt');
CREATE GRAPH u (
  Vertex person USING people WITH ID(id),
  Edge knows USING friends WITH ID(src, dst)
) WITH (storeType='memory');
USE GRAPH u;
"""


def test_a_graph_using_tables_keeps_its_values_while_the_files_stay(spark, tmp_path):
    from geaflow_sql import Session

    (tmp_path / "people.txt").write_text("1,10\n2,20\n3,30\n")
    (tmp_path / "friends.txt").write_text("1,2,5\n2,3,7\n")
    session = Session(spark=spark, base_dir=str(tmp_path))
    session.execute(USING_GRAPH)
    session.execute("SET geaflow.dsl.profile = true; SET geaflow.dsl.query.engine = distributed")
    rows, first = _run(session, TWO_HOPS)
    assert rows == [(1, 3, 12)]
    again, second = _run(session, TWO_HOPS)
    assert again == rows and second < first / 2, (first, second)
    # The table's file changes: its new rows are read.
    (tmp_path / "friends.txt").write_text("1,2,5\n2,3,7\n3,1,1\n")
    assert _run(session, TWO_HOPS)[0] == [(1, 3, 12), (2, 1, 8), (3, 2, 6)]
    (tmp_path / "people.txt").write_text("1,10\n2,21\n3,30\n")
    assert _run(session, AGES)[0] == [(1, 2, 21), (2, 3, 30), (3, 1, 10)]
    # A label joined to itself: each side its own columns.
    assert _run(
        session,
        "MATCH (a:person)-[e]->(b:person), (b)-[f]->(c:person) "
        "WHERE a.age < c.age RETURN a.id, c.id",
    )[0] == [(1, 3)]
