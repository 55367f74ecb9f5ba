"""Specs of built-in functions, and the tables the function modules fill.

A spec says how many arguments a function takes, what type it returns for
given argument types, and how it is written in Spark SQL: usually just a Spark
function name (data, in ``scalar.py``), sometimes a small builder for the
special cases where GeaFlow's semantics differ from Spark's.  Each module of
this package registers its rows here when imported; ``registry`` imports them
all and answers lookups.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

TypeRule = Callable[[list[Any]], Any]
# Builds the Spark-side expression from bound argument expressions and their types.
SparkBuilder = Callable[[list[exp.Expression], list[Any]], exp.Expression]


class FunctionKind(enum.Enum):
    SCALAR = "scalar"
    AGGREGATE = "aggregate"
    TABLE = "table"
    ALGORITHM = "algorithm"


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """A built-in function's name and how many arguments it takes."""

    name: str
    min_args: int
    max_args: int | None

    def accepts(self, n: int) -> bool:
        return n >= self.min_args and (self.max_args is None or n <= self.max_args)

    def arity_text(self) -> str:
        if self.max_args == self.min_args:
            return str(self.min_args)
        if self.max_args is None:
            return f"at least {self.min_args}"
        return f"{self.min_args} to {self.max_args}"


@dataclass(frozen=True, slots=True)
class ScalarSpec(FunctionSpec):
    result: TypeRule
    spark: str | SparkBuilder
    # Target type of each argument (by position; the last repeats), or None = as is.
    arg_types: Callable[[list[Any]], list[Any | None]] | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class AggregateSpec(FunctionSpec):
    result: TypeRule
    # How many leading arguments are data columns; the rest must be constants.
    data_args: int = 1
    doc: str = ""


@dataclass(frozen=True, slots=True)
class TableFunctionSpec(FunctionSpec):
    # Output field types, given the argument types.
    output: Callable[[list[Any]], list[Any]]
    doc: str = ""


SCALARS: dict[str, ScalarSpec] = {}
AGGREGATES: dict[str, AggregateSpec] = {}
TABLES: dict[str, TableFunctionSpec] = {}
CLASSES: dict[str, tuple[FunctionKind, str]] = {}


def register_scalar(spec: ScalarSpec, *aliases: str) -> None:
    for n in (spec.name, *aliases):
        SCALARS[n.lower()] = spec


def register_aggregate(spec: AggregateSpec, *aliases: str) -> None:
    for n in (spec.name, *aliases):
        AGGREGATES[n.lower()] = spec


def register_table_function(spec: TableFunctionSpec, *aliases: str) -> None:
    for n in (spec.name, *aliases):
        TABLES[n.lower()] = spec


def register_class(class_name: str, kind: FunctionKind, builtin: str) -> None:
    CLASSES[class_name] = (kind, builtin.lower())
