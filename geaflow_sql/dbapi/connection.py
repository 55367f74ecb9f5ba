"""The DB-API connection: one geaflow-sql Session (catalog, configuration, graphs).

Each connection has its own catalog and settings (``USE GRAPH``, ``SET``), so
two connections never see each other's tables or current graph, even on one
SparkSession.  Connections opened on one shared Session share its tables and
graphs, and keep their own current graph and settings.  Statements commit as they run: ``commit()`` has nothing to do
and ``rollback()`` raises NotSupportedError.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from geaflow_sql.core.errors import GeaflowError, ParseError
from runtime.results import StatementResult

from . import exceptions as exc
from .cursor import Cursor
from .params import bind_parameters

SOURCE = "<sql>"


class Connection:
    """A PEP 249 connection.  Make one per thread (``threadsafety`` is 1)."""

    # PEP 249 optional extension: the exception classes as attributes.
    Warning = exc.Warning
    Error = exc.Error
    InterfaceError = exc.InterfaceError
    DatabaseError = exc.DatabaseError
    DataError = exc.DataError
    OperationalError = exc.OperationalError
    IntegrityError = exc.IntegrityError
    InternalError = exc.InternalError
    ProgrammingError = exc.ProgrammingError
    NotSupportedError = exc.NotSupportedError

    def __init__(self, session: Any, *, owns_session: bool = True) -> None:
        self._session = session
        self._owns_session = owns_session
        self._closed = False
        self._lock = threading.RLock()
        self._idle = threading.Event()
        self._idle.set()
        self._cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()

    # ------------------------------------------------------------ properties
    @property
    def session(self) -> Any:
        """The geaflow-sql Session behind this connection."""
        return self._session

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def graph(self) -> str | None:
        """The current graph (``USE GRAPH``) of this connection."""
        return self._session.catalog.current_graph

    @property
    def autocommit(self) -> bool:
        """Always true: every statement commits as it runs."""
        return True

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connection and its cursors; later use raises ProgrammingError."""
        if self._closed:
            return
        self._closed = True
        for cursor in list(self._cursors):
            cursor.close()
        if self._owns_session:
            self._session.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise exc.ProgrammingError("the connection is closed")

    # ---------------------------------------------------------- transactions
    def commit(self) -> None:
        """Nothing to do: each statement's output is committed when it finishes."""
        self._check_open()

    def rollback(self) -> None:
        """GeaFlow has no transactions, so there is nothing to roll back to."""
        self._check_open()
        raise exc.NotSupportedError(
            "geaflow-sql has no transactions: every statement commits as it runs"
        )

    # --------------------------------------------------------------- cursors
    def cursor(self) -> Cursor:
        self._check_open()
        cursor = Cursor(self)
        self._cursors.add(cursor)
        return cursor

    def execute(self, operation: str, parameters: Any = None) -> Cursor:
        """Shortcut (as in sqlite3): a new cursor that has run ``operation``."""
        return self.cursor().execute(operation, parameters)

    def cancel(self, timeout: float = 30.0) -> bool:
        """Cancel the statement running on this connection, from another thread.

        Spark only cancels jobs that have started, so the request repeats until
        the statement has stopped (or ``timeout`` seconds pass).  Returns
        whether the connection is idle afterwards.
        """
        deadline = time.monotonic() + timeout
        while not self._idle.is_set() and time.monotonic() < deadline:
            self._session.cancel()
            self._idle.wait(0.2)
        return self._idle.is_set()

    # ------------------------------------------------------------- internals
    def _run(self, operation: str, parameters: Any) -> tuple[list[StatementResult], Any]:
        """Run a script; return its results and the last result's rows as Arrow."""
        with self._lock, self._busy():
            script = _parse(operation)
            with _as_dbapi_errors(script):
                params = bind_parameters(script, parameters)
                with self._session.cancellable():
                    try:
                        results = list(
                            self._session.iter_execute(script, SOURCE, parameters=params)
                        )
                        table = _rows_of(results[-1], script) if results else None
                    except KeyboardInterrupt:  # Ctrl-C in a REPL: stop the Spark jobs too
                        self._session.cancel()
                        raise
            return results, table

    def _run_many(self, operation: str, seq_of_parameters: list[Any]) -> list[StatementResult]:
        with self._lock, self._busy():
            script = _parse(operation)
            with _as_dbapi_errors(script):
                sets = [bind_parameters(script, p) for p in seq_of_parameters]
                if not sets:
                    return []
                with self._session.cancellable():
                    return self._session.execute_many(operation, sets, SOURCE)

    def _busy(self) -> _Busy:
        self._check_open()
        return _Busy(self._idle)


class _Busy:
    """Marks the connection busy while a statement runs (``cancel`` waits on it)."""

    def __init__(self, idle: threading.Event) -> None:
        self._idle = idle

    def __enter__(self) -> None:
        self._idle.clear()

    def __exit__(self, *exc_info: Any) -> None:
        self._idle.set()


@contextlib.contextmanager
def _as_dbapi_errors(script: Any) -> Iterator[None]:
    """Errors of running ``script`` as the PEP 249 classes (no raw traceback)."""
    try:
        yield
    except GeaflowError as err:
        raise exc.translate(err, text=script.text, source=SOURCE) from None
    except exc.Error:
        raise
    except Exception as err:
        raise _internal(err) from (err if _debug() else None)


def _debug() -> bool:
    return bool(os.environ.get("GEAFLOW_SQL_DEBUG"))


def _internal(err: Exception) -> exc.Error:
    return exc.translate(err)


def _parse(operation: Any) -> Any:
    from grammar.parser import parse

    if not isinstance(operation, str):
        raise exc.ProgrammingError(
            f"the operation must be a string of GeaFlow DSL, not a {type(operation).__name__}"
        )
    try:
        return parse(operation, SOURCE)
    except ParseError as err:
        raise exc.translate(err, text=operation, source=SOURCE) from None


def _rows_of(result: StatementResult, script: Any) -> Any:
    """The last statement's rows as a pyarrow.Table, or None if it has none."""
    import pyarrow as pa

    if result.query is not None:
        try:
            return result.query.to_arrow()
        except GeaflowError as err:
            # Rows are fetched after the statement returned: point at the statement.
            err.at(script.statements[-1].span)
            raise
    rows = result.extra.get("rows") if result.extra else None
    if rows is not None:
        columns = list(result.extra["columns"])
        data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
        return pa.table({c: pa.array(v, type=pa.string()) for c, v in data.items()})
    if result.kind == "explain" or (result.kind == "info" and result.text is not None):
        name = "plan" if result.kind == "explain" else "info"
        return pa.table({name: pa.array([result.text or ""], type=pa.string())})
    return None


def connect(
    master: str | None = None,
    conf: Mapping[str, Any] | None = None,
    graph: str | None = None,
    spark: Any = None,
    *,
    session: Any = None,
    base_dir: str | None = None,
    init: str | None = None,
    remote: str | None = None,
) -> Connection:
    """Open a connection: a new Session, or a scope of ``session`` to share
    its tables and graphs (``Session.scope``: the connection's ``USE GRAPH``
    and ``SET`` stay its own, so pooled connections on one session, in any
    threads, never run on each other's graph or settings).

    ``master``/``remote``/``conf``/``spark`` are as for ``Session``; ``init`` is a script
    file run first (to define tables and graphs), relative to ``base_dir``;
    ``graph`` is made the current graph (``USE GRAPH``).  Spark starts on the
    first statement that needs it, not here.
    """
    if session is not None:
        conn = Connection(session.scope(), owns_session=False)
    else:
        from geaflow_sql.session import Session

        try:
            created = Session(
                master=master, conf=dict(conf or {}), remote=remote, spark=spark, base_dir=base_dir
            )
        except GeaflowError as err:
            raise exc.translate(err) from None
        conn = Connection(created, owns_session=True)
    try:
        if init:
            path = init if os.path.isabs(init) else os.path.join(conn.session.base_dir, init)
            try:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError as err:
                raise exc.OperationalError(
                    f"cannot read init script {init}: {err.strerror}"
                ) from None
            try:
                with conn._lock, conn._busy(), conn.session.cancellable():
                    conn.session.execute(text, init)
            except GeaflowError as err:
                raise exc.translate(err, text=text, source=init) from None
        if graph:
            conn.cursor().execute("USE GRAPH " + _quote(graph))
    except BaseException:
        conn.close()
        raise
    return conn


def _quote(name: str) -> str:
    """A (possibly qualified) graph name as backquoted identifiers."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))
