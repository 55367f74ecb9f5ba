"""``incremental_kcore`` in windowed jobs: state carried between windows.

Two checks, both against restatements written from GeaFlow's vertex program
rather than from our kernels:

* the re-peel (``kcore_peeling.repeel``), which only looks where a window's
  growth reaches, gives every vertex the drop round a full peel of the grown
  graph gives, on random graphs growing over several windows;
* a windowed job emits, per window, exactly the vertices the window changed
  (new, degree changed, or deactivated in another round than before) with
  the degree and status that a literal multi-run simulation of GeaFlow's
  program (per-vertex state kept between runs, INIT only in the first run)
  gives them.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from runtime.algorithms.library.deltas import Delta
from runtime.algorithms.library.inc_kcore import SeenGraph
from runtime.algorithms.library.kcore_peeling import full_peel, repeel
from tests.test_incremental_algorithms import run_job
from tests.test_incremental_mst_kcore import GeaFlowKCore

NEVER_VERTEX = 9999  # an id that never becomes a vertex


def growing_graph(seed: int) -> tuple[list[int], list[tuple[int, int]]]:
    """Vertices in arrival order and edges with self-loops, parallel edges and
    endpoints that arrive late or never."""
    rng = random.Random(seed)
    vertices = rng.sample(range(1, 40), rng.randint(4, 14))
    ends = [*vertices, NEVER_VERTEX]
    edges = []
    for _ in range(rng.randint(5, 45)):
        a = rng.choice(ends)
        edges.append((a, a if rng.random() < 0.1 else rng.choice(ends)))
    edges += rng.sample(edges, len(edges) // 6)  # parallel edges
    rng.shuffle(edges)
    return vertices, edges


def split(items: list, windows: int) -> list[list]:
    return [
        items[w * len(items) // windows : (w + 1) * len(items) // windows] for w in range(windows)
    ]


@pytest.mark.parametrize("seed", range(400))
def test_repeel_gives_the_drop_rounds_of_a_full_peel(seed: int) -> None:
    rng = random.Random(seed)
    vertices, edges = growing_graph(seed)
    k, rounds, windows = rng.randint(1, 4), rng.randint(1, 8), rng.randint(2, 5)
    g = SeenGraph()
    for vs, es in zip(split(vertices, windows), split(edges, windows), strict=True):
        growth = g.add(
            Delta(
                np.array(vs, dtype=np.int64),
                np.array([a for a, _ in es], dtype=np.int64),
                np.array([b for _, b in es], dtype=np.int64),
            )
        )
        real = g.is_vertex[g.src] & g.is_vertex[g.dst]
        args = (g.is_vertex, g.in_count, g.src[real], g.dst[real], k, rounds)
        full = full_peel(*args)
        if g.drop is None:
            got = full
        else:
            old = np.concatenate([g.drop, np.zeros(g.n - len(g.drop), np.int64)])
            got = repeel(old, growth.fresh, growth.bumped, *args)
        assert np.array_equal(got[g.is_vertex], full[g.is_vertex])
        g.drop = got


def emitted(chunk: list[str]) -> dict[int, tuple[int, int, str]]:
    rows = {}
    for line in chunk:
        vid, core, degree, status = line.split(",")
        assert int(vid) not in rows, f"vertex {vid} emitted twice in one window"
        rows[int(vid)] = (int(core), int(degree), status)
    return rows


@pytest.mark.parametrize(("seed", "store"), [(8, "rocksdb")])
def test_each_window_emits_the_vertices_it_changed(session, tmp_path: Path, seed, store) -> None:
    vertices, edges = growing_graph(seed)
    vertices, edges = vertices[:12], edges[:40]
    k, max_iterations = 2, 6
    call = (
        f"CALL incremental_kcore({k}, {max_iterations}) "
        "YIELD (vid, core_value, degree, change_status) "
        "RETURN vid, core_value, degree, change_status"
    )
    columns = "vid bigint, core_value int, degree int, change_status varchar"
    windows = run_job(session, tmp_path, (vertices, edges), (3, 8), call, columns, store=store)
    count = max(-(-len(vertices) // 3), -(-len(edges) // 8))
    assert len(windows) == count
    geaflow = GeaFlowKCore(k, max_iterations)
    before: dict[int, tuple[int, int, str]] = {}
    dropped_before: dict[int, int] = {}
    statuses = set()
    for w, chunk in enumerate(windows):
        present = vertices[: 3 * (w + 1)]
        rows, dropped_in = geaflow.run(present, edges[: 8 * (w + 1)])
        changed = {
            v
            for v in present
            if v not in before
            or rows[v][1] != before[v][1]
            or dropped_in.get(v) != dropped_before.get(v)
        }
        got = emitted(chunk)
        assert set(got) == changed, f"window {w}"
        assert got == {v: rows[v] for v in changed}, f"window {w}"
        statuses |= {status for _, _, status in got.values()}
        before, dropped_before = rows, dropped_in
    # The stream is long enough to show every status GeaFlow's program reaches.
    assert statuses == {"INIT", "UNCHANGED", "REMOVED"}
