"""Incremental MATCH on a graph the windowed job itself writes (graph-delta mode).

A statement in graph-delta mode emits, per window, the rows of its result that
are new in this version of the graph: ``current.exceptAll(previous)``.  Run as
written that matches the whole graph twice a window; here only paths through
what was written since the previous version are matched.

**New paths (the default).**  A path of the current graph is new when it uses
a written edge or a written vertex (a new one, or one written again with new
properties, which can change a filter or a returned property).  With hops
``1..k`` the delta rule for joins lists each new path once: hop ``i`` takes a
written edge, hops before it the previous version's edges, hops after it the
current ones (one *term* per hop).  With vertices written as well, one more
term per vertex position takes a written vertex there and current data
elsewhere.  A term starts at its written element and walks back to the
pattern's first vertex along the hops (over current edges, filters ignored),
so the hops before the element only expand vertices that can lead to it; the
operators of a normal MATCH then run on those restricted inputs.  (Those hops
still run forward from every such root: on a dense graph the roots of a
later hop's new edges can be most of the graph, and bench/streams.py shows
this costing about as much as the full re-match.  Running them backwards
from the element, as choose_match_start does for id lookups, is the next
step.)

MATCH deduplicates its paths (a DISTINCT over its variables), so a path can be
new while its row is not (a parallel edge, an anonymous edge): the rows of the
terms are checked against the previous version, matched only at the vertices
those rows name.  Without a DISTINCT the terms are disjoint and their rows are
the answer, when no vertex was written (else: full re-match).  A written
vertex can also take a row away or change a property the statement does not
return; then both versions are matched at the vertices the touched rows of
either version name, and the difference is taken on the statement's rows.

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

The plan's shape is read by ``match_shape``; the versions, written rows and
the walks and frames the terms are built from are in ``match_views``.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.config import INCR_TRAVERSAL, INCR_TRAVERSAL_THRESHOLD, INCR_TRAVERSAL_WINDOW
from planner.graph_nodes import VertexMatch
from planner.logical import LogicalNode
from runtime.env import Env
from runtime.evaluator import evaluate
from runtime.reads import graph_key

from .match_shape import MatchShape, match_shape, target_field
from .match_views import (
    F,
    Views,
    chain,
    empty_rows,
    oriented,
    path_to,
    restricted,
    restricted_edges,
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
    if shape.distinct is None and views.written_vertices:
        return None
    terms = _terms(views, shape, with_vertices=shape.distinct is not None)
    if not terms:
        # What was written is not of the pattern's labels.
        return evaluate(views.context({}), shape.top).where("false")
    if shape.distinct is None:
        return evaluate(views.context({}), shape.top, {id(shape.chain_top): union(terms)})
    return _new_distinct_rows(views, shape, terms)


def _terms(views: Views, shape: MatchShape, with_vertices: bool) -> list[Any]:
    """The delta rule: each path through a written element, once per term."""
    terms = []
    for i, hop in enumerate(shape.hops):
        infos = (
            [views.graph.edge(lab) for lab in hop.edge_labels]
            if hop.edge_labels
            else list(views.graph.edges)
        )
        written = [info for info in infos if info.label in views.written_edges]
        if not written:
            continue
        # Hop i reads only written edges; earlier hops the previous version.
        edges: dict[int, dict[tuple[str, bool], Any]] = {
            j: {(e.label, False): views.frame(views.old, e.label, False) for e in views.graph.edges}
            for j in range(i)
        }
        edges[i] = {
            (e.label, False): views.written_edges.get(e.label, empty_rows(views, e)) for e in infos
        }
        leaving = union(
            [oriented(views.pairs(e, views.written_edges[e.label]), hop.direction) for e in written]
        )
        vertices = path_to(views, shape, hop.source, leaving.select(F().col("src").alias("id")))
        terms.append(chain(views, shape, views.new, vertices, edges))
    if not with_vertices:
        return terms
    return terms + _vertex_terms(views, shape, views.new)


def _vertex_terms(views: Views, shape: MatchShape, version: int) -> list[Any]:
    """Paths of ``version`` through a written vertex (one term per position;
    terms may overlap, which only a DISTINCT above them may allow)."""
    terms = []
    for field, labels in shape.vertex_reads():
        written_labels = [
            lab
            for lab in (labels or [v.label for v in views.graph.vertices])
            if lab in views.written_vertices
        ]
        if not written_labels:
            continue
        ids = union([views.written_ids(lab) for lab in written_labels])
        vertices = path_to(views, shape, field, ids, version)
        terms.append(chain(views, shape, version, vertices, {}))
    return terms


def _new_distinct_rows(views: Views, shape: MatchShape, terms: list[Any]) -> Any:
    """The statement's rows that are new, when a DISTINCT is over the paths.

    ``touched``: the DISTINCT's rows produced by the terms' paths.  Without
    written vertices every old row is still there, so the new rows are the
    touched rows no previous path produced (looked for only at the vertices
    the touched rows name).  A written vertex can also take rows away, and
    the rows above the DISTINCT may not show what changed (a property not
    returned): then both versions are matched at the vertices the touched
    rows of either version name, and the difference is taken on the
    statement's own rows, as the full re-match does.
    """
    assert shape.distinct is not None
    current = views.context({})
    touched = evaluate(current, shape.distinct, {id(shape.chain_top): union(terms)})
    old_terms = _vertex_terms(views, shape, views.old) if views.written_vertices else []
    if old_terms:
        touched = touched.unionByName(
            evaluate(
                views.context({}, views.old),
                shape.distinct,
                {id(shape.chain_top): union(old_terms)},
            )
        )
    touched = touched.localCheckpoint(eager=True)
    labels = dict(shape.vertex_reads())

    column = {field: i for i, field in shape.keys}

    def named(version: int, upto: LogicalNode) -> Any:
        """``upto`` on ``version``, for paths at the vertices the touched rows name.

        A hop between two vertices the DISTINCT keeps reads only the edges
        between a pair of vertices some touched row names: restricting each
        vertex alone lets a hop expand every vertex most touched rows share
        (on a dense graph, nearly the whole match).  A path off those pairs
        makes a row no touched row equals; such rows are the same in both
        versions (no written element is on their paths) and cancel."""
        vertices = {
            field: restricted(
                views, version, labels[field], touched.select(F().col(f"c{i}.`~id`").alias("id"))
            )
            for i, field in shape.keys
        }
        edges = {}
        for h, hop in enumerate(shape.hops):
            target = target_field(hop)
            if hop.source in column and target in column:
                pairs = touched.select(
                    F().col(f"c{column[hop.source]}.`~id`").alias("__from"),
                    F().col(f"c{column[target]}.`~id`").alias("__to"),
                )
                edges[h] = restricted_edges(views, version, hop, pairs)
        paths = chain(views, shape, version, vertices, edges)
        return evaluate(views.context({}, version), upto, {id(shape.chain_top): paths})

    if not views.written_vertices:
        new_rows = touched.exceptAll(named(views.old, shape.distinct))
        return evaluate(current, shape.top, {id(shape.distinct): new_rows})
    return named(views.new, shape.top).exceptAll(named(views.old, shape.top))


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
    f = F()
    touched = [views.written_ids(lab) for lab in views.written_vertices]
    for label, rows in views.written_edges.items():
        pairs = views.pairs(views.graph.edge(label), rows)
        touched += [pairs.select(f.col("src").alias("id")), pairs.select(f.col("dst").alias("id"))]
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
            reached.append(walk_back(views, shape, field, ids)[0])
    roots = union(reached)
    vertices = {0: restricted(views, views.new, shape.root.labels, roots)}
    paths = chain(views, shape, views.new, vertices, {})
    return evaluate(views.context({}), shape.top, {id(shape.chain_top): paths})
