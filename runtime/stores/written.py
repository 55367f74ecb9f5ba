"""The rows a graph gained between two versions, read from the store's parts.

An incremental algorithm in a windowed job needs what the window added to
the graph.  Comparing the two versions (``exceptAll``) shuffles the whole
graph every window; a store that keeps each write as a part can instead name
the parts written since a version (``parts_since``), so the delta costs what
was written.  ``written_context`` wraps the runtime context so that graph
reads of one graph answer with those rows: the usual readers (vertex and
edge values, ``algorithm_graph``) then build the delta in the graph's shape.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.catalog import GraphInfo

from .memory import empty_frame


def written_since(ctx: Any, graph: GraphInfo, version: int) -> dict[tuple[str, bool], Any] | None:
    """Per (label, is_vertex): the rows written after ``version`` (declared
    columns; a vertex id written twice appears twice), or None when the store
    cannot tell (see ``MemoryStore.parts_since``)."""
    store = ctx.stores.store(ctx, graph)
    parts_since = getattr(store, "parts_since", None)
    if parts_since is None:
        return None
    out: dict[tuple[str, bool], Any] = {}
    for infos, is_vertex in ((graph.vertices, True), (graph.edges, False)):
        for info in infos:
            parts = parts_since(ctx, info.label, is_vertex, version)
            if parts is None:
                return None
            if parts:
                combined = parts[0]
                for p in parts[1:]:
                    combined = combined.unionByName(p)
                out[(info.label, is_vertex)] = combined
            else:
                out[(info.label, is_vertex)] = empty_frame(ctx, info)
    return out


class _WrittenStores:
    def __init__(self, ctx: Any, graph: GraphInfo, rows: dict[tuple[str, bool], Any]) -> None:
        self._ctx = ctx
        self._graph = graph
        self._rows = rows

    def frame(self, ctx: Any, graph: GraphInfo, label: str, is_vertex: bool) -> Any:
        if graph != self._graph:
            return self._ctx.stores.frame(ctx, graph, label, is_vertex)
        info = graph.vertex(label) if is_vertex else graph.edge(label)
        assert info is not None, label
        return self._rows[(info.label, is_vertex)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx.stores, name)


class _WrittenContext:
    """The runtime context, except that one graph reads as its written rows."""

    def __init__(self, ctx: Any, graph: GraphInfo, rows: dict[tuple[str, bool], Any]) -> None:
        self._ctx = ctx
        self.stores = _WrittenStores(ctx, graph, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def written_context(ctx: Any, graph: GraphInfo, version: int) -> Any | None:
    """A context in which ``graph`` holds only what was written after
    ``version``, or None when the store cannot tell."""
    rows = written_since(ctx, graph, version)
    return None if rows is None else _WrittenContext(ctx, graph, rows)
