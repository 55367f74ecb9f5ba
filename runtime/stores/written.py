"""The rows a graph gained between two versions, read from the store's parts.

An incremental algorithm in a windowed job needs what the window added to
the graph.  Comparing the two versions (``exceptAll``) shuffles the whole
graph every window; a store that keeps each write as a part can instead name
the parts written since a version (``parts_since``), so the delta costs what
was written.  Served to an evaluation (``Reads.serving``), these rows make
the usual readers (vertex and edge values, ``algorithm_graph``) build the
delta in the graph's shape.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.catalog import GraphInfo
from runtime.env import Env

from .memory import empty_frame


def written_since(env: Env, graph: GraphInfo, version: int) -> dict[tuple[str, bool], Any] | None:
    """Per (label, is_vertex): the rows written after ``version`` (declared
    columns; a vertex id written twice appears twice), or None when the store
    cannot tell (see ``MemoryStore.parts_since``)."""
    store = env.ctx.stores.store(env.ctx, graph)
    out: dict[tuple[str, bool], Any] = {}
    for infos, is_vertex in ((graph.vertices, True), (graph.edges, False)):
        for info in infos:
            parts = store.parts_since(env, info.label, is_vertex, version)
            if parts is None:
                return None
            if parts:
                combined = parts[0]
                for p in parts[1:]:
                    combined = combined.unionByName(p)
                out[(info.label, is_vertex)] = combined
            else:
                out[(info.label, is_vertex)] = empty_frame(env.spark, info)
    return out
