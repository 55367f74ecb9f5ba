"""The DB-API cursor: runs statements on its connection's session and fetches rows.

A query's rows arrive from Spark as one Arrow table; ``fetch*`` turn slices of
it into tuples on demand, and ``fetch_arrow_table()`` hands the rest over
without copying.  SHOW / DESCRIBE / SET results are result sets too (of text
columns), and EXPLAIN is a one-row result set with a ``plan`` column, so any
tool that only knows cursors can read them.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from geaflow_sql.core import types as T
from runtime.results import StatementResult, python_values

from .exceptions import NotSupportedError, ProgrammingError, Warning
from .types import describe_column

if TYPE_CHECKING:
    from .connection import Connection

_CHUNK = 1024  # rows converted from Arrow to tuples at a time


class Cursor:
    """A PEP 249 cursor.  Not safe to share between threads; make one per thread."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        #: Rows ``fetchmany()`` returns by default (PEP 249).
        self.arraysize = 1
        self.description: tuple[tuple[Any, ...], ...] | None = None
        self.rowcount = -1
        #: No row ids in GeaFlow tables (PEP 249 extension).
        self.lastrowid: Any = None
        #: What each statement of the last ``execute`` did (geaflow-sql extension).
        self.results: list[StatementResult] = []
        #: PEP 249 extension: (Warning, text) for what the last ``execute`` warned.
        self.messages: list[tuple[type[Warning], str]] = []
        self._closed = False
        self._table: Any = None  # pyarrow.Table of the current result set
        self._zone: str | None = None  # the time zone its statement ran in
        self._next = 0  # index of the next row to hand out
        self._buffer: collections.deque[tuple[Any, ...]] = collections.deque()
        self._converted = 0  # rows of the table already turned into tuples

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Free the result set; the cursor cannot be used afterwards."""
        self._closed = True
        self._reset()

    @property
    def closed(self) -> bool:
        return self._closed or self.connection.closed

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ProgrammingError("the cursor is closed")
        self.connection._check_open()

    def _reset(self) -> None:
        self.messages.clear()
        self.description = None
        self.rowcount = -1
        self.results = []
        self._table = None
        self._next = 0
        self._converted = 0
        self._buffer.clear()

    # ------------------------------------------------------------ execution
    def execute(self, operation: str, parameters: Any = None) -> Cursor:
        """Run a statement, or a script of ``;``-separated statements.

        ``parameters`` is a sequence for ``?`` placeholders or a mapping for
        ``:name`` ones; values are bound as typed literals, never put into the
        text.  After a script the cursor holds the last statement's result.
        """
        self._check_open()
        self._reset()
        results, table = self.connection._run(operation, parameters)
        self._install(results, table)
        return self

    def executemany(self, operation: str, seq_of_parameters: Iterable[Any]) -> Cursor:
        """Run ``operation`` once per parameter set, all as one job.

        ``rowcount`` is the total of rows written when every run reports it.
        A query's result set is not kept (PEP 249 leaves it undefined).
        """
        self._check_open()
        self._reset()
        results = self.connection._run_many(operation, list(seq_of_parameters))
        self.results = results
        written = [r.rows_written for r in results if r.kind == "insert"]
        if written and all(w is not None for w in written):
            self.rowcount = sum(w for w in written if w is not None)
        return self

    def callproc(self, procname: str, parameters: Sequence[Any] = ()) -> Any:
        """GeaFlow has no stored procedures; graph algorithms run with ``CALL`` inside MATCH."""
        self._check_open()
        raise NotSupportedError(
            "geaflow-sql has no stored procedures; run graph algorithms with "
            "MATCH ... CALL algo(...) YIELD (...) RETURN ... through execute()"
        )

    def nextset(self) -> bool | None:
        """Each execute keeps one result set (the last statement's), so there is no next one."""
        self._check_open()
        return None

    def setinputsizes(self, sizes: Any) -> None:
        """Accepted and ignored, as PEP 249 allows."""

    def setoutputsize(self, size: Any, column: int | None = None) -> None:
        """Accepted and ignored, as PEP 249 allows."""

    def _install(self, results: list[StatementResult], table: Any) -> None:
        self.results = results
        # PEP 249's optional ``messages``: (class, text) of what the statements warned.
        self.messages.extend((Warning, w) for r in results for w in r.warnings)
        last = results[-1] if results else None
        if last is None:
            return
        if table is not None:
            self._table = table
            self._zone = last.query.time_zone if last.query is not None else None
            self.rowcount = table.num_rows
            types = _result_types(last, table)
            self.description = tuple(
                describe_column(name, t) for name, t in zip(table.column_names, types, strict=True)
            )
        elif last.kind == "insert":
            self.rowcount = last.rows_written if last.rows_written is not None else -1

    # -------------------------------------------------------------- fetching
    def _check_result(self) -> None:
        self._check_open()
        if self._table is None:
            if not self.results:
                raise ProgrammingError("no result set: call execute() with a query first")
            kind = self.results[-1].kind
            raise ProgrammingError(f"no result set: the last statement ({kind}) returns no rows")

    def _fill(self, wanted: int) -> None:
        """Convert rows from Arrow until ``wanted`` are buffered or the table ends."""
        table = self._table
        while len(self._buffer) < wanted and self._converted < table.num_rows:
            n = max(_CHUNK, wanted - len(self._buffer))
            chunk = table.slice(self._converted, n)
            columns = [python_values(c, self._zone) for c in chunk.columns]
            self._buffer.extend(zip(*columns, strict=True) if columns else [()] * chunk.num_rows)
            self._converted += chunk.num_rows

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None when there are no more."""
        self._check_result()
        self._fill(1)
        if not self._buffer:
            return None
        self._next += 1
        return self._buffer.popleft()

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """Up to ``size`` (default ``arraysize``) further rows."""
        self._check_result()
        n = self.arraysize if size is None else size
        if n < 0:
            raise ProgrammingError(f"fetchmany size must not be negative, got {n}")
        self._fill(n)
        rows = [self._buffer.popleft() for _ in range(min(n, len(self._buffer)))]
        self._next += len(rows)
        return rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        """All remaining rows."""
        self._check_result()
        self._fill(self._table.num_rows - self._next)
        rows = list(self._buffer)
        self._buffer.clear()
        self._next += len(rows)
        return rows

    def fetch_arrow_table(self) -> Any:
        """The remaining rows as a ``pyarrow.Table``, without copying them."""
        self._check_result()
        rest = self._table.slice(self._next)
        self._next = self._converted = self._table.num_rows
        self._buffer.clear()
        return rest

    def fetch_df(self) -> Any:
        """The remaining rows as a pandas DataFrame."""
        return self.fetch_arrow_table().to_pandas()

    @property
    def rownumber(self) -> int | None:
        """Index of the next row in the result set (PEP 249 extension)."""
        return self._next if self._table is not None else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self

    def __next__(self) -> tuple[Any, ...]:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def next(self) -> tuple[Any, ...]:
        """PEP 249 extension: the same as ``next(cursor)``."""
        return self.__next__()


def _result_types(result: StatementResult, table: Any) -> list[Any]:
    if result.query is not None and len(result.query.types) == table.num_columns:
        return list(result.query.types)
    return [T.VARCHAR] * table.num_columns
