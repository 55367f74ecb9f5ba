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
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import INCR_TRAVERSAL, INCR_TRAVERSAL_THRESHOLD, INCR_TRAVERSAL_WINDOW
from planner.expressions import is_deterministic, ref_index
from planner.graph_nodes import EdgeMatch, VertexMatch
from planner.logical import Aggregate, Filter, LogicalNode, Project
from runtime.env import Env
from runtime.evaluator import evaluate
from runtime.reads import graph_key
from runtime.spark_adapter import known_empty
from runtime.stores.memory import empty_frame

# Per graph store: label -> version -> vertices (see _Views._kept_vertices).
_KEPT_VERTICES: weakref.WeakKeyDictionary[Any, dict[str, dict[int, Any]]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True, slots=True)
class MatchShape:
    """A statement's plan read as: row-wise nodes and DISTINCTs over one chain
    ``root -> hop -> hop ...`` of single-hop expansions (with filters between
    them, which keep the path's fields)."""

    top: LogicalNode
    chain: tuple[LogicalNode, ...]  # the root first, the last hop last
    # The highest DISTINCT, and which of its fields are which path vertices.
    distinct: Aggregate | None = None
    keys: tuple[tuple[int, int], ...] = ()

    @property
    def root(self) -> VertexMatch:
        root = self.chain[0]
        assert isinstance(root, VertexMatch)
        return root

    @property
    def hops(self) -> tuple[EdgeMatch, ...]:
        return tuple(n for n in self.chain if isinstance(n, EdgeMatch))

    @property
    def graph(self) -> Any:
        return self.root.graph

    @property
    def chain_top(self) -> LogicalNode:
        return self.chain[-1]

    def producer(self, field: int) -> EdgeMatch | None:
        """The hop whose target vertex is ``field`` of the path."""
        for hop in self.hops:
            if _target_field(hop) == field:
                return hop
        return None

    def vertex_reads(self) -> list[tuple[int, tuple[str, ...]]]:
        """(path field, labels) of every vertex the pattern reads."""
        out = [(0, self.root.labels)]
        for hop in self.hops:
            field = _target_field(hop)
            if field is not None:
                out.append((field, hop.target_labels))
        return out

    def is_linear(self) -> bool:
        """Does every hop leave from the vertex the previous one reached?"""
        at: int | None = 0
        for hop in self.hops:
            if hop.source != at:
                return False
            at = _target_field(hop)
        return True


def _target_field(hop: EdgeMatch) -> int | None:
    """The path field of the vertex a hop reads (None: it reads none)."""
    if hop.target_bound is not None or hop.edge_only:
        return None
    return len(hop.input.schema) + 1


def match_shape(top: LogicalNode) -> MatchShape | None:
    """The shape of a plan below its sink, or None when it is not one this
    module can run incrementally (see the module docstring)."""
    node = top
    distinct: Aggregate | None = None
    while isinstance(node, (Filter, Project, Aggregate)):
        if isinstance(node, Aggregate):
            if node.calls:
                return None
            distinct = distinct or node
        if isinstance(node, Project) and not all(is_deterministic(e) for e in node.exprs):
            return None
        if isinstance(node, Filter) and not is_deterministic(node.condition):
            return None
        node = node.inputs[0]
    chain: list[LogicalNode] = []
    while isinstance(node, (EdgeMatch, Filter)):
        if isinstance(node, EdgeMatch) and node.is_loop:
            return None
        if isinstance(node, Filter) and not is_deterministic(node.condition):
            return None
        chain.append(node)
        node = node.inputs[0]
    if not isinstance(node, VertexMatch) or node.input is not None or not chain:
        return None
    if any(isinstance(n, EdgeMatch) and n.graph != node.graph for n in chain):
        return None
    shape = MatchShape(top, (node, *reversed(chain)))
    if distinct is None:
        return shape
    vertex_fields = {f for f, _ in shape.vertex_reads()}
    keys = []
    for i, g in enumerate(distinct.group):
        field = _chain_field(distinct.input, g, shape.chain_top)
        if field in vertex_fields:
            keys.append((i, field))
    if not keys:
        return None
    return MatchShape(top, shape.chain, distinct, tuple(keys))


def _chain_field(node: LogicalNode, index: int, chain_top: LogicalNode) -> int | None:
    """The path field that field ``index`` of ``node`` passes on unchanged, if any."""
    while node is not chain_top:
        if isinstance(node, Project):
            found = ref_index(node.exprs[index])
            if found is None:
                return None
            index = found
        elif isinstance(node, Aggregate):
            if index >= len(node.group):
                return None
            index = node.group[index]
        node = node.inputs[0]
    return index


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
    views = _Views(env, shape.graph, int(before[key]), int(now[key]))
    if not views.known:
        return None
    if not views.written_edges and not views.written_vertices:
        # Nothing written since: no new rows (and no Spark job to say so).
        return evaluate(views.context({}), shape.top).where("false")
    if _geaflow_traversal(env, shape):
        return _geaflow_rows(views, shape)
    if shape.distinct is None and views.written_vertices:
        return None
    terms = _terms(views, shape, with_vertices=shape.distinct is not None)
    if not terms:
        # What was written is not of the pattern's labels.
        return evaluate(views.context({}), shape.top).where("false")
    if shape.distinct is None:
        return evaluate(views.context({}), shape.top, {id(shape.chain_top): _union(terms)})
    return _new_distinct_rows(views, shape, terms)


# ----------------------------------------------------- the graph's versions
class _Views:
    """The previous and current version of a graph, what was written between
    them, and environments that read chosen frames of it."""

    def __init__(self, env: Env, graph: Any, old: int, new: int) -> None:
        self.env = env
        self.graph = graph
        self.old = old
        self.new = new
        self.id_type = T.spark_sql_type(graph.vertex_type().field_type(T.VERTEX_ID_FIELD))
        self.store = env.ctx.stores.store(env.ctx, graph)
        self.known = True
        self.written_vertices: dict[str, Any] = {}  # label -> rows written since
        self.written_edges: dict[str, Any] = {}
        self._frames: dict[tuple[int, str, bool], Any] = {}
        for infos, is_vertex, out in (
            (graph.vertices, True, self.written_vertices),
            (graph.edges, False, self.written_edges),
        ):
            for info in infos:
                parts = self.store.parts_since(env, info.label, is_vertex, old)
                if parts is None:
                    self.known = False
                    return
                # Windows past the end of a source still write (empty) parts.
                parts = [part for part in parts if not known_empty(part)]
                if parts:
                    out[info.label] = _union(parts)

    def frame(self, version: int, label: str, is_vertex: bool) -> Any:
        """A label's rows in one version (built once)."""
        key = (version, label, is_vertex)
        if key not in self._frames:
            at = self.env.with_reads(self.env.reads.at_version(self.graph, version))
            df = self.store.frame(at, label, is_vertex)
            if is_vertex:
                df = self._kept_vertices(version, label, df)
            self._frames[key] = df
        return self._frames[key]

    def _kept_vertices(self, version: int, label: str, df: Any) -> Any:
        """A version's vertices, checkpointed the first time a job reads them.

        A store keeps one row per id by ranking every write of a label (a
        shuffle), and each term reads the vertices again; the current
        version's vertices are the previous ones of the next window, so the
        last two versions of each label are kept, beside the store."""
        versions = _KEPT_VERTICES.setdefault(self.store, {}).setdefault(label, {})
        if version not in versions:
            versions[version] = df.localCheckpoint(eager=False)
            for stale in sorted(versions)[:-2]:
                del versions[stale]
        return versions[version]

    def written_ids(self, label: str) -> Any:
        info = self.graph.vertex(label)
        return self.written_vertices[label].select(
            F().col(f"`{info.id_field}`").cast(self.id_type).alias("id")
        )

    def pairs(self, info: Any, rows: Any) -> Any:
        """Edge rows as (src, dst) ids."""
        f = F()
        return rows.select(
            f.col(f"`{info.src_field}`").cast(self.id_type).alias("src"),
            f.col(f"`{info.dst_field}`").cast(self.id_type).alias("dst"),
        )

    def current_pairs(self, labels: tuple[str, ...]) -> Any:
        infos = [self.graph.edge(lab) for lab in labels] if labels else list(self.graph.edges)
        return _union([self.pairs(i, self.frame(self.new, i.label, False)) for i in infos])

    def context(self, chosen: dict[tuple[str, bool], Any], version: int | None = None) -> Env:
        """An environment reading ``chosen`` frames of the graph, its other
        labels at ``version`` (the current one by default)."""
        version = self.new if version is None else version
        labels = [(v.label, True) for v in self.graph.vertices]
        labels += [(e.label, False) for e in self.graph.edges]
        served = {
            key: chosen[key] if key in chosen else self.frame(version, *key) for key in labels
        }
        return self.env.with_reads(self.env.reads.serving(self.graph, served))


def F() -> Any:  # noqa: N802 - pyspark's functions module, imported on use
    from pyspark.sql import functions

    return functions


def _union(frames: list[Any]) -> Any:
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def _oriented(pairs: Any, direction: str) -> Any:
    """Pairs as a hop walks them: ``src`` is where it leaves from."""
    f = F()
    flipped = pairs.select(f.col("dst").alias("src"), f.col("src").alias("dst"))
    if direction == "OUT":
        return pairs
    if direction == "IN":
        return flipped
    return pairs.unionByName(flipped)


def _step_back(ids: Any, pairs: Any) -> Any:
    """The ``src`` of the pairs arriving at ``ids``."""
    f = F()
    to = f.broadcast(ids.select(f.col("id").alias("__to")))
    # No distinct: the ids only ever feed semi-joins, where repeats are harmless
    # and a shuffle to remove them is not.
    return pairs.join(to, f.col("dst") == f.col("__to"), "left_semi").select(
        f.col("src").alias("id")
    )


def _walk_back(views: _Views, shape: MatchShape, field: int, ids: Any) -> dict[int, Any]:
    """Ids a path through vertex ``ids`` at ``field`` can have at each field
    from there back to the first vertex (over current edges, filters not
    applied, so possibly more than needed, never fewer)."""
    out = {field: ids}
    while field != 0:
        hop = shape.producer(field)
        assert hop is not None, field
        pairs = _oriented(views.current_pairs(hop.edge_labels), hop.direction)
        ids = _step_back(ids, pairs)
        field = hop.source
        out[field] = ids
    return out


def _restricted(
    views: _Views, version: int, labels: tuple[str, ...], ids: Any
) -> dict[tuple[str, bool], Any]:
    """Vertex frames of some labels (all if empty) keeping the given ids."""
    f = F()
    keep = f.broadcast(ids.select(f.col("id").alias("__keep")))
    out = {}
    for info in (
        [views.graph.vertex(lab) for lab in labels] if labels else list(views.graph.vertices)
    ):
        df = views.frame(version, info.label, True)
        cond = df[f"`{info.id_field}`"].cast(views.id_type) == f.col("__keep")
        out[(info.label, True)] = df.join(keep, cond, "left_semi")
    return out


def _restricted_edges(
    views: _Views, version: int, hop: EdgeMatch, pairs: Any
) -> dict[tuple[str, bool], Any]:
    """Edge frames of a hop's labels (all if none) keeping the edges that join
    a (``__from``, ``__to``) pair of ``pairs`` the way the hop walks them."""
    f = F()
    if hop.direction == "IN":
        pairs = pairs.select(f.col("__to").alias("__from"), f.col("__from").alias("__to"))
    elif hop.direction == "BOTH":
        # Either way round; distinct so no edge is kept twice.
        flipped = pairs.select(f.col("__to").alias("__from"), f.col("__from").alias("__to"))
        pairs = pairs.unionByName(flipped)
    pairs = pairs.distinct()
    out = {}
    infos = (
        [views.graph.edge(lab) for lab in hop.edge_labels]
        if hop.edge_labels
        else list(views.graph.edges)
    )
    for info in infos:
        df = views.frame(version, info.label, False)
        cond = (df[f"`{info.src_field}`"].cast(views.id_type) == f.col("__from")) & (
            df[f"`{info.dst_field}`"].cast(views.id_type) == f.col("__to")
        )
        out[(info.label, False)] = df.join(pairs, cond, "left_semi")
    return out


# ------------------------------------------------------------ running paths
def _chain(
    views: _Views,
    shape: MatchShape,
    version: int,
    vertices: dict[int, dict[tuple[str, bool], Any]],
    edges: dict[int, dict[tuple[str, bool], Any]],
) -> Any:
    """The pattern's paths on ``version``, where the vertex read at field f
    uses the frames ``vertices[f]`` and hop i the edge frames ``edges[i]``."""
    df = evaluate(views.context(vertices.get(0, {}), version), shape.root)
    hop_index = {id(h): i for i, h in enumerate(shape.hops)}
    for node in shape.chain[1:]:
        chosen = {}
        if isinstance(node, EdgeMatch):
            chosen.update(edges.get(hop_index[id(node)], {}))
            field = _target_field(node)
            if field is not None:
                chosen.update(vertices.get(field, {}))
        if isinstance(node, EdgeMatch):
            # Paths from a few written elements are few: send them to the
            # edges rather than shuffle every edge to meet them.
            df = F().broadcast(df)
        df = evaluate(views.context(chosen, version), node, {id(node.inputs[0]): df})
    return df


def _terms(views: _Views, shape: MatchShape, with_vertices: bool) -> list[Any]:
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
            (e.label, False): views.written_edges.get(e.label, _empty(views, e)) for e in infos
        }
        leaving = _union(
            [
                _oriented(views.pairs(e, views.written_edges[e.label]), hop.direction)
                for e in written
            ]
        )
        vertices = _path_to(views, shape, hop.source, leaving.select(F().col("src").alias("id")))
        terms.append(_chain(views, shape, views.new, vertices, edges))
    if not with_vertices:
        return terms
    return terms + _vertex_terms(views, shape, views.new)


def _vertex_terms(views: _Views, shape: MatchShape, version: int) -> list[Any]:
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
        ids = _union([views.written_ids(lab) for lab in written_labels])
        vertices = _path_to(views, shape, field, ids, version)
        terms.append(_chain(views, shape, version, vertices, {}))
    return terms


def _empty(views: _Views, info: Any) -> Any:
    return empty_frame(views.env.spark, info)


def _path_to(
    views: _Views, shape: MatchShape, field: int, ids: Any, version: int | None = None
) -> dict[int, dict[tuple[str, bool], Any]]:
    """Vertex frames that keep, at every field up to ``field``, only the
    vertices a path reaching ``ids`` there can hold."""
    labels = dict(shape.vertex_reads())
    return {
        f: _restricted(views, views.new if version is None else version, labels[f], ids_at)
        for f, ids_at in _walk_back(views, shape, field, ids).items()
    }


def _new_distinct_rows(views: _Views, shape: MatchShape, terms: list[Any]) -> Any:
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
    touched = evaluate(current, shape.distinct, {id(shape.chain_top): _union(terms)})
    old_terms = _vertex_terms(views, shape, views.old) if views.written_vertices else []
    if old_terms:
        touched = touched.unionByName(
            evaluate(
                views.context({}, views.old),
                shape.distinct,
                {id(shape.chain_top): _union(old_terms)},
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
            field: _restricted(
                views, version, labels[field], touched.select(F().col(f"c{i}.`~id`").alias("id"))
            )
            for i, field in shape.keys
        }
        edges = {}
        for h, hop in enumerate(shape.hops):
            target = _target_field(hop)
            if hop.source in column and target in column:
                pairs = touched.select(
                    F().col(f"c{column[hop.source]}.`~id`").alias("__from"),
                    F().col(f"c{column[target]}.`~id`").alias("__to"),
                )
                edges[h] = _restricted_edges(views, version, hop, pairs)
        paths = _chain(views, shape, version, vertices, edges)
        return evaluate(views.context({}, version), upto, {id(shape.chain_top): paths})

    if not views.written_vertices:
        new_rows = touched.exceptAll(named(views.old, shape.distinct))
        return evaluate(current, shape.top, {id(shape.distinct): new_rows})
    return named(views.new, shape.top).exceptAll(named(views.old, shape.top))


# ---------------------------------------------- GeaFlow's incremental traversal
def _geaflow_traversal(env: Env, shape: MatchShape) -> bool:
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


def _geaflow_rows(views: _Views, shape: MatchShape) -> Any:
    """Every path on the current graph rooted at the vertices GeaFlow's evolve
    phase reaches (plus the roots of paths through written vertices)."""
    f = F()
    touched = [views.written_ids(lab) for lab in views.written_vertices]
    for label, rows in views.written_edges.items():
        pairs = views.pairs(views.graph.edge(label), rows)
        touched += [pairs.select(f.col("src").alias("id")), pairs.select(f.col("dst").alias("id"))]
    frontier = _union(touched).distinct()
    reached = [frontier]
    linear = shape.is_linear()
    edges = views.current_pairs(())
    for hop in reversed(shape.hops[:-1]):
        # Back over an OUT hop is along in-edges: the pairs ending here.
        frontier = _step_back(frontier, _oriented(edges, hop.direction if linear else "BOTH"))
        reached.append(frontier)
    for field, labels in shape.vertex_reads():
        written = [
            lab for lab in (labels or list(views.written_vertices)) if lab in views.written_vertices
        ]
        if written:
            ids = _union([views.written_ids(lab) for lab in written])
            reached.append(_walk_back(views, shape, field, ids)[0])
    roots = _union(reached)
    vertices = {0: _restricted(views, views.new, shape.root.labels, roots)}
    paths = _chain(views, shape, views.new, vertices, {})
    return evaluate(views.context({}), shape.top, {id(shape.chain_top): paths})
