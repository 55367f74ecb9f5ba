"""A query's rows as JSON values.

Numbers, strings, booleans and NULL are JSON's own; a vertex, an edge or
another struct is an object of its fields, an array a list.  What JSON has
no form for is written as text the way SQL prints it: dates and timestamps
in ISO form, decimals exactly, floats that are not finite as ``NaN``,
``Infinity`` and ``-Infinity``, and binary values in hexadecimal.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

from runtime.results import python_values


def json_rows(table: Any, zone: str | None = None) -> list[list[Any]]:
    """The rows of the Arrow ``table`` as lists of JSON values; timestamps
    in the wall-clock time of ``zone`` (as the query's statement saw it)."""
    columns = [[json_value(v) for v in python_values(c, zone)] for c in table.columns]
    return [list(row) for row in zip(*columns, strict=True)]


def json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        # (a map comes from Arrow as a list of (key, value) pairs)
        return [json_value(v) for v in value]
    return str(value)
