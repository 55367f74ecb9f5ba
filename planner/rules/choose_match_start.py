"""choose_match_start: start a linear pattern at its most selective vertex.

    MATCH (a:person)-[e:knows]->(b WHERE b.id = 4)
      EdgeMatch(VertexMatch(a:person), (a)->[e:knows](b, target_filter=b.~id = 4))
      ->  Project(EdgeMatch(VertexMatch(b, filter=b.~id = 4), (b)<-[e:knows](a:person)),
                  [a, flip(e), b])

A chain bound as written starts at its first vertex and scans every vertex
of that label.  When a later vertex has an id equality (with a constant, or
with a field of the request table: one lookup per request) and the first one
has none, the chain is rebuilt to start there: the edges before it are walked
backwards (OUT and IN swapped), the edges after it forwards as before.

The answer must not change, so a Project restores the original column order
and shows each backwards-walked edge as the original traversal sees it: an
edge value is oriented by the walk (``~src`` is the vertex it left, and
``~direction`` says whether that was along the edge), so ``~src``/``~dst`` are
swapped back and OUT/IN flipped back.  An edge filter of a reversed edge reads
the flipped value for the same reason.  Conditions between the matches
(``a.age < b.age``) are lifted above the Project: they commute with the
expansions, which are inner joins.  Only chains of single-hop expansions,
each leaving from the vertex the previous one reached, are rebuilt; loops,
cycles back to a bound vertex and edge-only expansions end the search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.expressions import (
    and_all,
    conjuncts,
    copy_typed,
    input_refs,
    is_constant,
    is_deterministic,
    ref,
    ref_index,
    remap_refs,
    typed,
)
from planner.graph_nodes import REVERSED, Direction, EdgeMatch, VertexMatch
from planner.logical import Field, Filter, LogicalNode, Project


@dataclass
class _Chain:
    start: VertexMatch
    steps: list[EdgeMatch]  # from the start outwards
    lifted: list[exp.Expression]  # conditions of the Filters between them (top layout)


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _collect(node: LogicalNode) -> _Chain | None:
    lifted: list[exp.Expression] = []
    steps: list[EdgeMatch] = []
    n = node
    while True:
        if isinstance(n, Filter):
            if not is_deterministic(n.condition):
                return None
            lifted += conjuncts(n.condition)
            n = n.input
        elif isinstance(n, EdgeMatch):
            steps.append(n)
            n = n.input
        elif isinstance(n, VertexMatch):
            break
        else:
            return None
    if not steps:
        return None
    steps.reverse()
    at = len(n.schema) - 1
    for st in steps:
        if st.is_loop or st.edge_only or st.target_bound is not None or st.source != at:
            return None
        at = len(st.input.schema) + 1
    return _Chain(n, steps, lifted)


def _id_of(e: exp.Expression, index: int) -> bool:
    e = _unparen(e)
    return (
        isinstance(e, exp.Dot)
        and e.name == T.VERTEX_ID_FIELD
        and ref_index(_unparen(e.this)) == index
    )


def _constant_id_equality(cond: exp.Expression | None, index: int) -> bool:
    for c in conjuncts(cond):
        inner = _unparen(c)
        if isinstance(inner, exp.EQ):
            for a, b in ((inner.this, inner.expression), (inner.expression, inner.this)):
                if _id_of(a, index) and is_constant(b):
                    return True
    return False


def _request_key(cond: exp.Expression, index: int, width: int) -> int | None:
    """The request column ``k`` of a conjunct ``$index.~id = $k`` (k < width)."""
    inner = _unparen(cond)
    if not isinstance(inner, exp.EQ):
        return None
    for a, b in ((inner.this, inner.expression), (inner.expression, inner.this)):
        k = ref_index(_unparen(b))
        if _id_of(a, index) and k is not None and k < width:
            return k
    return None


def _dot(value: exp.Expression, name: str, t: object) -> exp.Expression:
    return typed(exp.Dot(this=value, expression=exp.Identifier(this=name, quoted=True)), t)


def _flipped_direction(value: exp.Expression) -> exp.Expression:
    d = _dot(value, T.EDGE_DIRECTION_FIELD, T.VARCHAR)
    case = exp.Case(
        ifs=[
            exp.If(
                this=typed(exp.EQ(this=d.copy(), expression=exp.Literal.string("OUT")), T.BOOLEAN),
                true=exp.Literal.string("IN"),
            ),
            exp.If(
                this=typed(exp.EQ(this=d.copy(), expression=exp.Literal.string("IN")), T.BOOLEAN),
                true=exp.Literal.string("OUT"),
            ),
        ],
        default=d,
    )
    return typed(case, T.VARCHAR)


def _flipped_field(value: exp.Expression, etype: T.StructType, name: str) -> exp.Expression:
    """Field ``name`` of the edge in ``value`` as the opposite walk sees it."""
    if name == T.EDGE_SRC_FIELD:
        return _dot(value.copy(), T.EDGE_DST_FIELD, etype.field_type(T.EDGE_DST_FIELD))
    if name == T.EDGE_DST_FIELD:
        return _dot(value.copy(), T.EDGE_SRC_FIELD, etype.field_type(T.EDGE_SRC_FIELD))
    if name == T.EDGE_DIRECTION_FIELD:
        return _flipped_direction(value.copy())
    return _dot(value.copy(), name, etype.field_type(name))


def flip_edge(value: exp.Expression, etype: T.StructType) -> exp.Expression:
    """The edge in ``value`` as the opposite walk sees it (a new struct)."""
    args: list[exp.Expression] = []
    for f in etype.fields:
        args += [exp.Literal.string(f.name), _flipped_field(value, etype, f.name)]
    return typed(exp.Anonymous(this="named_struct", expressions=args), etype)


def _flip_reads(cond: exp.Expression, index: int, etype: T.StructType) -> exp.Expression:
    """``cond`` with every read of the edge in field ``index`` flipped."""

    def visit(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Dot) and ref_index(_unparen(node.this)) == index:
            out = _flipped_field(ref(index, etype), etype, node.name)
            return typed(out, node.meta.get("type", T.ANY)) if node.meta else out
        if ref_index(node) == index and not isinstance(node.parent, exp.Dot):
            return flip_edge(ref(index, etype), etype)
        return node

    return copy_typed(cond).transform(visit, copy=False)


def _vertex_only(
    cond: exp.Expression | None, vertex: int
) -> tuple[list[exp.Expression], list[exp.Expression]]:
    """Conjuncts reading only field ``vertex`` (renumbered to 0), and the rest."""
    own: list[exp.Expression] = []
    rest: list[exp.Expression] = []
    for c in conjuncts(cond):
        if input_refs(c) == {vertex} and is_deterministic(c):
            own.append(remap_refs(c, {vertex: 0}))
        else:
            rest.append(c)
    return own, rest


def _rebuild(chain: _Chain) -> LogicalNode | None:
    start, steps = chain.start, chain.steps
    width = len(start.input.schema) if start.input is not None else 0
    if start.id_key is not None or _constant_id_equality(start.filter, width):
        return None
    if _constant_id_equality(and_all(chain.lifted), width):
        return None  # the start is selective already (its filter is not pushed yet)
    # Vertex i of the chain sits at width + 2i, edge i (into vertex i) at width + 2i - 1.
    pivot: int | None = None
    key: int | None = None
    consumed: exp.Expression | None = None
    for i, st in enumerate(steps, start=1):
        if _constant_id_equality(st.target_filter, 0):
            pivot = i
            break
        if start.input is not None:
            for c in chain.lifted:
                k = _request_key(c, width + 2 * i, width)
                if k is not None:
                    pivot, key, consumed = i, k, c
                    break
            if pivot is not None:
                break
    if pivot is None:
        return None
    graph, vtype = start.graph, start.vertex_type

    # The start vertex's own conditions travel with it; the rest are lifted.
    start_own, start_rest = _vertex_only(start.filter, width)
    lifted = [c for c in chain.lifted if c is not consumed] + start_rest

    def vertex_info(i: int) -> tuple[str, tuple[str, ...], exp.Expression | None, bool]:
        if i == 0:
            return start.variable, start.labels, and_all(start_own), start.hidden
        st = steps[i - 1]
        return st.target_variable, st.target_labels, st.target_filter, st.target_hidden

    var, labels, cond, hidden = vertex_info(pivot)
    if cond is not None and width:
        cond = remap_refs(cond, {0: width})
    node: LogicalNode = VertexMatch(graph, var, labels, vtype, cond, start.input, hidden, key)
    new_pos = {width + 2 * pivot: width}  # old index -> new index

    def expand(
        node: LogicalNode, i: int, source_old: int, target: int, backwards: bool
    ) -> LogicalNode:
        st = steps[i - 1]
        direction: Direction = st.direction
        edge_filter = st.edge_filter
        if backwards:
            direction = REVERSED[direction]
            if edge_filter is not None:
                edge_filter = _flip_reads(edge_filter, 0, st.edge_type)
        t_var, t_labels, t_cond, t_hidden = vertex_info(target)
        n = len(node.schema)
        new_pos[width + 2 * i - 1] = n
        new_pos[width + 2 * target] = n + 1
        return EdgeMatch(
            node,
            graph,
            new_pos[source_old],
            st.edge_variable,
            st.edge_labels,
            direction,
            st.edge_type,
            t_var,
            t_labels,
            vtype,
            edge_filter,
            t_cond,
            None,
            1,
            1,
            st.edge_hidden,
            t_hidden,
        )

    for i in range(pivot, 0, -1):
        node = expand(node, i, width + 2 * i, i - 1, backwards=True)
    for i in range(pivot + 1, len(steps) + 1):
        node = expand(node, i, width + 2 * (i - 1), i, backwards=False)

    top = steps[-1]
    exprs: list[exp.Expression] = []
    for old, f in enumerate(top.schema):
        if old < width:
            exprs.append(ref(old, f.type))
            continue
        moved = ref(new_pos[old], f.type)
        is_edge = (old - width) % 2 == 1
        if is_edge and (old - width + 1) // 2 <= pivot:
            moved = flip_edge(moved, f.type)  # type: ignore[arg-type]
        exprs.append(moved)
    out: LogicalNode = Project(node, tuple(exprs), tuple(Field(f.name, f.type) for f in top.schema))
    cond_all = and_all(lifted)
    return out if cond_all is None else Filter(out, cond_all)


def choose_match_start(plan: LogicalNode) -> LogicalNode:
    memo: dict[int, LogicalNode] = {}

    def visit(node: LogicalNode) -> LogicalNode:
        if id(node) in memo:
            return memo[id(node)]
        result: LogicalNode | None = None
        if isinstance(node, (EdgeMatch, Filter)):
            chain = _collect(node)
            if chain is not None:
                result = _rebuild(chain)
                if result is not None and chain.start.input is not None:
                    # The request table below may hold patterns of its own.
                    result = _replace_input(result, chain.start.input, visit(chain.start.input))
        if result is None:
            inputs = node.inputs
            new_inputs = [visit(i) for i in inputs]
            changed = any(a is not b for a, b in zip(new_inputs, inputs, strict=True))
            result = node.with_inputs(*new_inputs) if changed else node
        memo[id(node)] = result
        return result

    return visit(plan)


def _replace_input(plan: LogicalNode, old: LogicalNode, new: LogicalNode) -> LogicalNode:
    if old is new:
        return plan

    def fn(n: LogicalNode) -> LogicalNode:
        if isinstance(n, VertexMatch) and n.input is old:
            return replace(n, input=new)
        inputs = n.inputs
        new_inputs = [fn(i) for i in inputs]
        if any(a is not b for a, b in zip(new_inputs, inputs, strict=True)):
            return n.with_inputs(*new_inputs)
        return n

    return fn(plan)
