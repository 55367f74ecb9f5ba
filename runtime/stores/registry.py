"""The session's graph stores, and writing INSERT results into them.

Each graph of the catalog has a store holding, per label, a DataFrame of the
label's declared columns.  ``storeType='memory'`` keeps them in the session;
any other store type (``rocksdb``, ``paimon``...) is persistent: columnar
files under ``geaflow.file.persistent.root`` with an atomically swapped
manifest, so a later script or process reads what an earlier one wrote.
Graphs defined ``USING`` tables read those tables (and, when persistent, are
written to the store when created so later scripts can read them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.config import STORE_LOCAL_MAX_BYTES
from runtime.context import RuntimeContext
from runtime.env import Env
from runtime.expressions import spark_ident
from runtime.reads import graph_key
from runtime.spark_adapter import select_sql

from .frame_memo import FrameMemo
from .memory import MemoryStore
from .persistent import PersistentStore, commit_stores


class GraphStores:
    def __init__(self) -> None:
        self.stores: dict[str, Any] = {}
        # The stores' label frames and the vertex and edge values built of them.
        self.frames = FrameMemo()
        # Threads sharing the session's graphs must get one store per graph.
        self._lock = threading.RLock()

    def create(self, ctx: RuntimeContext, graph: GraphInfo) -> None:
        key = graph_key(graph)
        store: Any
        if graph.is_persistent:
            store = PersistentStore(graph, ctx.persistent_root())
            if graph.is_static:
                store.materialize_tables(Env(ctx))
        else:
            store = MemoryStore(graph)
        with self._lock:
            self.stores = {**self.stores, key: store}

    def drop(self, name: str) -> None:
        with self._lock:
            self.stores = {
                k: v for k, v in self.stores.items() if k.split(".", 1)[-1] != name.lower()
            }

    def store(self, ctx: RuntimeContext, graph: GraphInfo) -> Any:
        key = graph_key(graph)
        store = self.stores.get(key)
        if store is None or store.graph != graph:
            with self._lock:
                store = self.stores.get(key)
                if store is None or store.graph != graph:
                    self.create(ctx, graph)
                    store = self.stores[key]
        return store

    # Writes ------------------------------------------------------------------
    def write(self, env: Env, node: Any, df: Any) -> int:
        """Run a GraphSink: each row of ``df`` goes to every label the INSERT
        names; the rows written (summed over the labels)."""
        in_types = [f.type for f in node.input.schema]
        if len(node.writes) > 1:
            df = df.cache()

        def label_frames() -> Iterator[tuple[Any, Any, Any]]:
            for w, info in _labels(node):
                # SQL text: a py4j round trip per column (the list is built
                # item by item), where a Column, a cast and an alias took three.
                cols = []
                for (name, idx), column in zip(w.columns, info.fields, strict=True):
                    spark_type = T.spark_sql_type(column.type)
                    if idx is None:
                        cols.append(f"CAST(NULL AS {spark_type}) AS {spark_ident(name)}")
                    else:
                        value = f"c{idx}"
                        if in_types[idx].name == "VARCHAR" and column.type.name != "VARCHAR":
                            value = f"trim({value})"
                        cols.append(f"CAST({value} AS {spark_type}) AS {spark_ident(name)}")
                out = select_sql(df, cols)
                keys = [f"{spark_ident(k)} IS NOT NULL" for k in _key_fields(w, info)]
                if keys:
                    out = out.where(" AND ".join(keys))
                yield w, info, out

        try:
            return self._write_labels(env, node, label_frames())
        finally:
            if len(node.writes) > 1:
                df.unpersist()

    def rows_writer(self, env: Env, node: Any) -> Callable[[Any], int] | None:
        """For a GraphSink whose input rows are on the driver (an Arrow table
        in the input's columns, the local engine's result): a function writing
        them as ``write`` does, with no Spark job while the store keeps the
        rows on the driver (``geaflow.dsl.store.local.max.bytes``).  None when
        a column would need a cast (Spark's casts are the reference): each
        written column must have its label column's type, or be an integer
        widening to it."""
        in_types = [f.type for f in node.input.schema]
        for w, info in _labels(node):
            for (_, idx), column in zip(w.columns, info.fields, strict=True):
                if idx is not None and not _passes_as_is(in_types[idx], column.type):
                    return None

        def write(rows: Any) -> int:
            import pyarrow as pa
            import pyarrow.compute as pc
            from pyspark.sql import types as ST
            from pyspark.sql.pandas.types import to_arrow_type

            from runtime.held import from_rows

            def label_frames() -> Iterator[tuple[Any, Any, Any]]:
                for w, info in _labels(node):
                    names, arrays, fields = [], [], []
                    for (name, idx), column in zip(w.columns, info.fields, strict=True):
                        spark_type = T.to_spark_type(column.type)
                        arrow_type = to_arrow_type(spark_type)
                        names.append(name)
                        fields.append(ST.StructField(name, spark_type))
                        arrays.append(
                            pa.nulls(rows.num_rows, arrow_type)
                            if idx is None
                            else rows.column(idx).cast(arrow_type)
                        )
                    out = pa.Table.from_arrays(arrays, names=names)
                    for k in _key_fields(w, info):
                        out = out.filter(pc.is_valid(out.column(names.index(k))))
                    yield w, info, from_rows(env.spark, out, ST.StructType(fields))

            return self._write_labels(env, node, label_frames())

        return write

    def _write_labels(
        self, env: Env, node: Any, label_frames: Iterator[tuple[Any, Any, Any]]
    ) -> int:
        """Append each label's rows (as ``label_frames`` make them), then, for
        a persistent store outside a windowed job, commit them as one version."""
        store = self.store(env.ctx, node.graph)
        persistent = isinstance(store, PersistentStore)
        local_limit = env.ctx.config.get_int(STORE_LOCAL_MAX_BYTES)
        total = 0
        try:
            for w, info, out in label_frames:
                # The store counts the rows as it writes them (no extra job).
                total += store.append(info.label, w.is_vertex, out, env.windowed, local_limit)
            if persistent and not env.windowed:
                # One statement, one version, whatever labels it wrote.
                store.commit()
            notice = store.earlier_notice() if persistent else None
            if notice:
                env.ctx.notices.append(notice)
        except BaseException:
            if persistent and not env.windowed:
                store.abort()
            raise
        return total

    def commit_all(self) -> None:
        """Publish what a windowed job's window wrote to persistent graphs, as
        one change over all of them."""
        commit_stores([s for s in self.stores.values() if isinstance(s, PersistentStore)])

    def abort_all(self) -> None:
        for s in self.stores.values():
            if isinstance(s, PersistentStore):
                s.abort()


def _labels(node: Any) -> Iterator[tuple[Any, Any]]:
    """(write, label info) for each label a GraphSink writes."""
    graph: GraphInfo = node.graph
    for w in node.writes:
        info = graph.vertex(w.label) if w.is_vertex else graph.edge(w.label)
        assert info is not None
        yield w, info


def _key_fields(w: Any, info: Any) -> list[str]:
    """The columns a row of the label needs (rows without them are not written)."""
    return [info.id_field] if w.is_vertex else [info.src_field, info.dst_field]


def _passes_as_is(source: Any, target: Any) -> bool:
    """Does a value of ``source`` become a ``target`` value with no cast
    Spark would have to do: the same Spark type, or a wider integer?"""
    nested = (T.StructType, T.ArrayType, T.MapType)
    if isinstance(target, nested) or isinstance(source, nested):
        return False
    if source.is_integer and target.is_integer:
        order = T.INTEGER_NAMES
        return order.index(source.name) <= order.index(target.name)
    return bool(T.spark_sql_type(source) == T.spark_sql_type(target))
