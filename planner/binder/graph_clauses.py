"""Binding the clauses after MATCH: LET, ORDER BY/LIMIT on paths, RETURN,
THEN FILTER and CALL ... YIELD."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.config import MATCH_OFFSET
from geaflow_sql.core.errors import GeaflowError, ValidationError
from grammar import syntax as s
from planner.algorithms import signature_named, user_signature
from planner.expressions import input_refs, ref, type_of, typed
from planner.functions import FunctionKind
from planner.graph_nodes import (
    GraphAlgorithm,
)
from planner.logical import (
    AggCall,
    Aggregate,
    Field,
    Filter,
    LogicalNode,
    Project,
    Sort,
    SortKey,
    transform_up,
)
from planner.user_functions import BuiltinAlias, UserFunction

from .constants import constant_int, constant_value
from .expressions import ExprBinder
from .graph_base import GraphBinderBase
from .paths import PathState, struct_with_field
from .scope import Bound, Scope, ScopeField


class ClauseRules(GraphBinderBase):
    """LET, path sorts, RETURN, THEN FILTER, CALL."""

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
            assert base.node is not None
            state = state.replacing(base.node, idx, new_value, new_type)
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
        # One value per vertex: GeaFlow keeps a global variable on the vertex,
        # so paths that set it differently leave one of their values (the last
        # written, in an order of its runtime); here the greatest, so a vertex
        # met later is never one row per value.
        overlay = Aggregate(
            values,
            (0,),
            (AggCall("MAX", (1,), False, t),),
            values.schema,
            internal=True,
        )
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
            (constant_int(self.ctx, self._offset(limit, order), "OFFSET") or 0)
            if limit is not None
            else 0
        )
        sorted_node = Sort(projected, keys, lim, off)
        node = Project(
            sorted_node,
            tuple(ref(f.index, f.type) for f in state.fields),
            tuple(Field(f.name, f.type) for f in state.fields),
        )
        return state.with_node(node)

    def _offset(self, limit: s.LimitClause | None, order: tuple[s.OrderItem, ...]) -> s.Expr | None:
        """The OFFSET a MATCH's ORDER BY ... LIMIT applies.  GeaFlow sorts a
        match's paths with a top-N sort that has no offset (its ``SortInfo``
        keeps only the fetch), so under an ORDER BY it keeps the first LIMIT
        rows and skips none, and scripts written for it rely on that; OFFSET
        counts there only where the job asks for it.  Without an ORDER BY the
        OFFSET skips rows, as in standard GQL."""
        if limit is None or limit.offset is None:
            return None
        if order and not self.ctx.config.get_bool(MATCH_OFFSET):
            return None
        return limit.offset

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
            self._offset(limit, order),
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
