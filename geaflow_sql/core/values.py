"""GeaFlow's text for values: what Java's ``String.valueOf`` prints.

Sinks write values this way, and the conformance corpus compares with it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any


def java_double(x: float) -> str:
    """``Double.toString``: ``1.0``, ``0.5``, ``1.0E-4``, ``1.2345678E7``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    a = abs(x)
    if 1e-3 <= a < 1e7:
        text = repr(x)
        if "e" in text or "E" in text:
            text = f"{x:.17f}".rstrip("0")
        if "." not in text:
            text += ".0"
        if text.endswith("."):
            text += "0"
        return text
    mantissa, exponent = f"{x:.17e}".split("e")
    # Shortest digits that round-trip, as Java prints them.
    digits = repr(a)
    if "e" in digits:
        m, e = digits.split("e")
        mantissa, exp_val = m, int(e)
    else:
        exp_val = int(exponent)
        sig = digits.replace(".", "").lstrip("0").rstrip("0") or "0"
        mantissa = sig[0] + "." + (sig[1:] or "0")
    if "." not in mantissa:
        mantissa += ".0"
    sign = "-" if x < 0 else ""
    return f"{sign}{mantissa.lstrip('-')}E{exp_val}"


def value_text(v: Any, null: str = "null") -> str:
    if v is None:
        return null
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        frac = f"{v.microsecond:06d}".rstrip("0") or "0"
        return v.strftime("%Y-%m-%d %H:%M:%S") + "." + frac
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={value_text(x, null)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value_text(x, null) for x in v) + "]"
    if isinstance(v, bytes):
        return v.hex()
    return str(v)
