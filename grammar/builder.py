"""Turns Lark's parse tree into the syntax tree of ``grammar.syntax``.

One method per grammar rule (or alias).  Keyword tokens that the grammar keeps
(``DISTINCT``, ``NOT``, ...) arrive among the children; the helpers below pick
out what each rule needs.  Every node gets the span of the text it covers.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from . import syntax as s
from .literals import decode_identifier, decode_string_token


def span_of(meta: Meta | Token | None) -> s.Span:
    if meta is None or getattr(meta, "empty", False):
        return s.NO_SPAN
    try:
        return s.Span(
            meta.line,  # type: ignore[arg-type]
            meta.column,  # type: ignore[arg-type]
            meta.end_line,  # type: ignore[arg-type]
            meta.end_column,  # type: ignore[arg-type]
            meta.start_pos,  # type: ignore[arg-type]
            meta.end_pos,  # type: ignore[arg-type]
        )
    except AttributeError:
        return s.NO_SPAN


def _tokens(children: list[Any]) -> set[str]:
    return {c.type for c in children if isinstance(c, Token)}


def _values(children: list[Any]) -> list[Any]:
    """Children that are not keyword tokens."""
    return [c for c in children if not isinstance(c, Token)]


class _Tagged(tuple):  # noqa: SLOT000 - a tiny marker type for optional clauses
    """``(tag, value)`` produced by optional clauses so the parent can tell them apart."""

    __slots__ = ()

    @property
    def tag(self) -> str:
        return self[0]

    @property
    def value(self) -> Any:
        return self[1]


def tagged(tag: str, value: Any) -> _Tagged:
    return _Tagged((tag, value))


def _by_tag(children: list[Any]) -> dict[str, Any]:
    return {c.tag: c.value for c in children if isinstance(c, _Tagged)}


class _Alias(tuple):  # noqa: SLOT000
    """``(name, column_aliases)`` from an ``alias`` rule."""

    __slots__ = ()


@v_args(meta=True)
class TreeBuilder(Transformer):
    """Lark tree -> syntax tree."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=False)
        self.text = text
        self._param_index = 0

    # ------------------------------------------------------------------ common
    def ident(self, meta: Meta, ch: list[Any]) -> str:
        tok = ch[0]
        if isinstance(tok, Token):
            if tok.type == "QUOTED_IDENT":
                return decode_identifier(str(tok))
            return str(tok)
        return str(tok)

    def nonreserved(self, meta: Meta, ch: list[Any]) -> str:
        return str(ch[0])

    def qualified_name(self, meta: Meta, ch: list[Any]) -> s.Name:
        return s.Name(tuple(ch), span=span_of(meta))

    def int_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        text = str(ch[0])
        return s.Literal(int(text.rstrip("lL")), "int", text, span=span_of(meta))

    def dec_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        text = str(ch[0])
        return s.Literal(text, "decimal", text, span=span_of(meta))

    def str_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(decode_string_token(str(ch[0])), "string", str(ch[0]), span=span_of(meta))

    def true_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(True, "bool", "TRUE", span=span_of(meta))

    def false_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(False, "bool", "FALSE", span=span_of(meta))

    def null_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(None, "null", "NULL", span=span_of(meta))

    # ------------------------------------------------------------- expressions
    def or_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, right = _values(ch)
        return s.Binary("OR", left, right, span=span_of(meta))

    def and_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, right = _values(ch)
        return s.Binary("AND", left, right, span=span_of(meta))

    def not_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.Unary("NOT", _values(ch)[0], span=span_of(meta))

    def _is(self, meta: Meta, ch: list[Any], what: str) -> s.Expr:
        return s.IsTest(_values(ch)[0], what, "NOT" in _tokens(ch), span=span_of(meta))

    def is_null(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "NULL")

    def is_true(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "TRUE")

    def is_false(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "FALSE")

    def is_distinct(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, right = _values(ch)
        op = "IS NOT DISTINCT FROM" if "NOT" in _tokens(ch) else "IS DISTINCT FROM"
        return s.Binary(op, left, right, span=span_of(meta))

    def cmp_op(self, meta: Meta, ch: list[Any]) -> str:
        op = str(ch[0])
        return "<>" if op == "!=" else op

    def compare(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, op, right = ch
        return s.Binary(op, left, right, span=span_of(meta))

    def like(self, meta: Meta, ch: list[Any]) -> s.Expr:
        vals = _values(ch)
        escape = vals[2] if len(vals) > 2 else None
        return s.Like(vals[0], vals[1], "NOT" in _tokens(ch), escape, span=span_of(meta))

    def in_list(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, items = _values(ch)
        return s.InList(operand, tuple(items), "NOT" in _tokens(ch), span=span_of(meta))

    def in_query(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, query = _values(ch)
        return s.InQuery(operand, query, "NOT" in _tokens(ch), span=span_of(meta))

    def between(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, low, high = _values(ch)
        return s.Between(operand, low, high, "NOT" in _tokens(ch), span=span_of(meta))

    def concat_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, right = _values(ch)
        return s.Binary("||", left, right, span=span_of(meta))

    def arith(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, op, right = ch
        text = "-" if op.type == "EDGE_DASH" else str(op)
        return s.Binary(text, left, right, span=span_of(meta))

    def neg(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand = _values(ch)[0]
        if isinstance(operand, s.Literal) and operand.kind in ("int", "decimal"):
            value = -operand.value if operand.kind == "int" else "-" + operand.value
            return s.Literal(value, operand.kind, "-" + operand.text, span=span_of(meta))
        return s.Unary("-", operand, span=span_of(meta))

    def pos(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return _values(ch)[0]

    def field(self, meta: Meta, ch: list[Any]) -> s.Expr:
        base, name = ch
        return s.Field(base, str(name), span=span_of(meta))

    def subscript(self, meta: Meta, ch: list[Any]) -> s.Expr:
        base, index = ch
        return s.Subscript(base, index, span=span_of(meta))

    def qualified_star(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.Star(_values(ch)[0], span=span_of(meta))

    def column(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.Column(ch[0], span=span_of(meta))

    def param(self, meta: Meta, ch: list[Any]) -> s.Expr:
        tok = str(ch[0])
        if tok == "?":
            index = self._param_index
            self._param_index += 1
            return s.Parameter(None, index, span=span_of(meta))
        return s.Parameter(tok[1:], -1, span=span_of(meta))

    def scalar_subquery(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.ScalarSubquery(ch[0], span=span_of(meta))

    def cast(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, type_name = _values(ch)
        return s.Cast(operand, type_name, span=span_of(meta))

    def exists(self, meta: Meta, ch: list[Any]) -> s.Expr:
        target = _values(ch)[0]
        if isinstance(target, s.ScalarSubquery):
            return s.Exists(query=target.query, span=span_of(meta))
        if isinstance(target, s.PathExpr):
            return s.Exists(path=target.path, span=span_of(meta))
        if isinstance(target, s.Column):
            node = s.NodePattern(target.name, span=target.span)
            return s.Exists(path=s.PathPattern((node,), span=target.span), span=span_of(meta))
        # EXISTS over something else: keep it so the binder can report it.
        return s.Exists(span=span_of(meta))

    def _path_expr(self, meta: Meta, first: s.NodePattern, tail: list[Any] | None) -> s.PathExpr:
        elements = (first, *(tail or ()))
        path = s.PathPattern(tuple(elements), span=span_of(meta))
        return s.PathExpr(path, span=span_of(meta))

    def path_or_paren(self, meta: Meta, ch: list[Any]) -> s.Expr:
        node = ch[0]
        if len(ch) == 1:
            # A parenthesised name: an ordinary column reference.
            return s.Column(node.variable, span=node.span)
        return self._path_expr(meta, node, ch[1])

    def path_atom(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._path_expr(meta, ch[0], ch[1] if len(ch) > 1 else None)

    def func_name(self, meta: Meta, ch: list[Any]) -> str:
        return str(ch[0])

    def expr_list(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def call_noargs(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.FunctionCall(ch[0], (), span=span_of(meta))

    def call_star(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.FunctionCall(_values(ch)[0], (), star=True, span=span_of(meta))

    def call_distinct(self, meta: Meta, ch: list[Any]) -> s.Expr:
        name, args = _values(ch)
        return s.FunctionCall(name, tuple(args), distinct=True, span=span_of(meta))

    def call(self, meta: Meta, ch: list[Any]) -> s.Expr:
        name, args = ch
        return s.FunctionCall(name, tuple(args), span=span_of(meta))

    def call_path(self, meta: Meta, ch: list[Any]) -> s.Expr:
        name, path, value = ch
        if isinstance(path, s.Column):
            node = s.NodePattern(path.name, span=path.span)
            pattern = s.PathPattern((node,), span=path.span)
        elif isinstance(path, s.PathExpr):
            pattern = path.path
        else:
            pattern = s.PathPattern((), span=getattr(path, "span", s.NO_SPAN))
        return s.PathFunction(name, pattern, value, span=span_of(meta))

    def function_call(self, meta: Meta, ch: list[Any]) -> Any:
        return ch[0]

    def case_expr(self, meta: Meta, ch: list[Any]) -> s.Expr:
        vals = _values(ch)
        operand = None
        whens: list[tuple[s.Expr, s.Expr]] = []
        default = None
        for v in vals:
            if isinstance(v, _Tagged) and v.tag == "when":
                whens.append(v.value)
            elif not whens:
                operand = v
            else:
                default = v
        return s.Case(operand, tuple(whens), default, span=span_of(meta))

    def case_when(self, meta: Meta, ch: list[Any]) -> _Tagged:
        cond, value = _values(ch)
        return tagged("when", (cond, value))

    def type_name(self, meta: Meta, ch: list[Any]) -> s.TypeName:
        name = str(ch[0]).upper()
        params = tuple(int(str(t)) for t in ch[1:])
        return s.TypeName(name, params, span=span_of(meta))

    def type_generic(self, meta: Meta, ch: list[Any]) -> s.TypeName:
        name = str(ch[0]).upper()
        return s.TypeName(name, (), tuple(ch[1:]), span=span_of(meta))

    # ----------------------------------------------------------------- queries
    def query(self, meta: Meta, ch: list[Any]) -> s.Query:
        body = ch[0]
        extra = _by_tag(ch[1:])
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
        left, right = _values(ch)
        is_all = "ALL" in _tokens(ch)
        # SQL applies a trailing ORDER BY / LIMIT to the whole union, not to its
        # last SELECT (which the grammar attaches them to).
        if isinstance(right, s.Select) and (right.order_by or right.limit is not None):
            inner = s.Select(
                right.items,
                right.from_,
                right.where,
                right.group_by,
                right.having,
                (),
                None,
                None,
                right.distinct,
                span=right.span,
            )
            union = s.SetOperation("UNION", is_all, left, inner, span=span_of(meta))
            return s.OrderedQuery(
                union, right.order_by, right.limit, right.offset, span=span_of(meta)
            )
        return s.SetOperation("UNION", is_all, left, right, span=span_of(meta))

    def paren_query(self, meta: Meta, ch: list[Any]) -> s.Query:
        q = ch[0]
        if isinstance(q, s.Select) and (q.order_by or q.limit is not None):
            # Keep a parenthesised SELECT's own ORDER BY/LIMIT with it.
            return s.OrderedQuery(q, span=span_of(meta))
        return q

    def set_quantifier(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("quant", ch[0].type)

    def select(self, meta: Meta, ch: list[Any]) -> s.Select:
        parts = _by_tag(ch)
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
        vals = _values(ch)
        expr = vals[0]
        alias = vals[1] if len(vals) > 1 else None
        if isinstance(expr, s.Star):
            return s.SelectItem(expr, span=span_of(meta))
        return s.SelectItem(expr, alias, span=span_of(meta))

    def from_clause(self, meta: Meta, ch: list[Any]) -> _Tagged:
        items = _values(ch)
        result = items[0]
        for item in items[1:]:
            result = s.JoinRef("COMMA", result, item, None, span=result.span.merge(item.span))
        return tagged("from", result)

    def join(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = _values(ch)
        kind = "INNER"
        if isinstance(vals[1], str):
            kind = vals[1]
            vals = [vals[0], *vals[2:]]
        left, right = vals[0], vals[1]
        condition = vals[2] if len(vals) > 2 else None
        return s.JoinRef(kind, left, right, condition, span=span_of(meta))

    def cross_join(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        left, right = _values(ch)
        return s.JoinRef("CROSS", left, right, None, span=span_of(meta))

    def join_type(self, meta: Meta, ch: list[Any]) -> str:
        return "INNER"

    def left_join(self, meta: Meta, ch: list[Any]) -> str:
        return "LEFT"

    def right_join(self, meta: Meta, ch: list[Any]) -> str:
        return "RIGHT"

    def full_join(self, meta: Meta, ch: list[Any]) -> str:
        return "FULL"

    def alias(self, meta: Meta, ch: list[Any]) -> _Alias:
        vals = _values(ch)
        return _Alias((vals[0], tuple(vals[1]) if len(vals) > 1 else ()))

    def column_aliases(self, meta: Meta, ch: list[Any]) -> list[str]:
        return list(ch)

    @staticmethod
    def _alias_of(vals: list[Any]) -> tuple[str | None, tuple[str, ...]]:
        for v in vals:
            if isinstance(v, _Alias):
                return v[0], v[1]
        return None, ()

    def table_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        alias, cols = self._alias_of(ch)
        return s.TableRef(ch[0], alias, cols, span=span_of(meta))

    def subquery_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = _values(ch)
        alias, cols = self._alias_of(vals)
        return s.SubqueryRef(vals[0], alias, cols, span=span_of(meta))

    def lateral_ref(self, meta: Meta, ch: list[Any]) -> s.FromItem:
        vals = _values(ch)
        alias, cols = self._alias_of(vals)
        return s.LateralRef(vals[0], alias, cols, span=span_of(meta))

    def where_clause(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("where", _values(ch)[0])

    def group_by(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("group", _values(ch)[0])

    def having(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("having", _values(ch)[0])

    def order_by(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("order", _values(ch))

    def order_item(self, meta: Meta, ch: list[Any]) -> s.OrderItem:
        toks = _tokens(ch)
        nulls_first: bool | None = None
        if "NULLS" in toks:
            nulls_first = "FIRST" in toks
        return s.OrderItem(_values(ch)[0], "DESC_KW" in toks, nulls_first, span=span_of(meta))

    def limit_clause(self, meta: Meta, ch: list[Any]) -> _Tagged:
        vals = _values(ch)
        return tagged("limit", (vals[0], vals[1] if len(vals) > 1 else None))

    def offset_limit(self, meta: Meta, ch: list[Any]) -> _Tagged:
        vals = _values(ch)
        offset = vals[0]
        limit = vals[1] if len(vals) > 1 else None
        return tagged("limit", (limit, offset))

    def limit_comma(self, meta: Meta, ch: list[Any]) -> _Tagged:
        offset, limit = _values(ch)
        return tagged("limit", (limit, offset))

    def values(self, meta: Meta, ch: list[Any]) -> s.Values:
        return s.Values(tuple(tuple(r) for r in _values(ch)), span=span_of(meta))

    def values_row(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return ch[0]

    # --------------------------------------------------------------------- gql
    def gql_query(self, meta: Meta, ch: list[Any]) -> s.Query:
        request = None
        clauses: list[s.GraphClause] = []
        for c in ch:
            if isinstance(c, s.RequestTable):
                request = c
            elif isinstance(c, _Tagged):
                clauses.append(self._clause_from_tag(c))
            else:
                clauses.append(c)
        return s.GraphQuery(tuple(clauses), request, span=span_of(meta))

    @staticmethod
    def _clause_from_tag(c: _Tagged) -> s.GraphClause:
        if c.tag == "order":
            items = c.value
            span = items[0].span.merge(items[-1].span) if items else s.NO_SPAN
            return s.OrderByClause(tuple(items), span=span)
        if c.tag == "limit":
            limit, offset = c.value
            return s.LimitClause(limit, offset, span=(limit or offset).span)
        raise AssertionError(c.tag)

    def gql_with(self, meta: Meta, ch: list[Any]) -> s.RequestTable:
        name, query = _values(ch)
        return s.RequestTable(name, query, span=span_of(meta))

    def match_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        vals = _values(ch)
        patterns = vals[0]
        where = _by_tag(vals[1:]).get("where")
        return s.MatchClause(tuple(patterns), where, span=span_of(meta))

    def pattern_list(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def pattern_union(self, meta: Meta, ch: list[Any]) -> s.PatternUnion:
        paths = [c for c in ch if isinstance(c, s.PathPattern)]
        distinct = tuple(c.type == "PIPE_PLUS" for c in ch if isinstance(c, Token))
        return s.PatternUnion(tuple(paths), distinct, span=span_of(meta))

    def path_pattern(self, meta: Meta, ch: list[Any]) -> s.PathPattern:
        variable = None
        if isinstance(ch[0], str):
            variable = ch[0]
            ch = ch[1:]
        elements = [ch[0], *(ch[1] if len(ch) > 1 else ())]
        return s.PathPattern(tuple(elements), variable, span=span_of(meta))

    def path_tail(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return list(ch)

    def paren_ident(self, meta: Meta, ch: list[Any]) -> s.NodePattern:
        return s.NodePattern(ch[0], span=span_of(meta))

    def node_full(self, meta: Meta, ch: list[Any]) -> s.NodePattern:
        variable = next((c for c in ch if isinstance(c, str)), None)
        labels = next((c.value for c in ch if isinstance(c, _Tagged) and c.tag == "labels"), ())
        parts = _by_tag(ch)
        return s.NodePattern(
            variable,
            tuple(labels),
            parts.get("where"),
            tuple(parts.get("properties", ())),
            span=span_of(meta),
        )

    def property_map(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("properties", tuple(ch))

    def property_entry(self, meta: Meta, ch: list[Any]) -> tuple[str, Any]:
        name, value = ch
        return (name, value)

    def label_spec(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("labels", tuple(_values(ch)))

    def edge_inner(self, meta: Meta, ch: list[Any]) -> _Tagged:
        variable = next((c for c in ch if isinstance(c, str)), None)
        labels = next((c.value for c in ch if isinstance(c, _Tagged) and c.tag == "labels"), ())
        parts = _by_tag(ch)
        return tagged(
            "edge",
            (variable, tuple(labels), parts.get("where"), tuple(parts.get("properties", ()))),
        )

    def loop(self, meta: Meta, ch: list[Any]) -> _Tagged:
        low = int(str(ch[0]))
        high = int(str(ch[1])) if len(ch) > 1 else None
        return tagged("loop", (low, high))

    def loop_exact(self, meta: Meta, ch: list[Any]) -> _Tagged:
        n = int(str(ch[0]))
        return tagged("loop", (n, n))

    def _edge(self, meta: Meta, ch: list[Any], direction: str) -> s.EdgePattern:
        parts = _by_tag(ch)
        variable, labels, where, properties = parts.get("edge", (None, (), None, ()))
        low, high = parts.get("loop", (1, 1))
        return s.EdgePattern(
            variable, direction, labels, where, low, high, properties, span=span_of(meta)
        )

    def edge_out(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "OUT")

    def edge_in(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "IN")

    def edge_both(self, meta: Meta, ch: list[Any]) -> s.EdgePattern:
        return self._edge(meta, ch, "BOTH")

    edge_out_short = edge_out
    edge_in_short = edge_in
    edge_both_short = edge_both

    def let_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        assigns: list[s.LetAssign] = []
        is_global = False
        for c in ch:
            if isinstance(c, Token):
                if c.type == "GLOBAL":
                    is_global = True
                elif c.type == "LET":
                    is_global = False
                continue
            assigns.append(s.LetAssign(c.variable, c.field, c.value, is_global, span=c.span))
            is_global = False
        return s.LetClause(tuple(assigns), span=span_of(meta))

    def let_assign(self, meta: Meta, ch: list[Any]) -> s.LetAssign:
        variable, field, value = ch
        return s.LetAssign(variable, field, value, span=span_of(meta))

    def return_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        parts = _by_tag(ch)
        items = next(c for c in ch if isinstance(c, list))
        return s.ReturnClause(tuple(items), parts.get("quant") == "DISTINCT", span=span_of(meta))

    def gql_group_by(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        return s.GroupByClause(tuple(_values(ch)[0]), span=span_of(meta))

    def then_filter(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        return s.FilterClause(_values(ch)[0], span=span_of(meta))

    def call_clause(self, meta: Meta, ch: list[Any]) -> s.GraphClause:
        vals = _values(ch)
        name = vals[0]
        args: list[Any] = []
        rest = vals[1:]
        if rest and isinstance(rest[0], list):
            args = rest[0]
            rest = rest[1:]
        return s.CallClause(name, tuple(args), tuple(rest), span=span_of(meta))

    # --------------------------------------------------------------------- ddl
    def if_not_exists(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("if_not_exists", True)

    def with_options(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("options", tuple(_values(ch)))

    def option(self, meta: Meta, ch: list[Any]) -> tuple[str, Any]:
        return (ch[0], ch[1])

    def option_key(self, meta: Meta, ch: list[Any]) -> str:
        return ".".join(ch)

    def opt_str(self, meta: Meta, ch: list[Any]) -> str:
        return decode_string_token(str(ch[0]))

    def opt_true(self, meta: Meta, ch: list[Any]) -> bool:
        return True

    def opt_false(self, meta: Meta, ch: list[Any]) -> bool:
        return False

    def opt_ident(self, meta: Meta, ch: list[Any]) -> str:
        return str(ch[0])

    def signed_number(self, meta: Meta, ch: list[Any]) -> int | float:
        text = "".join(str(c) for c in ch)
        if meta is not None and not getattr(meta, "empty", False):
            text = self.text[meta.start_pos : meta.end_pos].replace(" ", "")
        try:
            return int(text.rstrip("lL"))
        except ValueError:
            return float(text)

    def column_def(self, meta: Meta, ch: list[Any]) -> s.ColumnDef:
        name, type_name = ch
        return s.ColumnDef(name, type_name, span=span_of(meta))

    def primary_key(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("pk", tuple(_values(ch)))

    def create_table(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = _values(ch)
        parts = _by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        columns = tuple(v for v in vals if isinstance(v, s.ColumnDef))
        return s.CreateTable(
            name,
            columns,
            tuple(parts.get("options", ())),
            tuple(parts.get("pk", ())),
            bool(parts.get("if_not_exists")),
            "TEMPORARY" in _tokens(ch),
            span=span_of(meta),
        )

    def create_view(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = _values(ch)
        parts = _by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        cols = next((v for v in vals if isinstance(v, list)), [])
        query = vals[-1]
        return s.CreateView(
            name,
            tuple(cols),
            query,
            bool(parts.get("if_not_exists")),
            "REPLACE" in _tokens(ch),
            span=span_of(meta),
        )

    def graph_column(self, meta: Meta, ch: list[Any]) -> s.GraphColumn:
        vals = _values(ch)
        role = vals[2] if len(vals) > 2 else None
        return s.GraphColumn(vals[0], vals[1], role, span=span_of(meta))

    def graph_column_from(self, meta: Meta, ch: list[Any]) -> s.GraphColumn:
        vals = _values(ch)
        role = vals[2] if len(vals) > 2 else None
        return s.GraphColumn(vals[0], None, role, vals[1], span=span_of(meta))

    def role_id(self, meta: Meta, ch: list[Any]) -> str:
        return "ID"

    def role_source(self, meta: Meta, ch: list[Any]) -> str:
        return "SOURCE"

    def role_destination(self, meta: Meta, ch: list[Any]) -> str:
        return "DESTINATION"

    def role_timestamp(self, meta: Meta, ch: list[Any]) -> str:
        return "TIMESTAMP"

    def vertex_inline(self, meta: Meta, ch: list[Any]) -> s.VertexDef:
        vals = _values(ch)
        return s.VertexDef(vals[0], tuple(vals[1:]), span=span_of(meta))

    def edge_inline(self, meta: Meta, ch: list[Any]) -> s.EdgeDef:
        vals = _values(ch)
        return s.EdgeDef(vals[0], tuple(vals[1:]), span=span_of(meta))

    def vertex_using(self, meta: Meta, ch: list[Any]) -> s.VertexDef:
        label, table, id_col = _values(ch)
        return s.VertexDef(label, (), table, id_col, span=span_of(meta))

    def edge_using(self, meta: Meta, ch: list[Any]) -> s.EdgeDef:
        label, table, src, dst = _values(ch)
        return s.EdgeDef(label, (), table, src, dst, span=span_of(meta))

    def edge_using_ts(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("ts", (_values(ch)[0], span_of(meta)))

    def create_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = _values(ch)
        parts = _by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        vertices: list[s.VertexDef] = []
        edges: list[s.EdgeDef] = []
        for v in vals:
            if isinstance(v, s.VertexDef):
                vertices.append(v)
            elif isinstance(v, s.EdgeDef):
                edges.append(v)
            elif isinstance(v, _Tagged) and v.tag == "ts":
                ts_name, ts_span = v.value
                if edges:
                    last = edges[-1]
                    edges[-1] = s.EdgeDef(
                        last.label,
                        last.columns,
                        last.using,
                        last.source_column,
                        last.target_column,
                        ts_name,
                        span=last.span.merge(ts_span),
                    )
                else:
                    from geaflow_sql.core.errors import ParseError

                    raise ParseError("TIMESTAMP(...) must follow an edge definition", span=ts_span)
        return s.CreateGraph(
            name,
            tuple(vertices),
            tuple(edges),
            tuple(parts.get("options", ())),
            bool(parts.get("if_not_exists")),
            "TEMPORARY" in _tokens(ch),
            span=span_of(meta),
        )

    def string_value(self, meta: Meta, ch: list[Any]) -> str:
        return decode_string_token(str(ch[0]))

    def create_function(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = _values(ch)
        parts = _by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        strings = [v for v in vals if isinstance(v, str)]
        return s.CreateFunction(
            name,
            strings[0],
            strings[1] if len(strings) > 1 else None,
            bool(parts.get("if_not_exists")),
            span=span_of(meta),
        )

    def drop_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        toks = _tokens(ch)
        kind = next(k for k in ("TABLE", "VIEW", "GRAPH", "FUNCTION") if k in toks)
        return s.Drop(kind, _values(ch)[0], "EXISTS" in toks, span=span_of(meta))

    def use_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.UseGraph(_values(ch)[0], span=span_of(meta))

    def use_instance(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.UseInstance(_values(ch)[0], span=span_of(meta))

    def set_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = [c for c in ch if not (isinstance(c, Token) and c.type == "SET")]
        return s.SetOption(vals[0], vals[1], span=span_of(meta))

    def set_show(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.SetOption(_values(ch)[0], None, True, span=span_of(meta))

    def set_show_all(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.SetOption(None, None, True, span=span_of(meta))

    def show_tables(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("TABLES", span=span_of(meta))

    def show_graphs(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("GRAPHS", span=span_of(meta))

    def show_functions(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("FUNCTIONS", span=span_of(meta))

    def describe_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        toks = _tokens(ch)
        kind = next((k for k in ("TABLE", "GRAPH", "VIEW") if k in toks), None)
        return s.Describe(_values(ch)[0], kind, span=span_of(meta))

    # --------------------------------------------------------------------- dml
    def insert_columns(self, meta: Meta, ch: list[Any]) -> _Tagged:
        return tagged("columns", tuple(ch))

    def insert(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = _values(ch)
        parts = _by_tag(vals)
        target = vals[0]
        query = vals[-1]
        return s.Insert(
            target,
            tuple(parts.get("columns", ())),
            query,
            "OVERWRITE" in _tokens(ch),
            span=span_of(meta),
        )

    # ------------------------------------------------------------------ script
    def query_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.QueryStatement(ch[0], span=span_of(meta))

    def explain(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Explain(_values(ch)[0], span=span_of(meta))

    def start(self, meta: Meta, ch: list[Any]) -> list[s.Statement]:
        return [c for c in ch if isinstance(c, s.Statement)]
