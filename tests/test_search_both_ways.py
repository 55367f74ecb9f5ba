"""Shortest walks between two bound ends, searched from both ends on Spark
(runtime/operators/both_ways.py), against what a grid's walks must be and
against the search from the starts alone (two ends bound by two patterns
are a cross join, which the local engine leaves to Spark).  The Kuzu
differential test (test_kuzu_beyond.test_searches_between_bound_ends_agree_with_kuzu)
takes this path too, on generated graphs and searches."""

from __future__ import annotations

from collections import Counter
from math import comb

import pytest

from runtime.operators import both_ways

SIDE = 6
# Cells a walk with a loop body of "y.p = 0" may not pass (none in a corner).
BLOCKED = {(1, 1), (1, 2), (2, 4), (3, 1), (3, 3), (4, 4)}


def cell(i: int, j: int) -> int:
    return i * 10 + j


def grid_script() -> str:
    """A SIDE x SIDE grid, an edge right and one down from every cell."""
    cells = [(i, j) for i in range(SIDE) for j in range(SIDE)]
    vertices = ", ".join(f"({cell(i, j)}, {int((i, j) in BLOCKED)})" for i, j in cells)
    edges = [
        f"({cell(i, j)}, {cell(i + di, j + dj)})"
        for i, j in cells
        for di, dj in ((0, 1), (1, 0))
        if i + di < SIDE and j + dj < SIDE
    ]
    return f"""
CREATE GRAPH grid (Vertex A (id bigint ID, p bigint),
  Edge R (src bigint SOURCE ID, dst bigint DESTINATION ID)) WITH (storeType='memory');
USE GRAPH grid;
INSERT INTO grid.A(id, p) VALUES {vertices};
INSERT INTO grid.R(src, dst) VALUES {", ".join(edges)};
"""


def lattice_walks(blocked: set[tuple[int, int]]) -> int:
    """The walks right and down from the top-left cell to the bottom-right
    one that pass no blocked cell."""
    ways = [[0] * SIDE for _ in range(SIDE)]
    for i in range(SIDE):
        for j in range(SIDE):
            if (i, j) in blocked:
                continue
            ways[i][j] = 1 if i == j == 0 else (i and ways[i - 1][j]) + (j and ways[i][j - 1])
    return ways[-1][-1]


@pytest.fixture(scope="module")
def grid(spark, tmp_path_factory):
    from geaflow_sql import Session

    session = Session(spark=spark, base_dir=str(tmp_path_factory.mktemp("grid")))
    session.execute(grid_script())
    return session


@pytest.fixture
def searched(monkeypatch):
    """Runs a query on Spark as chosen, then with the search from both ends
    turned off: the rows, which must be the same both times; ``.runs`` how
    many times the search from both ends ran."""
    search, choose = both_ways.search_both_ways, both_ways.pairs_to_meet

    class Searched:
        runs = 0

        def __call__(self, session, query: str) -> Counter:
            session.execute("SET geaflow.dsl.query.engine = distributed")
            monkeypatch.setattr(both_ways, "pairs_to_meet", choose)
            chosen = rows(session.execute(query)[0])
            monkeypatch.setattr(both_ways, "pairs_to_meet", lambda needs: 0)
            from_starts = rows(session.execute(query)[0])
            assert chosen == from_starts, query
            return chosen

    counted = Searched()

    def count(*args, **kwargs):
        counted.runs += 1
        return search(*args, **kwargs)

    monkeypatch.setattr(both_ways, "search_both_ways", count)
    return counted


def rows(result) -> Counter:
    """A result's rows, a list of vertices in them as a tuple of their ids."""
    return Counter(
        tuple(tuple(v["~id"] for v in x) if isinstance(x, list) else x for x in r)
        for r in result.collect()
    )


def walk_ok(ids: list[int], steps: tuple[int, ...]) -> bool:
    return all(b - a in steps for a, b in zip(ids, ids[1:], strict=False))


@pytest.mark.parametrize(
    "pattern, first, last, steps",
    [
        ("(a)-[e]->{1,}(b)", 0, 55, (1, 10)),
        # (walked against the edges: from the bottom-right cell up and left)
        ("(a)<-[e]-{1,}(b)", 55, 0, (-1, -10)),
        # (either way: the shortest walks are still the 252 monotone ones)
        ("(a)-[e]-{1,12}(b)", 0, 55, (1, 10)),
    ],
)
def test_all_shortest_walks_across_a_grid(grid, searched, pattern, first, last, steps):
    found = searched(
        grid,
        f"MATCH (a WHERE a.id = {first}), (b WHERE b.id = {last}), "
        f"p = ALL SHORTEST {pattern} RETURN length(p), nodes(p)",
    )
    assert searched.runs == 1
    walks = [list(ids) for (_, ids), n in found.items() for _ in range(n)]
    assert {length for length, _ in found} == {10}
    assert len(walks) == comb(10, 5) == len({tuple(w) for w in walks})
    assert all(w[0] == first and w[-1] == last and walk_ok(w, steps) for w in walks)


def test_a_loop_body_holds_between_the_ends_and_at_the_end(grid, searched):
    """``(b WHERE b.p = 0)`` after the run is GeaFlow's loop body: every
    vertex after an edge passes it, so the walks avoid the blocked cells
    (the corners are not blocked)."""
    found = searched(
        grid,
        "MATCH (a WHERE a.id = 0), (b WHERE b.id = 55), "
        "p = ALL SHORTEST (a)-[e]->{1,}(b WHERE b.p = 0) RETURN length(p), nodes(p)",
    )
    assert searched.runs == 1
    walks = [list(ids) for (_, ids), n in found.items() for _ in range(n)]
    assert len(walks) == lattice_walks(BLOCKED) > 0
    blocked_ids = {cell(i, j) for i, j in BLOCKED}
    assert all(walk_ok(w, (1, 10)) and not blocked_ids & set(w) for w in walks)
    # (an end failing the body has no walk: 11 is blocked; 55 is reached)
    some = searched(
        grid,
        "MATCH (a WHERE a.id IN (0, 1)), (b WHERE b.id IN (55, 11)), "
        "p = ANY SHORTEST (a)-[e]->{1,}(b WHERE b.p = 0) RETURN a.id, b.id, length(p)",
    )
    assert searched.runs == 2
    assert some == Counter({(0, 55, 10): 1, (1, 55, 9): 1})


def test_any_shortest_and_a_walk_of_no_edges(grid, searched):
    """ANY: one walk per pair; ``{0,}``: a pair of one vertex is its own
    walk of no edges; an unreachable pair has none."""
    found = searched(
        grid,
        "MATCH (a WHERE a.id IN (0, 22, 55)), (b WHERE b.id IN (22, 55)), "
        "p = ANY SHORTEST (a)-[e]->{0,}(b) RETURN a.id, b.id, length(p)",
    )
    assert searched.runs == 1
    assert found == Counter(
        {(0, 22, 4): 1, (0, 55, 10): 1, (22, 22, 0): 1, (22, 55, 6): 1, (55, 55, 0): 1}
    )


def test_one_start_and_many_ends_search_from_the_start(grid, searched):
    """More ends than starts: the one-sided search (it reaches them all at
    once), with the same answers."""
    found = searched(
        grid,
        "MATCH (a WHERE a.id = 0), (b WHERE b.id IN (5, 50, 55, 33)), "
        "p = ANY SHORTEST (a)-[e]->{1,}(b) RETURN b.id, length(p)",
    )
    assert searched.runs == 0
    assert found == Counter({(5, 5): 1, (50, 5): 1, (55, 10): 1, (33, 6): 1})


def test_a_walk_back_to_its_start(searched, spark, tmp_path):
    """A pair of one vertex and a run of at least one edge: the shortest
    cycles through it (1 -> 2 -> 5 -> 1 on a ring with a chord)."""
    from geaflow_sql import Session

    ring = Session(spark=spark, base_dir=str(tmp_path))
    ring.execute(
        "CREATE GRAPH ring (Vertex A (id bigint ID), "
        "Edge R (src bigint SOURCE ID, dst bigint DESTINATION ID)) WITH (storeType='memory');"
        "USE GRAPH ring; INSERT INTO ring.A VALUES (1), (2), (3), (4), (5);"
        "INSERT INTO ring.R VALUES (1, 2), (2, 3), (3, 4), (4, 5), (5, 1), (2, 5)"
    )
    found = searched(
        ring,
        "MATCH (a WHERE a.id IN (1, 3)), (b WHERE b.id IN (1, 3)), "
        "p = ALL SHORTEST (a)-[e]->{1,}(b) RETURN a.id, b.id, nodes(p)",
    )
    assert searched.runs == 1
    assert found == Counter(
        {
            (1, 1, (1, 2, 5, 1)): 1,
            (1, 3, (1, 2, 3)): 1,
            (3, 1, (3, 4, 5, 1)): 1,
            (3, 3, (3, 4, 5, 1, 2, 3)): 1,
        }
    )
