"""``sssp`` in a windowed job: hop distances kept between windows.

Vertices and edges are only ever added, so a vertex's distance from the
source can only shrink.  A call site keeps every id it has seen, the edges
that pass the edge-label filter, and the distances of the last window.  A
window collects its own rows (one Spark job), finds the edges that just
became usable (both ends are vertices that may run) and relaxes outward from
them level by level, so the work follows the vertices whose distance changed.
It emits those vertices with their new distance: the rows a full run on this
version has that the previous version's run did not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base import AlgorithmGraph
from .deltas import SeenIds, csr, gather

UNREACHED = -1


@dataclass
class LabeledDelta:
    vertices: np.ndarray
    vertex_labels: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_labels: np.ndarray


def collect_labeled_delta(graph: AlgorithmGraph) -> LabeledDelta:
    """This window's vertices (with labels) and edges (with labels), in one Spark job."""
    from pyspark.sql import functions as F

    if graph.held_delta is not None:
        pdf = graph.held_delta
        vertex = (pdf["kind"] == 0).to_numpy()
        a, b, label = pdf["a"].to_numpy(), pdf["b"].to_numpy(), pdf["label"].to_numpy()
        return LabeledDelta(a[vertex], label[vertex], a[~vertex], b[~vertex], label[~vertex])
    id_type = graph.vertices.schema["id"].dataType
    rows = graph.new_vertices.select(
        F.lit(0).alias("kind"),
        F.col("id").alias("a"),
        F.col("id").alias("b"),
        F.col("label").cast("string").alias("label"),
    ).unionByName(
        graph.new_edges.select(
            F.lit(1).alias("kind"),
            F.col("src").cast(id_type).alias("a"),
            F.col("dst").cast(id_type).alias("b"),
            F.col("label").cast("string").alias("label"),
        )
    )
    pdf = rows.where(F.col("a").isNotNull() & F.col("b").isNotNull()).toPandas()
    vertex = (pdf["kind"] == 0).to_numpy()
    a, b, label = pdf["a"].to_numpy(), pdf["b"].to_numpy(), pdf["label"].to_numpy()
    return LabeledDelta(a[vertex], label[vertex], a[~vertex], b[~vertex], label[~vertex])


@dataclass
class HopState(SeenIds):
    """What a call site has seen and the distances of its last run."""

    runs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    src: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    usable: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    dist: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def advance(
        self,
        delta: LabeledDelta,
        source: Any,
        vertex_label: str | None,
        edge_label: str | None,
        max_depth: int,
    ) -> np.ndarray:
        """Add a window; the nodes whose distance is new or shorter."""
        keep_vertex = [vertex_label is None or lab == vertex_label for lab in delta.vertex_labels]
        runs_now = [
            self.node(v) for v, ok in zip(delta.vertices.tolist(), keep_vertex, strict=True) if ok
        ]
        keep_edge = np.array(
            [edge_label is None or lab == edge_label for lab in delta.edge_labels], dtype=bool
        )
        new_src = [self.node(v) for v in delta.src[keep_edge].tolist()]
        new_dst = [self.node(v) for v in delta.dst[keep_edge].tolist()]
        grown = self.n - len(self.runs)
        self.runs = np.concatenate([self.runs, np.zeros(grown, dtype=bool)])
        self.runs[np.array(runs_now, dtype=np.int64)] = True
        self.dist = np.concatenate([self.dist, np.full(grown, UNREACHED, dtype=np.int64)])
        self.src = np.concatenate([self.src, np.array(new_src, dtype=np.int64)])
        self.dst = np.concatenate([self.dst, np.array(new_dst, dtype=np.int64)])
        was_usable = np.concatenate([self.usable, np.zeros(len(new_src), dtype=bool)])
        self.usable = self.runs[self.src] & self.runs[self.dst]
        fresh = self.usable & ~was_usable

        before = self.dist.copy()
        at = self.index.get(source)
        if at is not None and self.runs[at] and max_depth >= 0:
            self.dist[at] = 0
        # Targets the fresh edges reach one hop past a reached source.
        tails, heads = self.src[fresh], self.dst[fresh]
        reached = self.dist[tails] != UNREACHED
        self._lower(heads[reached], self.dist[tails[reached]] + 1, max_depth)
        improved = np.flatnonzero(self.dist != before)
        if len(improved):
            self._relax(improved, max_depth)
        return np.flatnonzero(self.dist != before)

    def _lower(self, nodes: np.ndarray, candidate: np.ndarray, max_depth: int) -> np.ndarray:
        """Give ``nodes`` the ``candidate`` distance where it is shorter; the changed nodes."""
        ok = candidate <= max_depth
        nodes, candidate = nodes[ok], candidate[ok]
        if not len(nodes):
            return nodes
        order = np.lexsort((candidate, nodes))
        nodes, candidate = nodes[order], candidate[order]
        first = np.r_[True, nodes[1:] != nodes[:-1]]
        nodes, candidate = nodes[first], candidate[first]
        current = self.dist[nodes]
        better = (current == UNREACHED) | (candidate < current)
        self.dist[nodes[better]] = candidate[better]
        return nodes[better]

    def _relax(self, improved: np.ndarray, max_depth: int) -> None:
        """Pass shorter distances on, one level at a time (a breadth-first wave)."""
        out_ptr, out_dst = csr(self.src[self.usable], self.dst[self.usable], self.n)
        pending = improved
        while len(pending):
            level = int(self.dist[pending].min())
            now = pending[self.dist[pending] == level]
            later = pending[self.dist[pending] != level]
            _, targets = gather(out_ptr, out_dst, now)
            lowered = self._lower(targets, np.full(len(targets), level + 1), max_depth)
            pending = np.union1d(later, lowered)
