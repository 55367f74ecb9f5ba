"""Incremental MATCH on a graph the windowed job itself writes (graph-delta mode).

A statement in graph-delta mode emits, per window, the rows of its result that
are new in this version of the graph: ``current.exceptAll(previous)``.  Run as
written that matches the whole graph twice a window; here both versions are
matched only near what was written since the previous version.

**New rows (the default).**  Start from the *seeds*: the written vertices of a
label the pattern reads (new ones, or ones written again with new properties,
which can change a filter or a returned property) and both ends of the written
edges of a hop's labels.  Without a DISTINCT a row is a projection of a path,
and a path one version has and the other lacks goes through a written element,
so lies within ``hops`` of a seed; every other path is in both versions and
cancels in the difference.  (No store deletes or replaces an edge, so the
previous version's edges are among the current ones, which the search walks.)  Under a DISTINCT (MATCH deduplicates its paths: a parallel
edge, an anonymous vertex) a row can also come from an older path that shares
a vertex with the changed one, so lies within ``2 * hops`` of a seed.  The
vertices within that radius, either way along the current edges of the
pattern's labels, are found a hop per Spark job and held on the driver; the
statement then runs on both versions cut to them (those vertices, and the
edges with both ends among them) and the difference of its rows is the
answer, as the full re-match's is (``tests/test_incremental_match.py`` has a
row a path three hops from the change gave before).  When the neighbourhood
is most of the graph (over ``geaflow.dsl.query.local.max.bytes``, or over a
quarter of its vertices) the full re-match runs instead: it costs less.

**GeaFlow's incremental traversal.**  With
``geaflow.dsl.graph.enable.incr.traversal`` GeaFlow emits something else, and
so does this module: each window it takes the vertices the window touched
(written vertices, both ends of written edges), walks back ``hops - 1`` steps
against the pattern's edge directions (any direction when the pattern
branches; all labels; the last hop is left out because the touched edge
covers it) and emits *every* path rooted at the vertices it reached, on the
current graph, whether or not it was emitted before.  For a written edge that
walk reaches every root of a path through it (its iteration threshold keeps
patterns short enough); for a written vertex it may not, so the roots the
exact walk finds for written vertices are added.  Every new row is therefore
among the rows emitted and the windows' union, as a set, equals the full
result (GeaFlow's own IncrMatchTest checks exactly that), but rows repeat.
GeaFlow does this for patterns of 2 hops or more and at most
``geaflow.dsl.incr.traversal.iteration.threshold - 1`` (3 by default), without
start ids, from window ``geaflow.dsl.graph.incr.traversal.window`` on; other
statements get the new rows as above.

Everything else falls back to the full re-match (``None`` from
``incremental_result``): variable-length edges (a path of any length can lead
to a written element), several patterns (joins of paths, and subqueries,
which plan as joins), aggregates with calls, sorts, limits, unions, request
tables, a DISTINCT that keeps no whole vertex of the pattern, graphs read
from windowed tables, and the first window after a restart (the store no
longer knows the previous version's parts).

The plan's shape is read by ``match_shape``; the versions, written rows,
neighbourhoods and walks are in ``match_views``.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.config import INCR_TRAVERSAL, INCR_TRAVERSAL_THRESHOLD, INCR_TRAVERSAL_WINDOW
from planner.graph_nodes import VertexMatch
from planner.logical import LogicalNode
from runtime.env import Env
from runtime.evaluator import evaluate
from runtime.reads import graph_key

from .match_shape import MatchShape, match_shape
from .match_views import (
    Views,
    neighbourhood,
    oriented,
    rooted_paths,
    step_back,
    union,
    walk_back,
)


# ----------------------------------------------------------------- entry point
def incremental_result(
    env: Env, top: LogicalNode, before: dict[str, int], now: dict[str, int]
) -> Any | None:
    """This window's rows of a graph-delta statement, or None to re-match fully.

    ``before`` and ``now`` are the graph versions the statement last ran on
    and runs on now; ``env`` reads the current ones.
    """
    shape = match_shape(top)
    if shape is None:
        return None
    key = graph_key(shape.graph)
    if key not in before or key not in now:
        return None
    views = Views(env, shape.graph, int(before[key]), int(now[key]))
    if not views.known:
        return None
    if not views.written_edges and not views.written_vertices:
        # Nothing written since: no new rows (and no Spark job to say so).
        return evaluate(views.context({}), shape.top).where("false")
    if geaflow_traversal(env, shape):
        return _geaflow_rows(views, shape)
    seeds = _seeds(views, shape)
    if not seeds:
        # What was written is not of the pattern's labels.
        return evaluate(views.context({}), shape.top).where("false")
    # Without a DISTINCT a changed row is a path through a written element,
    # all of it within ``hops`` of that element; under one, a previous path
    # with the same row shares a vertex with it, so lies within twice that.
    radius = len(shape.hops) * (1 if shape.distinct is None else 2)
    near = neighbourhood(views, _edge_labels(views, shape), union(seeds), radius)
    if near is None:
        return None
    current = evaluate(views.context(views.near(views.new, near)), shape.top)
    previous = evaluate(views.context(views.near(views.old, near), views.old), shape.top)
    return current.exceptAll(previous)


def _seeds(views: Views, shape: MatchShape) -> list[Any]:
    """The ids of the written elements the pattern can read: written vertices
    of a label some position reads, both ends of written edges of a hop's
    labels."""
    read_vertices: set[str] = set()
    for _, labels in shape.vertex_reads():
        read_vertices.update(labels or [v.label for v in views.graph.vertices])
    seeds = [views.written_ids(lab) for lab in views.written_vertices if lab in read_vertices]
    for label in _edge_labels(views, shape):
        if label in views.written_edges:
            seeds += views.written_ends(label)
    return seeds


def _edge_labels(views: Views, shape: MatchShape) -> tuple[str, ...]:
    """The edge labels some hop of the pattern reads."""
    labels: list[str] = []
    for hop in shape.hops:
        for label in hop.edge_labels or [e.label for e in views.graph.edges]:
            if label not in labels:
                labels.append(label)
    return tuple(labels)


# ---------------------------------------------- GeaFlow's incremental traversal
def geaflow_traversal(env: Env, shape: MatchShape) -> bool:
    """Does GeaFlow's incremental traversal apply (the flag, 2 hops or more
    within its iteration threshold, no start ids, past its first window)?"""
    config = env.ctx.config
    if not config.get_bool(INCR_TRAVERSAL):
        return False
    iterations = len(shape.hops) + 1
    if not 2 < iterations <= config.get_int(INCR_TRAVERSAL_THRESHOLD):
        return False
    if shape.root.id_key is not None or _has_start_ids(shape.root):
        return False
    assert env.reads.window is not None
    window_id = env.reads.window.number + 1  # GeaFlow counts windows from 1
    first = config.get_int(INCR_TRAVERSAL_WINDOW)
    return first == -1 or window_id > first


def _has_start_ids(root: VertexMatch) -> bool:
    """Does the root's filter compare its id with constants (GeaFlow's start ids)?"""
    from sqlglot import exp

    if root.filter is None:
        return False
    return any(
        "~id" in cmp.sql() and any(True for _ in cmp.find_all(exp.Literal))
        for cmp in root.filter.find_all(exp.EQ, exp.In)
    )


def _geaflow_rows(views: Views, shape: MatchShape) -> Any:
    """Every path on the current graph rooted at the vertices GeaFlow's evolve
    phase reaches (plus the roots of paths through written vertices)."""
    touched = [views.written_ids(lab) for lab in views.written_vertices]
    for label in views.written_edges:
        touched += views.written_ends(label)
    frontier = union(touched).distinct()
    reached = [frontier]
    linear = shape.is_linear()
    edges = views.current_pairs(())
    for hop in reversed(shape.hops[:-1]):
        # Back over an OUT hop is along in-edges: the pairs ending here.
        frontier = step_back(frontier, oriented(edges, hop.direction if linear else "BOTH"))
        reached.append(frontier)
    for field, labels in shape.vertex_reads():
        written = [
            lab for lab in (labels or list(views.written_vertices)) if lab in views.written_vertices
        ]
        if written:
            ids = union([views.written_ids(lab) for lab in written])
            reached.append(walk_back(views, shape, field, ids))
    paths = rooted_paths(views, shape, views.new, union(reached))
    return evaluate(views.context({}), shape.top, {id(shape.chain_top): paths})
