"""Bound expressions: sqlglot trees whose column references are input positions.

After binding, every column reference in a plan node is ``c<i>``: the i-th field
of the node's input (for a join, of the left input followed by the right).  The
GeaFlow type of every bound expression is kept in ``expr.meta["type"]``.
Expressions are never mutated once bound; helpers here return copies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T

from .dialect import template

_REF = re.compile(r"^c(\d+)$")


def typed(e: exp.Expression, t: Any) -> exp.Expression:
    e.meta["type"] = t
    return e


def type_of(e: exp.Expression) -> Any:
    t = e.meta.get("type") if e.meta else None
    if t is None:
        if isinstance(e, exp.Boolean):
            return T.BOOLEAN
        if isinstance(e, exp.Null):
            return T.NULL
        return T.ANY
    return t


def ref(index: int, t: Any) -> exp.Expression:
    """A reference to input field ``index``."""
    return typed(exp.Column(this=exp.Identifier(this=f"c{index}", quoted=False)), t)


def ref_index(e: exp.Expression) -> int | None:
    """The input index of a bare reference, else None."""
    if isinstance(e, exp.Column) and not e.table:
        m = _REF.match(e.name)
        if m:
            return int(m.group(1))
    return None


def input_refs(e: exp.Expression) -> set[int]:
    out: set[int] = set()
    for node in e.find_all(exp.Column):
        i = ref_index(node)
        if i is not None:
            out.add(i)
    return out


def copy_typed(e: exp.Expression) -> exp.Expression:
    """A deep copy that keeps the type annotation of every node (sqlglot copies
    each node's meta; a type copies as itself, ``core.types``)."""
    return e.copy()


def remap_refs(
    e: exp.Expression, mapping: Mapping[int, int] | Callable[[int], int]
) -> exp.Expression:
    """Renumber input references (after a projection or join reorders inputs)."""
    get = mapping if callable(mapping) else mapping.__getitem__
    out = copy_typed(e)
    for node in list(out.find_all(exp.Column)):
        i = ref_index(node)
        if i is not None:
            node.set("this", exp.Identifier(this=f"c{get(i)}", quoted=False))
    return out


def numeric_value(e: exp.Expression) -> int | float | None:
    """The value of a numeric literal, parenthesised or negated (a ``D``
    suffix, a point or an exponent make it a float), else None."""
    while isinstance(e, exp.Paren):
        e = e.this
    neg = False
    if isinstance(e, exp.Neg):
        neg = True
        e = e.this
        while isinstance(e, exp.Paren):
            e = e.this
    if isinstance(e, exp.Literal) and not e.is_string:
        text = str(e.this)
        is_double = text.endswith(("D", "d"))
        text = text.rstrip("DdLl")
        try:
            value: int | float = (
                float(text) if is_double or "." in text or "e" in text.lower() else int(text)
            )
        except ValueError:
            return None
        return -value if neg else value
    return None


def replace_node(node: exp.Expression, new: exp.Expression) -> None:
    """``node.replace(new)`` in constant time.  sqlglot's replace re-parents
    every sibling when the node sits in a list (an IN list, a function's
    arguments), so replacing each item of a list of n took n^2 steps."""
    parent, key, index = node.parent, node.arg_key, node.index
    if parent is None or key is None:
        return
    siblings = parent.args.get(key)
    if index is None or not isinstance(siblings, list) or siblings[index] is not node:
        node.replace(new)
        return
    up: Any = parent
    while up is not None and up._hash is not None:  # cached hashes above are stale now
        up._hash = None
        up = up.parent
    siblings[index] = new
    new.parent, new.arg_key, new.index = parent, key, index
    node.parent = None


def substitute_refs(e: exp.Expression, values: Mapping[int, exp.Expression]) -> exp.Expression:
    """Replace each reference ``c<i>`` by ``values[i]`` (inlining a projection)."""
    root = copy_typed(e)
    if ref_index(root) is not None:
        return copy_typed(values[ref_index(root)])  # type: ignore[index]
    for node in list(root.find_all(exp.Column)):
        i = ref_index(node)
        if i is not None and i in values:
            replace_node(node, copy_typed(values[i]))
    return root


def conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    inner = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(inner, exp.And):
        left: Any = inner.left
        right: Any = inner.right
        return conjuncts(left) + conjuncts(right)
    return [e]


def and_all(parts: Iterable[exp.Expression]) -> exp.Expression | None:
    parts = list(parts)
    if not parts:
        return None
    result = parts[0]
    for p in parts[1:]:
        result = typed(exp.And(this=paren(result), expression=paren(p)), T.BOOLEAN)
    return result


# Operator nodes that need parentheses when nested (sqlglot prints what it is
# given; note its And/Or also count as functions, so test for operators).
_OPERATORS = (
    exp.Binary,
    exp.Connector,
    exp.Not,
    exp.Neg,
    exp.Is,
    exp.Like,
    exp.In,
    exp.Between,
    exp.Escape,
)


def paren(e: exp.Expression) -> exp.Expression:
    negative_literal = isinstance(e, exp.Literal) and str(e.this).startswith("-")
    if (isinstance(e, exp.Paren) or not isinstance(e, _OPERATORS)) and not negative_literal:
        return e
    return typed(exp.Paren(this=e), type_of(e))


def is_deterministic(e: exp.Expression) -> bool:
    for node in e.walk():
        if isinstance(node, (exp.Rand, exp.Randn)):
            return False
        if isinstance(node, exp.Anonymous) and str(node.this).lower() in ("rand", "uuid", "random"):
            return False
    return True


def is_constant(e: exp.Expression) -> bool:
    return (
        not input_refs(e)
        and is_deterministic(e)
        and not any(isinstance(n, exp.AggFunc) for n in e.walk())
    )


def render(e: exp.Expression, names: list[str] | None = None) -> str:
    """Readable text of a bound expression (for EXPLAIN): ``$i`` or the field name."""
    out = copy_typed(e)

    def rename(node: exp.Expression) -> exp.Expression:
        i = ref_index(node)
        if i is not None:
            label = names[i] if names and i < len(names) else None
            text = f"${i}" if label is None else f"{label}${i}"
            return exp.Column(this=exp.Identifier(this=text, quoted=False))
        return node

    out = out.transform(rename, copy=False)
    return out.sql(dialect="spark")


INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def literal_for(value: Any, t: Any | None = None) -> exp.Expression:
    """A typed literal for a Python value (parameters, constants folded by rules)."""
    if value is None:
        return typed(exp.Null(), t or T.NULL)
    if isinstance(value, bool):
        return typed(exp.Boolean(this=value), T.BOOLEAN)
    if isinstance(value, int):
        lt = T.INTEGER if INT_MIN <= value <= INT_MAX else T.BIGINT
        lit = exp.Literal.number(str(value) if lt is T.INTEGER else f"{value}L")
        return typed(lit if value >= 0 else paren(lit), lt)
    if isinstance(value, float):
        text = repr(value)
        if text in ("nan", "inf", "-inf"):
            return typed(template(f"CAST('{text}' AS DOUBLE)"), T.DOUBLE)
        return typed(
            exp.Literal.number(f"{text}D") if value >= 0 else paren(exp.Literal.number(f"{text}D")),
            T.DOUBLE,
        )
    typed_literal = _temporal_decimal_binary_literal(value)
    if typed_literal is not None:
        return typed_literal
    return typed(exp.Literal.string(str(value)), T.VARCHAR)


def _temporal_decimal_binary_literal(value: Any) -> exp.Expression | None:
    """DATE, TIMESTAMP, DECIMAL and BINARY literals for bound parameters (DB-API).

    The literal text is generated here from the value (ISO dates, digits, hex),
    never taken from the user, so it cannot change the statement.
    """
    import datetime as dt
    import decimal

    def cast(text: str, t: Any) -> exp.Expression:
        to = exp.DataType.build(T.spark_sql_type(t), dialect="spark")
        return typed(exp.Cast(this=exp.Literal.string(text), to=to), t)

    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            # the instant, whatever the session's time zone: an offset in the text
            value = value.astimezone(dt.UTC)
        return cast(value.isoformat(sep=" "), T.TIMESTAMP)
    if isinstance(value, dt.date):
        return cast(value.isoformat(), T.DATE)
    if isinstance(value, decimal.Decimal) and value.is_finite():
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        scale = max(0, -exponent)
        precision = max(len(digits) + max(0, exponent), scale, 1)
        if precision <= 38:
            return cast(format(value, "f"), T.decimal(precision, scale))
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return typed(template(f"X'{bytes(value).hex()}'"), T.BINARY)
    return None


def cast_to(e: exp.Expression, target: Any) -> exp.Expression:
    """``CAST(e AS target)`` unless ``e`` already has that type."""
    source = type_of(e)
    if source == target or target.name == "ANY":
        return e
    if isinstance(target, T.StructType) or isinstance(source, T.StructType):
        return e
    if source.name == "NULL":
        return typed(exp.Cast(this=exp.Null(), to=_data_type(target)), target)
    return typed(exp.Cast(this=e, to=_data_type(target)), target)


@functools.lru_cache(maxsize=256)
def _spark_data_type(spark_type: str) -> exp.DataType:
    return exp.DataType.build(spark_type, dialect="spark")


def _data_type(target: Any) -> exp.DataType:
    """The sqlglot type of a cast to ``target`` (parsed once per type, copied)."""
    return _spark_data_type(T.spark_sql_type(target)).copy()


# Comparison and arithmetic operators of the DSL as sqlglot nodes.
COMPARISONS = {
    "=": exp.EQ,
    "<>": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
}
ARITHMETIC = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div, "%": exp.Mod}
