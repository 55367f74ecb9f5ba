"""GeaFlow's text format: one row per line, fields joined by a separator.

Reading trims each field and converts it to the column's type; an empty field
of a non-string column is null.  A field that cannot be converted makes the
row *bad*: by default the read fails naming the file and line, or (with
``geaflow.dsl.file.bad.rows = 'skip'`` or ``geaflow.dsl.ignore.exception =
true``) the row is skipped and counted.

Writing prints each field as Java's ``String.valueOf`` would (``null``,
``true``, ``1.0E-4``...), which Spark's casts to string already do for
numbers; timestamps get Java's ``.S`` fraction.
"""

from __future__ import annotations

import re
from typing import Any

from geaflow_sql.core import types as T

_REGEX_META = ".$|()[]{}^?*+\\"


def separator_regex(sep: str) -> str:
    """A Java regex matching ``sep`` literally (Spark's split takes a regex).

    A one-character separator is written as itself (or backslash + itself)
    so Java's ``String.split`` takes its fast path with no regex engine.
    """
    if not sep:
        return ","
    if len(sep) == 1:
        return "\\" + sep if sep in _REGEX_META else sep
    if "\\E" in sep:
        return re.escape(sep)
    return "\\Q" + sep + "\\E"


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def field_parser(field: str, t: Any) -> tuple[str, str]:
    """(parsed value, is-bad flag) as Spark SQL text, for the SQL expression
    ``field`` (a trimmed text field) read as type ``t``.

    SQL text, not Column objects: a table scan's whole projection is then
    handed to Spark in one call instead of a py4j round trip per function.
    """
    empty = f"({field} IS NULL OR {field} = '')"
    if t.is_string:
        return field, "false"
    if t.name == "TIMESTAMP":
        parsed = (
            f"CASE WHEN {empty} THEN CAST(NULL AS TIMESTAMP) "
            f"WHEN {field} RLIKE '^-?[0-9]+$' THEN timestamp_millis(CAST({field} AS BIGINT)) "
            f"ELSE CAST({field} AS TIMESTAMP) END"
        )
    elif t.name == "BOOLEAN":
        parsed = f"CASE WHEN lower({field}) = 'true' THEN true WHEN lower({field}) = 'false' THEN false END"
    elif t.name == "DATE":
        parsed = f"CASE WHEN {empty} THEN CAST(NULL AS DATE) ELSE to_date({field}) END"
    elif t.is_integer:
        # Java's Long.parseLong accepts no decimals; Spark's cast would truncate
        # "1.5" (and accepts nothing else Java rejects), so a '.' makes it bad.
        parsed = (
            f"CASE WHEN NOT contains({field}, '.') THEN CAST({field} AS {T.spark_sql_type(t)}) END"
        )
    else:
        parsed = f"CASE WHEN NOT {empty} THEN CAST({field} AS {T.spark_sql_type(t)}) END"
    bad = f"(NOT {empty} AND ({parsed}) IS NULL AND lower({field}) != 'null')"
    return parsed, bad


def format_sql(field: str, t: Any) -> str:
    """Spark SQL text printing the SQL expression ``field`` of type ``t`` as
    GeaFlow's file sink does."""
    if isinstance(t, T.StructType):
        text = f"CAST({field} AS STRING)"
    elif t.name == "TIMESTAMP":
        frac = f"regexp_replace(date_format({field}, 'SSSSSS'), '0+$', '')"
        text = (
            f"concat(date_format({field}, 'yyyy-MM-dd HH:mm:ss'), '.', "
            f"CASE WHEN {frac} = '' THEN '0' ELSE {frac} END)"
        )
    elif t.is_string:
        text = field
    else:
        text = f"CAST({field} AS STRING)"
    return f"CASE WHEN {field} IS NULL THEN 'null' ELSE {text} END"


def line_sql(types: list[Any], sep: str) -> str:
    """Spark SQL text of a sink's line: columns ``c0``..``cN`` of ``types``
    printed by ``format_sql`` and joined by ``sep``.  (One SQL text: a
    Column per function would be a py4j round trip each.)"""
    if not types:
        return "''"
    fields = ", ".join(format_sql(f"`c{i}`", t) for i, t in enumerate(types))
    return f"concat_ws({sql_string(sep)}, {fields})"


def prints_on_driver(t: Any, numbers: Any = None) -> bool:
    """Does the driver print values of ``t`` exactly as ``format_sql`` does?

    Integers, strings, booleans and dates; doubles and floats too when given
    ``numbers``, the JVM's own printer (``spark_adapter.jvm_number_printer``):
    Spark prints them with the JVM's ``Double.toString``, whose digits are not
    always the shortest ones (``1.9999999999999998E23`` for 2e23 on Java 17),
    so nothing but the JVM prints them the same.  Not timestamps, decimals or
    structs."""
    if isinstance(t, T.StructType):
        return False
    if t.is_approx:
        return numbers is not None
    return bool(t.is_integer or t.is_string or t.name in ("BOOLEAN", "DATE"))


def driver_prints(spark: Any, types: list[Any]) -> tuple[bool, Any]:
    """(does the driver print every column of ``types`` as Spark does, the
    JVM number printer ``driver_lines`` then needs, or None when no column
    is floating point)."""
    from runtime.spark_adapter import jvm_number_printer

    numbers = jvm_number_printer(spark) if any(t.is_approx for t in types) else None
    return all(prints_on_driver(t, numbers) for t in types), numbers


def driver_lines(rows: Any, types: list[Any], sep: str, numbers: Any = None) -> list[str]:
    """Arrow rows as the text sink's lines (types ``prints_on_driver`` with
    the same ``numbers``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not types:
        return [""] * rows.num_rows
    texts = []
    for column, t in zip(rows.columns, types, strict=True):
        if t.name == "BOOLEAN":
            text = pc.if_else(column, "true", "false")
        elif t.is_approx:
            values = pc.fill_null(column, 0).to_numpy()
            printed = pa.array(numbers(values), pa.string())
            text = pc.if_else(pc.is_null(column), pa.scalar(None, pa.string()), printed)
        else:
            text = column.cast(pa.string())
        texts.append(pc.fill_null(text, "null"))
    if len(texts) == 1:
        return texts[0].to_pylist()
    return pc.binary_join_element_wise(*texts, sep).to_pylist()


_UNNUMBERED = re.compile(
    r"in (?P<file>\S+) line \?: (?P<what>cannot read .*? from |the line has .*? has \d+: )(?P<line>.*)$",
    re.S,
)


def locate_bad_line(message: str) -> str:
    """Fill in the line number of a bad row read without numbers (local files only)."""
    m = _UNNUMBERED.search(message)
    if m is None:
        return message
    path = m.group("file")
    path = path[len("file:") :] if path.startswith("file:") else path
    path = re.sub(r"^/+", "/", path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, start=1):
                if text.rstrip("\r\n") == m.group("line"):
                    return message.replace(" line ?: ", f" line {number}: ", 1)
    except OSError:
        pass
    return message


def observed_bad_rows(observation: Any, timeout: float = 10.0) -> int:
    """The bad-row count an Observation gathered, once its action has run.

    Spark posts observed metrics from its listener bus just after the action;
    if it optimized the scan away (nothing read) none arrive, so wait a bounded
    time and count 0 rather than block forever.
    """
    import threading

    box: list[Any] = []

    def read() -> None:
        try:
            box.append(observation.get)
        except Exception:  # no metrics for a plan Spark never ran
            box.append({})

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not box:
        return 0
    return int(box[0].get("bad_rows") or 0)
