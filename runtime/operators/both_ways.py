"""Shortest walks between ends bound before the search, grown from both ends.

``MATCH (a ...), (b ...), p = ANY SHORTEST (a)-[e]->{1,}(b)`` knows both ends
of every walk it wants.  Grown from the starts alone, the walks reach every
vertex as near to a start as the answer is long; grown from both ends, the
side with the smaller frontier each round, the two meet after about half as
many edges from each side (a frontier grows with every edge, so two of half
the depth hold far fewer walks than one of the whole).

The levels: ``F_i`` holds the walks of ``i`` edges from a start ``s`` that
first reach their last vertex ``m`` there (the one-sided search keeps the
same), ``B_j`` the walks of ``j`` edges from a vertex ``m`` to an end ``t``
that first reach ``m`` from ``t`` there, found over the edges reversed.  A
shortest walk of ``d`` edges from ``s`` to ``t`` has, at each position ``i``,
a vertex ``m`` that ``s`` first reaches in ``i`` edges and that first reaches
``t`` in ``d - i`` (a shorter way to or from ``m`` would make a shorter walk),
so it is ``F_i`` joined with ``B_{d-i}`` on ``m``.  Once the sides have grown
``a`` and ``b`` levels every pair whose walks have at most ``a + b`` edges has
met; a pair first meeting in the round that made the depth ``a + b`` has
walks of exactly that many edges, and the new level joined with the other
side's last one on ``m`` gives each of them once (by its vertex at ``a``).

The loop's body holds for every vertex between the ends (``m`` too, when it
is neither end), for the end when the pattern is walked as written
(``EdgeMatch.via_end``), never for the start: as in the one-sided search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from planner.graph_nodes import EdgeMatch
from runtime.env import Env
from runtime.spark_adapter import checkpoint_counting


def pairs_to_meet(needs: Any) -> int:
    """The number of (start, end) pairs of ``needs`` (``__from``, ``__at``;
    distinct) when they are better searched from both ends, 0 when not.

    Both ends when there are no more distinct ends than starts: the walks
    grown from the ends are then no more than those from the starts.  (With
    one start and many ends, the one-sided search reaches them all at once.)"""
    from pyspark.sql import functions as F

    row = needs.agg(
        F.count(F.lit(1)).alias("pairs"),
        F.countDistinct("__from").alias("starts"),
        F.countDistinct("__at").alias("ends"),
    ).first()
    if row is None or not 0 < row["ends"] <= row["starts"]:
        return 0
    return int(row["pairs"])


@dataclass(frozen=True)
class _Side:
    """One end's search: the key column naming the walk's own end
    (``__from`` or ``__to``), whether it walks edges as they point, its
    levels' (key, vertex) pairs met so far, its last level, that level's
    number of edges (``depth``) and the number of its walks that may go on
    (``frontier``: counted as the level was made, so a walk whose pair met
    in that round still counts; it is the side's size to the choice of which
    side grows, and 0 when the side can grow no further)."""

    key: str
    forward: bool
    met: tuple[Any, ...]
    last: Any
    depth: int
    frontier: int


def search_both_ways(
    env: Env,
    node: EdgeMatch,
    needs: Any,
    pairs: int,
    edges: Any,
    body_ids: Any,
    etype: str,
    vtype: str,
) -> Any:
    """The shortest walks (one per pair for ANY) between the pairs of
    ``needs`` (``__from``, ``__at``; distinct, no pair of one vertex when a run
    may have no edges; ``pairs`` of them), as ``__from, __edge, __at, __hops`` and, when the node
    keeps its runs, ``__redges, __rverts``: the columns of the one-sided
    search's walks.  ``edges`` are the run's edges (column ``e``, already
    turned to the walk's direction); ``body_ids`` the ids of the vertices
    passing the body (``__vid``; with their values ``__atv``, one row per id,
    when runs are kept)."""
    from pyspark.sql import functions as F

    keep = node.keep_run
    ids = body_ids if keep else body_ids.distinct()
    run = [f"CAST(array() AS ARRAY<{etype}>) AS __redges"] if keep else []
    if keep:
        run += [f"CAST(array() AS ARRAY<{vtype}>) AS __rverts", f"CAST(NULL AS {vtype}) AS __atv"]

    def level0(key: str, column: str, rows: Any) -> Any:
        return (
            rows.selectExpr(f"{column} AS {key}")
            .distinct()
            .selectExpr(
                key,
                f"{key} AS __at",
                "0 AS __hops",
                f"CAST(NULL AS {etype}) AS __edge",
                "true AS __ok",
                *run,
            )
        )

    if node.via_end and node.has_body:
        # (the end of a run walked as written passes the body, or no walk
        # ends there: its pairs are not searched)
        needs = needs.join(ids.select("__vid"), F.expr("__at = __vid"), "left_semi")
        needs, counted = checkpoint_counting(needs, pairs="count(1)")
        pairs = counted["pairs"]
    # (every walk of no edges may go on, and every start and end is of a pair
    # still searched: each side's first frontier is its level's rows)
    starts, at_starts = checkpoint_counting(level0("__from", "__from", needs), walks="count(1)")
    ends, at_ends = checkpoint_counting(level0("__to", "__at", needs), walks="count(1)")
    # (a run that may have no edges reaches its own start first, at no edges)
    zero = node.min_hops == 0
    state: dict[str, Any] = {
        "needs": needs.selectExpr("__from", "__at AS __to"),
        "left": pairs,
    }

    def may_go_on(key: str, level: Any) -> Any:
        """The walks of ``level`` that may go on (one of no edges always may;
        others when their vertex passes the body) for a pair still searched."""
        alive = state["needs"].select(key).distinct()
        return level.where("__hops = 0 OR __ok").join(alive, key, "left_semi")

    state["fwd"] = _Side(
        "__from",
        True,
        (starts.select("__from", "__at"),) if zero else (),
        starts,
        0,
        at_starts["walks"],
    )
    state["bwd"] = _Side(
        "__to", False, (ends.select("__to", "__at"),) if zero else (), ends, 0, at_ends["walks"]
    )
    found: list[Any] = []

    def grow(side: _Side) -> _Side:
        """The side one level further: its frontier's walks over one more
        edge, those first reaching their vertex, marked whether the vertex
        passes the body (it may go on) and, for kept runs, with its value."""
        frontier = may_go_on(side.key, side.last)
        if side.forward:
            meets, far = "__at = e.`~src`", "e.`~dst`"
            edge = "e"
            kept = [
                "concat(__redges, array(e)) AS __redges",
                "CASE WHEN __hops > 0 THEN concat(__rverts, array(__atv)) ELSE __rverts END"
                " AS __rverts",
            ]
        else:
            meets, far = "__at = e.`~dst`", "e.`~src`"
            # (the walk's last edge is the first one taken back from its end)
            edge = "CASE WHEN __hops = 0 THEN e ELSE __edge END"
            kept = [
                "concat(array(e), __redges) AS __redges",
                "CASE WHEN __hops > 0 THEN concat(array(__atv), __rverts) ELSE __rverts END"
                " AS __rverts",
            ]
        reached = frontier.join(edges, F.expr(meets), "inner").selectExpr(
            side.key,
            f"{far} AS __at",
            f"{side.depth + 1} AS __hops",
            f"{edge} AS __edge",
            *(kept if keep else []),
        )
        for earlier in side.met:
            reached = reached.join(earlier, [side.key, "__at"], "left_anti")
        if node.first_reach == "ANY":
            reached = reached.dropDuplicates([side.key, "__at"])
        marks = ids.selectExpr("__vid", *(["__atv"] if keep else []))
        # (its frontier: the walks whose vertex passes the body, counted by
        # the level's own job whether or not their pair meets this round; a
        # pair that meets drops out of the next growth, see may_go_on)
        level, counted = checkpoint_counting(
            reached.join(marks, F.expr("__at = __vid"), "left")
            .selectExpr("*", "__vid IS NOT NULL AS __ok")
            .drop("__vid"),
            frontier="count_if(__ok)",
        )
        met = (*side.met, level.select(side.key, "__at"))
        return replace(
            side, met=met, last=level, depth=side.depth + 1, frontier=counted["frontier"]
        )

    def meet(fwd: _Side, bwd: _Side) -> Any:
        """The walks of the pairs still searched that the two last levels
        join into, by the vertex they share."""
        f = fwd.last.selectExpr(
            "__from",
            "__at AS __m",
            "__edge AS __fedge",
            "__ok AS __fok",
            *(["__redges AS __fedges", "__rverts AS __fverts", "__atv AS __mv"] if keep else []),
        )
        b = bwd.last.selectExpr(
            "__to",
            "__at AS __m",
            "__edge AS __bedge",
            *(["__redges AS __bedges", "__rverts AS __bverts"] if keep else []),
        )
        joined = f.join(state["needs"], "__from").join(b, ["__to", "__m"])
        a, c = fwd.depth, bwd.depth
        if a > 0 and c > 0:
            # (the vertex they meet at lies between the ends)
            joined = joined.where("__fok")
        middle = "array(__mv)" if a > 0 and c > 0 else f"CAST(array() AS ARRAY<{vtype}>)"
        walks = joined.selectExpr(
            "__from",
            f"{'__bedge' if c > 0 else '__fedge'} AS __edge",
            "__to AS __at",
            f"{a + c} AS __hops",
            *(
                [
                    "concat(__fedges, __bedges) AS __redges",
                    f"concat(__fverts, {middle}, __bverts) AS __rverts",
                ]
                if keep
                else []
            ),
        )
        if node.first_reach == "ANY":
            walks = walks.dropDuplicates(["__from", "__at"])
        return walks

    def step(round_no: int) -> tuple[bool, Any]:
        fwd, bwd = state["fwd"], state["bwd"]
        grown = grow(bwd if bwd.frontier < fwd.frontier else fwd)
        fwd, bwd = (grown, bwd) if grown.forward else (fwd, grown)
        walks = meet(fwd, bwd).localCheckpoint(eager=True)
        found.append(walks)
        # The pairs still searched, and how many (one job for both).
        pairs = walks.selectExpr("__from", "__at AS __to")
        state["needs"], counted = checkpoint_counting(
            state["needs"].join(pairs, ["__from", "__to"], "left_anti"), left="count(1)"
        )
        state["left"] = counted["left"]
        state["fwd" if grown.forward else "bwd"] = grown
        depth = fwd.depth + bwd.depth
        # (the other side's frontier is not empty, or the search had ended)
        more = depth < node.max_hops and grown.frontier > 0 and state["left"] > 0
        return more, depth

    if (
        node.max_hops > 0
        and state["left"] > 0
        and state["fwd"].frontier > 0
        and state["bwd"].frontier > 0
    ):
        env.iterate(node, step, node.max_hops)
    if not found:
        return meet(state["fwd"], state["bwd"]).where("false")
    walks = found[0]
    for more in found[1:]:
        walks = walks.unionByName(more)
    return walks
