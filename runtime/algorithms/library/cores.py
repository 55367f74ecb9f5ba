"""k-core as GeaFlow computes it: ``kcore([k=1])`` -> (id, value).

Restated: every vertex starts active and, each superstep, counts the
messages from the neighbours that were active in the previous one — one per
entry of their BOTH edge lists, so parallel edges count twice and a self-loop
counts twice.  A vertex whose count falls below k drops out with value 0 and
stays out; the others hold their count.  At the fixed point the value of a
vertex is its degree inside the k-core (0 outside it).  GeaFlow keeps
iterating until ``geaflow.dsl.max.traversal``; the values stop changing as
soon as the set of active vertices does, where both engines stop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.algorithms import builtin_signature

from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, with_self
from ..iteration import iterate
from ..local_graph import LocalGraph
from ..options import RunOptions
from .components import _real


class KCore(BuiltinAlgorithm):
    signature = builtin_signature("kcore")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        k, nv = p["k"], g.nv
        both = g.both_matrix[:nv, :nv].tocsr()
        value = np.full(nv, -1, dtype=np.int64)
        active = np.ones(nv, dtype=bool)
        for _ in range(max_iterations - 1):  # iterations 2 .. bound
            received = np.rint(both @ active.astype(np.float64)).astype(np.int64)
            running = value != 0
            new = np.where(running, np.where(received < k, 0, received), value)
            if np.array_equal(new, value):
                break
            value = new
            active = value != 0
        return [g.ids[:nv], value]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        k = int(p["k"])
        links = with_self(_real(dg, "BOTH"), dg.vertex_ids()).cache()
        start = dg.vertex_ids().select(
            "id", F.lit(-1).cast("long").alias("value"), F.lit(True).alias("changed")
        )

        def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
            # The own row carries a vertex's value; the others count one message
            # from each neighbour still active (value != 0).
            state = frames["state"]
            rows = state.join(links, state["id"] == links["a"])
            message = (~F.col("own")) & (F.col("value") != 0)
            summed = rows.groupBy(F.col("b").alias("id")).agg(
                F.sum(F.when(message, 1).otherwise(0)).alias("received"),
                F.max(F.when(F.col("own"), F.col("value"))).alias("old"),
            )
            new = (
                F.when(F.col("old") == 0, F.lit(0))
                .when(F.col("received") < k, F.lit(0))
                .otherwise(F.col("received"))
            )
            nxt = summed.select(
                "id", new.cast("long").alias("value"), (new != F.col("old")).alias("changed")
            )
            return {"state": nxt}, _settled

        state = iterate({"state": start}, step, opts.max_iterations - 1, opts)["state"]
        links.unpersist()
        return state.select("id", "value")


def _settled(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("changed")).isEmpty()
