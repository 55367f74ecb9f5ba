"""Binding FROM: tables, views, graph labels as tables, subqueries, joins and
LATERAL table functions."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.config import table_options
from geaflow_sql.core.errors import CatalogError, GeaflowError, UnsupportedError, ValidationError
from grammar import syntax as s
from planner.expressions import ref, type_of
from planner.logical import (
    Correlate,
    Field,
    Join,
    LogicalNode,
    Project,
    TableFunction,
    TableScan,
    join_type,
)
from planner.user_functions import BuiltinAlias, UserFunction, parse_type_name

from .query_base import QueryBinderBase
from .scope import Bound, Scope, ScopeField


class FromRules(QueryBinderBase):
    """FROM items, each a bound relation (a plan and the names of its fields)."""

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
        request = self.ctx.request_tables.get(parts[0].lower()) if len(parts) == 1 else None
        if request is not None:
            return self._renamed(request, relation, item.column_aliases, item)
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
        from .paths import graph_label_scan

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
