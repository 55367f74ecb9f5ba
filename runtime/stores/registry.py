"""The session's graph stores: memory (DataFrames) or persistent (versioned files).

Filled in by the graph work; the registry is the interface the planner's
graph operators and the GraphSink use.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.errors import UnsupportedError


class GraphStores:
    def __init__(self) -> None:
        self.graphs: dict[str, Any] = {}

    def create(self, ctx: Any, graph: Any) -> None:
        self.graphs[graph.name.lower()] = graph

    def drop(self, name: str) -> None:
        self.graphs.pop(name.lower(), None)

    def write(self, ctx: Any, node: Any, df: Any) -> int:
        raise UnsupportedError("writing graphs is not supported yet")
