"""The tree builder's rules for queries: SELECT, FROM, joins, set operations, VALUES."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from . import syntax as s
from .literal_rows import literal_row
from .tree_helpers import (
    Alias,
    Tagged,
    balanced,
    by_tag,
    span_of,
    tagged,
    tokens_of,
    values_of,
)


@v_args(meta=True)
class QueryRules(Transformer):
    """The tree builder's rules for queries: SELECT, FROM, joins, set operations, VALUES."""

    def query(self, meta: Meta, ch: list[Any]) -> s.Query:
        body = ch[0]
        extra = by_tag(ch[1:])
        order = extra.get("order", ())
        limit = extra.get("limit")
        if not order and limit is None:
            return body
        return s.OrderedQuery(
            body,
            tuple(order),
            limit[0] if limit else None,
            limit[1] if limit else None,
            span=span_of(meta),
        )

    def union(self, meta: Meta, ch: list[Any]) -> s.Query:
        """``t0 UNION [ALL] t1 UNION [ALL] t2 ...``, evaluated left to right.
        A run of one operator is one associative set operation, built as a
        tree of depth log2(run) (a union of hundreds of SELECTs nests a few
        deep); SQL applies an ORDER BY / LIMIT that the grammar attaches to a
        SELECT after UNION to the union so far."""
        terms: list[s.Query] = []
        ops: list[bool] = []  # UNION ALL before terms[k + 1]
        for c in ch:
            if isinstance(c, Token):
                if c.type == "UNION":
                    ops.append(False)
                elif c.type == "ALL":
                    ops[-1] = True
            else:
                terms.append(c)
        acc = terms[0]
        run: list[s.Query] = []
        run_all = False

        def flush(acc: s.Query) -> s.Query:
            if not run:
                return acc
            right = balanced(
                run, lambda a, b, span: s.SetOperation("UNION", run_all, a, b, span=span)
            )
            return s.SetOperation("UNION", run_all, acc, right, span=acc.span.merge(right.span))

        for is_all, term in zip(ops, terms[1:], strict=True):
            if isinstance(term, s.Select) and (term.order_by or term.limit is not None):
                acc = flush(acc)
                run = []
                inner = replace(term, order_by=(), limit=None, offset=None)
                span = acc.span.merge(term.span)
                union = s.SetOperation("UNION", is_all, acc, inner, span=span)
                acc = s.OrderedQuery(union, term.order_by, term.limit, term.offset, span=span)
                continue
            if run and is_all != run_all:
                acc = flush(acc)
                run = []
            run.append(term)
            run_all = is_all
        return flush(acc)

    def paren_query(self, meta: Meta, ch: list[Any]) -> s.Query:
        q = ch[0]
        if isinstance(q, s.Select) and (q.order_by or q.limit is not None):
            # Keep a parenthesised SELECT's own ORDER BY/LIMIT with it.
            return s.OrderedQuery(q, span=span_of(meta))
        return q

    def set_quantifier(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("quant", ch[0].type)

    def select(self, meta: Meta, ch: list[Any]) -> s.Select:
        parts = by_tag(ch)
        items = next(c for c in ch if isinstance(c, list))
        limit = parts.get("limit")
        return s.Select(
            tuple(items),
            parts.get("from"),
            parts.get("where"),
            tuple(parts.get("group", ())),
            parts.get("having"),
            tuple(parts.get("order", ())),
            limit[0] if limit else None,
            limit[1] if limit else None,
            parts.get("quant") == "DISTINCT",
            span=span_of(meta),
        )

    def select_list(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def star(self, meta: Meta, ch: list[Any]) -> s.SelectItem:
        return s.SelectItem(s.Star(span=span_of(meta)), span=span_of(meta))

    def select_expr(self, meta: Meta, ch: list[Any]) -> s.SelectItem:
        vals = values_of(ch)
        expr = vals[0]
        alias = vals[1] if len(vals) > 1 else None
        if isinstance(expr, s.Star):
            return s.SelectItem(expr, span=span_of(meta))
        return s.SelectItem(expr, alias, span=span_of(meta))

    def from_clause(self, meta: Meta, ch: list[Any]) -> Tagged:
        items = values_of(ch)
        result = items[0]
        for item in items[1:]:
            result = s.JoinRef("COMMA", result, item, None, span=result.span.merge(item.span))
        return tagged("from", result)

    def join(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = values_of(ch)
        kind = "INNER"
        if isinstance(vals[1], str):
            kind = vals[1]
            vals = [vals[0], *vals[2:]]
        left, right = vals[0], vals[1]
        condition = vals[2] if len(vals) > 2 else None
        return s.JoinRef(kind, left, right, condition, span=span_of(meta))

    def cross_join(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        left, right = values_of(ch)
        return s.JoinRef("CROSS", left, right, None, span=span_of(meta))

    def join_type(self, meta: Meta, ch: list[Any]) -> str:
        return "INNER"

    def left_join(self, meta: Meta, ch: list[Any]) -> str:
        return "LEFT"

    def right_join(self, meta: Meta, ch: list[Any]) -> str:
        return "RIGHT"

    def full_join(self, meta: Meta, ch: list[Any]) -> str:
        return "FULL"

    def alias(self, meta: Meta, ch: list[Any]) -> Alias:
        vals = values_of(ch)
        return Alias((vals[0], tuple(vals[1]) if len(vals) > 1 else ()))

    def column_aliases(self, meta: Meta, ch: list[Any]) -> list[str]:
        return list(ch)

    @staticmethod
    def _alias_of(vals: list[Any]) -> tuple[str | None, tuple[str, ...]]:
        for v in vals:
            if isinstance(v, Alias):
                return v[0], v[1]
        return None, ()

    def table_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        alias, cols = self._alias_of(ch)
        return s.TableRef(ch[0], alias, cols, span=span_of(meta))

    def subquery_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = values_of(ch)
        alias, cols = self._alias_of(vals)
        return s.SubqueryRef(vals[0], alias, cols, span=span_of(meta))

    def lateral_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = values_of(ch)
        alias, cols = self._alias_of(vals)
        return s.LateralRef(vals[0], alias, cols, span=span_of(meta))

    def where_clause(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("where", values_of(ch)[0])

    def group_by(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("group", values_of(ch)[0])

    def having(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("having", values_of(ch)[0])

    def order_by(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("order", values_of(ch))

    def order_item(self, meta: Meta, ch: list[Any]) -> s.OrderItem:
        toks = tokens_of(ch)
        nulls_first: bool | None = None
        if "NULLS" in toks:
            nulls_first = "FIRST" in toks
        return s.OrderItem(values_of(ch)[0], "DESC_KW" in toks, nulls_first, span=span_of(meta))

    def limit_clause(self, meta: Meta, ch: list[Any]) -> Tagged:
        vals = values_of(ch)
        return tagged("limit", (vals[0], vals[1] if len(vals) > 1 else None))

    def offset_limit(self, meta: Meta, ch: list[Any]) -> Tagged:
        vals = values_of(ch)
        offset = vals[0]
        limit = vals[1] if len(vals) > 1 else None
        return tagged("limit", (limit, offset))

    def limit_comma(self, meta: Meta, ch: list[Any]) -> Tagged:
        offset, limit = values_of(ch)
        return tagged("limit", (limit, offset))

    def values(self, meta: Meta, ch: list[Any]) -> s.Values:
        return s.Values(tuple(tuple(r) for r in values_of(ch)), span=span_of(meta))

    def values_row(self, meta: Meta, ch: list[Any]) -> list[Any]:
        first = ch[0]
        if isinstance(first, Token) and first.type == "LITERAL_ROW":
            return literal_row(first)
        return first
