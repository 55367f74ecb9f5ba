"""Printing query results: aligned tables, CSV and JSON, with GeaFlow's value text
(``core.values``)."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .core.values import value_text

if TYPE_CHECKING:
    from runtime.streaming.progress import WindowReport


def format_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int | None = None
) -> str:
    """An aligned text table (numbers right-aligned), like psql and the DuckDB CLI."""
    texts = [[value_text(v, "NULL") for v in r] for r in rows]
    widths = [len(c) for c in columns]
    for r in texts:
        widths = [max(w, len(t)) for w, t in zip(widths, r, strict=False)]
    if max_width:
        budget = max(8, (max_width - 3 * len(widths) - 1) // max(1, len(widths)))
        widths = [min(w, max(budget, len(c))) for w, c in zip(widths, columns, strict=True)]
    numeric = [
        bool(rows)
        and all(
            isinstance(r[i], (int, float, decimal.Decimal))
            and not isinstance(r[i], bool)
            or r[i] is None
            for r in rows
        )
        for i in range(len(columns))
    ]

    def cell(t: str, w: int, right: bool) -> str:
        if len(t) > w:
            t = t[: max(1, w - 1)] + "…"
        return t.rjust(w) if right else t.ljust(w)

    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [
        sep,
        "| " + " | ".join(cell(c, w, False) for c, w in zip(columns, widths, strict=True)) + " |",
        sep,
    ]
    for r in texts:
        lines.append(
            "| "
            + " | ".join(cell(t, w, n) for t, w, n in zip(r, widths, numeric, strict=True))
            + " |"
        )
    lines.append(sep)
    count = len(rows)
    lines.append(f"({count} row{'s' if count != 1 else ''})")
    return "\n".join(lines)


def format_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else value_text(v) for v in r])
    return buf.getvalue().rstrip("\n")


def format_json(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, (dt.date, dt.datetime, decimal.Decimal, bytes)):
            return value_text(v)
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return value_text(v)
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    return "\n".join(
        json.dumps(dict(zip(columns, [plain(v) for v in r], strict=True)), ensure_ascii=False)
        for r in rows
    )


def format_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    mode: str = "table",
    max_width: int | None = None,
) -> str:
    if mode == "csv":
        return format_csv(columns, rows)
    if mode == "json":
        return format_json(columns, rows)
    return format_table(columns, rows, max_width)


def describe_window(report: WindowReport) -> str:
    """One line about a finished window, as ``geaflow-sql -f`` prints it."""
    rows_in = "? rows in" if report.rows_in is None else f"{report.rows_in:,} rows in"
    rows_out = "? rows out" if report.rows_out is None else f"{report.rows_out:,} rows out"
    saved = ", checkpointed" if report.checkpointed else ""
    return f"window {report.window + 1}: {rows_in}, {rows_out}, {report.seconds:.2f} s{saved}"
