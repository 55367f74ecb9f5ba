"""Checking and adapting bound parameters before a statement runs.

Parameters are never put into the statement text: the grammar parses ``?``
and ``:name`` as parameter nodes and the binder turns each value into a typed
literal.  This module checks that the values given match the placeholders
(PEP 249 wants a ProgrammingError for a wrong count, pointing at the text)
and turns the Python values drivers usually accept into the ones the binder
knows (numpy scalars, ``datetime.time``, ``uuid.UUID`` ...).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from geaflow_sql.core import errors as gerr
from grammar import syntax as s

from .exceptions import Error, programming_error, translate

# A placeholder, the statement text and its source, for errors that point at it.
_Where = tuple[Any, str | None, str | None] | None

# Values the binder turns into typed literals (see planner.binder.expressions.literal_for).
_NATIVE = (type(None), bool, int, float, str, bytes)


def iter_parameters(node: Any) -> Iterator[s.Parameter]:
    """Every ``?`` / ``:name`` node under ``node``, in text order."""
    if isinstance(node, s.Parameter):
        yield node
        return
    if isinstance(node, (list, tuple)):
        for item in node:
            yield from iter_parameters(item)
        return
    if isinstance(node, dict):
        for item in node.values():
            yield from iter_parameters(item)
        return
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name != "span":
                yield from iter_parameters(getattr(node, f.name))


BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
DECIMAL_DIGITS = 38


def adapt_value(value: Any, label: str, where: _Where = None) -> Any:
    """``value`` as one of the types the binder binds: a ProgrammingError for
    a type that cannot be bound, a DataError for a value no column type
    holds (``where``: the placeholder, the text and its source)."""
    if type(value) in _NATIVE or isinstance(value, (dt.date, decimal.Decimal)):
        if isinstance(value, int) and not isinstance(value, bool):
            _check_bigint(value, label, where)
        if isinstance(value, decimal.Decimal):
            _check_decimal(value, label, where)
        return None if _is_nat(value) else value
    module = type(value).__module__
    item = getattr(value, "item", None)
    if callable(item) and module.startswith("numpy"):  # numpy scalars: np.int64, np.float32 ...
        return adapt_value(item(), label)
    # Subclasses (IntEnum, np.float64 is a float, str subclasses) bind as their base value.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        _check_bigint(int(value), label, where)
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dt.time):
        return value.isoformat()  # GeaFlow has no TIME type: bind the text
    if isinstance(value, uuid.UUID):
        return str(value)
    raise programming_error(
        f"parameter {label} is a {type(value).__name__}, which cannot be bound; "
        "use None, bool, int, float, str, Decimal, date, datetime or bytes"
    )


def _check_bigint(value: int, label: str, where: _Where) -> None:
    if not BIGINT_MIN <= value <= BIGINT_MAX:
        raise _data_error(
            f"parameter {label} is {_short(value)}, outside BIGINT "
            f"({BIGINT_MIN} to {BIGINT_MAX}); bind it as a Decimal or a str",
            where,
        )


def _check_decimal(value: decimal.Decimal, label: str, where: _Where) -> None:
    if not value.is_finite():
        raise _data_error(
            f"parameter {label} is Decimal({str(value)!r}); DECIMAL holds finite numbers only "
            "(bind a float for NaN or infinity)",
            where,
        )
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    precision = max(len(digits) + max(0, exponent), max(0, -exponent), 1)
    if precision > DECIMAL_DIGITS:
        raise _data_error(
            f"parameter {label} is Decimal({_short(value)!r}), which needs {precision} digits; "
            f"DECIMAL holds at most {DECIMAL_DIGITS} (bind a float to round it)",
            where,
        )


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def _data_error(message: str, where: _Where) -> Error:
    node, text, source = where if where is not None else (None, None, None)
    span = getattr(node, "span", None)
    return translate(gerr.DataError(message, span=span, text=text, source=source))


def _is_nat(value: Any) -> bool:
    """pandas' NaT is a datetime that means NULL."""
    return type(value).__name__ == "NaTType"


def bind_parameters(script: s.Script, parameters: Any) -> Any:
    """Check ``parameters`` against the script's placeholders; return what the binder takes.

    A sequence fills ``?`` in order (qmark style); a mapping fills ``:name``
    (named style).  Wrong counts and missing names are ProgrammingErrors that
    point at the placeholder.
    """
    found = list(iter_parameters(script.statements))
    qmarks = [p for p in found if p.name is None]
    named = [p for p in found if p.name is not None]
    text, source = script.text, script.source
    if parameters is None:
        if found:
            first = found[0]
            raise programming_error(
                f"the statement has {len(found)} parameter(s) but no values were given",
                first,
                text,
                source,
            )
        return None
    if isinstance(parameters, Mapping):
        if qmarks:
            raise programming_error(
                "the statement uses ? placeholders, so give the values as a sequence, not a mapping",
                qmarks[0],
                text,
                source,
            )
        values: dict[str, Any] = {}
        for p in named:
            assert p.name is not None
            if p.name not in parameters:
                raise programming_error(f"no value for parameter :{p.name}", p, text, source)
            values[p.name] = adapt_value(parameters[p.name], f":{p.name}", (p, text, source))
        return values
    if isinstance(parameters, (str, bytes)) or not isinstance(parameters, Sequence):
        raise programming_error(
            "parameters must be a sequence (for ?) or a mapping (for :name), "
            f"not a {type(parameters).__name__}"
        )
    if named:
        raise programming_error(
            f"the statement uses :{named[0].name}, so give the values as a mapping, not a sequence",
            named[0],
            text,
            source,
        )
    if len(parameters) != len(qmarks):
        # Point at the first placeholder without a value, or at the statement.
        where = (
            qmarks[len(parameters)]
            if len(parameters) < len(qmarks)
            else next(iter(script.statements), None)
        )
        raise programming_error(
            f"the statement has {len(qmarks)} ? placeholder(s) but {len(parameters)} "
            f"value(s) were given",
            where,
            text,
            source,
        )
    return [
        adapt_value(v, str(i + 1), (q, text, source))
        for i, (v, q) in enumerate(zip(parameters, qmarks, strict=True))
    ]


__all__ = ["Error", "adapt_value", "bind_parameters", "iter_parameters"]
