"""Binding queries: SELECT, VALUES, UNION, ORDER BY / LIMIT.

The result of binding a query is a logical plan whose schema names the output
columns.  FROM items are bound by ``from_clause``, subqueries in expressions
by ``subqueries``, graph queries (MATCH / CALL) by ``graph``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.expressions import cast_to, ref, ref_index, substitute_refs, type_of
from planner.logical import (
    Aggregate,
    Field,
    Filter,
    LogicalNode,
    Project,
    Sort,
    SortKey,
    Union,
    Values,
)

from .aggregates import AggregateHook, contains_aggregate
from .constants import constant_int
from .expressions import ExprBinder
from .from_clause import FromRules
from .graph import GraphQueryBinder
from .scope import Bound, Scope, ScopeField
from .subqueries import SubqueryHook


def output_name(item: s.SelectItem, position: int) -> str:
    if item.alias:
        return item.alias
    e = item.expr
    if isinstance(e, s.Column):
        return e.name
    if isinstance(e, s.Field):
        return e.name.lstrip("~") if e.name.startswith("~") else e.name
    return f"EXPR${position}"


class QueryBinder(FromRules):
    """Binds SQL queries: SELECT, VALUES, set operations, ORDER BY/LIMIT."""

    # ------------------------------------------------------------------ query
    def bind_query(self, q: s.Query, relation: str | None = None) -> Bound:
        if isinstance(q, s.Select):
            node = self.bind_select(q)
        elif isinstance(q, s.Values):
            node = self.bind_values(q)
        elif isinstance(q, s.SetOperation):
            node = self.bind_set_operation(q)
        elif isinstance(q, s.OrderedQuery):
            node = self.bind_ordered(q)
        elif isinstance(q, s.GraphQuery):
            node = GraphQueryBinder(self).bind(q)
        else:  # pragma: no cover - grammar produces no other kinds
            raise self.error(UnsupportedError(f"{type(q).__name__} queries"), q)
        return Bound(node, Scope.of(node.schema, relation))

    def bind_ordered(self, q: s.OrderedQuery) -> LogicalNode:
        inner = self.bind_query(q.query).node
        if not q.order_by and q.limit is None:
            return inner
        scope = Scope.of(inner.schema)
        binder = self.expr_binder(scope)
        keys: list[SortKey] = []
        for item in q.order_by:
            idx = self._ordinal_or_name(item.expr, list(inner.schema))
            if idx is None:
                bound = binder.bind(item.expr)
                idx = ref_index(bound)
                if idx is None:
                    raise self.error(
                        ValidationError("ORDER BY of a union must name or number an output column"),
                        item,
                    )
            keys.append(SortKey(idx, item.descending, item.nulls_first))
        limit = constant_int(self.ctx, q.limit, "LIMIT")
        offset = constant_int(self.ctx, q.offset, "OFFSET") or 0
        return Sort(inner, tuple(keys), limit, offset)

    def _ordinal_or_name(self, e: s.Expr, fields: list[Field]) -> int | None:
        if isinstance(e, s.Literal) and e.kind == "int":
            n = int(e.value)
            if not 1 <= n <= len(fields):
                raise self.error(
                    ValidationError(f"ORDER BY position {n} is not in the select list"), e
                )
            return n - 1
        if isinstance(e, s.Column):
            matches = [i for i, f in enumerate(fields) if f.name.lower() == e.name.lower()]
            if len(matches) == 1:
                return matches[0]
        return None

    # ----------------------------------------------------------------- values
    def bind_values(self, q: s.Values, names: tuple[str, ...] = ()) -> LogicalNode:
        binder = self.expr_binder(Scope())
        rows = [[binder.bind(e) for e in row] for row in q.rows]
        width = len(rows[0])
        for row, syntax_row in zip(rows, q.rows, strict=True):
            if len(row) != width:
                raise self.error(
                    ValidationError(f"VALUES rows have different lengths ({width} and {len(row)})"),
                    syntax_row[0] if syntax_row else q,
                )
        types: list[Any] = []
        for col in range(width):
            t = T.NULL
            for row in rows:
                c = T.common_type(t, type_of(row[col]))
                if c is None:
                    raise self.error(
                        ValidationError(
                            f"VALUES column {col + 1} mixes {t} and {type_of(row[col])}"
                        ),
                        q,
                    )
                t = c
            types.append(T.VARCHAR if t.name == "NULL" else t)
        out_rows = tuple(
            tuple(cast_to(v, t) for v, t in zip(row, types, strict=True)) for row in rows
        )
        fields = tuple(
            Field(names[i] if i < len(names) else f"EXPR${i}", t) for i, t in enumerate(types)
        )
        return Values(out_rows, fields)

    # ------------------------------------------------------------------ union
    def bind_set_operation(self, q: s.SetOperation) -> LogicalNode:
        left = self.bind_query(q.left).node
        right = self.bind_query(q.right).node
        if len(left.schema) != len(right.schema):
            raise self.error(
                ValidationError(
                    f"UNION inputs have {len(left.schema)} and {len(right.schema)} columns"
                ),
                q,
            )
        types = []
        for lf, rf in zip(left.schema, right.schema, strict=True):
            c = T.common_type(lf.type, rf.type)
            if c is None:
                raise self.error(
                    ValidationError(f"UNION column {lf.name!r} mixes {lf.type} and {rf.type}"), q
                )
            types.append(T.VARCHAR if c.name == "NULL" else c)
        left = self._coerce(left, types)
        right = self._coerce(right, types, [f.name for f in left.schema])
        inputs: list[LogicalNode] = []
        for side in (left, right):
            if isinstance(side, Union) and side.all and q.all:
                inputs.extend(side.inputs_)
            else:
                inputs.append(side)
        node: LogicalNode = Union(tuple(inputs), True)
        if not q.all:
            node = Aggregate(node, tuple(range(len(types))), (), node.schema)
        return node

    def _coerce(
        self, node: LogicalNode, types: list[Any], names: list[str] | None = None
    ) -> LogicalNode:
        schema = node.schema
        names = names or [f.name for f in schema]
        if all(f.type == t for f, t in zip(schema, types, strict=True)) and names == [
            f.name for f in schema
        ]:
            return node
        exprs = tuple(
            cast_to(ref(i, f.type), t) for i, (f, t) in enumerate(zip(schema, types, strict=True))
        )
        return Project(node, exprs, tuple(Field(n, t) for n, t in zip(names, types, strict=True)))

    # ----------------------------------------------------------------- select
    def expand_items(self, items: tuple[s.SelectItem, ...], scope: Scope) -> list[Any]:
        out: list[Any] = []
        for item in items:
            e = item.expr
            if isinstance(e, s.Star):
                if e.qualifier is None:
                    fields = [f for f in scope.fields if not f.hidden]
                else:
                    q = e.qualifier
                    rel = q.name if isinstance(q, s.Column) else None
                    if rel is None or not scope.has_relation(rel):
                        raise self.error(ValidationError("unknown table in t.*"), item)
                    fields = [f for f in scope.relation_fields(rel) if not f.hidden]
                for f in fields:
                    out.append(_IndexedItem(f, item.span))
            else:
                out.append(item)
        return out

    def bind_select(
        self, q: s.Select, source: Bound | None = None, graph_hook: Any = None
    ) -> LogicalNode:
        """Bind a SELECT; ``source`` replaces its FROM (a graph RETURN binds this
        way over a path table, with ``graph_hook`` resolving graph syntax)."""
        if source is None:
            if q.from_ is None:
                source = Bound(Values(((),), ()), Scope())
            else:
                source = self.bind_from(q.from_)
        hook = SubqueryHook(self, source.node, source.scope)
        binder = self.expr_binder(source.scope, subquery_hook=hook, graph_hook=graph_hook)
        if q.where is not None:
            if contains_aggregate(binder, q.where):
                raise self.error(
                    ValidationError("aggregate functions are not allowed in WHERE"), q.where
                )
            cond = binder.bind_condition(q.where)
            hook.node = Filter(hook.node, cond)
        items = self.expand_items(q.items, source.scope)
        names = [
            it.field.name if isinstance(it, _IndexedItem) else output_name(it, i)
            for i, it in enumerate(items)
        ]
        aggregating = (
            bool(q.group_by)
            or any(
                not isinstance(it, _IndexedItem) and contains_aggregate(binder, it.expr)
                for it in items
            )
            or (q.having is not None)
        )
        if aggregating:
            return self._bind_aggregating(q, items, names, binder, hook)
        exprs = [self._bind_item(binder, it) for it in items]
        order_exprs = self._bind_order_exprs(q, exprs, names, binder)
        # Subqueries bound above may have joined more inputs onto hook.node.
        return self._project_sort_limit(q, hook.node, exprs, names, order_exprs, q.distinct)

    def _bind_item(self, binder: ExprBinder, it: Any) -> exp.Expression:
        if isinstance(it, _IndexedItem):
            return ref(it.field.index, it.field.type)
        return binder.bind(it.expr)

    def _bind_aggregating(
        self,
        q: s.Select,
        items: list[Any],
        names: list[str],
        binder: ExprBinder,
        hook: SubqueryHook,
    ) -> LogicalNode:
        # Group keys may be input expressions, select aliases or ordinals (GeaFlow allows all).
        keys_syntax: list[s.Expr] = []
        for k in q.group_by:
            keys_syntax.append(self._resolve_group_key(k, items, names, binder))
        keys = [binder.bind(k) for k in keys_syntax]
        key_names = [_expr_name(ks, i) for i, ks in enumerate(keys_syntax)]
        agg = AggregateHook(binder, keys, key_names)
        post = binder.derive(aggregate_hook=agg, scope=Scope(), subquery_hook=None)
        exprs = []
        for it in items:
            if isinstance(it, _IndexedItem):
                exprs.append(post.bind(s.Column(it.field.name, span=it.span)))
            else:
                exprs.append(post.bind(it.expr))
        having = None
        if q.having is not None:
            # HAVING may name a select alias (as GeaFlow's lenient conformance allows).
            having_expr = _with_aliases(q.having, items, names, binder)
            having = post.bind_condition(having_expr)
        order_exprs = self._bind_order_exprs(q, exprs, names, post)
        pre_fields = tuple(
            Field(key_names[i] if i < len(key_names) else f"$arg{i}", type_of(e))
            for i, e in enumerate(agg.pre_exprs)
        )
        pre = Project(hook.node, tuple(agg.pre_exprs), pre_fields)
        agg_fields = tuple(Field(key_names[i], type_of(k)) for i, k in enumerate(keys)) + tuple(
            Field(agg.call_names[i], c.type) for i, c in enumerate(agg.calls)
        )
        node: LogicalNode = Aggregate(pre, tuple(range(len(keys))), tuple(agg.calls), agg_fields)
        if having is not None:
            node = Filter(node, having)
        return self._project_sort_limit(q, node, exprs, names, order_exprs, q.distinct)

    def _resolve_group_key(
        self, k: s.Expr, items: list[Any], names: list[str], binder: ExprBinder
    ) -> s.Expr:
        if isinstance(k, s.Literal) and k.kind == "int":
            n = int(k.value)
            if not 1 <= n <= len(items):
                raise self.error(
                    ValidationError(f"GROUP BY position {n} is not in the select list"), k
                )
            it = items[n - 1]
            return s.Column(it.field.name, span=k.span) if isinstance(it, _IndexedItem) else it.expr
        if isinstance(k, s.Column):
            try:
                binder.bind(k)
                return k
            except GeaflowError:
                for it, name in zip(items, names, strict=True):
                    if name.lower() == k.name.lower() and not isinstance(it, _IndexedItem):
                        if contains_aggregate(binder, it.expr):
                            raise self.error(
                                ValidationError(f"cannot GROUP BY {k.name}: it is an aggregate"), k
                            ) from None
                        return it.expr
                raise
        return k

    def _bind_order_exprs(
        self, q: s.Select, exprs: list[exp.Expression], names: list[str], binder: ExprBinder
    ) -> list[tuple[exp.Expression | int, s.OrderItem]]:
        out: list[tuple[exp.Expression | int, s.OrderItem]] = []
        fields = [Field(n, type_of(e)) for n, e in zip(names, exprs, strict=True)]
        output_scope = Scope([ScopeField(f.name, f.type, i) for i, f in enumerate(fields)])
        for item in q.order_by:
            idx = self._ordinal_or_name(item.expr, fields)
            if idx is not None:
                out.append((idx, item))
                continue
            # An expression over output aliases (``ORDER BY _b.id``) is rewritten
            # over the select items; otherwise it reads the input.
            try:
                over_output = binder.derive(scope=output_scope, aggregate_hook=None).bind(item.expr)
            except GeaflowError:
                over_output = None
            if over_output is not None:
                out.append((substitute_refs(over_output, dict(enumerate(exprs))), item))
                continue
            out.append((binder.bind(item.expr), item))
        return out

    def _project_sort_limit(
        self,
        q: s.Select,
        node: LogicalNode,
        exprs: list[exp.Expression],
        names: list[str],
        order_exprs: list[tuple[exp.Expression | int, s.OrderItem]],
        distinct: bool,
    ) -> LogicalNode:
        all_exprs = list(exprs)
        keys: list[SortKey] = []
        for target, item in order_exprs:
            if isinstance(target, int):
                idx = target
            else:
                idx = next((i for i, e in enumerate(all_exprs) if e == target), -1)
                if idx < 0:
                    if distinct:
                        raise self.error(
                            ValidationError(
                                "with SELECT DISTINCT, ORDER BY expressions must appear in the select list"
                            ),
                            item,
                        )
                    all_exprs.append(target)
                    idx = len(all_exprs) - 1
            keys.append(SortKey(idx, item.descending, item.nulls_first))
        width = len(exprs)
        all_names = names + [f"$order{i}" for i in range(len(all_exprs) - width)]
        fields = tuple(Field(n, type_of(e)) for n, e in zip(all_names, all_exprs, strict=True))
        projected: LogicalNode = Project(node, tuple(all_exprs), fields)
        if distinct:
            projected = Aggregate(projected, tuple(range(len(fields))), (), fields)
        limit = constant_int(self.ctx, q.limit, "LIMIT")
        offset = constant_int(self.ctx, q.offset, "OFFSET") or 0
        if keys or limit is not None or offset:
            projected = Sort(projected, tuple(keys), limit, offset)
        if len(all_exprs) > width:
            projected = Project(
                projected,
                tuple(ref(i, fields[i].type) for i in range(width)),
                fields[:width],
            )
        return projected


@dataclass(frozen=True)
class _IndexedItem:
    """A select item produced by expanding ``*``: an input field by position."""

    field: ScopeField
    span: Any


def _with_aliases(e: s.Expr, items: list[Any], names: list[str], binder: ExprBinder) -> s.Expr:
    """``e`` with each column that is not an input column but a select alias
    replaced by that select item's expression (subqueries are left alone)."""
    aliases = {
        n.lower(): it.expr
        for it, n in zip(items, names, strict=True)
        if not isinstance(it, _IndexedItem)
    }
    if not aliases:
        return e

    def visit(node: Any) -> Any:
        if isinstance(node, s.Column):
            if node.name.lower() in aliases and not binder.scope.lookup(node.name):
                return aliases[node.name.lower()]
            return node
        if isinstance(node, (s.ScalarSubquery, s.InQuery, s.Exists)) or not isinstance(
            node, s.Expr
        ):
            return node
        changes = {}
        for f in getattr(node, "__dataclass_fields__", {}):
            if f == "span":
                continue
            value = getattr(node, f)
            if isinstance(value, s.Expr):
                new = visit(value)
                if new is not value:
                    changes[f] = new
            elif isinstance(value, tuple) and any(isinstance(v, s.Expr) for v in value):
                new_tuple = tuple(visit(v) if isinstance(v, s.Expr) else v for v in value)
                if any(a is not b for a, b in zip(new_tuple, value, strict=True)):
                    changes[f] = new_tuple
        return replace(node, **changes) if changes else node

    return visit(e)  # type: ignore[no-any-return]


def _expr_name(e: s.Expr, i: int) -> str:
    if isinstance(e, s.Column):
        return e.name
    if isinstance(e, s.Field):
        return e.name
    return f"$key{i}"
