"""``inc_wcc``, ``inc_khop`` and ``assp`` in windowed jobs, against full recomputes.

Each test streams vertices and edges in windows of different sizes (so edges
often arrive before their vertices, and a few point at ids that never become
vertices) and checks every window's output against networkx or a brute-force
enumeration on the graph as it is after that window:

* ``inc_wcc``: a window emits exactly the vertices whose component (smallest
  id of the weakly connected component) is new or changed;
* ``inc_khop(k)``: a window emits exactly the k-walks of the current graph
  that were not walks of the previous one, so all windows together give a
  full k-hop enumeration;
* ``assp()``: the latest map emitted for each vertex holds one shortest path
  (a real path of the graph) from every vertex that reaches it.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import networkx as nx
import pytest

from tests.conftest import SPLIT, windows_of, write

NEVER = 9999  # an id no vertex ever has


def random_stream(seed: int, n: int = 10, m: int = 16) -> tuple[list[int], list[tuple[int, int]]]:
    """Vertex ids in arrival order and distinct edges (no parallel ones)."""
    rng = random.Random(seed)
    vertices = rng.sample(range(1, 60), n)
    pairs = [(a, b) for a in vertices for b in vertices if a != b]
    edges = rng.sample(pairs, m) + [(vertices[0], NEVER), (NEVER, vertices[1])]
    rng.shuffle(edges)
    return vertices, edges


def run_job(
    session,
    tmp_path: Path,
    stream,
    sizes: tuple[int, int],
    call: str,
    columns: str = "r varchar",
    settings: str = "",
    store: str = "memory",
) -> list[list[str]]:
    """Run ``INSERT INTO out <call>`` over the stream in windows of ``sizes`` rows,
    on a graph kept in ``store`` (its parts name what each window wrote)."""
    vertices, edges = stream
    v_window, e_window = sizes
    write(tmp_path / "v.txt", "".join(f"{v}\n" for v in vertices))
    write(tmp_path / "e.txt", "".join(f"{s},{t}\n" for s, t in edges))
    session.execute(
        settings + "CREATE GRAPH g (Vertex node (id bigint ID), "
        "Edge link (s bigint SOURCE ID, t bigint DESTINATION ID)) "
        f"WITH (storeType='{store}');"
        "CREATE TABLE vs (id bigint) WITH (type='file', geaflow.dsl.file.path='v.txt', "
        f"geaflow.dsl.window.size = {v_window});"
        "CREATE TABLE es (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='e.txt', "
        f"geaflow.dsl.window.size = {e_window});"
        f"CREATE TABLE out ({columns}) WITH (type='file', geaflow.dsl.file.path='out.txt', "
        f"geaflow.dsl.table.sink.split.line='{SPLIT}');"
        "USE GRAPH g;"
        "INSERT INTO g.node SELECT id FROM vs;"
        "INSERT INTO g.link SELECT s, t FROM es;"
        f"INSERT INTO out {call};"
    )
    return windows_of(tmp_path / "out.txt")


def graph_after(vertices, edges, v_window: int, e_window: int, window: int) -> nx.MultiDiGraph:
    """The graph after ``window`` (0-based), vertex-induced: edges to non-vertices don't count."""
    present = vertices[: v_window * (window + 1)]
    g = nx.MultiDiGraph()
    g.add_nodes_from(present)
    g.add_edges_from((s, t) for s, t in edges[: e_window * (window + 1)] if s in g and t in g)
    return g


def window_count(vertices, edges, v_window: int, e_window: int) -> int:
    return max(-(-len(vertices) // v_window), -(-len(edges) // e_window))


# ---------------------------------------------------------------------------
# inc_wcc
# ---------------------------------------------------------------------------


def min_id_components(g: nx.MultiDiGraph) -> dict[int, int]:
    out = {}
    for members in nx.weakly_connected_components(g):
        smallest = min(members)
        out.update(dict.fromkeys(members, smallest))
    return out


@pytest.mark.parametrize(("seed", "store"), [(1, "memory"), (2, "memory"), (3, "rocksdb")])
def test_inc_wcc_emits_the_changed_components_of_every_window(session, tmp_path, seed, store):
    vertices, edges = random_stream(seed)
    call = "CALL inc_wcc() YIELD (vid, component) RETURN vid, component"
    columns = "vid bigint, component bigint"
    windows = run_job(session, tmp_path, (vertices, edges), (3, 4), call, columns, store=store)
    count = window_count(vertices, edges, 3, 4)
    assert len(windows) == count
    before: dict[int, int] = {}
    for i, chunk in enumerate(windows):
        now = min_id_components(graph_after(vertices, edges, 3, 4, i))
        expected = {f"{v},{c}" for v, c in now.items() if before.get(v) != c}
        assert sorted(chunk) == sorted(expected), f"window {i}"
        before = now


# ---------------------------------------------------------------------------
# inc_khop
# ---------------------------------------------------------------------------


def walks(g: nx.MultiDiGraph, k: int) -> set[str]:
    out: set[str] = set()
    for start in g.nodes:
        frontier = [[start]]
        for _ in range(k):
            frontier = [w + [t] for w in frontier for t in g.successors(w[-1])]
        out.update(",".join(map(str, w)) + "," for w in frontier)
    return out


@pytest.mark.parametrize("k", [2, 3])
def test_inc_khop_emits_the_walks_each_window_creates(session, tmp_path, k):
    vertices, edges = random_stream(7, n=8, m=14)
    edges += [(vertices[2], vertices[2])]  # a self-loop walks in place
    call = f"CALL inc_khop({k}) YIELD (ret) RETURN ret"
    windows = run_job(session, tmp_path, (vertices, edges), (3, 3), call)
    previous: set[str] = set()
    emitted: set[str] = set()
    for i, chunk in enumerate(windows):
        assert len(chunk) == len(set(chunk)), f"window {i} repeats a walk"
        current = walks(graph_after(vertices, edges, 3, 3, i), k)
        assert set(chunk) == current - previous, f"window {i}"
        emitted |= set(chunk)
        previous = current
    final = graph_after(vertices, edges, 3, 3, window_count(vertices, edges, 3, 3) - 1)
    assert emitted == walks(final, k)


def test_inc_khop_needs_k_plus_two_supersteps(session, tmp_path):
    vertices, edges = random_stream(3, n=6, m=8)
    call = "CALL inc_khop(3) YIELD (ret) RETURN ret"
    settings = "SET geaflow.dsl.max.traversal = 4;"
    windows = run_job(session, tmp_path, (vertices, edges), (6, 4), call, settings=settings)
    assert all(chunk == [] for chunk in windows)


# ---------------------------------------------------------------------------
# assp
# ---------------------------------------------------------------------------


ASSP = "CALL assp() YIELD (res) RETURN res"


def parse_paths(line: str) -> tuple[int, dict[int, list[int]]]:
    """GeaFlow's fastjson text (unquoted integer keys) as Python values."""
    value = json.loads(re.sub(r"([{,])(\d+):", r'\1"\2":', line))
    return value["vertex"], {int(s): p for s, p in value["paths"].items()}


def test_assp_keeps_a_shortest_path_from_every_source_after_every_window(session, tmp_path):
    vertices, edges = random_stream(5, n=9, m=15)
    windows = run_job(session, tmp_path, (vertices, edges), (4, 3), ASSP)
    latest: dict[int, dict[int, list[int]]] = {}
    for i, chunk in enumerate(windows):
        g = graph_after(vertices, edges, 4, 3, i)
        for line in chunk:
            vertex, paths = parse_paths(line)
            latest[vertex] = paths
        assert set(latest) == set(g.nodes), f"window {i}"
        for vertex, paths in latest.items():
            sources = nx.ancestors(g, vertex)
            assert set(paths) == sources, f"window {i}, vertex {vertex}"
            for source, path in paths.items():
                assert path[0] == source and path[-1] == vertex
                assert all(g.has_edge(a, b) for a, b in itertools.pairwise(path))
                assert len(path) - 1 == nx.shortest_path_length(g, source, vertex)


def test_assp_in_one_window_equals_the_batch_result(session, spark, tmp_path):
    from geaflow_sql import Session

    vertices, edges = random_stream(11, n=9, m=18)
    windows = run_job(session, tmp_path, (vertices, edges), (100, 100), ASSP)
    batch = Session(spark=spark, base_dir=str(tmp_path))
    batch.execute(
        "CREATE GRAPH g (Vertex node (id bigint ID), "
        "Edge link (s bigint SOURCE ID, t bigint DESTINATION ID)) WITH (storeType='memory');"
        "CREATE TABLE vs (id bigint) WITH (type='file', geaflow.dsl.file.path='v.txt');"
        "CREATE TABLE es (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='e.txt');"
        "USE GRAPH g; INSERT INTO g.node SELECT id FROM vs; INSERT INTO g.link SELECT s, t FROM es;"
    )
    rows = batch.sql(ASSP).collect()
    assert len(windows) == 1
    assert sorted(windows[0]) == sorted(r[0] for r in rows)


# ---------------------------------------------------------------------------
# The delta an incremental algorithm reads
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("store", ["memory", "rocksdb"])
def test_written_since_holds_exactly_the_rows_written_after_a_version(session, store):
    """A window's delta comes from the store's parts, not from comparing versions."""
    from runtime.context import RuntimeContext
    from runtime.env import Env
    from runtime.stores.written import written_since

    session.execute(
        "CREATE GRAPH g (Vertex node (id bigint ID, name varchar), "
        "Edge link (s bigint SOURCE ID, t bigint DESTINATION ID)) "
        f"WITH (storeType='{store}');"
        "USE GRAPH g;"
        "INSERT INTO g.node VALUES (1, 'a'), (2, 'b');"
        "INSERT INTO g.link VALUES (1, 2);"
    )
    ctx = RuntimeContext(session.spark, session.config, session.catalog, session.stores)
    env = Env(ctx)
    graph = session.catalog.graph(("g",))
    assert graph is not None
    version = ctx.stores.store(ctx, graph).version_number()
    session.execute(
        "USE GRAPH g;"
        "INSERT INTO g.node VALUES (2, 'b2'), (3, 'c');"
        "INSERT INTO g.link VALUES (2, 3), (1, 2);"
    )
    rows = written_since(env, graph, version)
    assert rows is not None
    nodes = sorted(tuple(r) for r in rows[("node", True)].collect())
    links = sorted(tuple(r) for r in rows[("link", False)].collect())
    # The rewrite of vertex 2 is written; the parallel edge 1 -> 2 counts again.
    assert nodes == [(2, "b2"), (3, "c")]
    assert links == [(1, 2), (2, 3)]
    now = written_since(env, graph, ctx.stores.store(ctx, graph).version_number())
    assert now is not None
    assert all(df.count() == 0 for df in now.values())
