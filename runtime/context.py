"""The runtime context: what every statement of a script runs with.

Spark, the job configuration, the catalog and the graph stores, where paths
point, and what the job's sinks and scans have recorded so far.  What changes
from one evaluation to the next (a window, a graph version) is not here: it
is passed to each evaluation as ``runtime.reads.Reads``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from geaflow_sql.core.catalog import Catalog, GraphInfo
from geaflow_sql.core.config import LOCAL_QUERY_MAX_BYTES, PERSISTENT_ROOT, RESOURCE_ROOT, Config

from .connectors.text_format import observed_bad_rows


class GraphStoreAccess(Protocol):
    """The session's graph stores (``runtime.stores.registry.GraphStores``)."""

    stores: dict[str, Any]
    frames: Any  # runtime.stores.frame_memo.FrameMemo

    def store(self, ctx: RuntimeContext, graph: GraphInfo) -> Any: ...

    def create(self, ctx: RuntimeContext, graph: GraphInfo) -> None: ...

    def drop(self, name: str) -> None: ...

    def write(self, env: Any, node: Any, df: Any) -> int: ...

    def rows_writer(self, env: Any, node: Any) -> Any: ...

    def commit_all(self) -> None: ...

    def abort_all(self) -> None: ...


@dataclass
class RuntimeContext:
    spark: Any
    config: Config
    catalog: Catalog
    stores: GraphStoreAccess
    # Where relative paths and resource:/// paths point.
    base_dir: str = field(default_factory=os.getcwd)
    # Local files written by this job: the first write replaces, later ones append.
    files_written: set[str] = field(default_factory=set)
    # (table name, pyspark Observation) of text scans that skip bad rows; read
    # once the statement's action ran (see ``bad_rows_skipped``).
    bad_row_observations: list[tuple[str, Any]] = field(default_factory=list)
    # Warnings for the user about the statement that just ran (taken by the
    # engine into its result).
    notices: list[str] = field(default_factory=list)

    def bad_rows_skipped(self) -> dict[str, int]:
        """Bad rows skipped per table by the scans of the statement that just ran.

        Reads (and forgets) the observations: call it after the Spark action.
        """
        counts: dict[str, int] = {}
        for table, observation in self.bad_row_observations:
            counts[table] = counts.get(table, 0) + observed_bad_rows(observation)
        self.bad_row_observations.clear()
        return counts

    @property
    def local_bytes(self) -> int:
        """The most bytes a statement's inputs may hold for the driver to read
        them whole (``LOCAL_QUERY_MAX_BYTES``)."""
        return self.config.get_int(LOCAL_QUERY_MAX_BYTES)

    def resource_root(self) -> str:
        root = self.config.get_str(RESOURCE_ROOT)
        return root or self.base_dir

    def resolve_path(self, path: str) -> str:
        """Local or Hadoop-style URI for a table path (``resource:///`` included)."""
        if path.startswith("resource:///"):
            rel = path[len("resource:///") :]
            return str(Path(self.resource_root()) / rel)
        if path.startswith("resource://"):
            rel = path[len("resource://") :]
            return str(Path(self.resource_root()) / rel)
        if path.startswith("file://"):
            return path[len("file://") :]
        if "://" in path or path.startswith("/"):
            return path
        return str(Path(self.base_dir) / path)

    def persistent_root(self) -> str:
        root = self.config.get_str(PERSISTENT_ROOT)
        if root:
            return root
        return str(Path(self.base_dir) / "geaflow-warehouse")
