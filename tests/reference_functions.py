"""Python versions of the helper functions GeaFlow's reference tests define in Java.

The conformance corpus names them by Java class (``CREATE FUNCTION mycount AS
'org.apache.geaflow.dsl.runtime.query.udf.MyCount'``); ``register()`` maps
those names to these classes, exactly as a user maps their own functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from geaflow_sql.udf import AggregateFunction, TableFunction
from geaflow_sql.udga import AlgorithmUserFunction, EdgeDirection

_REFERENCE_PACKAGE = "org.apache.geaflow.dsl.runtime.query"


def commons_split(text: str | None, separators: str) -> list[str]:
    """Split on any of ``separators``' characters, dropping empty pieces
    (Apache Commons ``StringUtils.split`` semantics)."""
    if text is None:
        return []
    pieces: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch in separators:
            if current:
                pieces.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        pieces.append("".join(current))
    return pieces


class MyCount(AggregateFunction):
    """Sums the second argument, plus 10000 for every row whose first is 'jim'."""

    return_type = "BIGINT"

    def init(self) -> int:
        return 0

    def accumulate(self, acc: int, name: Any, value: Any) -> int:
        bonus = 10000 if str(name).lower() == "jim" else 0
        return acc + bonus + int(value)

    def merge(self, acc: int, other: int) -> int:
        return acc + other

    def get_result(self, acc: int) -> int:
        return acc


class Split2(TableFunction):
    """Rows split by a line delimiter, each row's columns by a column delimiter."""

    output_types = ("VARCHAR", "VARCHAR")

    def result_types(self, arg_types: list[str]) -> tuple[str, ...]:
        return ("VARCHAR", "VARCHAR")

    def eval(
        self, data: str, column_delimiter: str = ",", line_delimiter: str = "\n"
    ) -> Iterator[tuple[str, ...]]:
        for row in commons_split(data, line_delimiter):
            yield tuple(commons_split(row, column_delimiter))


class SplitMap(TableFunction):
    """The first piece of the text split by the separator (',' by default)."""

    output_types = ("VARCHAR",)

    def eval(self, data: str, separator: str | None = None) -> Iterator[tuple[str]]:
        pieces = commons_split(data, separator or ",")
        if pieces:
            yield (pieces[0],)


class TestEdgeIteratorUdf(AlgorithmUserFunction):
    """Walks up to ``edge_limit`` edges per vertex for ``iterations - 1`` supersteps,
    then reports each vertex with the first of its own properties."""

    __test__ = False  # a helper, not a pytest test class
    output = (("id", "ID"), ("iteration", "BIGINT"))

    def init(self, context: Any, params: list[Any]) -> None:
        self.context = context
        self.iterations = int(str(params[0])) if len(params) > 0 else 5
        self.edge_limit = int(str(params[1])) if len(params) > 1 else 100

    def process(self, vertex: Any, messages: list[Any]) -> None:
        ctx = self.context
        if ctx.current_iteration < self.iterations:
            for edge in ctx.load_edges(EdgeDirection.BOTH)[: self.edge_limit]:
                ctx.send_message(edge.target_id, ctx.current_iteration)

    def finish(self, vertex: Any) -> None:
        self.context.take((vertex.id, int(vertex.value[0])))


def register() -> None:
    from planner.user_functions import register_class_alias

    for java, python in {
        f"{_REFERENCE_PACKAGE}.udf.MyCount": "MyCount",
        f"{_REFERENCE_PACKAGE}.udtf.Split2": "Split2",
        f"{_REFERENCE_PACKAGE}.udtf.SplitMap": "SplitMap",
        f"{_REFERENCE_PACKAGE}.udf.TestEdgeIteratorUdf": "TestEdgeIteratorUdf",
    }.items():
        register_class_alias(java, f"{__name__}.{python}")
