"""Neighbourhood similarity of two vertices: ``common_neighbors(a, b)``, ``jaccard_similarity(a, b)``.

Neighbours are taken over BOTH directions.  ``common_neighbors`` reports each
vertex adjacent to both a and b once (a vertex with a self-loop is its own
neighbour there, as in GeaFlow).  ``jaccard_similarity`` reports one row
(a, b, |N(a) & N(b)| / |N(a) | N(b)|) with N(x) the set of x's neighbours
other than x itself, 0.0 when both are empty, and nothing when a has no
vertex.  Both ids are cast to the graph's id type first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.algorithms import builtin_signature

from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph
from ..local_graph import LocalGraph
from ..options import RunOptions


def _neighbours(g: LocalGraph, index: int | None) -> np.ndarray:
    if index is None:
        return np.zeros(0, dtype=np.int64)
    owner, other = g.both_pairs
    return np.unique(other[owner == index])


class CommonNeighbors(BuiltinAlgorithm):
    signature = builtin_signature("common_neighbors")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        if max_iterations < 2:
            return [g.ids[:0]]
        first = _neighbours(g, g.vertex_index(p["a"]))
        second = _neighbours(g, g.vertex_index(p["b"]))
        both = np.intersect1d(first, second)
        return [g.ids[both[both < g.nv]]]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        if opts.max_iterations < 2:
            return dg.vertex_ids().where(F.lit(False))
        pairs = dg.pairs("BOTH").join(
            dg.vertex_ids().withColumnRenamed("id", "a"), "a", "left_semi"
        )
        of_a = pairs.where(F.col("a") == F.lit(p["a"])).select(F.col("b").alias("id")).distinct()
        of_b = pairs.where(F.col("a") == F.lit(p["b"])).select(F.col("b").alias("id")).distinct()
        return of_a.join(of_b, "id", "left_semi").join(dg.vertex_ids(), "id", "left_semi")


class JaccardSimilarity(BuiltinAlgorithm):
    signature = builtin_signature("jaccard_similarity")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        ia, ib = g.vertex_index(p["a"]), g.vertex_index(p["b"])
        if ia is None or max_iterations < 2:
            return [g.ids[:0], g.ids[:0], np.zeros(0)]
        first = _neighbours(g, ia)
        first = first[first != ia]
        second = _neighbours(g, ib)
        second = second[second != ib] if ib is not None else second
        common = len(np.intersect1d(first, second))
        union = len(first) + len(second) - common
        value = common / union if union else 0.0
        return [g.ids[[ia]], np.array([p["b"]], dtype=g.ids.dtype), np.array([value])]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        a, b = F.lit(p["a"]), F.lit(p["b"])
        pairs = dg.pairs("BOTH").where(F.col("a") != F.col("b"))
        of_a = pairs.where(F.col("a") == a).select("b").distinct()
        of_b = pairs.where(F.col("a") == b).select("b").distinct()
        stats = (
            of_a.agg(F.count("*").alias("na"))
            .crossJoin(of_b.agg(F.count("*").alias("nb")))
            .crossJoin(of_a.join(of_b, "b", "left_semi").agg(F.count("*").alias("common")))
        )
        union = F.col("na") + F.col("nb") - F.col("common")
        value = F.when(union == 0, F.lit(0.0)).otherwise(
            F.col("common").cast("double") / union.cast("double")
        )
        rows = dg.vertex_ids().where(F.col("id") == a).crossJoin(stats)
        if opts.max_iterations < 2:
            rows = rows.where(F.lit(False))
        return rows.select(
            F.col("id").alias("vertex_a"), b.alias("vertex_b"), value.alias("jaccard_coefficient")
        )
