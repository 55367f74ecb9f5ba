"""The GeaFlow dialect of sqlglot, used to write bound expressions as Spark SQL.

Bound plan expressions are sqlglot trees.  Most are sqlglot's own node types
and print through its Spark generator unchanged; ``SparkTemplate`` carries the
few GeaFlow semantics that need a hand-written Spark SQL form (for example
Java's ``String.hashCode``), with ``{0}``, ``{1}`` ... standing for arguments.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark


class SparkTemplate(exp.Expression, exp.Func):
    """A Spark SQL snippet with argument holes: ``template.format(*args)``."""

    arg_types = {"this": True, "expressions": False}

    @property
    def template(self) -> str:
        return str(self.this)


def template(text: str, *args: exp.Expression) -> exp.Expression:
    return SparkTemplate(this=text, expressions=list(args))


def _template_sql(gen: Any, e: SparkTemplate) -> str:
    args = [f"({gen.sql(a)})" for a in e.expressions]
    return e.template.format(*args)


class FloatArithmetic(exp.Expression, exp.Func):
    """``this / expression`` (``op`` = "/") or ``this % expression`` (``op`` =
    "%") of floating point numbers as Java computes them.

    By a zero, Java's ``x / 0`` is Infinity with the sign of ``x`` times that
    of the zero (NaN for a NaN or zero ``x``) and ``x % 0`` is NaN, where
    Spark's arithmetic (ANSI mode off) gives NULL; otherwise both agree.
    """

    arg_types = {"this": True, "expression": True, "op": True}


def _float_arithmetic_sql(gen: Any, e: FloatArithmetic) -> str:
    left, right = f"({gen.sql(e.this)})", f"({gen.sql(e.expression)})"
    dividend = f"CAST({left} AS DOUBLE)"
    if e.args["op"] == "/":
        # (a zero's text tells -0.0 from 0.0: Spark's functions that could,
        # such as atan2, make -0.0 into 0.0 first)
        infinity = (
            f"IF(CAST({right} AS STRING) LIKE '-%', "
            "CAST('-Infinity' AS DOUBLE), CAST('Infinity' AS DOUBLE))"
        )
        at_zero = f"{dividend} * {infinity}"
    else:
        at_zero = f"{dividend} * CAST('NaN' AS DOUBLE)"
    return f"CASE WHEN {right} = 0 THEN {at_zero} ELSE {left} {e.args['op']} {right} END"


class GeaflowSpark(Spark):
    class Generator(Spark.Generator):  # type: ignore[misc,valid-type]
        TRANSFORMS = {
            **Spark.Generator.TRANSFORMS,
            SparkTemplate: _template_sql,
            FloatArithmetic: _float_arithmetic_sql,
        }


def to_spark_sql(e: exp.Expression) -> str:
    return GeaflowSpark().generate(e, copy=False)
