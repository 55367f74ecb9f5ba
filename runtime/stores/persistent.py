"""Persistent graph stores: versioned Parquet parts and an atomic manifest.

Layout under ``<root>/<instance>/<graph>/``:

    manifest.json                 {"version": n, "labels": {"v:person": ["parts/..."]}}
    parts/<v|e>-<label>/<n>-<id>/ Parquet files of one write

A write first writes its Parquet part and stages it: the session that wrote
it reads it at once (a later statement of the same window, or the next label
of the same INSERT), nobody else does.  ``commit`` then publishes everything
staged as one version, by replacing ``manifest.json`` (``commits.py``): a
statement outside a windowed job at its end, whatever labels it wrote; a
windowed job after each window, for all the graphs the window wrote.  A
reader only ever sees parts a manifest names, so a writer killed before its
commit leaves the previous version readable; its orphan parts are ignored.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.errors import ExecutionError
from runtime.env import Env
from runtime.expressions import cast_as
from runtime.held import from_rows

from .arrow_parts import (
    PART_FILES,
    collect_small,
    counting,
    label_rows,
    ordered,
    write_part_file,
)
from .commits import (
    forget,
    kept_versions,
    locked,
    publish_all,
    read_manifest,
    read_version,
    recover,
)
from .memory import (
    declared_schema_spark,
    empty_frame,
    latest_vertices,
    table_frame,
    with_order,
)

# Fault injection for tests: seconds to wait after writing each part, and
# before publishing, so a test can kill the writer at exactly those moments.
PAUSE_ENV = "GEAFLOW_SQL_STORE_PAUSE_BEFORE_COMMIT"
PART_PAUSE_ENV = "GEAFLOW_SQL_STORE_PAUSE_AFTER_PART"


def _pause(name: str) -> None:
    pause = os.environ.get(name)
    if pause:
        time.sleep(float(pause))


class PartSchemas:
    """The schema Spark read each persistent part with (a Parquet folder,
    never changed once written), so that a later read of it names the schema
    and Spark runs no job to read a file footer for it: a MATCH reads each
    label once per hop, and a windowed job every label every window.

    A part this process wrote from the driver is known by its Arrow schema:
    parts written with the same Arrow schema are the same Parquet schema to
    Spark, so once Spark has read one of them, the others are known before
    their first read."""

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._schemas: OrderedDict[str, Any] = OrderedDict()
        self._written: OrderedDict[str, str] = OrderedDict()  # folder -> Arrow schema
        self._learned: dict[str, Any] = {}  # Arrow schema -> Spark's schema

    def wrote(self, folder: str, arrow_schema: Any) -> None:
        """Note the Arrow schema of a part written from the driver."""
        key = arrow_schema.remove_metadata().to_string()
        with self._lock:
            self._written[folder] = key
            self._trim(self._written)

    def _known(self, folder: str) -> Any:
        schema = self._schemas.get(folder)
        if schema is None:
            key = self._written.get(folder)
            schema = self._learned.get(key) if key is not None else None
        return schema

    def _trim(self, kept: OrderedDict[str, Any]) -> None:
        while len(kept) > self.size:
            kept.popitem(last=False)

    def read(self, spark: Any, folders: list[str]) -> list[tuple[Any, Any]]:
        """The parts read by Spark: a (frame, schema) per schema they were
        written with (Spark reads parts of one schema together, naming it once
        every part's is known; it cannot read an INT32 part with INT64 ones)."""
        with self._lock:
            known = [self._known(f) for f in folders]
        unknown = [f for f, schema in zip(folders, known, strict=True) if schema is None]
        if unknown:
            # One footer read for the parts new here (Spark assumes parts read
            # together share a schema), then each part's is known.
            inferred = spark.read.parquet(*unknown)
            schema = inferred.schema
            with self._lock:
                for f in unknown:
                    self._schemas[f] = schema
                    self._schemas.move_to_end(f)
                self._trim(self._schemas)
                written = [self._written.get(f) for f in unknown]
                first = written[0]
                if first is not None and all(k == first for k in written):
                    self._learned[first] = schema
            if len(unknown) == len(folders):
                return [(inferred, schema)]
            known = [k or schema for k in known]
        groups: dict[str, tuple[Any, list[str]]] = {}
        for f, schema in zip(folders, known, strict=True):
            assert schema is not None
            groups.setdefault(schema.json(), (schema, []))[1].append(f)
        return [
            (spark.read.schema(schema).parquet(*members), schema)
            for schema, members in groups.values()
        ]


PART_SCHEMAS = PartSchemas()


def _label_key(label: str, is_vertex: bool) -> str:
    return f"{'v' if is_vertex else 'e'}:{label.lower()}"


class PersistentStore:
    def __init__(self, graph: GraphInfo, root: str) -> None:
        self.graph = graph
        self.root = Path(root)
        self.path = self.root / graph.instance / graph.name.lower()
        # Manifests seen by this session, by version, its own unpublished
        # ones included (a windowed job compares versions; an incremental
        # MATCH reads what was written since one).
        self.history: dict[int, dict[str, Any]] = {}
        # Published versions read from ``versions/`` (time travel).
        self._published: dict[int, dict[str, Any]] = {}
        # Windowed writes since the last checkpoint (which has nothing to copy:
        # the parts are on disk), shaped as ``MemoryStore.pending``.
        self.pending: list[tuple[str, bool, Any, Any]] = []
        # Per thread (threads of one session may write the graph at once):
        # parts written and not yet published, (label key, part), and
        # ``working``, the published manifest plus them, which that thread reads.
        self._local = threading.local()
        # The version the graph held before this session first wrote it, told
        # to the user once (re-running a loading script adds to it).
        self.earlier: dict[str, Any] | None = None
        self.told_earlier = False

    @property
    def staged(self) -> list[tuple[str, str]]:
        staged: list[tuple[str, str]] = getattr(self._local, "staged", [])
        return staged

    @staged.setter
    def staged(self, value: list[tuple[str, str]]) -> None:
        self._local.staged = value

    @property
    def working(self) -> dict[str, Any] | None:
        working: dict[str, Any] | None = getattr(self._local, "working", None)
        return working

    @working.setter
    def working(self, value: dict[str, Any] | None) -> None:
        self._local.working = value

    def version_number(self) -> int:
        manifest = self.manifest()
        version = int(manifest.get("version", 0))
        self.history.setdefault(version, manifest)
        return version

    # Manifest ------------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        """The version this session reads: the published one plus its own
        staged writes."""
        return self.working if self.working is not None else self.published()

    def published(self) -> dict[str, Any]:
        recover(self.root, self.path)
        return self.on_disk()

    def on_disk(self) -> dict[str, Any]:
        try:
            manifest = read_manifest(self.path)
        except (OSError, ValueError) as err:
            raise ExecutionError(
                f"graph {self.graph.name}: unreadable manifest {self.path}: {err}"
            ) from None
        return manifest if manifest is not None else {"version": 0, "labels": {}}

    @property
    def version(self) -> int:
        return int(self.manifest().get("version", 0))

    def at(self, version: int) -> dict[str, Any] | None:
        """Version ``version``'s manifest, None when there is none: a
        published version as kept on disk (``USE GRAPH g VERSION n``), else
        one this session saw (a windowed job reads its own version before it
        is published)."""
        if version == 0:
            return {"version": 0, "labels": {}}
        found = self._published.get(version)
        if found is None and version <= int(self.on_disk().get("version", 0)):
            found = read_version(self.path, version)
            if found is not None:
                self._published[version] = found  # (a published version never changes)
        return found if found is not None else self.history.get(version)

    def kept(self, version: int) -> dict[str, Any] | None:
        """Published version ``version`` as kept on disk, or None."""
        current = int(self.published().get("version", 0))
        return read_version(self.path, version) if 1 <= version <= current else None

    def versions(self) -> list[dict[str, Any]]:
        """Every published version kept on disk, oldest first (not one a
        writer kept and died before publishing)."""
        current = int(self.published().get("version", 0))
        return [m for m in kept_versions(self.path) if int(m["version"]) <= current]

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
            manifest = self.at(wanted) or {"version": wanted, "labels": {}}
        parts = manifest["labels"].get(_label_key(info.label, is_vertex), [])
        if info.using and env.windowed:
            # In a windowed job a USING graph holds what its tables delivered so far.
            return table_frame(env, self.graph, info)
        if not parts and info.using:
            return table_frame(env, self.graph, info)
        # (A USING graph's table rows were written as its first part.)
        # Parts never change once written: a label's frame of the same parts
        # is kept, one object (``frame_memo``).
        return env.ctx.stores.frames.get(
            (self, env.spark),
            ("label", info.label, is_vertex, tuple(parts)),
            lambda: self._label_frame(env, info, is_vertex, parts),
        )

    def _label_frame(self, env: Env, info: Any, is_vertex: bool, parts: list[str]) -> Any:
        """A label's declared columns read from its parts (none: no rows).

        Parts holding at most ``geaflow.dsl.query.local.max.bytes`` on disk
        are read on the driver (no Spark job; the local engine reads the same
        copy) and matched as local rows: a MATCH reads a label once per hop,
        and each read of the files would be a Parquet scan in the plan, and
        for a vertex label a ranking of its rows by write as well."""
        spark = env.spark
        if not parts:
            return empty_frame(spark, info)
        key = _label_key(info.label, is_vertex)
        limit = env.ctx.local_bytes
        try:
            held = self._held(info.label, is_vertex, {"labels": {key: parts}}, limit)
        except FileNotFoundError:  # a part with no file: Spark's read reports it
            held = None
        if held is not None:
            rows = label_rows(held[0], info, is_vertex, held[1])
            return from_rows(spark, rows, declared_schema_spark(info))
        df = self._read_parts(spark, info, parts)
        if is_vertex:
            df = latest_vertices(df, info.id_field)
        return df.drop("__w", "__r")

    def _read_parts(self, spark: Any, info: Any, parts: list[str]) -> Any:
        """Parts as the label's declared columns (cast), plus ``__w`` and ``__r``."""
        from functools import reduce

        from geaflow_sql.core import types as T

        frames = []
        for df, schema in PART_SCHEMAS.read(spark, [str(self.path / p) for p in parts]):
            names = {c.lower(): c for c in schema.names}
            cols = [
                cast_as(names.get(c.name.lower()), T.spark_sql_type(c.type), c.name)
                for c in info.fields
            ]
            frames.append(df.selectExpr(*cols, "__w", "__r"))
        return reduce(lambda a, b: a.union(b), frames)

    def local_parts(
        self, env: Env, label: str, is_vertex: bool, limit: int
    ) -> tuple[list[Any], bool] | None:
        """The label's parts as Arrow rows (with ``__w``, ``__r``; read from
        their files, no Spark job) and False (vertex parts are not one row per
        id), when they hold at most ``limit`` bytes on disk; else None.  The
        version the reads ask for (the current one by default), as ``frame``
        reads it; not a USING label in a windowed job (its table's rows so far)."""
        if env.windowed and self.info(label, is_vertex).using:
            return None
        wanted = env.reads.version_of(self.graph)
        manifest = self.manifest() if wanted is None else self.at(wanted)
        if manifest is None:
            return None
        return self._held(label, is_vertex, manifest, limit)

    def held_rows(
        self, label: str, is_vertex: bool, version: int, limit: int
    ) -> tuple[list[Any], bool] | None:
        """``local_parts`` of the label at ``version`` (a version this session
        saw), or None."""
        manifest = self.history.get(version)
        info = self.info(label, is_vertex)
        if manifest is None or info.using:
            return None
        return self._held(label, is_vertex, manifest, limit)

    def held_since(self, label: str, is_vertex: bool, version: int, limit: int) -> list[Any] | None:
        """Arrow rows of the label written after ``version`` (as ``parts_since``)."""
        import pyarrow.compute as pc

        info = self.info(label, is_vertex)
        before = self.history.get(version)
        if before is None or info.using:
            return None
        key = _label_key(info.label, is_vertex)
        old = set(before["labels"].get(key, []))
        new = [p for p in self.manifest()["labels"].get(key, []) if p not in old]
        held = self._held(label, is_vertex, {"labels": {key: new}}, limit)
        if held is None:
            return None
        return [rows.filter(pc.greater(rows.column("__w"), version)) for rows in held[0]]

    def _held(
        self, label: str, is_vertex: bool, manifest: dict[str, Any], limit: int
    ) -> tuple[list[Any], bool] | None:
        info = self.info(label, is_vertex)
        parts = manifest["labels"].get(_label_key(info.label, is_vertex), [])
        if not parts and info.using:
            return None  # its table's rows, read by the table's scan
        folders = [self.path / p for p in parts]
        if sum(PART_FILES.size_on_disk(f) for f in folders) > limit:
            return None
        return [PART_FILES.get(f) for f in folders], False

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
    def append(
        self, label: str, is_vertex: bool, df: Any, windowed: bool, local_limit: int = 0
    ) -> int:
        """Write a label's rows as a new part and stage it (see ``commit``; a
        windowed job's writes also wait in ``pending`` for its checkpoint).
        Rows Spark estimates at most ``local_limit`` bytes are collected and
        written from the driver, and kept there for the local engine
        (``arrow_parts``).  Returns the rows written."""
        info = self.info(label, is_vertex)
        base = self.manifest()
        if not self.told_earlier and self.earlier is None:
            if base.get("labels"):
                self.earlier = base
            else:
                self.told_earlier = True  # an empty graph: nothing to tell
        version = int(base.get("version", 0)) + 1
        part = f"parts/{'v' if is_vertex else 'e'}-{info.label.lower()}/{version:08d}-{uuid.uuid4().hex[:8]}"
        rows = collect_small(df, local_limit)
        if rows is not None:
            written = rows.num_rows
            rows = ordered(rows, version)
            folder = self.path / part
            write_part_file(folder, rows)
            PART_FILES.put(folder, rows)
            PART_SCHEMAS.wrote(str(folder), rows.schema)
        else:
            counted, count = counting(df)
            with_order(counted, version).write.mode("overwrite").parquet(str(self.path / part))
            written = count()
        _pause(PART_PAUSE_ENV)
        key = _label_key(info.label, is_vertex)
        labels = dict(base.get("labels", {}))
        labels[key] = [*labels.get(key, []), part]
        self.working = {"version": version, "labels": labels}
        self.staged = [*self.staged, (key, part)]
        self.history[version] = self.working
        if windowed:
            self.pending.append((info.label, is_vertex, df, None))
        return written

    def earlier_notice(self) -> str | None:
        """Once per session, when its first write went into a graph that
        already held data: what it held (rows per label, from the Parquet
        footers: no Spark job)."""
        if self.earlier is None or self.told_earlier:
            return None
        self.told_earlier = True
        before = self.earlier
        counts = []
        for key, parts in sorted(before.get("labels", {}).items()):
            counts.append(f"{key.split(':', 1)[1]} {self._rows(parts)}")
        return (
            f"graph {self.graph.name} already held version {before.get('version', 0)} from before this "
            f"session ({', '.join(counts)} rows), and this statement added to it; running a "
            f"loading script again adds its rows again (to start afresh, remove {self.path})"
        )

    def _rows(self, parts: list[str]) -> int:
        import pyarrow.parquet as pq

        total = 0
        for part in parts:
            for f in (self.path / part).glob("*.parquet"):
                try:
                    total += pq.read_metadata(f).num_rows
                except (OSError, ValueError):
                    continue
        return total

    def prepare(self) -> dict[str, Any] | None:
        """The manifest that publishes the staged parts on top of the current
        version on disk (which another process may have moved on), or None
        when nothing is staged.  The caller holds the graph's lock."""
        if not self.staged or self.working is None:
            return None
        latest = self.on_disk()
        labels = {k: list(v) for k, v in latest.get("labels", {}).items()}
        for key, part in self.staged:
            labels.setdefault(key, []).append(part)
        version = max(int(self.working["version"]), int(latest.get("version", 0)) + 1)
        # When it was published and how many rows it added (SHOW VERSIONS).
        written = self._rows([part for _, part in self.staged])
        return {"version": version, "labels": labels, "time": time.time(), "rows": written}

    def committed(self, manifest: dict[str, Any]) -> None:
        """``manifest`` is now the published version."""
        self.history[int(manifest["version"])] = manifest
        self.staged = []
        self.working = None

    def commit(self) -> None:
        """Publish what this session staged as one version."""
        commit_stores([self])

    def abort(self) -> None:
        """Forget the staged parts (their files stay, named by no manifest)."""
        self.staged = []
        self.working = None

    def materialize_tables(self, env: Env) -> None:
        """Write the tables of a USING graph into the store (once), so a later
        script that declares the graph by name reads the same data."""
        if self.manifest()["labels"]:
            return
        self.told_earlier = True  # the graph's own tables, written on creation
        for v in self.graph.vertices:
            if v.using:
                self.append(v.label, True, table_frame(env, self.graph, v), windowed=False)
        for e in self.graph.edges:
            if e.using:
                self.append(e.label, False, table_frame(env, self.graph, e), windowed=False)
        self.commit()


def commit_stores(stores: list[PersistentStore]) -> None:
    """Publish what each of ``stores`` staged, all as one change."""
    stores = [s for s in stores if s.staged]
    if not stores:
        return
    _pause(PAUSE_ENV)
    with locked([s.path for s in stores]):
        manifests = {s.path: s.prepare() for s in stores}
        publish_all(stores[0].root, {p: m for p, m in manifests.items() if m is not None})
    for s in stores:
        m = manifests[s.path]
        assert m is not None
        s.committed(m)


def restore_stores(checkpointed: list[tuple[PersistentStore, dict[str, Any]]]) -> None:
    """Take each store back to a checkpoint's manifest, all as one change (a
    restarted windowed job redoes the windows after its checkpoint).  Each is
    published as a new version, so versions only grow; unfinished changes of
    the stopped job are dropped."""
    if not checkpointed:
        return
    root = checkpointed[0][0].root
    manifests: dict[Path, dict[str, Any]] = {}
    with locked([s.path for s, _ in checkpointed]):
        for store, manifest in checkpointed:
            forget(store.root, store.path)
            latest = store.on_disk()
            version = max(int(latest.get("version", 0)), int(manifest.get("version", 0))) + 1
            manifests[store.path] = {"version": version, "labels": manifest.get("labels", {})}
        publish_all(root, manifests)
    for store, manifest in checkpointed:
        store.history[int(manifest.get("version", 0))] = manifest
        store.told_earlier = True  # a restarted job's own data, not news
        store.abort()
        store.committed(manifests[store.path])
