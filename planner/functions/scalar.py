"""Built-in scalar functions: GeaFlow name -> arity, result type, Spark form.

Most rows are data: the Spark function of the same meaning.  Builders handle
the places where GeaFlow (Java) and Spark differ; each such difference has a
test in ``tests/test_functions_semantics.py``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql import types as T

from ..dialect import template
from .registry import ScalarSpec, register_scalar

# ---------------------------------------------------------------------------
# Type rules
# ---------------------------------------------------------------------------


def fixed(t: Any):  # type: ignore[no-untyped-def]
    return lambda args: t


def same_as(i: int):  # type: ignore[no-untyped-def]
    def rule(args: list[Any]) -> Any:
        t = args[i] if i < len(args) else T.ANY
        return T.INTEGER if t.name == "NULL" else t

    return rule


def numeric_result(args: list[Any]) -> Any:
    t = args[0] if args else T.DOUBLE
    return t if t.is_numeric else T.DOUBLE


def widest(args: list[Any]) -> Any:
    out = T.NULL
    for a in args:
        c = T.common_type(out, a)
        out = c if c is not None else out
    return T.VARCHAR if out.name == "NULL" else out


def all_double(args: list[Any]) -> list[Any | None]:
    return [T.DOUBLE for _ in args]


def all_string(args: list[Any]) -> list[Any | None]:
    return [T.VARCHAR for _ in args]


def string_then_ints(args: list[Any]) -> list[Any | None]:
    return [T.VARCHAR] + [T.INTEGER for _ in args[1:]]


def anon(name: str, args: list[exp.Expression]) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=args)


def num(value: Any) -> exp.Expression:
    return exp.Literal.number(value)


def string(value: str) -> exp.Expression:
    return exp.Literal.string(value)


def cast(e: exp.Expression, spark_type: str) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build(spark_type, dialect="spark"))


# ---------------------------------------------------------------------------
# Builders for GeaFlow semantics
# ---------------------------------------------------------------------------


def _substr(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow's substr is 1-based like Spark's; a start of 0 behaves like 1 in both.
    return anon("substring", args)


def _split_ex(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # split_ex(str, separator, index): the index-th piece (0-based), null when
    # out of range.  The separator is literal text, not a regular expression.
    text, sep, index = args
    # \Q...\E makes the separator literal inside Java's regular expressions.
    return template(
        r"try_element_at(split(CAST({0} AS STRING), concat('\\Q', {1}, '\\E')), {2} + 1)",
        text,
        sep,
        index,
    )


def _concat(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow's concat skips null arguments (Spark's returns null).
    return anon("concat_ws", [string(""), *[cast(a, "STRING") for a in args]])


def _concat_ws(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return anon("concat_ws", [args[0], *[cast(a, "STRING") for a in args[1:]]])


def _hash(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # GeaFlow returns Math.abs(value.hashCode()).  Its strings hash with the
    # same Murmur3 (seed 42) over UTF-8 bytes as Spark's hash(); Java integers
    # hash to themselves, longs to (int)(v ^ v >>> 32), booleans to 1231/1237.
    t = types[0]
    if t.name in ("INTEGER", "SMALLINT", "TINYINT"):
        return template("abs(CAST({0} AS INT))", args[0])
    if t.name == "BIGINT":
        return template("abs(CAST(({0} ^ shiftrightunsigned({0}, 32)) AS INT))", args[0])
    if t.name == "BOOLEAN":
        return template("IF({0} IS NULL, NULL, IF({0}, 1231, 1237))", args[0])
    return template("IF({0} IS NULL, NULL, abs(hash(CAST({0} AS STRING))))", args[0])


def _is_decimal(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # True when the text is an optionally signed decimal number.
    return exp.RegexpLike(
        this=cast(args[0], "STRING"),
        expression=string(r"^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$"),
    )


def _sign(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return cast(anon("signum", [cast(args[0], "DOUBLE")]), "DOUBLE")


def _trunc(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    value = args[0]
    scale = args[1] if len(args) > 1 else num(0)
    t = types[0]
    if t.is_integer and len(args) == 1:
        return value
    # Truncate toward zero at the given number of decimals.
    factor = anon("pow", [num(10), scale])
    truncated = exp.Div(
        this=anon(
            "if",
            [
                exp.GTE(this=value, expression=num(0)),
                anon("floor", [exp.Mul(this=cast(value, "DOUBLE"), expression=factor)]),
                anon("ceil", [exp.Mul(this=cast(value, "DOUBLE"), expression=factor)]),
            ],
        ),
        expression=factor,
    )
    return cast(truncated, "DOUBLE")


def _trunc_type(args: list[Any]) -> Any:
    if len(args) == 1 and args[0].is_integer:
        return args[0]
    return T.DOUBLE


def _round(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Java's Math.round / BigDecimal HALF_UP, the same as Spark's round.
    return anon("round", args)


def _rand_integer(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    bound = args[-1]
    seed = args[0] if len(args) == 2 else None
    r = anon("rand", [seed] if seed is not None else [])
    return cast(anon("floor", [exp.Mul(this=r, expression=bound)]), "INT")


def _date_part(name: str):  # type: ignore[no-untyped-def]
    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        return anon(name, [anon("to_timestamp", [cast(args[0], "STRING")])])

    return build


def _rounding(name: str, args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Calcite keeps the argument's type (CEIL(DOUBLE) is DOUBLE); Spark returns BIGINT.
    t = numeric_result(types)
    if t.is_integer:
        return args[0]
    return cast(anon(name, args), T.spark_sql_type(t))


def _pi(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return anon("pi", [])


def _cot(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return exp.Div(this=num("1.0D"), expression=anon("tan", [args[0]]))


def _if(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return exp.If(this=args[0], true=args[1], false=args[2])


def _get_json_object(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return anon("get_json_object", args)


def _length(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return anon("char_length", [cast(args[0], "STRING")])


def _simple(name: str, n_min: int, n_max: int | None, result: Any, spark: str, *aliases: str,
            arg_types: Any = None) -> None:
    register_scalar(ScalarSpec(name, n_min, n_max, result, spark, arg_types), *aliases)


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

# Math
_simple("abs", 1, 1, numeric_result, "abs")
_simple("acos", 1, 1, fixed(T.DOUBLE), "acos", arg_types=all_double)
_simple("asin", 1, 1, fixed(T.DOUBLE), "asin", arg_types=all_double)
_simple("atan", 1, 1, fixed(T.DOUBLE), "atan", arg_types=all_double)
_simple("cbrt", 1, 1, fixed(T.DOUBLE), "cbrt", arg_types=all_double)
register_scalar(ScalarSpec("ceil", 1, 1, numeric_result, lambda a, t: _rounding("ceil", a, t)), "ceiling")
_simple("cos", 1, 1, fixed(T.DOUBLE), "cos", arg_types=all_double)
_simple("degrees", 1, 1, fixed(T.DOUBLE), "degrees", arg_types=all_double)
_simple("exp", 1, 1, fixed(T.DOUBLE), "exp", arg_types=all_double)
register_scalar(ScalarSpec("floor", 1, 1, numeric_result, lambda a, t: _rounding("floor", a, t)))
_simple("ln", 1, 1, fixed(T.DOUBLE), "ln", arg_types=all_double)
_simple("log10", 1, 1, fixed(T.DOUBLE), "log10", arg_types=all_double)
_simple("log2", 1, 1, fixed(T.DOUBLE), "log2", arg_types=all_double)
_simple("power", 2, 2, fixed(T.DOUBLE), "power", "pow", arg_types=all_double)
_simple("radians", 1, 1, fixed(T.DOUBLE), "radians", arg_types=all_double)
_simple("sin", 1, 1, fixed(T.DOUBLE), "sin", arg_types=all_double)
_simple("sqrt", 1, 1, fixed(T.DOUBLE), "sqrt", arg_types=all_double)
_simple("tan", 1, 1, fixed(T.DOUBLE), "tan", arg_types=all_double)
_simple("rand", 0, 1, fixed(T.DOUBLE), "rand")
register_scalar(ScalarSpec("pi", 0, 0, fixed(T.DOUBLE), _pi))
register_scalar(ScalarSpec("cot", 1, 1, fixed(T.DOUBLE), _cot, all_double))
register_scalar(ScalarSpec("sign", 1, 1, fixed(T.DOUBLE), _sign))
register_scalar(ScalarSpec("trunc", 1, 2, _trunc_type, _trunc))
register_scalar(ScalarSpec("round", 1, 2, same_as(0), _round))
register_scalar(ScalarSpec("rand_integer", 1, 2, fixed(T.INTEGER), _rand_integer))

# Strings
register_scalar(ScalarSpec("concat", 1, None, fixed(T.VARCHAR), _concat))
register_scalar(ScalarSpec("concat_ws", 2, None, fixed(T.VARCHAR), _concat_ws))
register_scalar(ScalarSpec("hash", 1, 1, fixed(T.INTEGER), _hash))
register_scalar(ScalarSpec("is_decimal", 1, 1, fixed(T.BOOLEAN), _is_decimal))
register_scalar(ScalarSpec("split_ex", 3, 3, fixed(T.VARCHAR), _split_ex))
register_scalar(
    ScalarSpec("substr", 2, 3, fixed(T.VARCHAR), _substr, string_then_ints), "substring"
)
register_scalar(
    ScalarSpec("length", 1, 1, fixed(T.INTEGER), _length),
    "char_length",
    "character_length",
)
register_scalar(ScalarSpec("get_json_object", 2, 2, fixed(T.VARCHAR), _get_json_object, all_string))
_simple("lower", 1, 1, fixed(T.VARCHAR), "lower", arg_types=all_string)
_simple("upper", 1, 1, fixed(T.VARCHAR), "upper", arg_types=all_string)
_simple("trim", 1, 1, fixed(T.VARCHAR), "trim", arg_types=all_string)
_simple("ltrim", 1, 1, fixed(T.VARCHAR), "ltrim", arg_types=all_string)
_simple("rtrim", 1, 1, fixed(T.VARCHAR), "rtrim", arg_types=all_string)
_simple("reverse", 1, 1, fixed(T.VARCHAR), "reverse", arg_types=all_string)
_simple("replace", 3, 3, fixed(T.VARCHAR), "replace", arg_types=all_string)
_simple("repeat", 2, 2, fixed(T.VARCHAR), "repeat", arg_types=lambda a: [T.VARCHAR, T.INTEGER])
_simple("ascii", 1, 1, fixed(T.INTEGER), "ascii", arg_types=all_string)
_simple("instr", 2, 2, fixed(T.INTEGER), "instr", arg_types=all_string)
_simple("regexp_replace", 3, 3, fixed(T.VARCHAR), "regexp_replace", arg_types=all_string)
_simple("regexp_extract", 2, 3, fixed(T.VARCHAR), "regexp_extract")

# Dates
register_scalar(ScalarSpec("year", 1, 1, fixed(T.INTEGER), _date_part("year")))
register_scalar(ScalarSpec("month", 1, 1, fixed(T.INTEGER), _date_part("month")))
register_scalar(ScalarSpec("day", 1, 1, fixed(T.INTEGER), _date_part("day")), "dayofmonth")
register_scalar(ScalarSpec("hour", 1, 1, fixed(T.INTEGER), _date_part("hour")))
register_scalar(ScalarSpec("minute", 1, 1, fixed(T.INTEGER), _date_part("minute")))
register_scalar(ScalarSpec("second", 1, 1, fixed(T.INTEGER), _date_part("second")))
register_scalar(ScalarSpec("quarter", 1, 1, fixed(T.INTEGER), _date_part("quarter")))
register_scalar(
    ScalarSpec("day_of_year", 1, 1, fixed(T.INTEGER), _date_part("dayofyear")), "dayofyear"
)

# Conditions
register_scalar(ScalarSpec("if", 3, 3, lambda a: widest(a[1:]), _if))
_simple("coalesce", 1, None, widest, "coalesce")
_simple("nvl", 2, 2, widest, "nvl")
