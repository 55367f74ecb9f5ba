"""``sssp`` in windowed jobs keeps its distances between windows.

A window must emit exactly the vertices whose hop distance from the source
(within GeaFlow's traversal bound) is new or shorter on the graph after the
window than on the graph before it; networkx's BFS on each version is the
reference.  The stream has edges before their vertices, an id that never
becomes a vertex and a source that arrives late.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import networkx as nx
import pytest

from tests.test_incremental_algorithms import graph_after, random_stream, run_job, window_count

COLUMNS = "id bigint, distance bigint"


def distances(g: nx.MultiDiGraph, source: int, max_depth: int) -> dict[int, int]:
    if source not in g:
        return {}
    return nx.single_source_shortest_path_length(g, source, cutoff=max_depth)


def emitted_rows(chunk: list[str]) -> dict[int, int]:
    rows = {}
    for line in chunk:
        vid, distance = line.split(",")
        assert int(vid) not in rows, f"{vid} twice in one window"
        rows[int(vid)] = int(distance)
    return rows


@pytest.mark.parametrize(("seed", "bound", "store"), [(4, 64, "memory"), (6, 3, "rocksdb")])
def test_each_window_emits_the_distances_it_shortened(session, tmp_path, seed, bound, store):
    vertices, edges = random_stream(seed, n=10, m=22)
    source = vertices[4]  # arrives in the second vertex window
    call = f"CALL sssp({source}, 'link', 'node') YIELD (id, distance) RETURN id, distance"
    settings = f"SET geaflow.dsl.max.traversal = {bound};SET geaflow.dsl.checkpoint.dir = 'ck';"
    windows = run_job(
        session, tmp_path, (vertices, edges), (3, 4), call, COLUMNS, settings=settings, store=store
    )
    assert len(windows) == window_count(vertices, edges, 3, 4)
    previous: dict[int, int] = {}
    shortened = 0
    for w, chunk in enumerate(windows):
        current = distances(graph_after(vertices, edges, 3, 4, w), source, bound - 1)
        expected = {v: d for v, d in current.items() if previous.get(v) != d}
        assert emitted_rows(chunk) == expected, f"window {w}"
        shortened += sum(1 for v in expected if v in previous)
        previous = current
    assert previous, "the source reached nothing"
    # The distances came from state kept between windows (and checkpointed).
    assert checkpointed_distances(tmp_path / "ck") == previous
    if bound > 3:
        assert shortened, "no window shortened a distance: the stream tests too little"


def checkpointed_distances(folder: Path) -> dict[int, int]:
    from runtime.algorithms.library.inc_sssp import HopState

    with open(max(folder.glob("algorithms-*.pkl")), "rb") as fh:
        states = pickle.load(fh)
    (hops,) = [s["hops"] for s in states.values() if isinstance(s.get("hops"), HopState)]
    return {vid: int(d) for vid, d in zip(hops.ids, hops.dist.tolist(), strict=True) if d >= 0}


def test_a_label_no_vertex_has_reaches_nothing(session, tmp_path):
    vertices, edges = random_stream(4, n=8, m=12)
    call = f"CALL sssp({vertices[0]}, 'link', 'other') YIELD (id, distance) RETURN id, distance"
    windows = run_job(session, tmp_path, (vertices, edges), (4, 6), call, COLUMNS)
    assert windows and all(chunk == [] for chunk in windows)
