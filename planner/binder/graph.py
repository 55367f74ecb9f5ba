"""Binding graph queries: MATCH patterns, LET, RETURN, THEN FILTER, CALL ... YIELD.

A graph query is bound clause by clause into a *path table* plan (see
``planner.graph_nodes``): each MATCH pattern extends or joins the paths so
far, WHERE clauses become filters, LET rebuilds a vertex/edge value with a new
field, and RETURN is an ordinary SELECT over the path table.  Graph-only
expressions (``label(e)``, ``COUNT((a)->(b) => b.id)``, vertex comparison)
are bound through ``GraphHook``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.config import MATCH_OFFSET, MAX_OPEN_HOPS
from geaflow_sql.core.errors import CatalogError, GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.algorithms import signature_named, user_signature
from planner.expressions import and_all, cast_to, input_refs, literal_for, ref, type_of, typed
from planner.functions import FunctionKind
from planner.graph_nodes import (
    REVERSED,
    Direction,
    EdgeMatch,
    GraphAlgorithm,
    GraphLabelScan,
    VertexMatch,
    direction_of,
)
from planner.logical import (
    AggCall,
    Aggregate,
    Field,
    Filter,
    Join,
    LogicalNode,
    Project,
    Sort,
    SortKey,
    Union,
    transform_up,
)
from planner.user_functions import BuiltinAlias, UserFunction

from .constants import constant_int, constant_value
from .expressions import ExprBinder
from .scope import Bound, Scope, ScopeField

_HIDDEN = itertools.count()


def _hidden(prefix: str) -> str:
    return f"${prefix}{next(_HIDDEN)}"


# ---------------------------------------------------------------------------
# Path state
# ---------------------------------------------------------------------------


@dataclass
class PathState:
    """The paths bound so far: a plan node and the names of its fields."""

    node: LogicalNode | None
    fields: list[ScopeField] = field(default_factory=list)

    @property
    def width(self) -> int:
        return len(self.fields)

    def index_of(self, variable: str) -> int | None:
        lowered = variable.lower()
        for f in self.fields:
            if f.relation is None and f.name.lower() == lowered:
                return f.index
        return None

    def scope(self) -> Scope:
        return Scope(list(self.fields))

    def with_node(self, node: LogicalNode, extra: list[ScopeField] | None = None) -> PathState:
        return PathState(node, list(self.fields) + list(extra or []))

    def variables(self) -> list[ScopeField]:
        return [f for f in self.fields if f.relation is None]


def graph_label_scan(qb: Any, parts: tuple[str, ...]) -> LogicalNode | None:
    """A vertex or edge label of the current graph used as a table (sql2graph)."""
    catalog = qb.ctx.catalog
    if len(parts) != 1 or catalog.current_graph is None:
        return None
    graph = catalog.graph((catalog.current_graph,))
    if graph is None:
        return None
    vertex = graph.vertex(parts[0])
    if vertex is not None:
        fields = tuple(Field(c.name, c.type) for c in vertex.fields)
        return GraphLabelScan(graph, vertex.label, True, fields)
    edge = graph.edge(parts[0])
    if edge is not None:
        fields = tuple(Field(c.name, c.type) for c in edge.fields)
        return GraphLabelScan(graph, edge.label, False, fields)
    return None


# ---------------------------------------------------------------------------
# The binder
# ---------------------------------------------------------------------------


class GraphQueryBinder:
    def __init__(self, qb: Any) -> None:
        self.qb = qb
        self.ctx = qb.ctx
        self.graph: GraphInfo | None = None
        self.vertex_type: T.StructType | None = None
        self.edge_type: T.StructType | None = None
        # LET GLOBAL: vertex fields visible to every later vertex of this query.
        self.global_fields: list[tuple[str, Any, LogicalNode]] = []

    def error(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

    # ------------------------------------------------------------------ graph
    def _current_graph(self, at: s.Node) -> GraphInfo:
        catalog = self.ctx.catalog
        if catalog.current_graph is None:
            raise self.error(
                ValidationError("no graph is selected: run USE GRAPH <name> before MATCH or CALL"),
                at,
            )
        graph = catalog.graph((catalog.current_graph,))
        if graph is None:
            raise self.error(CatalogError(f"graph {catalog.current_graph!r} no longer exists"), at)
        return graph

    def _setup(self, at: s.Node) -> None:
        if self.graph is None:
            self.graph = self._current_graph(at)
            self.vertex_type = self.graph.vertex_type()
            self.edge_type = self.graph.edge_type()

    # ------------------------------------------------------------------ query
    def bind(self, q: s.GraphQuery) -> LogicalNode:
        self._setup(q)
        state = PathState(None)
        if q.request is not None:
            req = self.qb.bind_query(q.request.query).node
            # Requests are a set: a repeated request row is answered once.
            req = Aggregate(req, tuple(range(len(req.schema))), (), req.schema)
            state = PathState(
                req,
                [ScopeField(f.name, f.type, i, q.request.name) for i, f in enumerate(req.schema)],
            )
        clauses = list(q.clauses)
        returned = False
        result: LogicalNode | None = None
        i = 0
        while i < len(clauses):
            clause = clauses[i]
            if isinstance(clause, s.MatchClause):
                if returned:
                    raise self.error(ValidationError("MATCH cannot follow RETURN"), clause)
                state = self.bind_match(state, clause)
            elif isinstance(clause, s.LetClause):
                if returned:
                    raise self.error(ValidationError("LET cannot follow RETURN"), clause)
                state = self.bind_let(state, clause)
            elif isinstance(clause, s.CallClause):
                state = self.bind_call(state, clause)
            elif isinstance(clause, (s.OrderByClause, s.LimitClause)) and not returned:
                order: tuple[s.OrderItem, ...] = ()
                limit = None
                if isinstance(clause, s.OrderByClause):
                    order = clause.items
                    if i + 1 < len(clauses) and isinstance(clauses[i + 1], s.LimitClause):
                        i += 1
                        limit = clauses[i]
                else:
                    limit = clause
                state = self.bind_path_sort(state, order, limit)  # type: ignore[arg-type]
            elif isinstance(clause, s.ReturnClause):
                if returned:
                    raise self.error(ValidationError("a graph query has one RETURN"), clause)
                group: tuple[s.Expr, ...] = ()
                order = ()
                limit_clause: s.LimitClause | None = None
                j = i + 1
                while j < len(clauses) and isinstance(
                    clauses[j], (s.GroupByClause, s.OrderByClause, s.LimitClause)
                ):
                    c = clauses[j]
                    if isinstance(c, s.GroupByClause):
                        group = c.keys
                    elif isinstance(c, s.OrderByClause):
                        order = c.items
                    else:
                        assert isinstance(c, s.LimitClause)
                        limit_clause = c
                    j += 1
                i = j - 1
                result = self.bind_return(state, clause, group, order, limit_clause)
                returned = True
            elif isinstance(clause, s.FilterClause):
                if not returned or result is None:
                    raise self.error(ValidationError("THEN FILTER must follow RETURN"), clause)
                result = self.bind_then_filter(result, clause)
            elif isinstance(clause, s.GroupByClause):
                raise self.error(ValidationError("GROUP BY must follow RETURN"), clause)
            else:
                raise self.error(
                    ValidationError(f"unexpected {type(clause).__name__} here"), clause
                )
            i += 1
        if result is not None:
            return result
        if state.node is None:
            raise self.error(ValidationError("a graph query needs MATCH or CALL"), q)
        # No RETURN: the path variables themselves (GeaFlow returns the path).
        visible = [f for f in state.fields if f.relation is None and not f.hidden]
        if not visible:
            visible = [f for f in state.fields if not f.hidden]
        return Project(
            state.node,
            tuple(ref(f.index, f.type) for f in visible),
            tuple(Field(f.name, f.type) for f in visible),
        )

    # ------------------------------------------------------------------ match
    def bind_match(self, state: PathState, clause: s.MatchClause) -> PathState:
        for union in clause.patterns:
            state = self.bind_pattern_union(state, union)
        if clause.where is not None:
            state = self.filter(state, clause.where)
        return state

    def distinct_paths(self, state: PathState) -> PathState:
        """GeaFlow's paths consist of their named elements: anonymous vertices
        and edges are dropped, and paths then agreeing on every named element
        are one path (so ``(a)-()-(b)`` yields each ``b`` once)."""
        assert state.node is not None
        if not any(f.hidden for f in state.fields):
            return state
        kept = [f for f in state.fields if not f.hidden]
        fields = [ScopeField(f.name, f.type, i, f.relation, False) for i, f in enumerate(kept)]
        node: LogicalNode = Project(
            state.node,
            tuple(ref(f.index, f.type) for f in kept),
            tuple(Field(f.name, f.type) for f in kept),
        )
        node = Aggregate(node, tuple(range(len(kept))), (), node.schema)
        return PathState(node, fields)

    def bind_pattern_union(self, state: PathState, union: s.PatternUnion) -> PathState:
        branches = [self.bind_path(state, p) for p in union.paths]
        if len(branches) == 1:
            return branches[0]
        result = branches[0]
        for k, branch in enumerate(branches[1:]):
            # GeaFlow: ``|`` unites distinct paths, ``|+|`` keeps duplicates.
            keep_all = union.distinct[k] if k < len(union.distinct) else False
            result = self._union(state, result, branch, not keep_all)
        return result

    def _union(self, base: PathState, a: PathState, b: PathState, distinct: bool) -> PathState:
        """Union two branches that extend ``base``; variables one lacks are null."""
        names: list[ScopeField] = []
        seen: set[str] = set()
        for f in a.fields[base.width :] + b.fields[base.width :]:
            key = f.name.lower()
            if key not in seen:
                seen.add(key)
                names.append(f)
        out_fields = list(base.fields)
        for f in names:
            out_fields.append(ScopeField(f.name, f.type, len(out_fields), f.relation, f.hidden))

        def align(branch: PathState) -> LogicalNode:
            exprs = [ref(f.index, f.type) for f in base.fields]
            for f in names:
                idx = branch.index_of(f.name) if f.relation is None else None
                if idx is not None and idx >= base.width:
                    exprs.append(ref(idx, f.type))
                else:
                    exprs.append(typed(exp.Null(), f.type))
            assert branch.node is not None
            return Project(
                branch.node,
                tuple(exprs),
                tuple(Field(f.name, f.type) for f in out_fields),
            )

        node: LogicalNode = Union((align(a), align(b)), True)
        if distinct:
            width = len(out_fields)
            node = Aggregate(node, tuple(range(width)), (), node.schema)
        return PathState(node, out_fields)

    def _label_check(self, labels: tuple[str, ...], vertex: bool, at: s.Node) -> tuple[str, ...]:
        assert self.graph is not None
        out = []
        for lab in labels:
            info = self.graph.vertex(lab) if vertex else self.graph.edge(lab)
            if info is None:
                kinds = self.graph.vertices if vertex else self.graph.edges
                known = ", ".join(k.label for k in kinds)
                raise self.error(
                    ValidationError(
                        f"graph {self.graph.name} has no {'vertex' if vertex else 'edge'} label "
                        f"{lab!r} (it has: {known})"
                    ),
                    at,
                )
            out.append(info.label)
        return tuple(out)

    def bind_path(self, state: PathState, path: s.PathPattern) -> PathState:
        elements = list(path.elements)
        nodes = [e for e in elements if isinstance(e, s.NodePattern)]
        # Start at a variable the paths already have, so the pattern extends them;
        # a pattern bound at its end is walked backwards (edges reversed).
        start = next(
            (
                k
                for k, n in enumerate(elements)
                if isinstance(n, s.NodePattern)
                and n.variable
                and state.index_of(n.variable) is not None
            ),
            None,
        )
        if start is None:
            state = self._start(state, nodes[0])
            state = self._walk(state, elements, 0, forward=True)
        else:
            state = self._apply_node_constraints(state, elements[start])  # type: ignore[arg-type]
            state = self._walk(state, elements, start, forward=True)
            state = self._walk(state, elements, start, forward=False)
        return self.distinct_paths(state)

    def _walk(self, state: PathState, elements: list[Any], start: int, forward: bool) -> PathState:
        k = start
        step = 2 if forward else -2
        current_var = elements[start].variable
        current_idx = state.index_of(current_var) if current_var else state.width - 1
        while 0 <= k + step // 2 < len(elements) and 0 <= k + step < len(elements):
            edge: s.EdgePattern = elements[k + step // 2]
            node: s.NodePattern = elements[k + step]
            direction = direction_of(edge.direction)
            if not forward:
                direction = REVERSED[direction]
            assert current_idx is not None
            state, current_idx = self._expand(state, current_idx, edge, direction, node)
            k += step
        return state

    def _start(self, state: PathState, node: s.NodePattern) -> PathState:
        assert self.graph is not None and self.vertex_type is not None
        labels = self._label_check(node.labels, True, node)
        variable = node.variable or _hidden("v")
        hidden = node.variable is None
        vm = VertexMatch(self.graph, variable, labels, self.vertex_type, None, state.node, hidden)
        new_field = ScopeField(variable, self.vertex_type, state.width, None, hidden)
        new_state = PathState(vm, list(state.fields) + [new_field])
        new_state = self._apply_globals(new_state, state.width)
        return self._element_conditions(new_state, node, variable)

    def _element_conditions(self, state: PathState, element: Any, variable: str) -> PathState:
        """A pattern element's ``{prop: value}`` map and WHERE, as filters."""
        for name, value in element.properties:
            eq = s.Binary(
                "=",
                s.Field(s.Column(variable, span=value.span), name, span=value.span),
                value,
                span=value.span,
            )
            state = self.filter(state, eq, local=variable)
        if element.where is not None:
            state = self.filter(state, element.where, local=variable)
        return state

    def _apply_node_constraints(self, state: PathState, node: s.NodePattern) -> PathState:
        """Labels and WHERE of a node pattern naming an already bound variable."""
        idx = state.index_of(node.variable or "")
        assert idx is not None
        if node.labels:
            labels = self._label_check(node.labels, True, node)
            state = self._label_filter(state, idx, labels)
        return self._element_conditions(state, node, node.variable or "")

    def _label_filter(self, state: PathState, idx: int, labels: tuple[str, ...]) -> PathState:
        t = state.fields[idx].type
        label = typed(
            exp.Dot(this=ref(idx, t), expression=exp.Identifier(this=T.LABEL_FIELD, quoted=True)),
            T.VARCHAR,
        )
        cond = typed(
            exp.In(this=label, expressions=[exp.Literal.string(x) for x in labels]), T.BOOLEAN
        )
        assert state.node is not None
        return state.with_node(Filter(state.node, cond))

    def _expand(
        self,
        state: PathState,
        source_idx: int,
        edge: s.EdgePattern,
        direction: Direction,
        node: s.NodePattern,
    ) -> tuple[PathState, int]:
        assert self.graph is not None and state.node is not None
        edge_labels = self._label_check(edge.labels, False, edge)
        target_labels = self._label_check(node.labels, True, node)
        if edge.variable and state.index_of(edge.variable) is not None:
            raise self.error(
                UnsupportedError(f"edge variable {edge.variable!r} is already bound in this query"),
                edge,
            )
        edge_var = edge.variable or _hidden("e")
        target_bound = state.index_of(node.variable) if node.variable else None
        target_var = node.variable or _hidden("v")
        max_hops = edge.max_hops
        if max_hops is None:
            max_hops = max(edge.min_hops, self.ctx.config.get_int(MAX_OPEN_HOPS))
        if max_hops < edge.min_hops:
            raise self.error(
                ValidationError(f"hop range {{{edge.min_hops},{max_hops}}} is empty"), edge
            )
        em = EdgeMatch(
            state.node,
            self.graph,
            source_idx,
            edge_var,
            edge_labels,
            direction,
            self.edge_type,
            target_var,
            target_labels,
            self.vertex_type,
            None,
            None,
            target_bound,
            edge.min_hops,
            max_hops,
            edge.variable is None,
            node.variable is None,
        )
        fields = list(state.fields)
        edge_idx = len(fields)
        fields.append(ScopeField(edge_var, self.edge_type, edge_idx, None, edge.variable is None))
        if target_bound is None:
            target_idx = len(fields)
            fields.append(
                ScopeField(target_var, self.vertex_type, target_idx, None, node.variable is None)
            )
        else:
            target_idx = target_bound
        new_state = PathState(em, fields)
        if target_bound is None:
            new_state = self._apply_globals(new_state, target_idx)
        if em.is_loop:
            # On a variable-length edge the conditions hold for every edge of the run.
            edge_cond = self._loop_edge_condition(edge, edge_var)
            if edge_cond is not None:
                em = replace(em, edge_filter=edge_cond)
                new_state = PathState(em, fields)
        else:
            new_state = self._element_conditions(new_state, edge, edge_var)
        if target_bound is not None and target_labels:
            new_state = self._label_filter(new_state, target_bound, target_labels)
        new_state = self._element_conditions(new_state, node, target_var)
        return new_state, target_idx

    def _loop_edge_condition(self, edge: s.EdgePattern, edge_var: str) -> exp.Expression | None:
        """WHERE and {prop: value} of a variable-length edge, over the edge alone."""
        assert self.edge_type is not None
        scope = Scope([ScopeField(edge_var, self.edge_type, 0, None, False)])
        binder = ExprBinder(self.ctx, scope, local_relation=edge_var)
        parts = []
        for name, value in edge.properties:
            eq = s.Binary(
                "=",
                s.Field(s.Column(edge_var, span=value.span), name, span=value.span),
                value,
                span=value.span,
            )
            parts.append(binder.bind_condition(eq))
        if edge.where is not None:
            try:
                parts.append(binder.bind_condition(edge.where))
            except GeaflowError as err:
                raise self.error(
                    ValidationError(
                        f"the condition of a variable-length edge may only read the edge: {err.message}"
                    ),
                    edge.where,
                ) from None
        return and_all(parts)

    # ----------------------------------------------------------- expressions
    def hook(self, state: PathState) -> GraphHook:
        return GraphHook(self, state)

    def binder(self, state: PathState, hook: GraphHook, local: str | None = None) -> ExprBinder:
        return ExprBinder(self.ctx, state.scope(), graph_hook=hook, local_relation=local)

    def filter(self, state: PathState, condition: s.Expr, local: str | None = None) -> PathState:
        hook = self.hook(state)
        cond = self.binder(state, hook, local).bind_condition(condition)
        node = hook.state.node
        assert node is not None
        filtered: LogicalNode = Filter(node, cond)
        extra = hook.state.width - state.width
        if extra:
            # Drop the columns path subqueries added.
            filtered = Project(
                filtered,
                tuple(ref(f.index, f.type) for f in state.fields),
                tuple(Field(f.name, f.type) for f in state.fields),
            )
        return state.with_node(filtered)

    # -------------------------------------------------------------------- let
    def bind_let(self, state: PathState, clause: s.LetClause) -> PathState:
        for assign in clause.assignments:
            idx = state.index_of(assign.variable)
            if idx is None:
                raise self.error(
                    ValidationError(f"unknown path variable {assign.variable!r}"), assign
                )
            hook = self.hook(state)
            value = self.binder(state, hook).bind(assign.value)
            base = hook.state
            old_type = base.fields[idx].type
            if not isinstance(old_type, T.StructType):
                raise self.error(
                    ValidationError(f"{assign.variable} is not a vertex or an edge"), assign
                )
            new_value, new_type = struct_with_field(
                ref(idx, old_type), old_type, assign.field, value
            )
            exprs = []
            fields = []
            for f in state.fields:
                if f.index == idx:
                    exprs.append(new_value)
                    fields.append(ScopeField(f.name, new_type, f.index, f.relation, f.hidden))
                else:
                    exprs.append(ref(f.index, f.type))
                    fields.append(f)
            assert base.node is not None
            node = Project(base.node, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
            state = PathState(node, fields)
            if assign.is_global:
                state = self._register_global(state, idx, assign.field, type_of(value))
        return state

    def _register_global(self, state: PathState, idx: int, name: str, t: Any) -> PathState:
        """LET GLOBAL v.f: every vertex matched later in this query carries f."""
        assert state.node is not None
        t_struct = state.fields[idx].type
        key = typed(
            exp.Dot(
                this=ref(idx, t_struct),
                expression=exp.Identifier(this=T.VERTEX_ID_FIELD, quoted=True),
            ),
            t_struct.field_type(T.VERTEX_ID_FIELD),
        )
        stored = t_struct.resolve_field(name)
        value = typed(
            exp.Dot(this=ref(idx, t_struct), expression=exp.Identifier(this=stored, quoted=True)), t
        )
        values = Project(state.node, (key, value), (Field("id", type_of(key)), Field(name, t)))
        overlay = Aggregate(values, (0, 1), (), values.schema)
        self.global_fields.append((name, t, overlay))
        # Vertices bound before the LET see the value too.
        for f in list(state.fields):
            if (
                f.relation is None
                and f.index != idx
                and isinstance(f.type, T.StructType)
                and f.type.kind == "VERTEX"
            ):
                state = self._overlay(state, f.index, name, t, overlay)
        return state

    def _apply_globals(self, state: PathState, idx: int) -> PathState:
        for name, t, overlay in self.global_fields:
            state = self._overlay(state, idx, name, t, overlay)
        return state

    def _overlay(
        self, state: PathState, idx: int, name: str, t: Any, overlay: LogicalNode
    ) -> PathState:
        assert state.node is not None
        width = state.width
        vt = state.fields[idx].type
        vid = typed(
            exp.Dot(
                this=ref(idx, vt), expression=exp.Identifier(this=T.VERTEX_ID_FIELD, quoted=True)
            ),
            vt.field_type(T.VERTEX_ID_FIELD),
        )
        cond = typed(exp.EQ(this=vid, expression=ref(width, overlay.schema[0].type)), T.BOOLEAN)
        joined = Join(state.node, overlay, "LEFT", cond)
        new_value, new_type = struct_with_field(ref(idx, vt), vt, name, ref(width + 1, t))
        exprs = []
        fields = []
        for f in state.fields:
            if f.index == idx:
                exprs.append(new_value)
                fields.append(ScopeField(f.name, new_type, f.index, f.relation, f.hidden))
            else:
                exprs.append(ref(f.index, f.type))
                fields.append(f)
        node = Project(joined, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
        return PathState(node, fields)

    # ------------------------------------------------------------------- sort
    def bind_path_sort(
        self, state: PathState, order: tuple[s.OrderItem, ...], limit: s.LimitClause | None
    ) -> PathState:
        """ORDER BY / LIMIT written before RETURN: they order and cut the paths."""
        assert state.node is not None
        hook = self.hook(state)
        binder = self.binder(state, hook)
        keys_exprs = [binder.bind(item.expr) for item in order]
        base = hook.state
        assert base.node is not None
        width = base.width
        exprs = [ref(f.index, f.type) for f in base.fields] + keys_exprs
        names = [f.name for f in base.fields] + [f"$sort{k}" for k in range(len(keys_exprs))]
        projected = Project(
            base.node,
            tuple(exprs),
            tuple(Field(n, type_of(e)) for n, e in zip(names, exprs, strict=True)),
        )
        keys = tuple(
            SortKey(width + k, item.descending, item.nulls_first) for k, item in enumerate(order)
        )
        lim = constant_int(self.ctx, limit.limit, "LIMIT") if limit is not None else None
        off = (
            (constant_int(self.ctx, self._offset(limit), "OFFSET") or 0) if limit is not None else 0
        )
        sorted_node = Sort(projected, keys, lim, off)
        node = Project(
            sorted_node,
            tuple(ref(f.index, f.type) for f in state.fields),
            tuple(Field(f.name, f.type) for f in state.fields),
        )
        return state.with_node(node)

    def _offset(self, limit: s.LimitClause | None) -> s.Expr | None:
        """The OFFSET a MATCH sort applies.  GeaFlow's traversal sort keeps the
        first LIMIT rows in order and never skips OFFSET rows; scripts written
        for it rely on that, so OFFSET counts only where the job asks for it."""
        if limit is None or limit.offset is None:
            return None
        return limit.offset if self.ctx.config.get_bool(MATCH_OFFSET) else None

    # ----------------------------------------------------------------- return
    def bind_return(
        self,
        state: PathState,
        clause: s.ReturnClause,
        group: tuple[s.Expr, ...],
        order: tuple[s.OrderItem, ...],
        limit: s.LimitClause | None,
    ) -> LogicalNode:
        if state.node is None:
            raise self.error(ValidationError("RETURN needs a MATCH or CALL before it"), clause)
        select = s.Select(
            clause.items,
            None,
            None,
            group,
            None,
            order,
            limit.limit if limit is not None else None,
            self._offset(limit),
            clause.distinct,
            span=clause.span,
        )
        hook = self.hook(state)
        # Bound over the path table: the hook may add path-subquery columns.
        result = self.qb.bind_select(select, Bound(state.node, state.scope()), graph_hook=hook)
        if hook.state.node is not None and hook.state.node is not state.node:
            result = _replace_source(result, state.node, hook.state.node)
        return result

    def bind_then_filter(self, result: LogicalNode, clause: s.FilterClause) -> LogicalNode:
        scope = Scope.of(result.schema)
        state = PathState(result, list(scope.fields))
        hook = self.hook(state)
        cond = ExprBinder(self.ctx, scope, graph_hook=hook).bind_condition(clause.condition)
        node = hook.state.node
        assert node is not None
        out: LogicalNode = Filter(node, cond)
        if hook.state.width != state.width:
            out = Project(
                out, tuple(ref(i, f.type) for i, f in enumerate(result.schema)), result.schema
            )
        return out

    # ------------------------------------------------------------------- call
    def bind_call(self, state: PathState, clause: s.CallClause) -> PathState:
        assert self.graph is not None
        binder = ExprBinder(self.ctx, Scope())
        resolved = binder.resolve_function(clause.name, clause)
        function = None
        if isinstance(resolved, BuiltinAlias):
            signature = signature_named(resolved.builtin)
        elif isinstance(resolved, UserFunction):
            if resolved.kind is not FunctionKind.ALGORITHM:
                raise self.error(
                    ValidationError(
                        f"{clause.name}() is not a graph algorithm: its class "
                        f"{type(resolved.instance).__name__} needs init() and process()"
                    ),
                    clause,
                )
            signature = user_signature(resolved.name, resolved.instance)
            function = resolved
        else:
            signature = signature_named(clause.name)
        if signature is None:
            raise self.error(ValidationError(f"unknown graph algorithm {clause.name}()"), clause)
        args = []
        for a in clause.args:
            bound = binder.bind(a)
            if input_refs(bound):
                raise self.error(ValidationError("algorithm arguments must be constants"), a)
            args.append(constant_value(bound))
        try:
            signature.bind(args)
            id_type = (
                self.vertex_type.field_type(T.VERTEX_ID_FIELD) if self.vertex_type else T.BIGINT
            )
            types = signature.output_types(id_type)
        except GeaflowError as err:
            raise self.error(err, clause) from None
        if clause.yields and len(clause.yields) != len(types):
            raise self.error(
                ValidationError(
                    f"{clause.name}() yields {len(types)} columns but YIELD names {len(clause.yields)}"
                ),
                clause,
            )
        names = list(clause.yields) or signature.output_names()
        fields = tuple(Field(n, t) for n, t in zip(names, types, strict=True))
        node = GraphAlgorithm(self.graph, signature, tuple(args), fields, function)
        return PathState(node, [ScopeField(f.name, f.type, i, None) for i, f in enumerate(fields)])


def _replace_source(plan: LogicalNode, old: LogicalNode, new: LogicalNode) -> LogicalNode:
    """Swap the path table under a bound RETURN for the one with added columns."""

    def fn(n: LogicalNode) -> LogicalNode:
        return new if n is old else n

    return transform_up(plan, fn)


def struct_with_field(
    base: exp.Expression, t: T.StructType, name: str, value: exp.Expression
) -> tuple[exp.Expression, T.StructType]:
    """``base`` with field ``name`` set to ``value`` (added, or replaced)."""
    stored = t.resolve_field(name)
    vt = type_of(value)
    if vt.name == "NULL":
        vt = T.VARCHAR
    fields = []
    args: list[exp.Expression] = []
    replaced = False
    for f in t.fields:
        args.append(exp.Literal.string(f.name))
        if stored is not None and f.name == stored:
            args.append(cast_to(value, vt))
            fields.append(T.StructField(f.name, vt))
            replaced = True
        else:
            args.append(
                exp.Dot(this=base.copy(), expression=exp.Identifier(this=f.name, quoted=True))
            )
            fields.append(f)
    if not replaced:
        args.append(exp.Literal.string(name))
        args.append(cast_to(value, vt))
        fields.append(T.StructField(name, vt))
    new_type = T.StructType(
        tuple(fields),
        t.kind,
        t.labels,
        t.id_field,
        t.src_field,
        t.dst_field,
        t.ts_field,
        aliases=t.aliases,
    )
    return typed(exp.Anonymous(this="named_struct", expressions=args), new_type), new_type


# ---------------------------------------------------------------------------
# Graph syntax inside expressions
# ---------------------------------------------------------------------------


_AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX"}


class GraphHook:
    """Resolves graph-only expressions while one clause is bound.

    Path subqueries add columns to ``state.node`` (appended on the right, so
    existing references stay valid); the clause's binder reads them.
    """

    def __init__(self, gb: GraphQueryBinder, state: PathState) -> None:
        self.gb = gb
        self.state = state

    # Names -------------------------------------------------------------------
    def is_path_variable(self, name: str) -> bool:
        return self.state.index_of(name) is not None

    def known_properties(self, t: Any) -> set[str]:
        return set()

    def property_type(self, t: Any, name: str) -> Any:
        return T.VARCHAR

    def resolve_unqualified(
        self, binder: ExprBinder, name: str, node: s.Node
    ) -> exp.Expression | None:
        """A bare name that is a property of exactly one path variable."""
        owners = []
        for f in binder.scope.fields:
            if f.relation is None and isinstance(f.type, T.StructType) and f.type.is_graph:
                stored = f.type.resolve_field(name)
                if stored is not None:
                    owners.append((f, stored))
        visible = [o for o in owners if not o[0].hidden] or owners
        if len(visible) == 1:
            f, stored = visible[0]
            return typed(
                exp.Dot(
                    this=ref(f.index, f.type), expression=exp.Identifier(this=stored, quoted=True)
                ),
                f.type.field_type(stored),
            )
        if len(visible) > 1:
            names = ", ".join(o[0].name for o in visible)
            raise ValidationError(
                f"{name!r} is ambiguous: it is a field of {names}; write var.{name}"
            )
        return None

    def resolve_field(
        self, binder: ExprBinder, base: str, name: str, node: s.Node
    ) -> exp.Expression | None:
        return None

    # Functions -----------------------------------------------------------------
    def bind_function(self, binder: ExprBinder, e: s.FunctionCall) -> exp.Expression | None:
        from .graph_functions import bind_graph_function

        return bind_graph_function(binder, e)

    def compare_elements(
        self, binder: ExprBinder, op: str, left: exp.Expression, right: exp.Expression, node: s.Node
    ) -> exp.Expression:
        from .graph_functions import compare_elements

        return compare_elements(binder, op, left, right, node)

    # Path subqueries -------------------------------------------------------------
    def exists_path(self, binder: ExprBinder, e: s.Exists) -> exp.Expression:
        assert e.path is not None
        count = self._path_aggregate(binder, e.path, None, "COUNT", e)
        return typed(exp.GT(this=count, expression=exp.Literal.number(0)), T.BOOLEAN)

    def path_function(self, binder: ExprBinder, e: s.PathFunction) -> exp.Expression:
        name = e.name.upper()
        if name not in _AGGREGATES:
            raise ValidationError(
                f"{e.name}(path => value) is not an aggregate (use COUNT, SUM, AVG, MIN or MAX)"
            )
        return self._path_aggregate(binder, e.path, e.value, name, e)

    def _path_aggregate(
        self,
        binder: ExprBinder,
        path: s.PathPattern,
        value: s.Expr | None,
        function: str,
        at: s.Node,
    ) -> exp.Expression:
        """Aggregate a value over the paths matching ``path`` from each current row.

        The subquery only depends on the fields it reads, so it is evaluated
        once per distinct combination of them and joined back.
        """
        gb = self.gb
        state = self.state
        first = path.elements[0] if path.elements else None
        if (
            not isinstance(first, s.NodePattern)
            or not first.variable
            or state.index_of(first.variable) is None
        ):
            raise ValidationError("a path subquery must start at a variable of the enclosing MATCH")
        # The subquery reads the start variable and whatever else it names.
        named = _names_in(path) | (_names_in(value) if value is not None else set())
        start_idx = state.index_of(first.variable)
        assert start_idx is not None
        keys = sorted(
            {start_idx}
            | {
                f.index
                for f in state.fields
                if not f.hidden
                and ((f.relation or f.name).lower() in named or f.name.lower() in named)
            }
        )
        # Pass 2: from the distinct values of those fields.
        assert state.node is not None
        key_fields = [state.fields[i] for i in keys]
        key_project = Project(
            state.node,
            tuple(ref(f.index, f.type) for f in key_fields),
            tuple(Field(f.name, f.type) for f in key_fields),
        )
        distinct = Aggregate(key_project, tuple(range(len(keys))), (), key_project.schema)
        base = PathState(
            distinct,
            [ScopeField(f.name, f.type, i, f.relation, f.hidden) for i, f in enumerate(key_fields)],
        )
        sub, sub_value = self._expand_sub(base, path, value)
        assert sub.node is not None
        k = len(keys)
        if sub_value is not None:
            # The value is carried along so set semantics cannot drop it.
            carrier = ScopeField("$value", type_of(sub_value), sub.width, None, False)
            sub = PathState(
                Project(
                    sub.node,
                    tuple([ref(f.index, f.type) for f in sub.fields] + [sub_value]),
                    tuple(
                        [Field(f.name, f.type) for f in sub.fields]
                        + [Field("$value", type_of(sub_value))]
                    ),
                ),
                list(sub.fields) + [carrier],
            )
        sub = gb.distinct_paths(sub)
        if sub_value is not None:
            sub_value = ref(sub.width - 1, type_of(sub_value))
        if sub_value is None:
            sub_value = typed(exp.Literal.number(1), T.INTEGER)
        vt = type_of(sub_value)
        assert sub.node is not None
        pre = Project(
            sub.node,
            tuple([ref(i, f.type) for i, f in enumerate(key_fields)] + [sub_value]),
            tuple([Field(f.name, f.type) for f in key_fields] + [Field("$value", vt)]),
        )
        if function == "COUNT":
            result_type: Any = T.BIGINT
            call = AggCall("COUNT", (k,), False, T.BIGINT)
        elif function == "AVG":
            result_type = T.DOUBLE
            call = AggCall("AVG", (k,), False, T.DOUBLE)
        elif function == "SUM":
            result_type = T.DOUBLE if vt.is_approx or vt.name == "DECIMAL" else T.BIGINT
            if not vt.is_numeric and vt.name not in ("NULL", "ANY"):
                raise ValidationError(f"SUM over a path needs a numeric value, not {vt}")
            call = AggCall("SUM", (k,), False, result_type)
        else:
            result_type = vt
            call = AggCall(function, (k,), False, vt)
        agg = Aggregate(
            pre,
            tuple(range(k)),
            (call,),
            tuple(Field(f.name, f.type) for f in key_fields) + (Field("$agg", result_type),),
            internal=True,
        )
        width = state.width
        conds = []
        for pos, f in enumerate(key_fields):
            conds.append(
                typed(
                    exp.NullSafeEQ(this=ref(f.index, f.type), expression=ref(width + pos, f.type)),
                    T.BOOLEAN,
                )
            )
        joined = Join(state.node, agg, "LEFT", and_all(conds))
        # Keep only the aggregate among the appended columns.
        exprs = [ref(f.index, f.type) for f in state.fields] + [ref(width + k, result_type)]
        agg_name = _hidden("agg")
        fields = list(state.fields) + [ScopeField(agg_name, result_type, width, None, True)]
        node = Project(joined, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
        self.state = PathState(node, fields)
        binder.scope = self.state.scope()
        result = ref(width, result_type)
        if function in ("COUNT", "SUM"):
            zero = (
                literal_for(0)
                if function == "COUNT" or result_type.is_integer
                else literal_for(0.0)
            )
            result = typed(
                exp.Coalesce(this=result, expressions=[cast_to(zero, result_type)]), result_type
            )
        return result

    def _expand_sub(
        self, state: PathState, path: s.PathPattern, value: s.Expr | None
    ) -> tuple[PathState, exp.Expression | None]:
        gb = self.gb
        saved = gb.global_fields
        sub = gb.bind_path(state, path)
        gb.global_fields = saved
        bound = None
        if value is not None:
            sub_hook = GraphHook(gb, sub)
            bound = ExprBinder(gb.ctx, sub.scope(), graph_hook=sub_hook).bind(value)
            sub = sub_hook.state
        return sub, bound


def _names_in(node: Any) -> set[str]:
    """Every name a syntax tree mentions (columns, qualifiers, variables), lower-cased."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, s.Column):
            out.add(n.name.lower())
        elif isinstance(n, (s.NodePattern, s.EdgePattern)) and n.variable:
            out.add(n.variable.lower())
        if isinstance(n, s.Node):
            for name in getattr(n, "__dataclass_fields__", {}):
                if name == "span":
                    continue
                v = getattr(n, name)
                if isinstance(v, s.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    for item in v:
                        if isinstance(item, s.Node):
                            stack.append(item)
                        elif isinstance(item, tuple):
                            stack.extend(x for x in item if isinstance(x, s.Node))
    return out
