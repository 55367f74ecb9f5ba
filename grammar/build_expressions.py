"""The tree builder's rules for expressions (operators, literals, calls, CASE, types).

The tree builder (``grammar.builder.TreeBuilder``) is these rules with those
of queries, GQL and statements: one Lark transformer, split by sub-language
as the grammar files are.
"""

from __future__ import annotations

import math
from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from geaflow_sql.core.errors import ParseError

from . import syntax as s
from .literals import decode_identifier, decode_string_token
from .tree_helpers import Tagged, balanced, span_of, tagged, tokens_of, values_of

# Longer integer literals are out of every integer type's range (BIGINT has
# 19 digits); the binder checks the exact range once a sign is applied.
MAX_INT_DIGITS = 20


def int_literal(text: str, span: s.Span) -> s.Literal:
    digits = text.rstrip("lL")
    if len(digits.lstrip("0")) > MAX_INT_DIGITS:
        raise ParseError(
            f"integer literal of {len(digits)} digits is out of range (BIGINT)", span=span
        )
    return s.Literal(int(digits), "int", text, span=span)


def decimal_literal(text: str, span: s.Span) -> s.Literal:
    if math.isinf(float(text.rstrip("dDfF"))):
        raise ParseError(f"number {text[:40]} is out of the range of DOUBLE", span=span)
    return s.Literal(text, "decimal", text, span=span)


def string_literal(text: str, span: s.Span) -> s.Literal:
    return s.Literal(decode_string_token(text), "string", text, span=span)


def negated(operand: s.Expr, span: s.Span) -> s.Expr:
    """``-operand``: a negative number literal, or a negation."""
    if isinstance(operand, s.Literal) and operand.kind in ("int", "decimal"):
        value = -operand.value if operand.kind == "int" else "-" + operand.value
        return s.Literal(value, operand.kind, "-" + operand.text, span=span)
    return s.Unary("-", operand, span=span)


def _chain(op: str, operands: list[s.Expr]) -> s.Expr:
    """``a op b op c ...`` for an associative ``op``, balanced."""
    return balanced(operands, lambda a, b, span: s.Binary(op, a, b, span=span))


@v_args(meta=True)
class ExpressionRules(Transformer):
    """The tree builder's rules for expressions (operators, literals, calls, CASE, types)."""

    parameter_numbers: dict[int, int]  # a ``?``'s offset -> its number (set by TreeBuilder)

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
        return int_literal(str(ch[0]), span_of(meta))

    def dec_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return decimal_literal(str(ch[0]), span_of(meta))

    def str_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return string_literal(str(ch[0]), span_of(meta))

    def true_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(True, "bool", "TRUE", span=span_of(meta))

    def false_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(False, "bool", "FALSE", span=span_of(meta))

    def null_lit(self, meta: Meta, ch: list[Any]) -> s.Literal:
        return s.Literal(None, "null", "NULL", span=span_of(meta))

    # ------------------------------------------------------------- expressions
    def or_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return _chain("OR", values_of(ch))

    def and_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return _chain("AND", values_of(ch))

    def not_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        # NOT NOT x is x in three-valued logic too; two are kept so that a
        # NOT of a value that is no condition is still reported.
        nots = [c for c in ch if isinstance(c, Token)]
        operand = values_of(ch)[0]
        if len(nots) % 2 == 0:
            operand = s.Unary("NOT", operand, span=span_of(nots[-1]).merge(operand.span))
        return s.Unary("NOT", operand, span=span_of(meta))

    def _is(self, meta: Meta, ch: list[Any], what: str) -> s.Expr:
        return s.IsTest(values_of(ch)[0], what, "NOT" in tokens_of(ch), span=span_of(meta))

    def is_null(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "NULL")

    def is_true(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "TRUE")

    def is_false(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return self._is(meta, ch, "FALSE")

    def is_distinct(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, right = values_of(ch)
        op = "IS NOT DISTINCT FROM" if "NOT" in tokens_of(ch) else "IS DISTINCT FROM"
        return s.Binary(op, left, right, span=span_of(meta))

    def cmp_op(self, meta: Meta, ch: list[Any]) -> str:
        op = str(ch[0])
        return "<>" if op == "!=" else op

    def compare(self, meta: Meta, ch: list[Any]) -> s.Expr:
        left, op, right = ch
        return s.Binary(op, left, right, span=span_of(meta))

    def like(self, meta: Meta, ch: list[Any]) -> s.Expr:
        vals = values_of(ch)
        escape = vals[2] if len(vals) > 2 else None
        return s.Like(vals[0], vals[1], "NOT" in tokens_of(ch), escape, span=span_of(meta))

    def in_list(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, items = values_of(ch)
        return s.InList(operand, tuple(items), "NOT" in tokens_of(ch), span=span_of(meta))

    def in_query(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, query = values_of(ch)
        return s.InQuery(operand, query, "NOT" in tokens_of(ch), span=span_of(meta))

    def in_table(self, meta: Meta, ch: list[Any]) -> s.Expr:
        """``x IN t``: a table, view or request table used as the set of its
        one column, ``x IN (SELECT * FROM t)``."""
        operand, name = values_of(ch)
        span = span_of(meta)
        query = s.Select(
            (s.SelectItem(s.Star(span=name.span), span=name.span),),
            s.TableRef(name, span=name.span),
            span=name.span,
        )
        return s.InQuery(operand, query, "NOT" in tokens_of(ch), span=span)

    def between(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, low, high = values_of(ch)
        return s.Between(operand, low, high, "NOT" in tokens_of(ch), span=span_of(meta))

    def concat_op(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return _chain("||", values_of(ch))

    def arith(self, meta: Meta, ch: list[Any]) -> s.Expr:
        # Left to right, as written: (a + b) - c (not reordered: integer
        # widening and floating-point rounding depend on the order).
        acc = ch[0]
        for k in range(1, len(ch), 2):
            op, right = ch[k], ch[k + 1]
            text = "-" if op.type == "EDGE_DASH" else str(op)
            acc = s.Binary(text, acc, right, span=acc.span.merge(right.span))
        return acc

    def neg(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return negated(values_of(ch)[0], span_of(meta))

    def pos(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return values_of(ch)[0]

    def field(self, meta: Meta, ch: list[Any]) -> s.Expr:
        base, name = ch
        return s.Field(base, str(name), span=span_of(meta))

    def subscript(self, meta: Meta, ch: list[Any]) -> s.Expr:
        base, index = ch
        return s.Subscript(base, index, span=span_of(meta))

    def qualified_star(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.Star(values_of(ch)[0], span=span_of(meta))

    def column(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.Column(ch[0], span=span_of(meta))

    def param(self, meta: Meta, ch: list[Any]) -> s.Expr:
        tok = str(ch[0])
        if tok == "?":
            index = self.parameter_numbers[ch[0].start_pos]
            return s.Parameter(None, index, span=span_of(meta))
        return s.Parameter(tok[1:], -1, span=span_of(meta))

    def scalar_subquery(self, meta: Meta, ch: list[Any]) -> s.Expr:
        return s.ScalarSubquery(ch[0], span=span_of(meta))

    def cast(self, meta: Meta, ch: list[Any]) -> s.Expr:
        operand, type_name = values_of(ch)
        return s.Cast(operand, type_name, span=span_of(meta))

    def exists(self, meta: Meta, ch: list[Any]) -> s.Expr:
        target = values_of(ch)[0]
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
        return s.FunctionCall(values_of(ch)[0], (), star=True, span=span_of(meta))

    def call_distinct(self, meta: Meta, ch: list[Any]) -> s.Expr:
        name, args = values_of(ch)
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
        vals = values_of(ch)
        operand = None
        whens: list[tuple[s.Expr, s.Expr]] = []
        default = None
        for v in vals:
            if isinstance(v, Tagged) and v.tag == "when":
                whens.append(v.value)
            elif not whens:
                operand = v
            else:
                default = v
        return s.Case(operand, tuple(whens), default, span=span_of(meta))

    def case_when(self, meta: Meta, ch: list[Any]) -> Tagged:
        cond, value = values_of(ch)
        return tagged("when", (cond, value))

    def type_name(self, meta: Meta, ch: list[Any]) -> s.TypeName:
        name = str(ch[0]).upper()
        params = tuple(int(str(t)) for t in ch[1:])
        return s.TypeName(name, params, span=span_of(meta))

    def type_generic(self, meta: Meta, ch: list[Any]) -> s.TypeName:
        name = str(ch[0]).upper()
        return s.TypeName(name, (), tuple(ch[1:]), span=span_of(meta))
