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

from grammar import syntax as s

from .exceptions import Error, programming_error

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


def adapt_value(value: Any, label: str) -> Any:
    """``value`` as one of the types the binder binds, or a ProgrammingError."""
    if type(value) in _NATIVE or isinstance(value, (dt.date, decimal.Decimal)):
        return None if _is_nat(value) else value
    module = type(value).__module__
    item = getattr(value, "item", None)
    if callable(item) and module.startswith("numpy"):  # numpy scalars: np.int64, np.float32 ...
        return adapt_value(item(), label)
    # Subclasses (IntEnum, np.float64 is a float, str subclasses) bind as their base value.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
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
            values[p.name] = adapt_value(parameters[p.name], f":{p.name}")
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
    return [adapt_value(v, str(i + 1)) for i, v in enumerate(parameters)]


__all__ = ["Error", "adapt_value", "bind_parameters", "iter_parameters"]
