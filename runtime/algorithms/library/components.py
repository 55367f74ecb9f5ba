"""Components and labels: ``wcc``, ``cc`` (connected components) and ``lpa``.

GeaFlow labels vertices with ``String.valueOf(id)`` and compares labels as
strings, so "10" < "9".  Its facts, restated:

* ``wcc([iterations=20, [field]])``: along BOTH directions each vertex keeps
  the smallest label it has seen, for iterations 2 .. iterations - 1 — after
  ``r`` rounds a vertex holds the smallest label within ``r`` hops.
* ``cc([iterations=1000, [field]])``: the same along IN edges only: a label
  travels from an edge's target to its source, so a vertex ends with the
  smallest label among the vertices it can reach.
* ``lpa([iterations=100, [field]])``: a vertex counts the labels it receives
  (one per entry of its senders' BOTH lists, plus its own when it changed) and
  takes the smallest of the most frequent ones — unless its current label is
  smaller still: GeaFlow starts its tie search from the current label.  Only
  vertices whose label changed send again.

All three are also bounded by ``geaflow.dsl.max.traversal``.  Min-propagation
reaches a fixed point once nothing changes, where both engines stop early.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geaflow_sql.core import types as T
from planner.algorithms import builtin_signature

from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, with_self
from ..iteration import iterate
from ..java_compat import string_ranks
from ..local_graph import LocalGraph
from ..options import RunOptions


def update_rounds(iterations: int, max_iterations: int) -> int:
    """Rounds that update labels: iterations 2 .. min(iterations - 1, bound)."""
    return max(0, min(iterations - 1, max_iterations) - 1)


def real_pairs(g: LocalGraph, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """(sender, receiver) per message of one superstep, between vertices only."""
    if direction == "BOTH":
        a, b = g.both_pairs
    elif direction == "IN":  # a vertex tells the sources of its in-edges
        a, b = g.dst, g.src
    else:
        a, b = g.src, g.dst
    keep = (a < g.nv) & (b < g.nv)
    return a[keep], b[keep]


def min_propagate(values: np.ndarray, a: np.ndarray, b: np.ndarray, rounds: int) -> np.ndarray:
    """Each round every receiver keeps min(own, senders'); stops early at the fixed point."""
    return min_propagate_rounds(values, a, b, rounds)[0]


def min_propagate_rounds(
    values: np.ndarray, a: np.ndarray, b: np.ndarray, rounds: int
) -> tuple[np.ndarray, int]:
    """``min_propagate`` and the number of rounds it ran (the last one changes nothing)."""
    if not len(a) or rounds <= 0:
        return values, 0
    order = np.argsort(b, kind="stable")
    a, b = a[order], b[order]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    receivers = b[starts]
    values = values.copy()
    ran = 0
    for _ in range(rounds):
        ran += 1
        best = np.minimum.reduceat(values[a], starts)
        new = np.minimum(values[receivers], best)
        if np.array_equal(new, values[receivers]):
            break
        values[receivers] = new
    return values, ran


def min_propagate_distributed(
    start: Any, pairs: Any, ids: Any, rounds: int, opts: RunOptions
) -> Any:
    """(id, label): min-propagation of string labels in supersteps."""
    from pyspark.sql import functions as F

    links = with_self(pairs, ids).cache()

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        state = frames["state"]
        nxt = (
            state.join(links, state["id"] == links["a"])
            .groupBy(F.col("b").alias("id"))
            .agg(
                F.min("label").alias("label"),
                F.max(F.when(F.col("own"), F.col("label"))).alias("old"),
            )
            .select("id", "label", (F.col("label") < F.col("old")).alias("changed"))
        )
        return {"state": nxt}, _nothing_changed

    out = iterate({"state": start}, step, rounds, opts)["state"].select("id", "label")
    links.unpersist()
    return out


def _nothing_changed(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("changed")).isEmpty()


def _string_labels(dg: DistGraph) -> Any:
    from pyspark.sql import functions as F

    return dg.vertex_ids().select("id", F.col("id").cast("string").alias("label"))


def _real(dg: DistGraph, direction: str) -> Any:
    ids = dg.vertex_ids()
    return (
        dg.pairs(direction)
        .join(ids.withColumnRenamed("id", "a"), "a", "left_semi")
        .join(ids.withColumnRenamed("id", "b"), "b", "left_semi")
    )


class _MinLabel(BuiltinAlgorithm):
    """Components as the smallest label (compared as Java strings) that reaches
    a vertex along ``direction``."""

    direction = "BOTH"
    has_graphframes = True

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        vids = g.ids[: g.nv]
        rank, order = string_ranks(vids)
        a, b = real_pairs(g, self.direction)
        final = min_propagate(rank, a, b, update_rounds(p["iterations"], max_iterations))
        return [vids, np.array([str(v) for v in _as_strings(vids[order[final]])], dtype=object)]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        rounds = update_rounds(p["iterations"], opts.max_iterations)
        return min_propagate_distributed(
            _string_labels(dg), _real(dg, self.direction), dg.vertex_ids(), rounds, opts
        )

    def graphframes(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from .graphframes_paths import min_label

        rounds = update_rounds(p["iterations"], opts.max_iterations)
        return min_label(dg, _string_labels(dg), _real(dg, self.direction), rounds, opts)


def _as_strings(values: np.ndarray) -> list[str]:
    from ..java_compat import java_strings

    return java_strings(values).tolist()


class WeakConnectedComponents(_MinLabel):
    signature = builtin_signature("wcc")
    direction = "BOTH"


class ConnectedComponents(_MinLabel):
    signature = builtin_signature("cc")
    direction = "IN"


# ---------------------------------------------------------------------------
# Label propagation
# ---------------------------------------------------------------------------


class LabelPropagation(BuiltinAlgorithm):
    signature = builtin_signature("lpa")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        nv = g.nv
        vids = g.ids[:nv]
        label, order = string_ranks(vids)
        a, b = real_pairs(g, "BOTH")
        changed = np.ones(nv, dtype=bool)
        for _ in range(update_rounds(p["iterations"], max_iterations)):
            senders = np.flatnonzero(changed)
            if not len(senders):
                break
            live = changed[a]
            to = np.concatenate([b[live], senders])
            what = np.concatenate([label[a[live]], label[senders]])
            key = to * nv + what
            uniq, count = np.unique(key, return_counts=True)
            target, lab = uniq // nv, uniq % nv
            starts = np.flatnonzero(np.r_[True, target[1:] != target[:-1]])
            top = np.maximum.reduceat(count, starts)
            is_top = count == np.repeat(top, np.diff(np.r_[starts, len(target)]))
            best = np.minimum.reduceat(np.where(is_top, lab, nv), starts)
            receivers = target[starts]
            new = label.copy()
            new[receivers] = np.minimum(label[receivers], best)
            changed = new != label
            label = new
        return [vids, vids[order[label]]]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        links = with_self(_real(dg, "BOTH"), dg.vertex_ids()).cache()
        start = _string_labels(dg).withColumn("changed", F.lit(True))

        def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
            # One pass over (state joined with edge lists): the own row carries a
            # vertex's label; rows from senders that changed carry messages (a
            # vertex that changed also messages itself).
            state = frames["state"]
            rows = state.join(links, state["id"] == links["a"])
            sent = F.col("changed")
            per_label = rows.groupBy(F.col("b").alias("id"), "label").agg(
                F.sum(F.when(sent, 1).otherwise(0)).alias("n"),
                F.max(F.col("own")).alias("is_own"),
            )
            per_vertex = Window.partitionBy("id")
            ranked = per_label.select(
                "id",
                "label",
                "n",
                F.max("n").over(per_vertex).alias("top"),
                F.max(F.when(F.col("is_own"), F.col("label"))).over(per_vertex).alias("old"),
            )
            best = ranked.groupBy("id").agg(
                F.first("old").alias("old"),
                F.min(
                    F.when((F.col("n") == F.col("top")) & (F.col("top") > 0), F.col("label"))
                ).alias("best"),
            )
            nxt = best.select(
                "id",
                F.least("old", F.coalesce("best", "old")).alias("label"),
                (F.coalesce("best", "old") < F.col("old")).alias("changed"),
            )
            return {"state": nxt}, _nothing_changed

        rounds = update_rounds(p["iterations"], opts.max_iterations)
        state = iterate({"state": start}, step, rounds, opts)["state"]
        links.unpersist()
        return state.select("id", F.col("label").cast(T.spark_sql_type(dg.id_type)).alias("label"))
