"""Constants in the text: LIMIT/OFFSET counts, algorithm arguments, aggregate options."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core.errors import ValidationError
from grammar import syntax as s

from .context import BindContext
from .expressions import ExprBinder
from .scope import Scope


def constant_int(ctx: BindContext, e: s.Expr | None, what: str) -> int | None:
    if e is None:
        return None
    if isinstance(e, s.Literal) and e.kind == "int":
        value = int(e.value)
    elif isinstance(e, s.Parameter):
        bound = ExprBinder(ctx, Scope()).bind(e)
        try:
            value = int(str(bound.this).rstrip("L"))
        except (ValueError, AttributeError):
            raise ctx.error(ValidationError(f"{what} must be an integer"), e.span) from None
    else:
        raise ctx.error(ValidationError(f"{what} must be an integer constant"), e.span)
    if value < 0:
        raise ctx.error(ValidationError(f"{what} must not be negative"), e.span)
    if value >= 2**31:
        raise ctx.error(
            ValidationError(f"{what} {value} is out of range (at most 2^31 - 1)"), e.span
        )
    return value


def constant_value(e: exp.Expression) -> Any:
    """The Python value of a bound constant expression (a literal, negated or not)."""
    node = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(node, exp.Literal):
        text = node.this
        if node.is_string:
            return text
        text = text.rstrip("DdLl")
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Neg):
        v = constant_value(node.this)
        return -v if isinstance(v, (int, float)) else v
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    return node.sql(dialect="spark")
