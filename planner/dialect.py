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


class GeaflowSpark(Spark):
    class Generator(Spark.Generator):  # type: ignore[misc,valid-type]
        TRANSFORMS = {
            **Spark.Generator.TRANSFORMS,
            SparkTemplate: _template_sql,
        }


def to_spark_sql(e: exp.Expression) -> str:
    return GeaflowSpark().generate(e, copy=False)
