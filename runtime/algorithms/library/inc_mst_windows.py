"""``IncMST`` between windows: the proposals each vertex has had accepted so far.

In a windowed job every call site of ``IncMST`` keeps a ``ProposalBook`` in
the job's algorithm state (``AlgorithmGraph.state``, pickled with each
checkpoint), and a window reads only the rows it added (one Spark job,
``collect_weighted_delta``).  That is enough because the graph only grows:

* an edge's place among its source's OUT edges is fixed when it arrives
  (places are counted per source id, vertex or not, in arrival order), so
  whether it is one of the first ``limit`` never changes;
* a proposal is accepted once both of its ends are vertices (and they
  differ), and stays accepted.  A proposal still missing an end is filed
  under that id and looked at again only in the window where the id becomes
  a vertex.

So a window's work follows its own rows plus the proposals its new vertices
release, and every proposal is accepted in exactly one window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..base import AlgorithmGraph

# A proposal waiting for an end: (source id, target id, weight, weight is null).
Proposal = tuple[Any, Any, float, bool]


@dataclass
class WeightedDelta:
    """What a window added: vertex ids, and edges in arrival order with the
    weight (first edge property, as double) and whether it is null."""

    vertices: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    missing: np.ndarray


def collect_weighted_delta(graph: AlgorithmGraph, column: str) -> WeightedDelta:
    """The window's new vertices and edges on the driver, in one Spark job.

    Unlike ``incremental.collect_delta`` it keeps the weight and the edges'
    order (vertex rows first, then edges in partition order, as the batch
    engines read them), and it keeps edges whose ends are not vertices yet.
    """
    from pyspark.sql import functions as F

    vertices, edges = graph.new_vertices, graph.new_edges
    id_type = vertices.schema["id"].dataType
    weight = F.col(f"`{column}`")
    rows = vertices.select(
        F.lit(0).alias("kind"),
        F.col("id").alias("a"),
        F.col("id").alias("b"),
        F.lit(0.0).cast("double").alias("w"),
        F.lit(False).alias("missing"),
    ).unionByName(
        edges.select(
            F.lit(1).alias("kind"),
            F.col("src").cast(id_type).alias("a"),
            F.col("dst").cast(id_type).alias("b"),
            weight.cast("double").alias("w"),
            weight.isNull().alias("missing"),
        )
    )
    pdf = rows.where(F.col("a").isNotNull() & F.col("b").isNotNull()).toPandas()
    is_vertex = (pdf["kind"] == 0).to_numpy()
    is_edge = ~is_vertex
    a, b = pdf["a"].to_numpy(), pdf["b"].to_numpy()
    return WeightedDelta(
        vertices=a[is_vertex],
        src=a[is_edge],
        dst=b[is_edge],
        weight=pdf["w"].to_numpy(dtype=np.float64)[is_edge],
        missing=pdf["missing"].to_numpy(dtype=bool)[is_edge],
    )


@dataclass
class Accepted:
    """The proposals a window accepted: source ids (a list), weights, null flags."""

    src: list[Any]
    weight: np.ndarray
    missing: np.ndarray


@dataclass
class ProposalBook:
    """Everything ``IncMST`` needs from earlier windows (picklable)."""

    limit: int
    vertices: set[Any] = field(default_factory=set)
    # Per source id: how many OUT edges it has (at most ``limit`` is kept).
    places: dict[Any, int] = field(default_factory=dict)
    # Per id that is not a vertex yet: the proposals waiting for it.
    waiting: dict[Any, list[Proposal]] = field(default_factory=dict)
    # Per vertex: the Java bits of the weights it lists (its rows so far).
    rows: dict[Any, set[int]] = field(default_factory=dict)

    def advance(self, delta: WeightedDelta) -> Accepted:
        """Add a window; the proposals it accepted, released ones first."""
        fresh = [v for v in dict.fromkeys(delta.vertices.tolist()) if v not in self.vertices]
        self.vertices.update(fresh)
        released = [p for v in fresh for p in self.waiting.pop(v, [])]
        keep = self._placed(delta)
        src = [p[0] for p in released] + delta.src[keep].tolist()
        dst = [p[1] for p in released] + delta.dst[keep].tolist()
        weight = np.concatenate([np.array([p[2] for p in released], float), delta.weight[keep]])
        missing = np.concatenate([np.array([p[3] for p in released], bool), delta.missing[keep]])
        known = self.vertices
        src_in = np.fromiter((s in known for s in src), bool, len(src))
        dst_in = np.fromiter((d in known for d in dst), bool, len(dst))
        ok = src_in & dst_in
        for i in np.flatnonzero(~ok).tolist():
            # Filed under the source first: a source that is not a vertex proposes nothing.
            key = dst[i] if src_in[i] else src[i]
            proposal = (src[i], dst[i], float(weight[i]), bool(missing[i]))
            self.waiting.setdefault(key, []).append(proposal)
        taken = [s for s, k in zip(src, ok.tolist(), strict=True) if k]
        return Accepted(taken, weight[ok], missing[ok])

    def _placed(self, delta: WeightedDelta) -> np.ndarray:
        """Per new edge: among its source's first ``limit`` and not a self-loop.
        Counts the new edges into ``places``."""
        if not len(delta.src):
            return np.zeros(0, dtype=bool)
        codes, sources = pd.factorize(delta.src)
        names = sources.tolist()
        before = np.array([self.places.get(s, 0) for s in names], dtype=np.int64)
        rank = pd.Series(codes).groupby(codes).cumcount().to_numpy()
        place = before[codes] + rank
        total = np.minimum(before + np.bincount(codes, minlength=len(names)), self.limit)
        self.places.update(zip(names, total.tolist(), strict=True))
        return (place < self.limit) & np.asarray(delta.src != delta.dst, dtype=bool)

    def record(self, src: list[Any], bits: np.ndarray) -> np.ndarray:
        """Add (vertex, weight bits) rows; which of them are new (once each)."""
        new = np.zeros(len(src), dtype=bool)
        for i, (s, b) in enumerate(zip(src, bits.tolist(), strict=True)):
            listed = self.rows.setdefault(s, set())
            if b not in listed:
                listed.add(b)
                new[i] = True
        return new
