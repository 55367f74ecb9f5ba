"""sql2graph: SQL joins of a graph's vertex and edge tables become MATCH expansions.

    USE GRAPH g;
    SELECT s.id, sc.targetId FROM student s, selectCourse sc WHERE s.id = sc.srcId
      Join(GraphLabelScan(student), GraphLabelScan(selectCourse), s.id = sc.srcId)
      ->  Project(EdgeMatch(VertexMatch(student:student), (student)->[selectCourse:selectCourse]),
                  [student.~id, student.name, ..., selectCourse.~src, selectCourse.~dst, ...])

With ``USE GRAPH g`` a FROM may name a vertex or edge label as a table
(``GraphLabelScan``).  An inner join whose condition equates a vertex's id
with an edge's source (or target) id walks that edge out of (into) the vertex;
equating the edge's far end with another vertex table's id then completes
the hop with that vertex.  Chains and trees of such joins, and joins of a
MATCH result with an edge table, become one pattern, and a Project gives
back exactly the columns the join had.

Rewrites are exact, never approximate:
  * the edge is matched *edge only* (``EdgeMatch.edge_only``): an edge whose
    far end is not a stored vertex still joins, as it does in SQL;
  * an edge walked into a vertex is seen reversed (``~src`` is the vertex it
    left), so its source column reads ``~dst`` and its target column ``~src``;
  * only a plain ``column = column`` equality of equal types qualifies (an
    implicit cast in the condition could compare differently), and only when
    the graph's unified vertex/edge types keep the declared id types;
  * Filters and deterministic Projects on either side are carried over (onto
    the path table); other join conjuncts become a Filter over it.
Outer joins, joins of two vertex tables and edge-to-edge joins are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import EdgeTableInfo, GraphInfo
from planner.expressions import (
    and_all,
    cast_to,
    conjuncts,
    is_deterministic,
    ref,
    ref_index,
    remap_refs,
    substitute_refs,
    typed,
)
from planner.graph_nodes import Direction, EdgeMatch, GraphLabelScan, VertexMatch
from planner.logical import Filter, Join, LogicalNode, Project

Exprs = list[exp.Expression]


@dataclass
class _Side:
    """One input of a join, seen as columns over a path table.

    ``path`` is None for an edge table not anchored at a vertex yet; then
    ``exprs`` and ``filters`` read the edge label's declared columns."""

    graph: GraphInfo
    path: LogicalNode | None
    exprs: Exprs
    edge: EdgeTableInfo | None = None
    filters: Exprs | None = None


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _dot(index: int, struct: T.StructType, name: str) -> exp.Expression:
    return typed(
        exp.Dot(this=ref(index, struct), expression=exp.Identifier(this=name, quoted=True)),
        struct.field_type(name),
    )


def _graph_of_path(node: LogicalNode) -> GraphInfo | None:
    """The graph of a path table made only of matches and filters, else None."""
    while isinstance(node, Filter):
        node = node.input
    if isinstance(node, VertexMatch):
        return node.graph
    if isinstance(node, EdgeMatch):
        return _graph_of_path(node.input)
    return None


def vertex_columns(graph: GraphInfo, label: str, index: int) -> Exprs | None:
    """A vertex label's declared columns read from the vertex value in field ``index``."""
    info = graph.vertex(label)
    vtype = graph.vertex_type()
    assert info is not None
    out: Exprs = []
    for c in info.fields:
        if c.name == info.id_field:
            if vtype.field_type(T.VERTEX_ID_FIELD) != c.type:
                return None  # ids widened across labels: equality could differ
            out.append(_dot(index, vtype, T.VERTEX_ID_FIELD))
            continue
        stored = vtype.resolve_field(c.name)
        if stored is None:
            return None
        out.append(cast_to(_dot(index, vtype, stored), c.type))
    return out


def edge_columns(
    graph: GraphInfo, info: EdgeTableInfo, index: int, direction: Direction
) -> Exprs | None:
    """An edge label's declared columns read from the edge value in field
    ``index``, which a walk in ``direction`` produced."""
    etype = graph.edge_type()
    ends = {
        info.src_field: T.EDGE_SRC_FIELD if direction == "OUT" else T.EDGE_DST_FIELD,
        info.dst_field: T.EDGE_DST_FIELD if direction == "OUT" else T.EDGE_SRC_FIELD,
    }
    out: Exprs = []
    for c in info.fields:
        if c.name in ends:
            meta = ends[c.name]
            if etype.field_type(meta) != c.type:
                return None
            out.append(_dot(index, etype, meta))
            continue
        stored = T.EDGE_TS_FIELD if c.name == info.ts_field else etype.resolve_field(c.name)
        if stored is None:
            return None
        out.append(cast_to(_dot(index, etype, stored), c.type))
    return out


def _side(node: LogicalNode) -> _Side | None:
    if isinstance(node, GraphLabelScan):
        graph = node.graph
        if node.is_vertex:
            cols = vertex_columns(graph, node.label, 0)
            if cols is None:
                return None
            vm = VertexMatch(graph, node.label, (node.label,), graph.vertex_type())
            return _Side(graph, vm, cols)
        info = graph.edge(node.label)
        assert info is not None
        return _Side(graph, None, [ref(i, f.type) for i, f in enumerate(node.fields_)], info, [])
    if isinstance(node, Project):
        if not all(is_deterministic(e) for e in node.exprs):
            return None
        inner = _side(node.input)
        if inner is not None:
            values = dict(enumerate(inner.exprs))
            return replace(inner, exprs=[substitute_refs(e, values) for e in node.exprs])
        path_graph = _graph_of_path(node.input)
        if path_graph is not None:
            return _Side(path_graph, node.input, list(node.exprs))
        return None
    if isinstance(node, Filter) and is_deterministic(node.condition):
        inner = _side(node.input)
        if inner is None:
            return None
        cond = substitute_refs(node.condition, dict(enumerate(inner.exprs)))
        if inner.path is None:
            assert inner.filters is not None
            return replace(inner, filters=inner.filters + [cond])
        return replace(inner, path=Filter(inner.path, cond))
    return None


def _vertex_id_index(e: exp.Expression, path: LogicalNode) -> int | None:
    """The field of ``path`` whose vertex id ``e`` reads plainly, else None."""
    e = _unparen(e)
    if not (isinstance(e, exp.Dot) and e.name == T.VERTEX_ID_FIELD):
        return None
    i = ref_index(_unparen(e.this))
    if i is None or i >= len(path.schema):
        return None
    t = path.schema[i].type
    return i if isinstance(t, T.StructType) and t.kind == "VERTEX" else None


def _extend(
    anchored: _Side, pending: _Side, a_col: int, e_col: int
) -> tuple[LogicalNode, Exprs, Exprs] | None:
    """Walk the pending edge out of (or into) the vertex whose id is column
    ``a_col`` of ``anchored``; the edge's column ``e_col`` is its source
    (target) id.  Returns the path and both sides' columns over it."""
    assert anchored.path is not None and pending.edge is not None and pending.filters is not None
    source = _vertex_id_index(anchored.exprs[a_col], anchored.path)
    k = ref_index(_unparen(pending.exprs[e_col]))
    if source is None or k is None:
        return None
    info = pending.edge
    name = info.fields[k].name
    direction: Direction
    if name == info.src_field:
        direction = "OUT"
    elif name == info.dst_field:
        direction = "IN"
    else:
        return None
    graph = anchored.graph
    n = len(anchored.path.schema)
    cols = edge_columns(graph, info, n, direction)
    if cols is None:
        return None
    path: LogicalNode = EdgeMatch(
        anchored.path,
        graph,
        source,
        info.label,
        (info.label,),
        direction,
        graph.edge_type(),
        "",
        (),
        graph.vertex_type(),
        edge_only=True,
    )
    values = dict(enumerate(cols))
    cond = and_all(substitute_refs(f, values) for f in pending.filters)
    if cond is not None:
        path = Filter(path, cond)
    return path, anchored.exprs, [substitute_refs(e, values) for e in pending.exprs]


def _split_filters(path: LogicalNode) -> tuple[LogicalNode, Exprs]:
    conds: Exprs = []
    while isinstance(path, Filter):
        conds = conjuncts(path.condition) + conds
        path = path.input
    return path, conds


def _complete(
    edge_side: _Side, vertex_side: _Side, e_col: int, v_col: int
) -> tuple[LogicalNode, Exprs, Exprs] | None:
    """Finish the edge-only hop on top of ``edge_side`` at the vertex table of
    ``vertex_side``, when column ``e_col`` is the edge's far end and ``v_col``
    that table's id."""
    assert edge_side.path is not None and vertex_side.path is not None
    em, above = _split_filters(edge_side.path)
    vm, own = _split_filters(vertex_side.path)
    if not (isinstance(em, EdgeMatch) and em.edge_only):
        return None
    if not (isinstance(vm, VertexMatch) and vm.input is None):
        return None
    edge_index = len(em.input.schema)
    far = _unparen(edge_side.exprs[e_col])
    if not (
        isinstance(far, exp.Dot)
        and far.name == T.EDGE_DST_FIELD
        and ref_index(_unparen(far.this)) == edge_index
    ):
        return None
    if _vertex_id_index(vertex_side.exprs[v_col], vm) != 0:
        return None
    target = and_all(conjuncts(vm.filter) + own)
    full: LogicalNode = replace(
        em,
        edge_only=False,
        target_variable=vm.variable,
        target_labels=vm.labels,
        target_filter=target,
    )
    cond = and_all(above)
    if cond is not None:
        full = Filter(full, cond)
    moved = [remap_refs(e, {0: edge_index + 1}) for e in vertex_side.exprs]
    return full, edge_side.exprs, moved


def _column_pair(c: exp.Expression, left_width: int) -> tuple[int, int] | None:
    c = _unparen(c)
    if not isinstance(c, exp.EQ):
        return None
    a, b = ref_index(_unparen(c.this)), ref_index(_unparen(c.expression))
    if a is None or b is None:
        return None
    if a > b:
        a, b = b, a
    if not (a < left_width <= b):
        return None
    return a, b - left_width


def _connect(left: _Side, right: _Side, i: int, j: int) -> tuple[LogicalNode, Exprs] | None:
    if left.path is not None and right.path is None:
        got = _extend(left, right, i, j)
        return None if got is None else (got[0], got[1] + got[2])
    if left.path is None and right.path is not None:
        got = _extend(right, left, j, i)
        return None if got is None else (got[0], got[2] + got[1])
    if left.path is not None and right.path is not None:
        got = _complete(left, right, i, j)
        if got is not None:
            return got[0], got[1] + got[2]
        got = _complete(right, left, j, i)
        if got is not None:
            return got[0], got[2] + got[1]
    return None


def sql2graph(node: LogicalNode) -> LogicalNode:
    if not (isinstance(node, Join) and node.join_type == "INNER" and node.condition is not None):
        return node
    if not is_deterministic(node.condition):
        return node
    left, right = _side(node.left), _side(node.right)
    if left is None or right is None or left.graph != right.graph:
        return node
    width = len(node.left.schema)
    parts = conjuncts(node.condition)
    for k, c in enumerate(parts):
        pair = _column_pair(c, width)
        if pair is None:
            continue
        got = _connect(left, right, *pair)
        if got is None:
            continue
        path, exprs = got
        # Keep the declared types of the join's columns exactly.
        exprs = [cast_to(e, f.type) for e, f in zip(exprs, node.schema, strict=True)]
        values = dict(enumerate(exprs))
        rest = and_all(substitute_refs(p, values) for i, p in enumerate(parts) if i != k)
        if rest is not None:
            path = Filter(path, rest)
        return Project(path, tuple(exprs), node.schema)
    return node
