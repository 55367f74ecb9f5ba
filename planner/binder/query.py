"""Binding queries: SELECT, VALUES, UNION, FROM items, ORDER BY / LIMIT.

The result of binding a query is a logical plan whose schema names the output
columns.  Graph queries (MATCH / CALL) are handed to ``planner.binder.graph``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.config import table_options
from geaflow_sql.core.errors import CatalogError, GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.dialect import template
from planner.expressions import and_all, cast_to, ref, ref_index, substitute_refs, type_of, typed
from planner.logical import (
    AggCall,
    Aggregate,
    Correlate,
    Field,
    Filter,
    Join,
    JoinType,
    LogicalNode,
    Project,
    Sort,
    SortKey,
    TableFunction,
    TableScan,
    Union,
    Values,
    join_type,
)
from planner.user_functions import BuiltinAlias, UserFunction, parse_type_name

from .aggregates import AggregateHook, contains_aggregate
from .constants import constant_int
from .context import BindContext
from .expressions import ExprBinder
from .scope import Bound, Scope, ScopeField


def output_name(item: s.SelectItem, position: int) -> str:
    if item.alias:
        return item.alias
    e = item.expr
    if isinstance(e, s.Column):
        return e.name
    if isinstance(e, s.Field):
        return e.name.lstrip("~") if e.name.startswith("~") else e.name
    return f"EXPR${position}"


class SubqueryHook:
    """Plans subqueries in expressions by joining them to the current input.

    Joins append fields on the right, so references to the existing input stay
    valid; the expression then reads the appended field.
    """

    def __init__(self, qb: QueryBinder, node: LogicalNode, scope: Scope) -> None:
        self.qb = qb
        self.node = node
        self.scope = scope

    def _plan(self, query: s.Query) -> LogicalNode:
        try:
            return self.qb.bind_query(query).node
        except GeaflowError as err:
            if "unknown column" in err.message:
                raise UnsupportedError(
                    "a subquery may refer to the outer query only through equalities "
                    "in its WHERE (outer = inner); " + err.message
                ) from None
            raise

    def _append(self, right: LogicalNode, kind: JoinType, condition: exp.Expression | None) -> int:
        offset = len(self.node.schema)
        self.node = Join(self.node, right, kind, condition)
        return offset

    def _marked(
        self, sub: LogicalNode, extra: exp.Expression | None, outer_keys: tuple[exp.Expression, ...]
    ) -> int:
        """Left-join ``sub`` (keys first) with a TRUE marker after its fields.

        Returns the offset of ``sub``'s first field in the joined input; the
        marker is at ``offset + len(sub.schema)``.
        """
        from .correlation import key_condition

        fields = sub.schema
        marked = Project(
            sub,
            tuple(ref(i, f.type) for i, f in enumerate(fields))
            + (typed(exp.Boolean(this=True), T.BOOLEAN),),
            fields + (Field("$found", T.BOOLEAN),),
        )
        offset = len(self.node.schema)
        conds = [
            key_condition(k, ref(offset + j, fields[j].type)) for j, k in enumerate(outer_keys)
        ]
        if extra is not None:
            conds.append(extra)

        self._append(marked, "LEFT", and_all(conds))
        return offset

    def _correlated(self, binder: ExprBinder, query: s.Query) -> Any:
        from .correlation import decorrelate

        return decorrelate(self.qb, binder, query)

    def scalar(self, binder: ExprBinder, e: s.ScalarSubquery) -> exp.Expression:
        corr = self._correlated(binder, e.query)
        if corr is not None:
            return self._correlated_scalar(binder, e, corr)
        sub = self._plan(e.query)
        if len(sub.schema) != 1:
            raise ValidationError("a scalar subquery must return exactly one column")
        offset = self._append(sub, "LEFT", typed(exp.Boolean(this=True), T.BOOLEAN))
        return ref(offset, sub.schema[0].type)

    def _correlated_scalar(
        self, binder: ExprBinder, e: s.ScalarSubquery, corr: Any
    ) -> exp.Expression:
        select = corr.select
        if len(select.items) != 1 or not contains_aggregate(binder, select.items[0].expr):
            raise ValidationError(
                "a correlated scalar subquery must compute one aggregate (one row per outer row)"
            )
        keys = corr.inner_keys
        grouped = s.Select(
            tuple(s.SelectItem(k) for k in keys) + select.items,
            select.from_,
            select.where,
            group_by=keys,
            span=select.span,
        )
        sub = self._plan(grouped)
        offset = self._marked(sub, None, corr.outer_keys)
        value = ref(offset + len(keys), sub.schema[len(keys)].type)
        item = select.items[0].expr
        if isinstance(item, s.FunctionCall) and item.name.upper() == "COUNT":
            # No matching rows count 0, not null.
            return typed(
                exp.Coalesce(this=value, expressions=[exp.Literal.number(0)]), type_of(value)
            )
        return value

    def in_query(self, binder: ExprBinder, e: s.InQuery) -> exp.Expression:
        operand = binder.bind(e.operand)
        corr = self._correlated(binder, e.query)
        if corr is not None:
            select = corr.select
            if len(select.items) != 1:
                raise ValidationError("IN (subquery) needs a subquery with one column")
            keys = corr.inner_keys
            sub = self._plan(
                s.Select(
                    tuple(s.SelectItem(k) for k in keys) + select.items,
                    select.from_,
                    select.where,
                    distinct=True,
                    span=select.span,
                )
            )
            value_type = sub.schema[len(keys)].type
            offset = len(self.node.schema)
            common = T.common_type(type_of(operand), value_type) or type_of(operand)
            match = typed(
                exp.EQ(
                    this=cast_to(operand, common),
                    expression=cast_to(ref(offset + len(keys), value_type), common),
                ),
                T.BOOLEAN,
            )
            offset = self._marked(sub, match, corr.outer_keys)
            return self._found(offset + len(sub.schema), e.negated)
        sub = self._plan(e.query)
        if len(sub.schema) != 1:
            raise ValidationError("IN (subquery) needs a subquery with one column")
        distinct = Aggregate(sub, (0,), (), sub.schema)
        marked = Project(
            distinct,
            (ref(0, sub.schema[0].type), typed(exp.Boolean(this=True), T.BOOLEAN)),
            (sub.schema[0], Field("$found", T.BOOLEAN)),
        )
        offset = len(self.node.schema)
        common = T.common_type(type_of(operand), sub.schema[0].type) or type_of(operand)
        cond = typed(
            exp.EQ(
                this=cast_to(operand, common),
                expression=cast_to(ref(offset, sub.schema[0].type), common),
            ),
            T.BOOLEAN,
        )
        self._append(marked, "LEFT", cond)
        found = ref(offset + 1, T.BOOLEAN)
        # SQL's three-valued IN: no match is UNKNOWN (not FALSE) when the value
        # is null or the subquery yields a null, unless the subquery is empty.

        counts = Aggregate(
            sub,
            (),
            (AggCall("COUNT", (), False, T.BIGINT), AggCall("COUNT", (0,), False, T.BIGINT)),
            (Field("$rows", T.BIGINT), Field("$values", T.BIGINT)),
        )
        c = self._append(counts, "CROSS", None)
        hit, miss = ("FALSE", "TRUE") if e.negated else ("TRUE", "FALSE")
        return typed(
            template(
                f"CASE WHEN {{0}} IS NOT NULL THEN {hit} WHEN {{1}} = 0 THEN {miss} "
                f"WHEN {{3}} IS NULL OR {{1}} > {{2}} THEN NULL ELSE {miss} END",
                found,
                ref(c, T.BIGINT),
                ref(c + 1, T.BIGINT),
                operand,
            ),
            T.BOOLEAN,
        )

    @staticmethod
    def _found(marker: int, negated: bool) -> exp.Expression:
        test: exp.Expression = exp.Is(this=ref(marker, T.BOOLEAN), expression=exp.Null())
        if not negated:
            test = exp.Not(this=exp.Paren(this=test))
        return typed(test, T.BOOLEAN)

    def exists(self, binder: ExprBinder, e: s.Exists) -> exp.Expression:
        assert e.query is not None
        corr = self._correlated(binder, e.query)
        if corr is not None:
            keys = corr.inner_keys
            sub = self._plan(
                s.Select(
                    tuple(s.SelectItem(k) for k in keys),
                    corr.select.from_,
                    corr.select.where,
                    distinct=True,
                    span=corr.select.span,
                )
            )
            offset = self._marked(sub, None, corr.outer_keys)
            return self._found(offset + len(sub.schema), False)
        sub = self._plan(e.query)
        counted = Aggregate(
            Project(sub, (typed(exp.Literal.number(1), T.INTEGER),), (Field("one", T.INTEGER),)),
            (),
            (self.qb.count_call(),),
            (Field("n", T.BIGINT),),
        )
        offset = self._append(counted, "CROSS", None)
        return typed(
            exp.GT(this=ref(offset, T.BIGINT), expression=exp.Literal.number(0)), T.BOOLEAN
        )


class QueryBinder:
    def __init__(self, ctx: BindContext) -> None:
        self.ctx = ctx

    # ---------------------------------------------------------------- helpers
    def count_call(self) -> Any:

        return AggCall("COUNT", (), False, T.BIGINT)

    def expr_binder(self, scope: Scope, **kw: Any) -> ExprBinder:
        return ExprBinder(self.ctx, scope, **kw)

    def error(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

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
            from .graph import GraphQueryBinder

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

    # ------------------------------------------------------------------- from
    def bind_from(self, item: s.FromItem) -> Bound:
        if isinstance(item, s.TableRef):
            return self.bind_table_ref(item)
        if isinstance(item, s.SubqueryRef):
            return self.bind_subquery_ref(item)
        if isinstance(item, s.JoinRef):
            return self.bind_join(item)
        if isinstance(item, s.LateralRef):
            raise self.error(
                ValidationError("LATERAL TABLE(...) must follow another table in FROM"), item
            )
        raise self.error(UnsupportedError(f"{type(item).__name__} in FROM"), item)

    def bind_table_ref(self, item: s.TableRef) -> Bound:
        parts = item.name.parts
        catalog = self.ctx.catalog
        relation = item.alias or item.name.last
        table = catalog.table(parts)
        if table is not None:
            options = tuple(table_options(self.ctx.config, table).items())
            node: LogicalNode = TableScan(table, None, (), options)
            return self._renamed(node, relation, item.column_aliases, item)
        view = catalog.view(parts)
        if view is not None:
            key = view.name.lower()
            if key in self.ctx.expanding_views:
                raise self.error(ValidationError(f"view {view.name!r} refers to itself"), item)
            saved = self.ctx.expanding_views
            self.ctx.expanding_views = saved + (key,)
            try:
                inner = self.bind_query(view.query).node
            except GeaflowError as err:
                raise self.error(
                    ValidationError(f"view {view.name!r} is invalid: {err.message}"), item
                ) from None
            finally:
                self.ctx.expanding_views = saved
            if view.columns:
                if len(view.columns) != len(inner.schema):
                    raise self.error(
                        ValidationError(
                            f"view {view.name!r} names {len(view.columns)} columns "
                            f"but its query has {len(inner.schema)}"
                        ),
                        item,
                    )
                inner = self._rename(inner, list(view.columns))
            return self._renamed(inner, relation, item.column_aliases, item)
        from .graph import graph_label_scan

        scan = graph_label_scan(self, parts)
        if scan is not None:
            return self._renamed(scan, relation, item.column_aliases, item)
        known = catalog.table_names() + catalog.view_names()
        hint = f" (known: {', '.join(known[:12])})" if known else ""
        raise self.error(CatalogError(f"unknown table {str(item.name)!r}{hint}"), item.name)

    def _rename(self, node: LogicalNode, names: list[str]) -> LogicalNode:
        if [f.name for f in node.schema] == names:
            return node
        if isinstance(node, Project):
            return Project(
                node.input,
                node.exprs,
                tuple(Field(n, f.type) for n, f in zip(names, node.schema, strict=True)),
            )
        exprs = tuple(ref(i, f.type) for i, f in enumerate(node.schema))
        return Project(
            node, exprs, tuple(Field(n, f.type) for n, f in zip(names, node.schema, strict=True))
        )

    def _renamed(
        self, node: LogicalNode, relation: str | None, aliases: tuple[str, ...], at: s.Node
    ) -> Bound:
        if aliases:
            if len(aliases) != len(node.schema):
                raise self.error(
                    ValidationError(
                        f"{len(aliases)} column aliases given for {len(node.schema)} columns"
                    ),
                    at,
                )
            node = self._rename(node, list(aliases))
        return Bound(node, Scope.of(node.schema, relation))

    def bind_subquery_ref(self, item: s.SubqueryRef) -> Bound:
        if isinstance(item.query, s.Values):
            node = self.bind_values(item.query, item.column_aliases)
            return self._renamed(node, item.alias, (), item)
        inner = self.bind_query(item.query).node
        return self._renamed(inner, item.alias, item.column_aliases, item)

    def bind_join(self, item: s.JoinRef) -> Bound:
        left = self.bind_from(item.left)
        if isinstance(item.right, s.LateralRef):
            return self.bind_lateral(left, item.right)
        right = self.bind_from(item.right)
        scope = left.scope.concat(right.scope)
        kind = {"COMMA": "CROSS"}.get(item.kind, item.kind)
        condition = None
        if item.condition is not None:
            condition = self.expr_binder(scope).bind_condition(item.condition)
            if kind == "CROSS":
                kind = "INNER"
        elif kind not in ("CROSS",):
            raise self.error(ValidationError(f"{item.kind} JOIN needs an ON condition"), item)
        return Bound(Join(left.node, right.node, join_type(kind), condition), scope)

    def bind_lateral(self, left: Bound, item: s.LateralRef) -> Bound:
        call = item.call
        binder = self.expr_binder(left.scope)
        args = tuple(binder.bind(a) for a in call.args)
        arg_types = [type_of(a) for a in args]
        resolved = binder.resolve_function(call.name, call)
        impl: Any = None
        if isinstance(resolved, UserFunction):
            from planner.functions import FunctionKind

            if resolved.kind is not FunctionKind.TABLE:
                raise self.error(ValidationError(f"{call.name}() is not a table function"), call)
            try:
                type_names = resolved.instance.result_types([str(t) for t in arg_types])
                out_types = [parse_type_name(t) if isinstance(t, str) else t for t in type_names]
            except GeaflowError:
                raise
            except Exception as err:
                raise self.error(
                    ValidationError(
                        f"table function {call.name}() failed to give its types: {err}"
                    ),
                    call,
                ) from None
            impl = resolved
            fname = resolved.name
        else:
            from planner.functions import builtin_table_function

            name = resolved.builtin if isinstance(resolved, BuiltinAlias) else call.name
            spec = builtin_table_function(name)
            if spec is None:
                raise self.error(ValidationError(f"unknown table function {call.name}()"), call)
            if not (spec.min_args <= len(args) <= (spec.max_args or len(args))):
                raise self.error(
                    ValidationError(
                        f"{call.name}() takes {spec.min_args} to {spec.max_args} arguments"
                    ),
                    call,
                )
            out_types = spec.output(arg_types)
            fname = spec.name
        names = list(item.column_aliases) or [f"f{i}" for i in range(len(out_types))]
        if len(names) != len(out_types):
            raise self.error(
                ValidationError(
                    f"{call.name}() yields {len(out_types)} columns but {len(names)} names are given"
                ),
                item,
            )
        output = tuple(Field(n, t) for n, t in zip(names, out_types, strict=True))
        fn = TableFunction(fname, args, output, impl)
        node = Correlate(left.node, fn)
        right_scope = Scope(
            [ScopeField(f.name, f.type, i, item.alias or call.name) for i, f in enumerate(output)]
        )
        return Bound(node, left.scope.concat(right_scope))

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
