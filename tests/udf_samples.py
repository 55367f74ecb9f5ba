"""User-defined functions written the way a user writes them, for the UDF tests.

They are registered with ``CREATE FUNCTION name AS 'tests.udf_samples.Class'``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from geaflow_sql.udf import AggregateFunction, ScalarFunction, TableFunction


class Greet(ScalarFunction):
    """Row at a time: one Python call per row; nulls arrive as None."""

    return_type = "VARCHAR"

    def eval(self, name: str | None, punctuation: str = "!") -> str:
        return f"hello {name or 'nobody'}{punctuation}"


class Twice(ScalarFunction):
    """Result type follows the argument type (BIGINT stays BIGINT, DOUBLE stays DOUBLE)."""

    def result_type(self, arg_types: list[str]) -> str:
        return arg_types[0]

    def eval(self, x: Any) -> Any:
        return None if x is None else x * 2


class AddVector(ScalarFunction):
    """Vectorised: receives pandas Series (one Arrow batch at a time), returns a Series."""

    return_type = "DOUBLE"
    vectorized = True

    def eval(self, a: Any, b: Any) -> Any:
        return a.astype("float64") + b.astype("float64")


class Fails(ScalarFunction):
    return_type = "INT"

    def eval(self, x: Any) -> int:
        raise ValueError(f"cannot handle {x}")


class Spread(AggregateFunction):
    """max - min of a group, through an accumulator that merges."""

    return_type = "DOUBLE"

    def init(self) -> list[float | None]:
        return [None, None]

    def accumulate(self, acc: list[float | None], value: Any) -> list[float | None]:
        if value is None:
            return acc
        low, high = acc
        return [
            value if low is None else min(low, value),
            value if high is None else max(high, value),
        ]

    def merge(self, acc: list[float | None], other: list[float | None]) -> list[float | None]:
        for value in other:
            if value is not None:
                acc = self.accumulate(acc, value)
        return acc

    def get_result(self, acc: list[float | None]) -> float | None:
        low, high = acc
        return None if low is None else float(high - low)  # type: ignore[operator]


class JoinNames(AggregateFunction):
    """Sorted, separator-joined text of a group (two arguments, second constant-like)."""

    return_type = "VARCHAR"

    def init(self) -> list[str]:
        return []

    def accumulate(self, acc: list[str], name: Any, sep: Any) -> list[str]:
        if name is not None:
            acc.append(str(name))
            self.sep = sep
        return acc

    def merge(self, acc: list[str], other: list[str]) -> list[str]:
        return acc + other

    def get_result(self, acc: list[str]) -> str:
        return getattr(self, "sep", ",").join(sorted(acc))


class Repeat(TableFunction):
    """Yields (i, text) for i in 0..n-1: several rows and columns per input row."""

    output_types = ("INT", "VARCHAR")

    def eval(self, text: str | None, n: int | None) -> Iterator[tuple[int, str | None]]:
        for i in range(n or 0):
            yield (i, text)


class Words(TableFunction):
    """One column: the words of the text."""

    output_types = ("VARCHAR",)

    def eval(self, text: str | None) -> Iterator[str]:
        yield from (text or "").split()
