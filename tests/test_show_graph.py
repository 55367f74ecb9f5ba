"""``SHOW GRAPH g [SAMPLE n]``: a graph's vertices and edges as rows.

The rows are the graph's vertices in the order of their label and id (the
first ``n`` with SAMPLE), each in the ``vertex`` column, then its edges
whose two ends are both among them, each in the ``edge`` column.  Checked
against an oracle on generated graphs (two vertex labels, edges between
them, to vertices that do not exist and from a vertex to itself), on the
engine's own choice and on Spark.
"""

from __future__ import annotations

import random

import pytest

from geaflow_sql import Session
from geaflow_sql.core.errors import GeaflowError

GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Vertex city (id bigint ID, size int),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double),
  Edge lives (s bigint SOURCE ID, t bigint DESTINATION ID)
) WITH (storeType='{store}');
USE GRAPH g;
"""


def _values(rows: list[tuple]) -> str:
    return ", ".join(
        "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")" for row in rows
    )


def _generated(session: Session, seed: int) -> tuple[list[tuple], list[tuple]]:
    """A random graph written into ``g``: its vertices as (label, id) and its
    edges as (label, source, target, weight)."""
    rng = random.Random(seed)
    ids = rng.sample(range(-30, 60), rng.randint(1, 25))
    people = ids[: len(ids) // 2 + 1]
    cities = ids[len(ids) // 2 + 1 :]
    ends = [*ids, 500]  # 500: no such vertex
    knows = [
        (rng.choice(ends), rng.choice(ends), rng.choice([None, 0.5, 2.0]))
        for _ in range(rng.randint(0, 40))
    ]
    lives = [(rng.choice(people), rng.choice(ends)) for _ in range(rng.randint(0, 10))]
    session.execute(f"INSERT INTO g.person VALUES {_values([(i, f'p{i}') for i in people])}")
    if cities:
        session.execute(f"INSERT INTO g.city VALUES {_values([(i, i * 10) for i in cities])}")
    if knows:
        session.execute(f"INSERT INTO g.knows VALUES {_values(knows)}")
    if lives:
        session.execute(f"INSERT INTO g.lives VALUES {_values(lives)}")
    vertices = [("person", i) for i in people] + [("city", i) for i in cities]
    edges = [("knows", s, t, w) for s, t, w in knows] + [("lives", s, t, None) for s, t in lives]
    return vertices, edges


def _shown(session: Session, text: str, engine: str = "") -> tuple[list[tuple], list[tuple]]:
    """The vertex rows (label, id) in order, and the edge rows (label,
    source, target, weight) in any order; no vertex row after an edge row.
    ``engine``: where the query must have run (any, when empty)."""
    (result,) = session.execute(text)
    assert result.extra.get("engine", "").startswith(engine), result.extra
    assert result.query is not None and result.query.columns == ["vertex", "edge"]
    rows = result.collect()
    kinds = ["v" if v is not None else "e" for v, _ in rows]
    assert kinds == sorted(kinds, reverse=True), kinds  # vertices first
    assert all((v is None) != (e is None) for v, e in rows)
    vertices = [(v["~label"], v["~id"]) for v, _ in rows if v is not None]
    edges = [(e["~label"], e["~src"], e["~dst"], e.get("w")) for _, e in rows if e is not None]
    return vertices, sorted(edges, key=repr)


@pytest.mark.parametrize("seed", range(4))
def test_a_sample_is_the_first_vertices_and_the_edges_among_them(spark, tmp_path, seed):
    session = Session(spark=spark, base_dir=str(tmp_path))
    session.execute(GRAPH.format(store="memory"))
    vertices, edges = _generated(session, seed)
    existing = {i for _, i in vertices}
    ordered = sorted(vertices)
    rng = random.Random(seed)
    for engine in ("auto", "distributed"):
        session.execute(f"SET geaflow.dsl.query.engine = {engine}")
        for n in (rng.randint(1, len(vertices)), len(vertices) + 1):
            sample = ordered[:n]
            kept = {i for _, i in sample}
            expected = sorted((e for e in edges if e[1] in kept and e[2] in kept), key=repr)
            # (a small graph in memory: the local engine runs it, unless told not to)
            where = "local" if engine == "auto" else "distributed"
            shown = _shown(session, f"SHOW GRAPH g SAMPLE {n}", where)
            assert shown == (sample, expected), (engine, n)
        # Without a sample: every vertex, every edge between two vertices.
        whole = sorted((e for e in edges if e[1] in existing and e[2] in existing), key=repr)
        assert _shown(session, "show graph g") == (ordered, whole), engine


def test_a_graph_read_at_an_older_version_is_shown_at_it(spark, tmp_path):
    session = Session(spark=spark, base_dir=str(tmp_path))
    session.execute(GRAPH.format(store="rocksdb"))
    session.execute("INSERT INTO g.person VALUES (1, 'a'), (2, 'b')")  # version 1
    session.execute("INSERT INTO g.knows VALUES (1, 2, 0.5)")  # version 2
    session.execute("INSERT INTO g.person VALUES (0, 'z')")  # version 3
    assert _shown(session, "SHOW GRAPH g SAMPLE 2") == (
        [("person", 0), ("person", 1)],
        [],
    )
    session.execute("USE GRAPH g VERSION 2")
    assert _shown(session, "SHOW GRAPH g SAMPLE 2") == (
        [("person", 1), ("person", 2)],
        [("knows", 1, 2, 0.5)],
    )
    # Another graph is the current one: SHOW GRAPH names its own, read at the
    # version the session reads of it.
    session.execute("CREATE GRAPH other (Vertex p (id bigint ID)) WITH (storeType='memory')")
    session.execute("USE GRAPH other")
    assert _shown(session, "SHOW GRAPH g")[0] == [("person", 1), ("person", 2)]
    session.execute("USE GRAPH g")  # back to its current version
    session.execute("USE GRAPH other")
    assert _shown(session, "SHOW GRAPH g") == (
        [("person", 0), ("person", 1), ("person", 2)],
        [("knows", 1, 2, 0.5)],
    )
    # A graph with no edge type: its vertices, an edge column of NULLs.
    session.execute("INSERT INTO other.p VALUES (7)")
    assert _shown(session, "SHOW GRAPH other SAMPLE 5") == ([("p", 7)], [])


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("SHOW GRAPH g SAMPLE 0", "SAMPLE takes from 1 to", 21),
        ("SHOW GRAPH g SAMPLE 3000000000", "SAMPLE takes from 1 to", 21),
        ("SHOW GRAPH nope SAMPLE 3", "unknown graph 'nope'", 12),
        ("SHOW GRAPH g SAMPLE", "syntax error", 20),
        ("SHOW GRAPH g SAMPLE -2", "syntax error", 21),
    ],
)
def test_a_bad_show_graph_is_a_located_error(spark, tmp_path, text, message, column):
    session = Session(spark=spark, base_dir=str(tmp_path))
    session.execute(GRAPH.format(store="memory"))
    with pytest.raises(GeaflowError) as caught:
        session.execute("\n" + text)
    err = caught.value
    assert message in err.format(), err.format()
    assert (err.line, err.column) == (2, column), err.format()


def test_a_null_struct_beside_one_whose_fields_are_never_null_is_fetched(spark):
    from runtime.spark_adapter import to_arrow

    df = spark.sql("SELECT named_struct('a', 1, 'b', id) AS s FROM range(2) UNION ALL SELECT NULL")
    table = to_arrow(df)
    assert table.column("s").to_pylist() == [{"a": 1, "b": 0}, {"a": 1, "b": 1}, None]
