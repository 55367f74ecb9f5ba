"""What operators need while they run: Spark, config, catalog, graph stores, paths."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import Catalog
from geaflow_sql.core.config import PERSISTENT_ROOT, RESOURCE_ROOT, Config


@dataclass
class Metrics:
    spark_actions: int = 0
    rows_written: int = 0
    bad_rows_skipped: int = 0

    def reset(self) -> None:
        self.spark_actions = 0
        self.rows_written = 0
        self.bad_rows_skipped = 0


@dataclass
class RuntimeContext:
    spark: Any
    config: Config
    catalog: Catalog
    stores: Any  # runtime.stores.GraphStores
    metrics: Metrics = field(default_factory=Metrics)
    # Where relative paths and resource:/// paths point.
    base_dir: str = field(default_factory=os.getcwd)
    # Text the console sink printed (also written to stdout).
    console: list[str] = field(default_factory=list)
    job_tag: str | None = None
    # The round of a windowed job being run (runtime.streaming.job.WindowState).
    window: Any = None
    # State incremental algorithms keep between windows (checkpointed).
    window_algorithm_state: dict[str, Any] = field(default_factory=dict)
    # Local files written by this job: the first write replaces, later ones append.
    files_written: set[str] = field(default_factory=set)
    # (table name, pyspark Observation) of text scans that skip bad rows; read
    # once the statement's action ran (see ``bad_rows_skipped``).
    bad_row_observations: list[tuple[str, Any]] = field(default_factory=list)
    # Tables a graph is defined USING, read once per statement (see
    # runtime.stores.memory.table_frame); emptied when a statement starts.
    table_frames: dict[Any, Any] = field(default_factory=dict)

    def bad_rows_skipped(self) -> dict[str, int]:
        """Bad rows skipped per table by the scans of the statement that just ran.

        Reads (and forgets) the observations: call it after the Spark action.
        """
        from runtime.connectors.file import observed_bad_rows

        counts: dict[str, int] = {}
        for table, observation in self.bad_row_observations:
            counts[table] = counts.get(table, 0) + observed_bad_rows(observation)
        self.bad_row_observations.clear()
        self.metrics.bad_rows_skipped += sum(counts.values())
        return counts

    def window_input(self, scan: Any) -> Any:
        """A table scan's rows in the current window (None outside windowed jobs)."""
        if self.window is None:
            return None
        return self.window.table_frame(scan.table)

    def window_table(self, table: Any) -> Any:
        """All rows read so far of a table backing a USING graph, in a windowed job."""
        if self.window is None:
            return None
        return self.window.table_frame(table, cumulative=True)

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
