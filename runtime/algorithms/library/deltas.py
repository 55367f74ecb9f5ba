"""What incremental algorithms keep between windows, and a window's delta.

A call site of an incremental algorithm keeps, in the job's algorithm state,
the vertex ids it has seen (``SeenIds``: id -> dense index) and, for most,
the graph grown so far (``GrowingGraph``); each window collects only the rows
added since the previous one (``collect_delta``, one Spark job) and applies
them on the driver.  ``csr`` and ``gather`` index edges by one end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from runtime.held import arrow_table, from_rows

from ..base import AlgorithmGraph
from ..builtin import BuiltinAlgorithm

# ---------------------------------------------------------------------------
# The graph a call site has seen so far
# ---------------------------------------------------------------------------


@dataclass
class Delta:
    """The rows a window added: vertex ids and (source, target) id pairs."""

    vertices: np.ndarray
    src: np.ndarray
    dst: np.ndarray


def collect_delta(graph: AlgorithmGraph) -> Delta:
    """This window's new vertices and edges on the driver, in one Spark job.

    Outside a windowed job (``new_edges`` is None) the whole graph is new.
    """
    from pyspark.sql import functions as F

    if graph.held_delta is not None and graph.new_edges is not None:
        pdf = graph.held_delta
        is_vertex = (pdf["kind"] == 0).to_numpy()
        a = pdf["a"].to_numpy()
        b = pdf["b"].to_numpy()
        return Delta(a[is_vertex], a[~is_vertex], b[~is_vertex])
    vertices = graph.vertices if graph.new_vertices is None else graph.new_vertices
    edges = graph.edges if graph.new_edges is None else graph.new_edges
    id_type = vertices.schema["id"].dataType
    # One frame (kind 0: vertex, 1: edge) so one job brings both back; vertex
    # rows repeat the id in b to keep the columns free of nulls (exact int64).
    rows = vertices.select(
        F.lit(0).alias("kind"), F.col("id").alias("a"), F.col("id").alias("b")
    ).unionByName(
        edges.select(
            F.lit(1).alias("kind"),
            F.col("src").cast(id_type).alias("a"),
            F.col("dst").cast(id_type).alias("b"),
        )
    )
    pdf = rows.where(F.col("a").isNotNull() & F.col("b").isNotNull()).toPandas()
    is_vertex = (pdf["kind"] == 0).to_numpy()
    a = pdf["a"].to_numpy()
    b = pdf["b"].to_numpy()
    return Delta(a[is_vertex], a[~is_vertex], b[~is_vertex])


@dataclass
class Growth:
    """What one window changed: node indices >= ``nodes_before`` and edges
    >= ``edges_before`` are new."""

    nodes_before: int
    edges_before: int


@dataclass
class SeenIds:
    """Every id a call site has seen, in order of first sight: node index = position."""

    ids: list[Any] = field(default_factory=list)
    index: dict[Any, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.ids)

    def node(self, vid: Any) -> int:
        """The node index of ``vid``, given the next one if it is new."""
        at = self.index.get(vid)
        if at is None:
            at = self.index[vid] = len(self.ids)
            self.ids.append(vid)
        return at

    def id_array(self) -> np.ndarray:
        values = np.array(self.ids, dtype=object)
        if self.ids and all(isinstance(v, int) for v in self.ids):
            return values.astype(np.int64)
        return values


@dataclass
class GrowingGraph(SeenIds):
    """Vertices (node index = order of arrival) and the edges between them."""

    src: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Edges with an endpoint that is not a vertex yet, as raw ids.
    pending: list[tuple[Any, Any]] = field(default_factory=list)

    def add(self, delta: Delta) -> Growth:
        growth = Growth(self.n, len(self.src))
        for vid in delta.vertices.tolist():
            self.node(vid)
        candidates = self.pending + list(zip(delta.src.tolist(), delta.dst.tolist(), strict=True))
        joined_src: list[int] = []
        joined_dst: list[int] = []
        waiting = []
        for s, d in candidates:
            si, di = self.index.get(s), self.index.get(d)
            if si is None or di is None:
                waiting.append((s, d))
            else:
                joined_src.append(si)
                joined_dst.append(di)
        self.pending = waiting
        self.src = np.concatenate([self.src, np.array(joined_src, dtype=np.int64)])
        self.dst = np.concatenate([self.dst, np.array(joined_dst, dtype=np.int64)])
        return growth


def grown_graph(graph: AlgorithmGraph) -> tuple[GrowingGraph, Growth, dict[str, Any]]:
    """The call site's graph with this window added, the growth and the state.

    Outside a windowed job the state is a fresh dict, so everything is new.
    """
    state = graph.state
    seen = state.get("graph")
    if not isinstance(seen, GrowingGraph):
        seen = GrowingGraph()
        state["graph"] = seen
    growth = seen.add(collect_delta(graph))
    return seen, growth, state


def csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by ``keys`` (0..n-1): (indptr, grouped values)."""
    order = np.argsort(keys, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=indptr[1:])
    return indptr, values[order]


def gather(
    indptr: np.ndarray, values: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The CSR entries of ``rows``: (position in ``rows`` of each entry, its value)."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    owner = np.repeat(np.arange(len(rows)), lengths)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return owner, values[offsets + np.arange(total)]


def output_frame(graph: AlgorithmGraph, algorithm: BuiltinAlgorithm, columns: list[Any]) -> Any:
    """A DataFrame c0..cN of the algorithm's schema from driver-side columns."""
    schema = algorithm.spark_schema(graph.id_type)
    spark = graph.spark if graph.spark is not None else graph.vertices.sparkSession
    # As Arrow: one batch to the JVM, not a Python object per value.
    rows = arrow_table(columns, schema)
    if rows is not None:
        return from_rows(spark, rows, schema)
    # Values Arrow will not take as typed: Spark converts them.
    pdf = pd.DataFrame({f"c{i}": pd.Series(col, dtype=object) for i, col in enumerate(columns)})
    if pdf.empty:
        return spark.createDataFrame([], schema)
    return spark.createDataFrame(pdf.astype(object).where(pdf.notna(), None), schema)


# ---------------------------------------------------------------------------
# inc_wcc
# ---------------------------------------------------------------------------
