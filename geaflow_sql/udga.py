"""User-defined graph algorithms (UDGA): vertex programs written in Python.

The API mirrors GeaFlow's ``AlgorithmUserFunction``.  An algorithm is a class
with ``init(context, params)``, ``process(vertex, messages)`` and
``finish(vertex)``, and an output schema; register it with
``CREATE FUNCTION name AS 'package.module.Class'`` and call it with
``CALL name(args) YIELD (cols) RETURN ...``::

    from geaflow_sql.udga import AlgorithmUserFunction, EdgeDirection, MinCombiner

    class Reach(AlgorithmUserFunction):
        '''Hops from a source along OUT edges.'''

        output = (("id", "ID"), ("hops", "BIGINT"))
        combiner = MinCombiner()

        def init(self, context, params):
            self.context = context
            self.source = params[0]

        def process(self, vertex, messages):
            ctx = self.context
            if ctx.current_iteration == 1:
                best = 0 if vertex.id == self.source else None
            else:
                best = min(messages) if vertex.value is None else None
            if best is not None:
                ctx.update_vertex_value(best)
                for edge in ctx.load_edges(EdgeDirection.OUT):
                    ctx.send_message(edge.target_id, best + 1)

        def finish(self, vertex):
            if isinstance(vertex.value, int):
                self.context.take((vertex.id, vertex.value))

How it runs (the same rules as GeaFlow):

* Iteration 1 runs ``process`` on every vertex; iteration n > 1 only on the
  vertices that received messages in iteration n - 1, with those messages.
  The iteration ends when no message was sent, or at ``max_iterations``
  (the class attribute, if set) or ``geaflow.dsl.max.traversal``.
* ``vertex.value`` is the last value given to ``update_vertex_value``; before
  the first update it is the vertex's own properties as a tuple (GeaFlow's
  ``vertex.getValue()``).  ``vertex.properties`` maps property names to values.
* ``load_edges(direction)`` returns the vertex's edges; ``target_id`` is
  always the other end (as in GeaFlow, an IN edge is seen from its target).
* Messages to ids without a vertex are dropped.  The order of the messages a
  vertex receives is unspecified.  A ``combiner`` folds them first (all
  messages to a vertex become one), which also shrinks the traffic.
* ``finish(vertex)`` runs once per vertex after the last iteration;
  ``take(row)`` emits an output row (a tuple in the order of ``output``).

Execution is batched: each superstep runs ``process`` over Arrow/pandas
batches of vertices inside Spark tasks, never row by row through the driver.
Small graphs (``geaflow.dsl.iteration.local.max.edges``) run all supersteps
inside one task; large ones run a distributed superstep per round.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


class EdgeDirection(enum.Enum):
    OUT = "OUT"
    IN = "IN"
    BOTH = "BOTH"


@dataclass(frozen=True, slots=True)
class Edge:
    """An edge as a vertex sees it: ``src_id`` is that vertex, ``target_id`` the other end."""

    src_id: Any
    target_id: Any
    label: str | None
    direction: EdgeDirection
    value: tuple[Any, ...] = ()  # the edge's properties, in the graph's order
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Vertex:
    id: Any
    label: str | None
    value: Any
    properties: dict[str, Any] = field(default_factory=dict)


class AlgorithmContext:
    """What ``process`` and ``finish`` may do; given to ``init``."""

    current_iteration: int = 1
    id_type: Any = None

    def send_message(self, vertex_id: Any, message: Any) -> None:
        raise NotImplementedError

    def update_vertex_value(self, value: Any) -> None:
        raise NotImplementedError

    def load_edges(self, direction: EdgeDirection = EdgeDirection.BOTH) -> list[Edge]:
        raise NotImplementedError

    def take(self, row: Sequence[Any]) -> None:
        raise NotImplementedError


class MessageCombiner:
    """Folds two messages to the same vertex into one."""

    def combine(self, a: Any, b: Any) -> Any:
        raise NotImplementedError


class SumCombiner(MessageCombiner):
    def combine(self, a: Any, b: Any) -> Any:
        return a + b


class MinCombiner(MessageCombiner):
    def combine(self, a: Any, b: Any) -> Any:
        return b if b < a else a


class MaxCombiner(MessageCombiner):
    def combine(self, a: Any, b: Any) -> Any:
        return b if b > a else a


class AlgorithmUserFunction:
    """Base class of Python graph algorithms (see the module docstring)."""

    #: Output columns: (name, type) pairs; type is a GeaFlow type name
    #: (``BIGINT``, ``DOUBLE``, ``VARCHAR``, ...) or ``ID`` for the graph's id type.
    output: Sequence[tuple[str, str]] = (("id", "ID"),)
    #: Folds the messages to one vertex (None: ``process`` sees them all).
    combiner: MessageCombiner | None = None
    #: The algorithm's own iteration bound (None: only GeaFlow's).
    max_iterations: int | None = None

    def init(self, context: AlgorithmContext, params: list[Any]) -> None:
        """Called once per task with the CALL's (constant) arguments."""

    def process(self, vertex: Vertex, messages: list[Any]) -> None:
        raise NotImplementedError

    def finish(self, vertex: Vertex) -> None:
        """Called once per vertex after the last iteration."""

    def output_schema(self, id_type: Any) -> list[tuple[str, Any]]:
        """(name, GeaFlow type) of each output column."""
        from geaflow_sql.core import types as T

        out = []
        for name, type_name in self.output:
            if isinstance(type_name, str):
                out.append(
                    (name, id_type if type_name.upper() == "ID" else T.type_from_name(type_name))
                )
            else:
                out.append((name, type_name))
        return out


__all__ = [
    "AlgorithmContext",
    "AlgorithmUserFunction",
    "Edge",
    "EdgeDirection",
    "MaxCombiner",
    "MessageCombiner",
    "MinCombiner",
    "SumCombiner",
    "Vertex",
]
