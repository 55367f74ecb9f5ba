"""The GraphFrames backend: GeaFlow's algorithms on GraphFrames' primitives.

Used when ``geaflow.dsl.algorithm.backend`` is graphframes (or auto and the
JVM package is loaded).  Each function reproduces the built-in engine's
answer exactly, which decides which GraphFrames primitive fits:

* hop distances (SSSP, k-hop) come from ``shortestPaths`` on the reversed
  graph — GraphFrames measures the distance *to* a landmark — cut at the same
  depth GeaFlow's bounded supersteps reach;
* PageRank and the min-label propagations (wcc, cc) run as rounds of
  ``aggregateMessages``: GraphFrames' own ``pageRank`` normalises ranks and
  its ``connectedComponents`` has no round bound, so they would answer a
  different question than GeaFlow's vertex programs.
"""

from __future__ import annotations

from typing import Any

from ..dist_graph import DistGraph, with_self
from ..iteration import iterate
from ..options import RunOptions
from .rank_rule import rank_start, rank_update


def _graph(vertices: Any, edges: Any) -> Any:
    from graphframes import GraphFrame

    return GraphFrame(vertices, edges)


def bounded_distances(source: Any, pairs: Any, allowed: Any, max_depth: int) -> Any:
    """(id, dist): hops from ``source`` over (a, b) pairs within ``allowed``, at most ``max_depth``."""
    from pyspark.sql import functions as F

    edges = (
        pairs.join(allowed.withColumnRenamed("id", "a"), "a", "left_semi")
        .join(allowed.withColumnRenamed("id", "b"), "b", "left_semi")
        .select(F.col("b").alias("src"), F.col("a").alias("dst"))
    )
    found = _graph(allowed, edges).shortestPaths(landmarks=[source], use_local_checkpoints=True)
    dist = F.element_at(F.col("distances"), F.lit(source))
    return found.where(dist.isNotNull() & (dist <= max_depth)).select(
        "id", dist.cast("long").alias("dist")
    )


def page_rank(
    dg: DistGraph, damping: float, threshold: float, rounds: int, opts: RunOptions
) -> Any:
    """GeaFlow's PageRank (see ``ranking``) with one ``aggregateMessages`` per round.

    Every vertex also has a self edge marked ``own`` so one aggregation brings
    it its own rank as well as its in-neighbours' shares.
    """
    from graphframes.lib import AggregateMessages as AM
    from pyspark.sql import functions as F

    start, links = rank_start(dg)
    edges = links.select(F.col("a").alias("src"), F.col("b").alias("dst"), "own")
    own = AM.edge["own"]
    message = F.struct(
        F.when(
            ~own & (AM.src["outdeg"] > 0), F.greatest(AM.src["sent"] / AM.src["outdeg"], F.lit(0.0))
        ).alias("share"),
        F.when(own, AM.src["pr"]).alias("pr"),
        F.when(own, AM.src["outdeg"]).alias("outdeg"),
    )

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        received = _graph(frames["state"], edges).aggregateMessages(
            [
                F.sum(AM.msg["share"]).alias("sum"),
                F.max(AM.msg["pr"]).alias("old"),
                F.max(AM.msg["outdeg"]).alias("outdeg"),
            ],
            sendToDst=[message],
        )
        nxt = rank_update(received, damping, threshold)
        return {"state": nxt}, None

    return iterate({"state": start}, step, rounds, opts)["state"].select("id", "pr")


def min_label(dg: DistGraph, start: Any, pairs: Any, rounds: int, opts: RunOptions) -> Any:
    """(id, label): min-propagation of string labels along (a -> b) pairs."""
    from graphframes.lib import AggregateMessages as AM
    from pyspark.sql import functions as F

    edges = with_self(pairs, dg.vertex_ids()).select(
        F.col("a").alias("src"), F.col("b").alias("dst"), "own"
    )
    message = F.struct(AM.src["label"].alias("label"), AM.edge["own"].alias("own"))

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        state = frames["state"].select("id", "label")
        received = _graph(state, edges).aggregateMessages(
            [
                F.min(AM.msg["label"]).alias("label"),
                F.max(F.when(AM.msg["own"], AM.msg["label"])).alias("old"),
            ],
            sendToDst=[message],
        )
        nxt = received.select("id", "label", (F.col("label") < F.col("old")).alias("changed"))
        return {"state": nxt}, _nothing_changed

    return iterate({"state": start}, step, rounds, opts)["state"].select("id", "label")


def _nothing_changed(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("changed")).isEmpty()
