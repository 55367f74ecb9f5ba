"""constant_folding: compute constant sub-expressions once, at plan time.

    Filter(x, 1 + 1 = 2 AND $0 > 3)  ->  Filter(x, $0 > 3)
    Project(x, [2 * 3 + $1])         ->  Project(x, [6 + $1])

Folds arithmetic and comparisons of numeric literals (with Java's integer
semantics), numeric casts of literals, and boolean connectives with a
TRUE/FALSE operand.  A filter whose
condition folds to TRUE is removed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.expressions import (
    cast_to,
    copy_typed,
    literal_for,
    numeric_value,
    replace_node,
    type_of,
    typed,
)
from planner.logical import Filter, Join, LogicalNode, Project, TableScan

_ARITH = (exp.Add, exp.Sub, exp.Mul)
_CMP = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
}


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _bool(e: exp.Expression) -> bool | None:
    e = _unparen(e)
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    return None


def _wrap_int(value: int, t: Any) -> int | None:
    bits = 64 if t.name == "BIGINT" else 32
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return value if low <= value <= high else None  # leave overflow to run time


def _literal(value: Any, t: Any) -> exp.Expression:

    lit = literal_for(value)
    if type_of(lit) != t and t.is_numeric:
        return cast_to(lit, t)
    return lit


def fold(e: exp.Expression) -> exp.Expression:
    root = copy_typed(e)

    def visit(node: exp.Expression) -> exp.Expression:
        t = type_of(node)
        if isinstance(node, exp.Paren) and isinstance(
            node.this, (exp.Literal, exp.Boolean, exp.Null, exp.Column)
        ):
            inner = node.this
            if not (isinstance(inner, exp.Literal) and str(inner.this).startswith("-")):
                return inner
        if isinstance(node, (exp.And, exp.Or)):
            a, b = _bool(node.this), _bool(node.expression)
            if isinstance(node, exp.And):
                if a is False or b is False:
                    return typed(exp.Boolean(this=False), T.BOOLEAN)
                if a is True:
                    return node.expression
                if b is True:
                    return node.this
            else:
                if a is True or b is True:
                    return typed(exp.Boolean(this=True), T.BOOLEAN)
                if a is False:
                    return node.expression
                if b is False:
                    return node.this
            return node
        if isinstance(node, exp.Not):
            v = _bool(node.this)
            if v is not None:
                return typed(exp.Boolean(this=not v), T.BOOLEAN)
            return node
        if isinstance(node, exp.Cast) and t.is_numeric and not isinstance(t, T.StructType):
            # CAST(10 AS DOUBLE) -> 10.0D: a typed literal the other rules can compare.
            value = numeric_value(node.this)
            source = type_of(node.this)
            if (
                value is not None
                and source.is_numeric
                and t.name in ("DOUBLE", "BIGINT", "INTEGER")
            ):
                if t.name == "DOUBLE":
                    return _literal(float(value), t)
                if isinstance(value, int) and _wrap_int(value, t) is not None:
                    if t.name == "BIGINT":
                        lit = typed(exp.Literal.number(f"{abs(value)}L"), T.BIGINT)
                        return (
                            lit
                            if value >= 0
                            else typed(exp.Paren(this=exp.Neg(this=lit)), T.BIGINT)
                        )
                    return _literal(value, t)
            return node
        if isinstance(node, _ARITH) and t.is_numeric:
            x, y = numeric_value(node.this), numeric_value(node.expression)
            if x is None or y is None:
                return node
            value = (
                x + y
                if isinstance(node, exp.Add)
                else x - y
                if isinstance(node, exp.Sub)
                else x * y
            )
            if t.is_integer:
                if not (isinstance(value, int)):
                    return node
                wrapped = _wrap_int(value, t)
                return node if wrapped is None else _literal(wrapped, t)
            return _literal(float(value), t)
        for cls, op in _CMP.items():
            if isinstance(node, cls):
                x, y = numeric_value(node.this), numeric_value(node.expression)
                if x is not None and y is not None:
                    return typed(exp.Boolean(this=op(x, y)), T.BOOLEAN)
        return node

    # Children before parents: walk() is breadth-first, so reversed order is safe.
    nodes: list[exp.Expression] = list(root.walk())  # type: ignore[arg-type]
    for node in reversed(nodes):
        new = visit(node)
        if new is not node:
            if node is root:
                root = new
            else:
                replace_node(node, new)
    return root


def constant_folding(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Filter):
        cond = fold(node.condition)
        if _bool(cond) is True:
            return node.input
        return node if cond == node.condition else Filter(node.input, cond)
    if isinstance(node, Project):
        exprs = tuple(fold(e) for e in node.exprs)
        return node if exprs == node.exprs else Project(node.input, exprs, node.fields_)
    if isinstance(node, Join) and node.condition is not None:
        cond = fold(node.condition)
        return node if cond == node.condition else replace(node, condition=cond)
    if isinstance(node, TableScan) and node.filters:
        filters = tuple(f for f in (fold(x) for x in node.filters) if _bool(f) is not True)
        return node if filters == node.filters else replace(node, filters=filters)
    return node
