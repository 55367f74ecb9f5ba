"""Correlated subqueries with equality correlation, turned into joins.

    SELECT * FROM users u
    WHERE EXISTS (SELECT 1 FROM orders o WHERE o.uid = u.id AND o.amount > 10)

The subquery's WHERE is split into its own conditions (``o.amount > 10``) and
equalities between a subquery expression and an outer one (``o.uid = u.id``).
The subquery is then planned *without* the correlated equalities, selecting
their subquery sides as keys (made distinct, or grouped for an aggregate), and
left-joined to the outer input on ``key = outer expression``: one row per key
at most, so the outer rows are never duplicated.  Only equalities can be
decorrelated this way; anything else correlated is reported as unsupported.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError
from grammar import syntax as s
from planner.expressions import cast_to, input_refs, type_of, typed

from .expressions import ExprBinder


@dataclass(frozen=True)
class Correlation:
    """A subquery without its correlated equalities, and the two sides of each."""

    select: s.Select
    inner_keys: tuple[s.Expr, ...]  # subquery side (syntax, bound later with the subquery)
    outer_keys: tuple[exp.Expression, ...]  # outer side, bound over the outer input


def syntax_conjuncts(e: s.Expr) -> list[s.Expr]:
    if isinstance(e, s.Binary) and e.op == "AND":
        return syntax_conjuncts(e.left) + syntax_conjuncts(e.right)
    return [e]


def _and(parts: list[s.Expr]) -> s.Expr | None:
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = s.Binary("AND", out, p, span=out.span.merge(p.span))
    return out


def _binds(binder: ExprBinder, e: s.Expr) -> exp.Expression | None:
    try:
        return binder.bind(e)
    except GeaflowError:
        return None


def decorrelate(qb: Any, outer: ExprBinder, query: s.Query) -> Correlation | None:
    """Split a correlated ``SELECT ... WHERE`` subquery, or None if it is not one.

    None also when a correlated condition is not an equality: planning the
    subquery as it is then reports the outer name it cannot resolve.
    """
    if not isinstance(query, s.Select) or query.from_ is None or query.where is None:
        return None
    if query.group_by or query.having is not None or query.limit is not None or query.order_by:
        return None
    inner_scope = qb.bind_from(query.from_).scope
    inner = qb.expr_binder(inner_scope)
    outer_plain = outer.derive(aggregate_hook=None)
    keep: list[s.Expr] = []
    inner_keys: list[s.Expr] = []
    outer_keys: list[exp.Expression] = []
    for c in syntax_conjuncts(query.where):
        if _binds(inner, c) is not None:
            keep.append(c)
            continue
        pair = _equality(c, inner, outer_plain)
        if pair is None:
            keep.append(c)  # bound (and reported) with the subquery
            continue
        inner_keys.append(pair[0])
        outer_keys.append(pair[1])
    if not inner_keys:
        return None
    return Correlation(replace(query, where=_and(keep)), tuple(inner_keys), tuple(outer_keys))


def _equality(
    c: s.Expr, inner: ExprBinder, outer: ExprBinder
) -> tuple[s.Expr, exp.Expression] | None:
    if not (isinstance(c, s.Binary) and c.op == "="):
        return None
    for inner_side, outer_side in ((c.left, c.right), (c.right, c.left)):
        if _binds(inner, inner_side) is None:
            continue
        bound = _binds(outer, outer_side)
        if bound is not None and input_refs(bound):
            return inner_side, bound
    return None


def key_condition(outer_key: exp.Expression, inner_ref: exp.Expression) -> exp.Expression:
    """``outer = inner`` compared at the two sides' common type."""

    common = T.common_type(type_of(outer_key), type_of(inner_ref)) or type_of(outer_key)
    return typed(
        exp.EQ(this=cast_to(outer_key, common), expression=cast_to(inner_ref, common)), T.BOOLEAN
    )
