"""A graph held in numpy arrays, for algorithms that run inside one task.

Vertices keep the order they were read in (GeaFlow's storage order) and get
the node indices ``0..nv-1``; an edge endpoint that is not a vertex (an edge
written before, or without, its vertex) gets an index ``>= nv``.  Such a
*phantom* node never runs the vertex program — GeaFlow drops messages to ids
that have no vertex — but it still counts in its neighbours' edge lists.

Adjacency is kept as edge arrays plus scipy sparse matrices whose entries
count parallel edges, because GeaFlow's vertex programs see every edge,
duplicates and self-loops included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

# Column names of the single frame that carries a whole graph into one task.
KIND = "__kind"  # 0: vertex row, 1: edge row
A = "__a"  # vertex id, or edge source id
B = "__b"  # edge target id (null on vertex rows)
LABEL = "__label"
VERTEX_PROP = "__vp_"  # + property name
EDGE_PROP = "__ep_"


@dataclass
class LocalGraph:
    ids: np.ndarray  # id of every node (vertices first)
    nv: int  # number of vertices
    vertex_label: np.ndarray  # per vertex (object)
    src: np.ndarray  # per edge, node index
    dst: np.ndarray
    edge_label: np.ndarray  # per edge (object)
    vertex_props: dict[str, np.ndarray] = field(default_factory=dict)
    edge_props: dict[str, np.ndarray] = field(default_factory=dict)
    id_type: Any = None  # the graph's GeaFlow id type, when known

    # Construction ----------------------------------------------------------
    @classmethod
    def build(
        cls,
        vertex_ids: np.ndarray,
        vertex_labels: np.ndarray,
        src: np.ndarray,
        dst: np.ndarray,
        edge_labels: np.ndarray,
        vertex_props: dict[str, np.ndarray] | None = None,
        edge_props: dict[str, np.ndarray] | None = None,
    ) -> LocalGraph:
        """From arrays without nulls in the id columns."""
        nvrows = len(vertex_ids)
        ne = len(src)
        # factorize numbers ids in order of first appearance, so the distinct
        # vertex ids are 0..nv-1 in storage order; the first row of an id wins
        # (GeaFlow keys its graph state by id).
        codes, uniques = pd.factorize(np.concatenate([vertex_ids, src, dst]), sort=False)
        _, first_rows = np.unique(codes[:nvrows], return_index=True)
        return cls(
            ids=_normalise_ids(np.asarray(uniques)),
            nv=len(first_rows),
            vertex_label=np.asarray(vertex_labels, dtype=object)[first_rows],
            src=codes[nvrows : nvrows + ne].astype(np.int64),
            dst=codes[nvrows + ne :].astype(np.int64),
            edge_label=np.asarray(edge_labels, dtype=object),
            vertex_props={k: np.asarray(v)[first_rows] for k, v in (vertex_props or {}).items()},
            edge_props={k: np.asarray(v) for k, v in (edge_props or {}).items()},
        )

    @classmethod
    def from_frames(cls, vertices: pd.DataFrame, edges: pd.DataFrame) -> LocalGraph:
        """From pandas frames with columns id, label, ... and src, dst, label, ...."""
        vertices = vertices[vertices["id"].notna()]
        edges = edges[edges["src"].notna() & edges["dst"].notna()]
        return cls.build(
            _values(vertices["id"]),
            _labels(vertices, "label"),
            _values(edges["src"]),
            _values(edges["dst"]),
            _labels(edges, "label"),
            {c: _values(vertices[c]) for c in vertices.columns if c not in ("id", "label")},
            {c: _values(edges[c]) for c in edges.columns if c not in ("src", "dst", "label")},
        )

    @classmethod
    def from_arrow(cls, table: Any) -> LocalGraph:
        """From the one-frame layout (``KIND``, ``A``, ``B``, ``LABEL``, props) as Arrow.

        Arrow arrays are converted column by column so that integer ids never
        pass through a float column (pandas would do that for a nullable one).
        """
        import pyarrow.compute as pc

        kind = table.column(KIND)
        vt = table.filter(pc.and_(pc.equal(kind, 0), pc.is_valid(table.column(A))))
        et = table.filter(
            pc.and_(
                pc.equal(kind, 1),
                pc.and_(pc.is_valid(table.column(A)), pc.is_valid(table.column(B))),
            )
        )
        names = table.column_names
        return cls.build(
            _arrow_values(vt.column(A)),
            _arrow_labels(vt.column(LABEL)),
            _arrow_values(et.column(A)),
            _arrow_values(et.column(B)),
            _arrow_labels(et.column(LABEL)),
            {
                c[len(VERTEX_PROP) :]: _arrow_objects(vt.column(c))
                for c in names
                if c.startswith(VERTEX_PROP)
            },
            {
                c[len(EDGE_PROP) :]: _arrow_objects(et.column(c))
                for c in names
                if c.startswith(EDGE_PROP)
            },
        )

    @classmethod
    def from_lists(
        cls,
        vertices: Iterable[Any],
        edges: Iterable[Sequence[Any]],
        vertex_labels: Sequence[str] | None = None,
        edge_labels: Sequence[str] | None = None,
    ) -> LocalGraph:
        """Handy for tests: vertex ids, and (src, dst[, weight]) tuples."""
        vids = list(vertices)
        elist = [tuple(e) for e in edges]
        vframe = pd.DataFrame(
            {"id": pd.Series(vids, dtype=object), "label": list(vertex_labels or ["v"] * len(vids))}
        )
        eframe = pd.DataFrame(
            {
                "src": pd.Series([e[0] for e in elist], dtype=object),
                "dst": pd.Series([e[1] for e in elist], dtype=object),
                "label": list(edge_labels or ["e"] * len(elist)),
            }
        )
        if elist and all(len(e) > 2 for e in elist):
            eframe["weight"] = [float(e[2]) for e in elist]
        if vids and all(isinstance(v, (int, np.integer)) for v in vids):
            vframe["id"] = vframe["id"].astype(np.int64)
            eframe["src"] = eframe["src"].astype(np.int64)
            eframe["dst"] = eframe["dst"].astype(np.int64)
        return cls.from_frames(vframe, eframe)

    @property
    def id_type_or_guess(self) -> Any:
        from geaflow_sql.core import types as T

        if self.id_type is not None:
            return self.id_type
        return T.BIGINT if self.ids.dtype.kind in "iu" else T.VARCHAR

    # Shape -------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def ne(self) -> int:
        return len(self.src)

    @cached_property
    def is_vertex(self) -> np.ndarray:
        return np.arange(self.n) < self.nv

    def vertex_index(self, vertex_id: Any) -> int | None:
        """Node index of a vertex id, or None when no vertex has it."""
        matches = np.flatnonzero(self.ids[: self.nv] == vertex_id)
        return int(matches[0]) if len(matches) else None

    def label_mask(self, label: str | None) -> np.ndarray:
        """Vertices that run the program: all, or those with ``label``."""
        if label is None:
            return np.ones(self.nv, dtype=bool)
        return self.vertex_label == label

    # Adjacency ---------------------------------------------------------------
    def matrix(
        self, src: np.ndarray, dst: np.ndarray, data: np.ndarray | None = None
    ) -> sp.csr_matrix:
        """n x n matrix with ``m[s, d]`` = sum of ``data`` (default 1) over the pairs."""
        values = np.ones(len(src), dtype=np.float64) if data is None else data.astype(np.float64)
        return sp.csr_matrix((values, (src, dst)), shape=(self.n, self.n))

    @cached_property
    def both_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(owner, neighbour) of every entry of the BOTH edge lists.

        An edge u -> v is in u's list (as OUT) and in v's (as IN), so a
        self-loop appears twice in its vertex's list.
        """
        return np.concatenate([self.src, self.dst]), np.concatenate([self.dst, self.src])

    @cached_property
    def both_matrix(self) -> sp.csr_matrix:
        """``M[u, v]`` = how many times v is in u's BOTH list (symmetric)."""
        owner, other = self.both_pairs
        return self.matrix(owner, other)

    @cached_property
    def out_degree(self) -> np.ndarray:
        return np.bincount(self.src, minlength=self.n).astype(np.int64)


def _arrow_values(column: Any) -> np.ndarray:
    values = column.to_numpy(zero_copy_only=False) if len(column) else np.array([], dtype=object)
    return values.astype(np.int64) if values.dtype.kind in "iu" else values


def _arrow_labels(column: Any) -> np.ndarray:
    """A label column as Python strings (None for null; all None when the
    algorithm does not read labels), without a Python object per row built
    through ``to_pylist``."""
    if column.null_count == len(column):
        return np.full(len(column), None, dtype=object)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)


def _arrow_objects(column: Any) -> np.ndarray:
    """A property column as Python values (None for null), whatever its type."""
    import pyarrow as pa

    if pa.types.is_floating(column.type) and column.null_count == 0:
        return column.to_numpy(zero_copy_only=False)
    return np.asarray(column.to_pylist(), dtype=object)


def _values(series: pd.Series) -> np.ndarray:
    if pd.api.types.is_integer_dtype(series.dtype):
        return series.to_numpy(dtype=np.int64)
    return series.to_numpy()


def _normalise_ids(ids: np.ndarray) -> np.ndarray:
    """Integer ids as int64, others as an object array."""
    if ids.dtype.kind in "iu":
        return ids.astype(np.int64)
    if ids.dtype == object and len(ids) and all(isinstance(v, (int, np.integer)) for v in ids):
        return ids.astype(np.int64)
    return ids.astype(object)


def _labels(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame.columns:
        return np.full(len(frame), None, dtype=object)
    return frame[column].to_numpy(dtype=object)
