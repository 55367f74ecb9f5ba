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


def written_held(env: Env, graph: GraphInfo, version: int, id_type: Any) -> Any | None:
    """What ``written_since`` gives, as the one table incremental algorithms
    read (``kind`` 0: a vertex ``a`` = ``b`` = its id; 1: an edge ``a`` ->
    ``b``; ``label``), made on the driver from the rows the store holds there
    (no Spark job); None when it does not hold them all.  Vertices first,
    then edges, each label's rows in the order written, as the Spark path
    lists them."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql.pandas.types import to_arrow_type

    from geaflow_sql.core import types as T

    store = env.ctx.stores.store(env.ctx, graph)
    if not hasattr(store, "held_since"):
        return None
    limit = env.ctx.local_bytes
    id_arrow = to_arrow_type(T.to_spark_type(id_type))
    frames = []
    for infos, is_vertex in ((graph.vertices, True), (graph.edges, False)):
        for info in infos:
            parts = store.held_since(info.label, is_vertex, version, limit)
            if parts is None:
                return None
            label: Any = info
            ends = (
                (label.id_field, label.id_field)
                if is_vertex
                else (label.src_field, label.dst_field)
            )
            for rows in parts:
                try:
                    a = rows.column(ends[0]).cast(id_arrow)
                    b = rows.column(ends[1]).cast(id_arrow)
                except (pa.ArrowInvalid, KeyError):
                    return None  # Spark's casts decide
                keep = pc.and_(pc.is_valid(a), pc.is_valid(b))
                frames.append(
                    pd.DataFrame(
                        {
                            "kind": 0 if is_vertex else 1,
                            "a": a.filter(keep).to_pandas(),
                            "b": b.filter(keep).to_pandas(),
                            "label": info.label,
                        }
                    )
                )
    if not frames:
        return pd.DataFrame({"kind": [], "a": [], "b": [], "label": []})
    return pd.concat(frames, ignore_index=True)
