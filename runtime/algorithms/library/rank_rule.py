"""GeaFlow's PageRank step on DataFrames (see ``ranking``), shared by the
built-in supersteps and the GraphFrames backend: the starting state, the
links (each vertex's OUT edges plus a self link marked ``own`` that carries
its own rank), and the update of a round's sums."""

from __future__ import annotations

from typing import Any

from ..dist_graph import DistGraph, with_self


def rank_start(dg: DistGraph) -> tuple[Any, Any]:
    """(the state before round 1: id, outdeg, pr, sent; the links a, b, own)."""
    from pyspark.sql import functions as F

    ids = dg.vertex_ids()
    outdeg = dg.edges.groupBy(F.col("src").alias("id")).agg(
        F.count("*").cast("double").alias("outdeg")
    )
    real = dg.edges.select(F.col("src").alias("a"), F.col("dst").alias("b")).join(
        ids.withColumnRenamed("id", "b"), "b", "left_semi"
    )
    start = ids.join(outdeg, "id", "left").select(
        "id",
        F.coalesce("outdeg", F.lit(0.0)).alias("outdeg"),
        F.lit(1.0).alias("pr"),
        F.lit(1.0).alias("sent"),
    )
    return start, with_self(real, ids)


def rank_edges(dg: DistGraph) -> tuple[Any, Any]:
    """(the state before round 1, as ``rank_start``; the real edges a -> b
    with the out-degree ``d`` of a)."""
    from pyspark.sql import functions as F

    start, _ = rank_start(dg)
    ids = dg.vertex_ids()
    real = dg.edges.select(F.col("src").alias("a"), F.col("dst").alias("b")).join(
        ids.withColumnRenamed("id", "b"), "b", "left_semi"
    )
    degree = start.select(F.col("id").alias("a"), F.col("outdeg").alias("d"))
    return start, real.join(degree, "a")


def rank_update(summed: Any, damping: float, threshold: float) -> Any:
    """The next state from a round's sums (id, outdeg, sum of shares, old rank):
    the new rank, and what the vertex sends next (the new rank when it moved
    by more than the threshold, else the old one)."""
    from pyspark.sql import functions as F

    new = F.lit(1 - damping) + F.coalesce(F.col("sum"), F.lit(0.0)) * F.lit(damping)
    return summed.withColumn("new", new).select(
        "id",
        "outdeg",
        F.col("new").alias("pr"),
        F.when(F.abs(F.col("old") - F.col("new")) > F.lit(threshold), F.col("new"))
        .otherwise(F.col("old"))
        .alias("sent"),
    )
