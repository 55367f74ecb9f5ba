"""Triangles: ``triangle_count([label])`` and ``cluster_coefficient([label], [min_degree])``.

Both exchange neighbour sets once (BOTH directions) and count common members.
GeaFlow's facts, restated:

* A vertex label, when given, leaves the other-label vertices out: they run
  nothing and are removed from everyone's neighbour sets.  An edge end with no
  vertex still counts as a neighbour.
* ``triangle_count``: a vertex receives its neighbour's set once per entry of
  that neighbour's edge list (parallel edges repeat it) and reports
  ``sum(|N(u) & N(v)|) / 2``, integer division — the number of triangles on a
  simple graph.
* ``cluster_coefficient``: N(v) is the *set* of neighbours and ``degree`` its
  size; vertices below ``min_degree`` (default 2) send nothing and report 0.0;
  the others report ``t / (degree * (degree - 1))`` where t counts, over the
  neighbours u that sent, ``|N(u) & N(v)|`` — networkx's clustering on a simple
  graph.  Arguments: ``(label)``, ``(label, min_degree)`` or ``(min_degree)``.
* GeaFlow reports triangle counts in its second superstep and coefficients in
  its third; a ``geaflow.dsl.max.traversal`` below that reports nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from geaflow_sql import types as T
from geaflow_sql.errors import ValidationError

from ..builtin import ID, BuiltinAlgorithm, Output, Param
from ..dist_graph import DistGraph, Needs
from ..local_graph import LocalGraph
from ..options import RunOptions
from ..registry import register_algorithm

_PLAN = "org.apache.geaflow.dsl.udf.graph."


def _membership(g: LocalGraph, label: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(runs, excluded): vertices that run the program, nodes left out of neighbour sets."""
    runs = np.zeros(g.n, dtype=bool)
    runs[: g.nv] = g.label_mask(label)
    excluded = g.is_vertex & ~runs
    return runs, excluded


def _neighbour_sets(g: LocalGraph, runs: np.ndarray, excluded: np.ndarray) -> sp.csr_matrix:
    """Binary N[u, w]: w is in u's neighbour set (rows of running vertices only)."""
    owner, other = g.both_pairs
    keep = runs[owner] & ~excluded[other]
    m = g.matrix(owner[keep], other[keep])
    m.data[:] = 1.0
    return m


def _empty_result(g: LocalGraph, dtype: Any) -> list[np.ndarray]:
    return [g.ids[:0], np.zeros(0, dtype=dtype)]


class TriangleCount(BuiltinAlgorithm):
    name = "triangle_count"
    java_classes = (_PLAN + "TriangleCount",)
    params = (Param("vertex_label", "str", None),)
    outputs = (Output("id", ID), Output("count", T.BIGINT))

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs(vertex_labels=p["vertex_label"] is not None)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        if max_iterations < 2:
            return _empty_result(g, np.int64)
        runs, excluded = _membership(g, p["vertex_label"])
        sets = _neighbour_sets(g, runs, excluded)
        owner, other = g.both_pairs
        keep = runs[owner] & runs[other]
        messages = g.matrix(owner[keep], other[keep])  # multiplicity of u -> v
        common = (messages.T @ sets).multiply(sets)
        total = np.rint(np.asarray(common.sum(axis=1)).ravel()).astype(np.int64)
        hit = np.flatnonzero(runs)
        return [g.ids[hit], total[hit] // 2]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        if opts.max_iterations < 2:
            return dg.vertex_ids().where(F.lit(False)).select("id", F.lit(0).cast("long"))
        runs, sets = _distributed_sets(dg, p["vertex_label"])
        messages = (
            dg.pairs("BOTH")
            .join(runs.withColumnRenamed("id", "a"), "a", "left_semi")
            .join(runs.withColumnRenamed("id", "b"), "b", "left_semi")
        )
        counts = _common_counts(messages, sets).withColumnRenamed("n", "total")
        return runs.join(counts, "id", "left").select(
            "id", F.floor(F.coalesce("total", F.lit(0)) / 2).cast("long").alias("count")
        )


def _distributed_sets(dg: DistGraph, label: str | None) -> tuple[Any, Any]:
    """(running ids, neighbour sets as distinct (a, b) rows)."""
    from pyspark.sql import functions as F

    runs = dg.vertex_ids(label)
    sets = dg.pairs("BOTH").join(runs.withColumnRenamed("id", "a"), "a", "left_semi")
    if label is not None:
        excluded = dg.vertices.where(F.col("label") != F.lit(label)).select(F.col("id").alias("b"))
        excluded = excluded.unionByName(
            dg.vertices.where(F.col("label").isNull()).select(F.col("id").alias("b"))
        )
        sets = sets.join(excluded, "b", "left_anti")
    return runs, sets.select("a", "b").distinct()


def _common_counts(messages: Any, sets: Any) -> Any:
    """(id, n): n = sum over the messages u -> v (rows, repeats kept) of |N(u) & N(v)|."""
    from pyspark.sql import functions as F

    left = messages.select("a", "b").join(sets.select(F.col("a"), F.col("b").alias("w")), "a")
    both = left.join(sets.select(F.col("a").alias("b"), F.col("b").alias("w")), ["b", "w"])
    return both.groupBy(F.col("b").alias("id")).agg(F.count("*").alias("n"))


class ClusterCoefficient(BuiltinAlgorithm):
    name = "cluster_coefficient"
    java_classes = (_PLAN + "ClusterCoefficient",)
    params = (Param("vertex_label", "str", None), Param("min_degree", "int", 2))
    outputs = (Output("vid", ID), Output("coefficient", T.DOUBLE))

    def bind(self, args: list[Any], id_type: Any) -> dict[str, Any]:
        """``(label)``, ``(label, min_degree)`` or ``(min_degree)``: the first argument's type decides."""
        if len(args) > 2:
            raise ValidationError(
                f"cluster_coefficient() takes at most 2 arguments, got {len(args)}: "
                "usage cluster_coefficient([vertex_label], [min_degree])"
            )
        label, min_degree = None, 2
        if args and args[0] is not None:
            first = args[0]
            if isinstance(first, str):
                label = first
                if len(args) > 1 and args[1] is not None:
                    min_degree = _integer(args[1])
            elif isinstance(first, (int, np.integer)) and not isinstance(first, bool):
                min_degree = int(first)
            else:
                raise ValidationError(
                    "cluster_coefficient() argument must be a vertex label (string) or a minimum "
                    f"degree (integer), got {first!r}"
                )
        return {"vertex_label": label, "min_degree": min_degree}

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs(vertex_labels=p["vertex_label"] is not None)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        if max_iterations < 3:
            return _empty_result(g, np.float64)
        runs, excluded = _membership(g, p["vertex_label"])
        sets = _neighbour_sets(g, runs, excluded)
        degree = np.asarray(sets.sum(axis=1)).ravel().astype(np.int64)
        big = runs & (degree >= p["min_degree"])
        senders = sp.diags(big.astype(np.float64)) @ sets
        tri = np.rint(np.asarray((senders.T @ sets).multiply(sets).sum(axis=1)).ravel()).astype(
            np.int64
        )
        hit = np.flatnonzero(runs)
        coefficient = _coefficients(degree[hit], tri[hit], big[hit])
        return [g.ids[hit], coefficient]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        if opts.max_iterations < 3:
            return dg.vertex_ids().where(F.lit(False)).select("id", F.lit(0.0))
        runs, sets = _distributed_sets(dg, p["vertex_label"])
        degree = runs.join(
            sets.groupBy(F.col("a").alias("id")).agg(F.count("*").alias("degree")), "id", "left"
        )
        degree = degree.select("id", F.coalesce("degree", F.lit(0)).alias("degree"))
        big = degree.where(F.col("degree") >= p["min_degree"]).select("id")
        messages = sets.join(big.withColumnRenamed("id", "a"), "a", "left_semi").join(
            big.withColumnRenamed("id", "b"), "b", "left_semi"
        )
        tri = _common_counts(messages, sets).withColumnRenamed("n", "tri")
        d = F.col("degree").cast("double")
        t = F.coalesce(F.col("tri"), F.lit(0)).cast("double")
        possible = d * (d - F.lit(1.0))
        value = (
            F.when(F.col("degree") < p["min_degree"], F.lit(0.0))
            .when(possible > 0, (F.lit(2.0) * (t / F.lit(2.0))) / possible)
            .otherwise(F.lit(0.0))
        )
        return degree.join(tri, "id", "left").select("id", value.alias("coefficient"))


def _coefficients(degree: np.ndarray, tri: np.ndarray, big: np.ndarray) -> np.ndarray:
    d = degree.astype(np.float64)
    possible = d * (d - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (2.0 * (tri / 2.0)) / possible
    return np.where(big & (possible > 0), value, 0.0)


def _integer(value: Any) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise ValidationError(f"cluster_coefficient() minimum degree must be an integer, got {value!r}")


for _algorithm in (TriangleCount(), ClusterCoefficient()):
    register_algorithm(_algorithm)
