"""Base classes for user-defined functions written in Python.

Register one with ``CREATE FUNCTION name AS 'package.module.ClassName'``; the
module must be importable (on ``sys.path`` or ``PYTHONPATH``).

Scalar function::

    class Greet(ScalarFunction):
        return_type = "VARCHAR"
        def eval(self, name):
            return "hello " + name

Set ``vectorized = True`` to receive pandas Series and return a Series (runs
as a pandas UDF on Arrow batches).

Aggregate function (an accumulator per group)::

    class MyCount(AggregateFunction):
        return_type = "BIGINT"
        def init(self): return 0
        def accumulate(self, acc, *args): return acc + 1
        def merge(self, acc, other): return acc + other
        def get_result(self, acc): return acc

Table function (rows per input row, used with ``LATERAL TABLE``)::

    class Split2(TableFunction):
        output_types = ("VARCHAR", "VARCHAR")
        def eval(self, text, sep1, sep2):
            for part in text.split(sep1):
                yield tuple(part.split(sep2))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class UserFunction:
    """Common base: GeaFlow type names of the result(s)."""

    def open(self, config: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Called once per task before the first row (like GeaFlow's ``open``)."""


class ScalarFunction(UserFunction):
    return_type: str = "VARCHAR"
    vectorized: bool = False

    def result_type(self, arg_types: list[str]) -> str:
        """The result type for given argument types; by default ``return_type``."""
        return self.return_type

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError


class AggregateFunction(UserFunction):
    """An accumulator per group: ``init`` makes one, ``accumulate`` folds a row
    into it, ``merge`` combines two (the rows of a group are folded in chunks,
    each into a fresh accumulator, and merged), ``get_result`` reads it out.
    ``get_result(init())`` is the answer for no rows at all.  Argument values
    arrive as plain Python values (None for null)."""

    return_type: str = "VARCHAR"

    def result_type(self, arg_types: list[str]) -> str:
        return self.return_type

    def init(self) -> Any:
        raise NotImplementedError

    def accumulate(self, acc: Any, *args: Any) -> Any:
        """Fold one row into the accumulator; return the (new) accumulator."""
        raise NotImplementedError

    def merge(self, acc: Any, other: Any) -> Any:
        raise NotImplementedError

    def get_result(self, acc: Any) -> Any:
        raise NotImplementedError


class TableFunction(UserFunction):
    """``eval`` yields rows (tuples, or single values for one column) for each
    input row; ``result_types`` gives their GeaFlow types.  Runs per Arrow batch."""

    output_types: tuple[str, ...] = ("VARCHAR",)

    def result_types(self, arg_types: list[str]) -> tuple[str, ...]:
        return tuple(self.output_types)

    def eval(self, *args: Any) -> Iterable[tuple[Any, ...] | Any]:
        raise NotImplementedError
