"""What a plan's sources read in one evaluation, passed in explicitly.

A batch statement reads every table whole and every graph as it is now.  In
a windowed job the same plan is evaluated once per window, and what its
sources read changes from window to window and from statement to statement:
the rows of this window or everything read so far, a graph at an earlier
version, or only what was written to a graph since a version.  ``Reads``
says which, and an evaluation is given one; nothing about it is flipped on a
shared context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from geaflow_sql.core.catalog import GraphInfo, TableInfo


def table_key(table: TableInfo) -> str:
    return f"{table.instance.lower()}.{table.name.lower()}"


def graph_key(graph: GraphInfo) -> str:
    return f"{graph.instance.lower()}.{graph.name.lower()}"


_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True)
class WindowRound:
    """One round of a windowed job: which window, and the job's sources
    (``runtime.connectors.base.WindowSource`` by table key).

    ``statement`` is the statement of the job being run, and
    ``algorithm_state`` the state incremental algorithms keep from window to
    window (per statement and call site; the job checkpoints it)."""

    number: int
    sources: Mapping[str, Any]
    statement: int = 0
    algorithm_state: dict[str, Any] = field(default_factory=dict, compare=False)
    # State stream operators keep between windows (runtime/streaming/kept_state.py),
    # by statement and operator: a cache, rebuilt from the rows so far after a restart.
    operator_state: dict[Any, Any] = field(default_factory=dict, compare=False)

    def reads_table(self, table: TableInfo) -> bool:
        return table_key(table) in self.sources

    def rows(self, table: TableInfo, so_far: bool) -> Any:
        """A source table's rows in this window, or all rows up to it (columns
        c0..cN); None for a table the job does not read in windows."""
        source = self.sources.get(table_key(table))
        if source is None:
            return None
        return source.cumulative(self.number) if so_far else source.window(self.number)

    def held(self, table: TableInfo, so_far: bool) -> Any:
        """Those rows as an Arrow table when the source holds them on the
        driver, else None (the source is not read)."""
        source = self.sources.get(table_key(table))
        return None if source is None else source.held_rows(self.number, so_far)

    def whole(self, table: TableInfo, so_far: bool) -> bool:
        """Are those rows every row of the table (a source read as one window)?"""
        source = self.sources.get(table_key(table))
        return source is not None and source.is_whole(self.number, so_far)


@dataclass(frozen=True)
class Reads:
    """What one evaluation of a (sub-)plan reads.

    * ``window``: the round of a windowed job (None in batch);
    * ``so_far``: windowed table scans read every row so far, not only the
      window's (graphs defined USING a windowed table always do);
    * ``versions``: graph key -> the version of that graph to read (the
      current one when absent);
    * ``frames``: (graph key, label, is_vertex) -> the rows to read for that
      label instead of the store's (a delta, a restricted set).
    """

    window: WindowRound | None = None
    so_far: bool = False
    versions: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    frames: Mapping[tuple[str, str, bool], Any] = field(default_factory=lambda: _EMPTY)

    def table_rows(self, table: TableInfo) -> Any:
        """A scan's rows when the table is read in windows, else None."""
        return None if self.window is None else self.window.rows(table, self.so_far)

    def reads_in_windows(self, table: TableInfo) -> bool:
        return self.window is not None and self.window.reads_table(table)

    def held_table_rows(self, table: TableInfo) -> Any:
        """A windowed scan's rows held on the driver (Arrow), else None."""
        return None if self.window is None else self.window.held(table, self.so_far)

    def whole_table(self, table: TableInfo) -> bool:
        """Does a scan of a table read in windows read all of it here?"""
        return self.window is not None and self.window.whole(table, self.so_far)

    def version_of(self, graph: GraphInfo) -> int | None:
        return self.versions.get(graph_key(graph))

    def at_version(self, graph: GraphInfo, version: int) -> Reads:
        return replace(
            self, versions=MappingProxyType({**self.versions, graph_key(graph): version})
        )

    def at_versions(self, versions: Mapping[str, int]) -> Reads:
        return replace(self, versions=MappingProxyType(dict(versions)))

    def serving(self, graph: GraphInfo, rows: Mapping[tuple[str, bool], Any]) -> Reads:
        """These reads, except that the given labels of ``graph`` read ``rows``
        ((label, is_vertex) -> DataFrame of the label's declared columns)."""
        key = graph_key(graph)
        frames = {k: v for k, v in self.frames.items() if k[0] != key}
        frames.update(
            {(key, label.lower(), is_vertex): df for (label, is_vertex), df in rows.items()}
        )
        return replace(self, frames=MappingProxyType(frames))

    def served(self, graph: GraphInfo, label: str, is_vertex: bool) -> Any:
        return self.frames.get((graph_key(graph), label.lower(), is_vertex))
