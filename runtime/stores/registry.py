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
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.config import STORE_LOCAL_MAX_BYTES
from runtime.context import RuntimeContext
from runtime.env import Env
from runtime.reads import graph_key

from .memory import MemoryStore
from .persistent import PersistentStore, commit_stores


class GraphStores:
    def __init__(self) -> None:
        self.stores: dict[str, Any] = {}
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
        from pyspark.sql import functions as F

        graph: GraphInfo = node.graph
        store = self.store(env.ctx, graph)
        in_types = [f.type for f in node.input.schema]
        if len(node.writes) > 1:
            df = df.cache()
        total = 0
        persistent = isinstance(store, PersistentStore)
        local_limit = env.ctx.config.get_int(STORE_LOCAL_MAX_BYTES)
        try:
            for w in node.writes:
                info = graph.vertex(w.label) if w.is_vertex else graph.edge(w.label)
                assert info is not None
                cols = []
                for (name, idx), column in zip(w.columns, info.fields, strict=True):
                    spark_type = T.spark_sql_type(column.type)
                    if idx is None:
                        cols.append(F.lit(None).cast(spark_type).alias(name))
                    else:
                        value = F.col(f"c{idx}")
                        if in_types[idx].name == "VARCHAR" and column.type.name != "VARCHAR":
                            value = F.trim(value)
                        cols.append(value.cast(spark_type).alias(name))
                out = df.select(*cols)
                keys = [info.id_field] if w.is_vertex else [info.src_field, info.dst_field]  # type: ignore[union-attr]
                for k in keys:
                    out = out.where(F.col(f"`{k}`").isNotNull())
                # The store counts the rows as it writes them (no extra job).
                total += store.append(info.label, w.is_vertex, out, env.windowed, local_limit)  # type: ignore[union-attr]
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
        finally:
            if len(node.writes) > 1:
                df.unpersist()
        return total

    def commit_all(self) -> None:
        """Publish what a windowed job's window wrote to persistent graphs, as
        one change over all of them."""
        commit_stores([s for s in self.stores.values() if isinstance(s, PersistentStore)])

    def abort_all(self) -> None:
        for s in self.stores.values():
            if isinstance(s, PersistentStore):
                s.abort()
