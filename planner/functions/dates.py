"""Built-in date functions (GeaFlow's date UDFs).

GeaFlow's date functions take text and pick the format by its length: up to 10
characters is ``yyyy-MM-dd``, longer is ``yyyy-MM-dd HH:mm:ss`` (and for
``unix_timestamp`` longer than 19 adds ``.SSSSSS``).  Most *return text*, not
DATE/TIMESTAMP values, and several differ from Spark's functions of the same
name:

* ``date_add``/``date_sub``/``add_months`` return ``yyyy-MM-dd`` text (with the
  time for a TIMESTAMP argument); Spark returns a DATE.
* ``date_diff`` counts whole 24-hour periods between the two instants,
  truncated toward zero (Spark's ``datediff`` counts calendar days).
* ``weekday`` is 1 (Monday) .. 7 (Sunday); Spark's is 0 .. 6.
* ``lastday`` returns ``yyyy-MM-dd 00:00:00`` text; ``date_trunc`` returns text.
* ``unix_timestamp(NULL)`` is the current time, like ``unix_timestamp()``.
* ``isdate`` is false (not null) for a null argument.
* ``hour`` is the 24-hour clock for every argument type.  (GeaFlow's reads
  ``Calendar.HOUR`` for TIMESTAMP values, giving 3 for 15:00 — a defect we do
  not copy: no user expects it and the conformance corpus does not rely on it.)

Text that does not parse gives null here (GeaFlow fails the job).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ValidationError

from ..dialect import template
from .helpers import const_string, fixed, keep_dates_else_string, scalar, string

_INT = fixed(T.INTEGER)
_STR = fixed(T.VARCHAR)
_BIGINT = fixed(T.BIGINT)
DATETIME = "yyyy-MM-dd HH:mm:ss"

# Lenient field widths, as Joda parses 'yyyy-MM-dd' ("2017-9-5" reads too).
_DATE_PARSE = "y-M-d"
_DATETIME_PARSE = "y-M-d H:m:s"


def as_timestamp(e: exp.Expression, t: Any) -> exp.Expression:
    """A Spark TIMESTAMP for a date argument, reading text as GeaFlow does."""
    if t.name == "TIMESTAMP":
        return e
    if t.name == "DATE":
        return template("CAST({0} AS TIMESTAMP)", e)
    return template(
        f"IF(char_length({{0}}) <= 10, to_timestamp({{0}}, '{_DATE_PARSE}'), "
        f"to_timestamp({{0}}, '{_DATETIME_PARSE}'))",
        e,
    )


def _as_time_of_day(e: exp.Expression, t: Any) -> exp.Expression:
    """hour/minute/second also read ``HH:mm:ss`` text (GeaFlow's second format)."""
    if t.name in ("TIMESTAMP", "DATE"):
        return as_timestamp(e, t)
    return template(
        f"coalesce(to_timestamp({{0}}, '{_DATETIME_PARSE}'), to_timestamp({{0}}, 'H:m:s'))", e
    )


def _field(spark_name: str, time_of_day: bool = False):  # type: ignore[no-untyped-def]
    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        ts = _as_time_of_day(args[0], types[0]) if time_of_day else as_timestamp(args[0], types[0])
        return template(f"{spark_name}({{0}})", ts)

    return build


def _hour(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    if types[0].name == "TIMESTAMP":
        return template("hour({0})", args[0])
    return template("hour({0})", _as_time_of_day(args[0], types[0]))


def _weekday(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Joda's getDayOfWeek: Monday = 1 .. Sunday = 7 (Spark's weekday is 0-based).
    return template("weekday({0}) + 1", as_timestamp(args[0], types[0]))


def _output_format(types: list[Any], arg: exp.Expression) -> exp.Expression:
    """The format GeaFlow prints a shifted date in: that of its input text."""
    if types[0].name == "TIMESTAMP":
        return string(DATETIME)
    if types[0].name == "DATE":
        return string("yyyy-MM-dd")
    return template(f"IF(char_length({{0}}) <= 10, 'yyyy-MM-dd', '{DATETIME}')", arg)


def _date_add(sign: int):  # type: ignore[no-untyped-def]
    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        ts = as_timestamp(args[0], types[0])
        days = args[1] if sign > 0 else template("-{0}", args[1])
        # The day shift keeps the time of day; text input prints only the date.
        fmt = string(DATETIME) if types[0].name == "TIMESTAMP" else string("yyyy-MM-dd")
        return template("date_format(timestampadd(DAY, {1}, {0}), {2})", ts, days, fmt)

    return build


def _add_months(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    ts = as_timestamp(args[0], types[0])
    return template(
        "date_format(timestampadd(MONTH, {1}, {0}), {2})",
        ts,
        args[1],
        _output_format(types, args[0]),
    )


def _date_diff(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # (millis1 - millis2) / 86400000 with Java's truncating division.
    return template(
        "CAST((unix_millis({0}) - unix_millis({1})) DIV 86400000 AS INT)",
        as_timestamp(args[0], types[0]),
        as_timestamp(args[1], types[1]),
    )


def _from_format(text: exp.Expression) -> exp.Expression:
    # date_format's default input format: seconds, or microseconds after the
    # separator found at position 19 of the text.
    return template(
        f"IF(char_length({{0}}) > 19, concat('{DATETIME}', substring({{0}}, 20, 1), 'SSSSSS'), '{DATETIME}')",
        text,
    )


def _date_format(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow goes through whole unix seconds: parse with the input format, print with the output one.
    if types[0].name in ("TIMESTAMP", "DATE"):
        to = args[1] if len(args) > 1 else string(DATETIME)
        return template("from_unixtime(unix_timestamp({0}), {1})", args[0], to)
    if len(args) == 3:
        return template("from_unixtime(unix_timestamp({0}, {1}), {2})", *args)
    to = args[1] if len(args) == 2 else string(DATETIME)
    return template(
        "from_unixtime(unix_timestamp({0}, {1}), {2})", args[0], _from_format(args[0]), to
    )


_PARTS = {
    "yyyy": "year",
    "year": "year",
    "mm": "month",
    "mon": "month",
    "month": "month",
    "dd": "day",
    "day": "day",
    "hh": "hour",
    "hour": "hour",
    "mi": "minute",
    "minute": "minute",
    "ss": "second",
    "second": "second",
}


def _part_unit(part: exp.Expression) -> str | None:
    text = const_string(part)
    if text is None:
        return None
    unit = _PARTS.get(text.lower())
    if unit is None:
        raise ValidationError(
            f"unknown date part {text!r} (one of: {', '.join(sorted(set(_PARTS)))})"
        )
    return unit


def _date_trunc(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    ts = as_timestamp(args[0], types[0])
    unit = _part_unit(args[1])
    if unit is None:
        unit_expr: exp.Expression = template("lower({0})", args[1])
        return template(
            "date_format(date_trunc(CASE {1} "
            + " ".join(f"WHEN '{k}' THEN '{u}'" for k, u in _PARTS.items())
            + f" END, {{0}}), '{DATETIME}')",
            ts,
            unit_expr,
        )
    return template(f"date_format(date_trunc('{unit}', {{0}}), '{DATETIME}')", ts)


def _date_part_dynamic(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    ts = as_timestamp(args[0], types[0])
    branches = " ".join(f"WHEN '{k}' THEN {u}({{0}})" for k, u in _PARTS.items())
    return template(f"CASE lower({{1}}) {branches} END", ts, args[1])


def _date_part_any(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    if const_string(args[1]) is not None:
        unit = _part_unit(args[1])
        return template(f"{unit}({{0}})", as_timestamp(args[0], types[0]))
    return _date_part_dynamic(args, types)


def _from_unixtime(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    fmt = args[1] if len(args) > 1 else string(DATETIME)
    return template("from_unixtime(CAST({0} AS BIGINT), {1})", args[0], fmt)


def _from_unixtime_millis(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    fmt = args[1] if len(args) > 1 else string("yyyy-MM-dd HH:mm:ss.SSS")
    return template("date_format(timestamp_millis(CAST({0} AS BIGINT)), {1})", args[0], fmt)


def _parse_by_length(text: exp.Expression) -> exp.Expression:
    return template(
        "CASE WHEN char_length({0}) <= 10 THEN to_timestamp({0}, 'y-M-d') "
        "WHEN char_length({0}) <= 19 THEN to_timestamp({0}, 'y-M-d H:m:s') "
        "ELSE to_timestamp({0}, 'y-M-d H:m:s.SSSSSS') END",
        text,
    )


def _unix_time(millis: bool):  # type: ignore[no-untyped-def]
    now = "unix_millis(current_timestamp())" if millis else "unix_timestamp()"
    of = "unix_millis" if millis else "unix_seconds"

    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        if not args:
            return template(now)
        if types[0].name in ("TIMESTAMP", "DATE"):
            return template(f"{of}({{0}})", as_timestamp(args[0], types[0]))
        if len(args) == 1:
            # A null argument means "now" (GeaFlow falls back to the no-argument form).
            return template(
                f"IF({{0}} IS NULL, {now}, {of}({{1}}))", args[0], _parse_by_length(args[0])
            )
        return template(f"{of}(to_timestamp({{0}}, {{1}}))", args[0], args[1])

    return build


def _isdate(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    fmt = args[1] if len(args) > 1 else string(DATETIME)
    return template(
        "IF({0} IS NULL OR {1} IS NULL, false, to_timestamp({0}, {1}) IS NOT NULL)", args[0], fmt
    )


def _now(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    if not args:
        return template("unix_timestamp()")
    return template("unix_timestamp() + {0}", args[0])


def _lastday(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return template(
        "concat(date_format(last_day({0}), 'yyyy-MM-dd'), ' 00:00:00')",
        as_timestamp(args[0], types[0]),
    )


_DATE_ARG = keep_dates_else_string


def _year(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow's Year alone also takes a BIGINT: epoch milliseconds (eval(Long)).
    if types[0].name in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT"):
        return template("year(timestamp_millis({0}))", args[0])
    return template("year({0})", as_timestamp(args[0], types[0]))


def _year_args(args: list[Any]) -> list[Any]:
    if args and args[0].name in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT"):
        return [T.BIGINT]
    return keep_dates_else_string(args)


# GeaFlow registers its Year class as `_year`; `year` is kept as the usual name.
scalar("year", 1, 1, _INT, _year, "_year", arg_types=_year_args)
scalar("month", 1, 1, _INT, _field("month"), arg_types=_DATE_ARG)
scalar("day", 1, 1, _INT, _field("day"), "dayofmonth", "day_of_month", arg_types=_DATE_ARG)
scalar("hour", 1, 1, _INT, _hour, arg_types=_DATE_ARG)
scalar("minute", 1, 1, _INT, _field("minute", True), arg_types=_DATE_ARG)
scalar("second", 1, 1, _INT, _field("second", True), arg_types=_DATE_ARG)
scalar("quarter", 1, 1, _INT, _field("quarter"), arg_types=_DATE_ARG)
scalar("day_of_year", 1, 1, _INT, _field("dayofyear"), "dayofyear", arg_types=_DATE_ARG)
scalar("week_of_year", 1, 1, _INT, _field("weekofyear"), "weekofyear", arg_types=_DATE_ARG)
scalar("weekday", 1, 1, _INT, _weekday, arg_types=_DATE_ARG)
scalar("date_add", 2, 2, _STR, _date_add(1), arg_types=lambda a: [*_DATE_ARG(a[:1]), T.INTEGER])
scalar("date_sub", 2, 2, _STR, _date_add(-1), arg_types=lambda a: [*_DATE_ARG(a[:1]), T.INTEGER])
scalar("add_months", 2, 2, _STR, _add_months, arg_types=lambda a: [*_DATE_ARG(a[:1]), T.INTEGER])
scalar(
    "date_diff",
    2,
    2,
    _INT,
    _date_diff,
    "datediff",
    arg_types=lambda a: [*_DATE_ARG(a[:1]), *_DATE_ARG(a[1:2])],
)
scalar(
    "date_format",
    1,
    3,
    _STR,
    _date_format,
    arg_types=lambda a: [*_DATE_ARG(a[:1]), *[T.VARCHAR] * (len(a) - 1)],
)
scalar("date_part", 2, 2, _INT, _date_part_any, arg_types=lambda a: [*_DATE_ARG(a[:1]), T.VARCHAR])
scalar("date_trunc", 2, 2, _STR, _date_trunc, arg_types=lambda a: [*_DATE_ARG(a[:1]), T.VARCHAR])
scalar("from_unixtime", 1, 2, _STR, _from_unixtime, arg_types=lambda a: [None, T.VARCHAR][: len(a)])
scalar(
    "from_unixtime_millis",
    1,
    2,
    _STR,
    _from_unixtime_millis,
    arg_types=lambda a: [None, T.VARCHAR][: len(a)],
)
scalar(
    "unix_timestamp",
    0,
    2,
    _BIGINT,
    _unix_time(False),
    arg_types=lambda a: [*_DATE_ARG(a[:1]), *[T.VARCHAR] * (len(a) - 1)],
)
scalar(
    "unix_timestamp_millis",
    0,
    2,
    _BIGINT,
    _unix_time(True),
    arg_types=lambda a: [*_DATE_ARG(a[:1]), *[T.VARCHAR] * (len(a) - 1)],
)
scalar("isdate", 1, 2, fixed(T.BOOLEAN), _isdate, arg_types=lambda a: [T.VARCHAR] * len(a))
scalar("now", 0, 1, _BIGINT, _now, arg_types=lambda a: [T.BIGINT] * len(a))
scalar("lastday", 1, 1, _STR, _lastday, "last_day", arg_types=_DATE_ARG)
scalar("current_timestamp", 0, 0, fixed(T.TIMESTAMP), "current_timestamp", "localtimestamp")
scalar("current_date", 0, 0, fixed(T.DATE), "current_date")
