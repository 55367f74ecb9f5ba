"""Incremental algorithms of a streaming job: ``inc_wcc``, ``inc_khop`` and ``assp``.

In a windowed job GeaFlow inserts each window into the graph and then runs an
incremental algorithm on the new version: iteration 1 activates only the
vertices the window touched, the vertex values of the previous window are
still there, and the sink receives what this window's run emits.  Here each
call site keeps a ``GrowingGraph`` (ids, edges, per-vertex values) in the
job's algorithm state (``AlgorithmGraph.state``, checkpointed with the job);
a window collects only the rows added since the previous one (one Spark job)
and updates that state on the driver, so the work follows the change.

What each algorithm emits per window, restated from GeaFlow's programs:

* ``inc_wcc([iterations, [field]])``: (id, component) of the vertices whose
  component (the smallest id of its weakly connected component, ids compared
  as numbers for numeric ids) is new or changed in this window.  Components
  are exact: GeaFlow's bound of ``iterations`` supersteps only matters on
  paths longer than that and is not modelled.
* ``inc_khop(k)``: every walk of k OUT edges (vertices may repeat) that uses
  at least one edge added in this window, printed ``v0,v1,...,vk,``.  GeaFlow
  builds the result in superstep k + 2, so a ``geaflow.dsl.max.traversal``
  below that yields nothing.  Together the windows emit every k-walk of the
  final graph (a walk appears in the window of its newest edge).
* ``assp()``: the JSON path map (see ``paths.AllSourceShortestPath``) of every
  vertex the window's run reached: the touched vertices and every vertex a
  path message arrived at.  A touched vertex re-sends its own id and all its
  stored paths along its OUT edges; a vertex takes a path whose sender is
  strictly closer to the source than the vertex itself currently is (so an
  equally short path replaces the stored one) and passes it on.  Outside a
  windowed job ``assp()`` is the batch algorithm of ``paths``.

An edge only joins once both its endpoints are vertices (GeaFlow drops
messages to ids without a vertex); until then it waits in ``pending``, and it
counts as new in the window where it joins.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from planner.algorithms import builtin_signature

from ..base import AlgorithmGraph, CallContext
from ..builtin import BuiltinAlgorithm
from ..java_compat import java_strings
from ..options import options_of
from .deltas import GrowingGraph, Growth, csr, grown_graph, output_frame
from .paths import AllSourceShortestPath, format_path_values

# ---------------------------------------------------------------------------
# The graph a call site has seen so far
# ---------------------------------------------------------------------------


class IncWeakConnectedComponents(BuiltinAlgorithm):
    batch_run_is_kernel = False  # its run is its own, windows or not
    signature = builtin_signature("inc_wcc")

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        self.bind(list(args), graph.id_type)
        seen, growth, state = grown_graph(graph)
        ids = seen.id_array()
        previous = state.get("labels")
        if previous is None:
            previous = ids[:0]
        labels = np.concatenate([previous, ids[growth.nodes_before :]])
        labels = merge_components(
            labels, seen.src[growth.edges_before :], seen.dst[growth.edges_before :]
        )
        state["labels"] = labels
        changed = np.ones(len(labels), dtype=bool)
        changed[: len(previous)] = labels[: len(previous)] != previous
        return output_frame(graph, self, [ids[changed].tolist(), labels[changed].tolist()])


def merge_components(labels: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Labels (smallest id of each component) after joining the edges ``src -> dst``.

    Only the components the edges touch change: their labels are connected
    among themselves and every member takes the smallest label of its group.
    """
    if not len(src):
        return labels
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    codes, touched = pd.factorize(np.concatenate([labels[src], labels[dst]]), sort=False)
    m = len(touched)
    half = len(src)
    adjacency = sp.coo_matrix((np.ones(half), (codes[:half], codes[half:])), shape=(m, m))
    _, group = csgraph.connected_components(adjacency, directed=True, connection="weak")
    smallest = pd.Series(np.asarray(touched)).groupby(group).transform("min").to_numpy()
    where = pd.Index(touched).get_indexer(labels)
    hit = where >= 0
    out = labels.copy()
    out[hit] = smallest[where[hit]]
    return out


# ---------------------------------------------------------------------------
# inc_khop
# ---------------------------------------------------------------------------


class IncKHop(BuiltinAlgorithm):
    batch_run_is_kernel = False  # its run is its own, windows or not
    signature = builtin_signature("inc_khop")

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        k = self.bind(list(args), graph.id_type)["k"]
        seen, growth, _ = grown_graph(graph)
        if k < 1 or options_of(ctx).max_iterations < k + 2:
            return output_frame(graph, self, [[]])
        walks = new_walks(seen, growth.edges_before, k)
        names = java_strings(seen.id_array())
        lines = [",".join(row) + "," for row in names[walks].tolist()] if len(walks) else []
        return output_frame(graph, self, [lines])


def new_walks(g: GrowingGraph, edges_before: int, k: int) -> np.ndarray:
    """Distinct walks of ``k`` edges (rows of k + 1 node indices) using a new edge.

    A walk is built around its first new edge: the edges before it are old
    (walked backwards from the new edge's source), the edges after it any
    (walked forwards from its target), so each walk is found once.
    """
    new_src, new_dst = g.src[edges_before:], g.dst[edges_before:]
    if not len(new_src):
        return np.zeros((0, k + 1), dtype=np.int64)
    old_in = csr(g.dst[:edges_before], g.src[:edges_before], g.n)
    all_out = csr(g.src, g.dst, g.n)
    found = []
    for position in range(k):
        walks = np.column_stack([new_src, new_dst])
        for _ in range(position):
            walks = extend(walks, old_in, at_end=False)
        for _ in range(k - 1 - position):
            walks = extend(walks, all_out, at_end=True)
        found.append(walks)
    return np.unique(np.concatenate(found), axis=0)


def extend(walks: np.ndarray, adjacency: tuple[np.ndarray, np.ndarray], at_end: bool) -> np.ndarray:
    """Every walk continued by one hop at its end (or its start), one row per hop."""
    indptr, targets = adjacency
    ends = walks[:, -1] if at_end else walks[:, 0]
    counts = indptr[ends + 1] - indptr[ends]
    rows = np.repeat(np.arange(len(walks)), counts)
    first = np.repeat(indptr[ends] - (np.cumsum(counts) - counts), counts)
    hop = targets[first + np.arange(len(rows))]
    base = walks[rows]
    return np.column_stack([base, hop]) if at_end else np.column_stack([hop, base])


# ---------------------------------------------------------------------------
# assp
# ---------------------------------------------------------------------------


@dataclass
class PathState:
    """Per vertex (node index): source node -> the stored path (node indices)."""

    out: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    paths: dict[int, dict[int, tuple[int, ...]]] = field(default_factory=dict)


class IncAllSourceShortestPath(AllSourceShortestPath):
    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        if graph.window is None:
            return super().run(ctx, graph, args)
        self.bind(list(args), graph.id_type)
        seen, growth, state = grown_graph(graph)
        ps = state.get("paths")
        if not isinstance(ps, PathState):
            ps = PathState()
            state["paths"] = ps
        reached = propagate_paths(seen, growth, ps, options_of(ctx).max_iterations)
        lines = []
        for v in sorted(reached):
            table = {seen.ids[s]: [seen.ids[i] for i in p] for s, p in ps.paths[v].items()}
            lines.append(format_path_values(seen.ids[v], table, graph.id_type))
        return output_frame(graph, self, [lines])


def propagate_paths(
    g: GrowingGraph, growth: Growth, ps: PathState, max_iterations: int
) -> set[int]:
    """Run one window of GeaFlow's ASSP program; the vertices it reached."""
    new_src = g.src[growth.edges_before :].tolist()
    new_dst = g.dst[growth.edges_before :].tolist()
    for s, d in zip(new_src, new_dst, strict=True):
        ps.out[s].append(d)
    fresh = range(growth.nodes_before, g.n)
    for v in fresh:
        ps.paths[v] = {}
    touched = set(fresh) | set(new_src) | set(new_dst)
    inbox: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for v in touched:  # superstep 1
        offers = [(v,)] + (list(ps.paths[v].values()) if v < growth.nodes_before else [])
        for w in ps.out.get(v, []):
            inbox[w].extend(offers)
    reached = set(touched)
    order = g.ids  # ties between equally short paths: the smaller id sequence

    def key(path: tuple[int, ...]) -> tuple[int, tuple[Any, ...]]:
        return len(path), tuple(order[i] for i in path)

    for _ in range(2, max_iterations + 1):
        if not inbox:
            break
        outbox: dict[int, list[tuple[int, ...]]] = defaultdict(list)
        for w, offers in inbox.items():
            reached.add(w)
            best: dict[int, tuple[int, ...]] = {}
            for path in offers:
                src = path[0]
                if src != w and (src not in best or key(path) < key(best[src])):
                    best[src] = path
            stored = ps.paths[w]
            for src, path in best.items():
                current = stored.get(src)
                # The sender's distance against this vertex's: an equal path replaces.
                if current is None or len(path) < len(current):
                    stored[src] = (*path, w)
                    for x in ps.out.get(w, []):
                        outbox[x].append(stored[src])
        inbox = outbox
    return reached
