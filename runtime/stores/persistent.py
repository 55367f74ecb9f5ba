"""Persistent graph stores: versioned Parquet parts and an atomic manifest.

Layout under ``<root>/<instance>/<graph>/``:

    manifest.json                 {"version": n, "labels": {"v:person": ["parts/..."]}}
    parts/<v|e>-<label>/<n>-<id>/ Parquet files of one write

A write first writes its Parquet part, then publishes it by writing a new
manifest to a temporary file and renaming it over ``manifest.json`` (an atomic
replace on POSIX).  A reader only ever sees parts a manifest names, so a
writer killed mid-write leaves the previous version readable; its orphan part
is ignored.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.errors import ExecutionError
from runtime.durable import atomic_write_json
from runtime.env import Env

from .memory import empty_frame, latest_vertices, table_frame, with_order

MANIFEST = "manifest.json"
# Fault injection for tests: seconds to wait between writing a part and
# publishing it, so a test can kill the writer at exactly that moment.
PAUSE_ENV = "GEAFLOW_SQL_STORE_PAUSE_BEFORE_COMMIT"


def _label_key(label: str, is_vertex: bool) -> str:
    return f"{'v' if is_vertex else 'e'}:{label.lower()}"


class PersistentStore:
    def __init__(self, graph: GraphInfo, root: str) -> None:
        self.graph = graph
        self.path = Path(root) / graph.instance / graph.name.lower()
        # Manifests seen by this session, by version (for windowed jobs).
        self.history: dict[int, dict[str, Any]] = {}
        self.pending: list[tuple[str, bool, Any]] = []

    def version_number(self) -> int:
        manifest = self.manifest()
        version = int(manifest.get("version", 0))
        self.history.setdefault(version, manifest)
        return version

    # Manifest ------------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        path = self.path / MANIFEST
        if not path.exists():
            return {"version": 0, "labels": {}}
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ExecutionError(
                f"graph {self.graph.name}: unreadable manifest {path}: {err}"
            ) from None

    def publish(self, manifest: dict[str, Any]) -> None:
        """Make ``manifest`` the store's current version (atomically)."""
        atomic_write_json(self.path / MANIFEST, manifest)

    @property
    def version(self) -> int:
        return int(self.manifest().get("version", 0))

    # Reads ---------------------------------------------------------------------
    def info(self, label: str, is_vertex: bool) -> Any:
        info = self.graph.vertex(label) if is_vertex else self.graph.edge(label)
        assert info is not None, label
        return info

    def frame(self, env: Env, label: str, is_vertex: bool) -> Any:
        info = self.info(label, is_vertex)
        manifest = self.manifest()
        wanted = env.reads.version_of(self.graph)
        if wanted is not None:
            manifest = self.history.get(wanted, {"version": wanted, "labels": {}})
        parts = manifest["labels"].get(_label_key(info.label, is_vertex), [])
        if info.using and env.windowed:
            # In a windowed job a USING graph holds what its tables delivered so far.
            return table_frame(env, self.graph, info)
        if not parts:
            if info.using:
                return table_frame(env, self.graph, info)
            return empty_frame(env.spark, info)
        # (A USING graph's table rows were written as its first part.)
        df = self._read_parts(env.spark, info, parts)
        if is_vertex:
            df = latest_vertices(df, info.id_field)
        return df.drop("__w", "__r")

    def _read_parts(self, spark: Any, info: Any, parts: list[str]) -> Any:
        """Parts as the label's declared columns (cast), plus ``__w`` and ``__r``."""
        df = spark.read.parquet(*[str(self.path / p) for p in parts])
        names = {c.lower(): c for c in df.columns}
        from pyspark.sql import functions as F

        from geaflow_sql.core import types as T

        cols = []
        for c in info.fields:
            src = names.get(c.name.lower())
            if src is None:
                cols.append(F.lit(None).cast(T.spark_sql_type(c.type)).alias(c.name))
            else:
                cols.append(F.col(f"`{src}`").cast(T.spark_sql_type(c.type)).alias(c.name))
        return df.select(*cols, "__w", "__r")

    def parts_since(self, env: Env, label: str, is_vertex: bool, version: int) -> list[Any] | None:
        """The rows of a label written after ``version`` as parts, or None when
        unknown (a version this session has not seen, or a USING label, which a
        windowed job reads from its table).  See ``MemoryStore.parts_since``."""
        info = self.info(label, is_vertex)
        before = self.history.get(version)
        if before is None or info.using:
            return None
        key = _label_key(info.label, is_vertex)
        old = set(before["labels"].get(key, []))
        new = [p for p in self.manifest()["labels"].get(key, []) if p not in old]
        if not new:
            return []
        from pyspark.sql import functions as F

        df = self._read_parts(env.spark, info, new)
        return [df.where(F.col("__w") > F.lit(version)).drop("__w", "__r")]

    # Writes --------------------------------------------------------------------
    def append(self, label: str, is_vertex: bool, df: Any, windowed: bool) -> int:
        """Write a label's rows as a new part and publish a version naming it
        (a windowed job's writes also wait in ``pending`` for its checkpoint)."""
        info = self.info(label, is_vertex)
        manifest = self.manifest()
        version = int(manifest.get("version", 0)) + 1
        part = f"parts/{'v' if is_vertex else 'e'}-{info.label.lower()}/{version:08d}-{uuid.uuid4().hex[:8]}"
        with_order(df, version).write.mode("overwrite").parquet(str(self.path / part))
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            time.sleep(float(pause))
        # Re-read: another session may have published in the meantime.
        latest = self.manifest()
        labels = dict(latest.get("labels", {}))
        key = _label_key(info.label, is_vertex)
        labels[key] = list(labels.get(key, [])) + [part]
        new_version = max(version, int(latest.get("version", 0)) + 1)
        published: dict[str, Any] = {"version": new_version, "labels": labels}
        self.publish(published)
        self.history[new_version] = published
        if windowed:
            self.pending.append((info.label, is_vertex, df))
        return -1

    def materialize_tables(self, env: Env) -> None:
        """Write the tables of a USING graph into the store (once), so a later
        script that declares the graph by name reads the same data."""
        if self.manifest()["labels"]:
            return
        for v in self.graph.vertices:
            if v.using:
                self.append(v.label, True, table_frame(env, self.graph, v), windowed=False)
        for e in self.graph.edges:
            if e.using:
                self.append(e.label, False, table_frame(env, self.graph, e), windowed=False)
