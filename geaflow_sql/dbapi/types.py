"""DB-API type objects, constructors and type codes (PEP 249).

A column's ``type_code`` in ``cursor.description`` is the GeaFlow type name
(``"BIGINT"``, ``"VARCHAR"``, ``"DECIMAL"``, ``"VERTEX"`` ...), a plain string
a tool can print.  The type objects compare equal to the codes of their
group, so ``description[0][1] == NUMBER`` works as PEP 249 asks.
"""

from __future__ import annotations

import datetime as _dt
import time as _time
from typing import Any

from geaflow_sql.core import types as T


class DBAPITypeObject:
    """Equal to every type code of one group (STRING, NUMBER, ...)."""

    def __init__(self, name: str, *codes: str) -> None:
        self.name = name
        self.codes = frozenset(codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DBAPITypeObject):
            return self.codes == other.codes
        return isinstance(other, str) and other.upper() in self.codes

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}>"


STRING = DBAPITypeObject("STRING", "VARCHAR")
BINARY = DBAPITypeObject("BINARY", "BINARY")
NUMBER = DBAPITypeObject(
    "NUMBER", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"
)
DATETIME = DBAPITypeObject("DATETIME", "DATE", "TIMESTAMP")
ROWID = DBAPITypeObject("ROWID")  # GeaFlow tables have no row ids
# Not in PEP 249, but drivers commonly add it and GeaFlow has the type.
BOOLEAN = DBAPITypeObject("BOOLEAN", "BOOLEAN")

Date = _dt.date
Time = _dt.time
Timestamp = _dt.datetime


def DateFromTicks(ticks: float) -> _dt.date:  # noqa: N802 - PEP 249 name
    return Date(*_time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> _dt.time:  # noqa: N802 - PEP 249 name
    return Time(*_time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> _dt.datetime:  # noqa: N802 - PEP 249 name
    return Timestamp(*_time.localtime(ticks)[:6])


def Binary(data: bytes | bytearray | memoryview | str) -> bytes:  # noqa: N802 - PEP 249 name
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def type_code(t: Any) -> str:
    """The DB-API type code of a GeaFlow type: its upper-case name."""
    if isinstance(t, T.StructType):
        return t.kind
    return str(getattr(t, "name", t)).upper()


def describe_column(name: str, t: Any) -> tuple[Any, ...]:
    """One ``cursor.description`` entry (name, type_code, display_size,
    internal_size, precision, scale, null_ok); unknown parts are None."""
    precision = getattr(t, "precision", None) if type_code(t) == "DECIMAL" else None
    scale = getattr(t, "scale", None) if type_code(t) == "DECIMAL" else None
    return (name, type_code(t), None, None, precision, scale, None)
