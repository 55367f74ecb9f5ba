"""Python graph algorithms (``geaflow_sql.udga``) used by the UDGA tests."""

from __future__ import annotations

from typing import Any

from geaflow_sql.udga import AlgorithmUserFunction, EdgeDirection, MinCombiner, SumCombiner


class Reach(AlgorithmUserFunction):
    """Hops from a source along OUT edges (the README example)."""

    output = (("id", "ID"), ("hops", "BIGINT"))
    combiner = MinCombiner()

    def init(self, context: Any, params: list[Any]) -> None:
        self.context = context
        self.source = params[0]

    def process(self, vertex: Any, messages: list[Any]) -> None:
        ctx = self.context
        if ctx.current_iteration == 1:
            best = 0 if vertex.id == self.source else None
        else:
            best = min(messages) if not isinstance(vertex.value, int) else None
        if best is not None:
            ctx.update_vertex_value(best)
            for edge in ctx.load_edges(EdgeDirection.OUT):
                ctx.send_message(edge.target_id, best + 1)

    def finish(self, vertex: Any) -> None:
        if isinstance(vertex.value, int):
            self.context.take((vertex.id, vertex.value))


class InWeight(AlgorithmUserFunction):
    """Sum of the weights of a vertex's IN edges, told by the sources (a sum combiner),
    reported with the vertex's label and its first property."""

    output = (
        ("id", "ID"),
        ("label", "VARCHAR"),
        ("first", "DOUBLE"),
        ("weight", "DOUBLE"),
        ("rounds", "INT"),
    )
    combiner = SumCombiner()

    def init(self, context: Any, params: list[Any]) -> None:
        self.context = context

    def process(self, vertex: Any, messages: list[Any]) -> None:
        ctx = self.context
        if ctx.current_iteration == 1:
            ctx.update_vertex_value((vertex.value[0], 0.0, 1))
            for edge in ctx.load_edges(EdgeDirection.OUT):
                ctx.send_message(edge.target_id, edge.properties["weight"])
        else:
            assert len(messages) == 1, "the combiner folds a vertex's messages into one"
            first, _, _ = vertex.value
            ctx.update_vertex_value((first, messages[0], ctx.current_iteration))

    def finish(self, vertex: Any) -> None:
        first, weight, rounds = vertex.value
        self.context.take((vertex.id, vertex.label, first, weight, rounds))


class Broken(AlgorithmUserFunction):
    output = (("id", "ID"),)

    def init(self, context: Any, params: list[Any]) -> None:
        self.context = context

    def process(self, vertex: Any, messages: list[Any]) -> None:
        raise ValueError(f"cannot handle vertex {vertex.id}")


class WrongWidth(AlgorithmUserFunction):
    output = (("id", "ID"), ("x", "BIGINT"))

    def init(self, context: Any, params: list[Any]) -> None:
        self.context = context

    def process(self, vertex: Any, messages: list[Any]) -> None:
        self.context.take((vertex.id,))
