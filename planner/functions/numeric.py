"""Built-in math functions (Calcite's standard ones and GeaFlow's own UDFs).

Where Java and Spark disagree the builder says so:

* ``ln``/``log10`` follow ``Math.log``: 0 gives -Infinity and a negative
  number NaN, where Spark gives null.
* ``ceil``/``floor`` keep a DOUBLE argument's type (Spark returns BIGINT).
* ``sign`` always returns DOUBLE (GeaFlow overrides Calcite's SIGN that way).
* ``trunc`` truncates toward zero at a number of decimals and returns DOUBLE.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T

from ..dialect import template
from .helpers import (
    all_double,
    anon,
    cast,
    fixed,
    num,
    numeric_result,
    same_as,
    scalar,
)


def numeric_args(args: list[Any]) -> list[Any | None]:
    """Text arguments of a numeric function are read as DOUBLE (Calcite's implicit cast)."""
    return [T.DOUBLE if a.is_string else None for a in args]


def _java_log(spark_name: str):  # type: ignore[no-untyped-def]
    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        # Math.log(0) = -Infinity, Math.log(x < 0) = NaN; Spark's ln gives null for both.
        return template(
            f"CASE WHEN {{0}} IS NULL THEN NULL WHEN {{0}} > 0 THEN {spark_name}({{0}}) "
            "WHEN {0} = 0 THEN CAST('-Infinity' AS DOUBLE) ELSE CAST('NaN' AS DOUBLE) END",
            args[0],
        )

    return build


def _rounding(name: str):  # type: ignore[no-untyped-def]
    def build(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
        # Calcite keeps the argument's type (CEIL(DOUBLE) is DOUBLE); Spark returns BIGINT.
        t = numeric_result(types)
        if t.is_integer:
            return args[0]
        return cast(anon(name, args), T.spark_sql_type(t))

    return build


def _sign(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return cast(anon("signum", [cast(args[0], "DOUBLE")]), "DOUBLE")


def _trunc_type(args: list[Any]) -> Any:
    if len(args) == 1 and args[0].is_integer:
        return args[0]
    return T.DOUBLE


def _trunc(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    value = args[0]
    if types[0].is_integer and len(args) == 1:
        return value
    scale = args[1] if len(args) > 1 else num(0)
    # Toward zero at ``scale`` decimals: floor for positives, ceil for negatives.
    return template(
        "CAST(IF({0} >= 0, floor(CAST({0} AS DOUBLE) * pow(10, {1})), "
        "ceil(CAST({0} AS DOUBLE) * pow(10, {1}))) / pow(10, {1}) AS DOUBLE)",
        value,
        scale,
    )


def _rand_integer(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    bound = args[-1]
    r = anon("rand", [args[0]] if len(args) == 2 else [])
    return cast(anon("floor", [exp.Mul(this=r, expression=bound)]), "INT")


def _mod_type(args: list[Any]) -> Any:
    t = T.arithmetic_type("%", args[0], args[1])
    return t if t is not None else T.DOUBLE


def _mod(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # Java's %: the sign follows the dividend (Spark's %, not pmod).
    return template("{0} % {1}", *args)


def _cot(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return template("1.0D / tan({0})", args[0])


_DOUBLE = fixed(T.DOUBLE)

scalar("abs", 1, 1, numeric_result, "abs", arg_types=numeric_args)
scalar("mod", 2, 2, _mod_type, _mod, arg_types=numeric_args)
scalar("power", 2, 2, _DOUBLE, "power", "pow", arg_types=all_double)
scalar("sqrt", 1, 1, _DOUBLE, "sqrt", arg_types=all_double)
scalar("cbrt", 1, 1, _DOUBLE, "cbrt", arg_types=all_double)
scalar("exp", 1, 1, _DOUBLE, "exp", arg_types=all_double)
scalar("ln", 1, 1, _DOUBLE, _java_log("ln"), arg_types=all_double)
scalar("log10", 1, 1, _DOUBLE, _java_log("log10"), arg_types=all_double)
# GeaFlow's log2 returns null for x <= 0, as Spark's does.
scalar("log2", 1, 1, _DOUBLE, "log2", arg_types=all_double)
scalar("ceil", 1, 1, numeric_result, _rounding("ceil"), "ceiling", arg_types=numeric_args)
scalar("floor", 1, 1, numeric_result, _rounding("floor"), arg_types=numeric_args)
# GeaFlow's round: integers unchanged, doubles HALF_UP through BigDecimal (as Spark's).
scalar("round", 1, 2, same_as(0), "round", arg_types=numeric_args)
scalar("trunc", 1, 2, _trunc_type, _trunc, arg_types=numeric_args)
scalar("sign", 1, 1, _DOUBLE, _sign, arg_types=numeric_args)
scalar("sin", 1, 1, _DOUBLE, "sin", arg_types=all_double)
scalar("cos", 1, 1, _DOUBLE, "cos", arg_types=all_double)
scalar("tan", 1, 1, _DOUBLE, "tan", arg_types=all_double)
scalar("cot", 1, 1, _DOUBLE, _cot, arg_types=all_double)
scalar("asin", 1, 1, _DOUBLE, "asin", arg_types=all_double)
scalar("acos", 1, 1, _DOUBLE, "acos", arg_types=all_double)
scalar("atan", 1, 1, _DOUBLE, "atan", arg_types=all_double)
scalar("atan2", 2, 2, _DOUBLE, "atan2", arg_types=all_double)
scalar("degrees", 1, 1, _DOUBLE, "degrees", arg_types=all_double)
scalar("radians", 1, 1, _DOUBLE, "radians", arg_types=all_double)
scalar("pi", 0, 0, _DOUBLE, "pi")
scalar("e", 0, 0, _DOUBLE, "e")
scalar("rand", 0, 1, _DOUBLE, "rand")
scalar("rand_integer", 1, 2, fixed(T.INTEGER), _rand_integer)
