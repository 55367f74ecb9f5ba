"""The console's sessions: one per named workspace, all on one Spark.

A browser tab names its workspace (a new tab a new name); each workspace is
a Session of its own, so one tab's tables, graphs, ``USE GRAPH`` and ``SET``
values are never another's.  A workspace runs one request at a time (a
second one while it is busy is refused, not queued behind a long job), and
its running statement can be cancelled from another request.  A query's
first rows (up to ``max_rows``) are kept under a result id for the pages
after the first.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import CancelledError, GeaflowError
from ..plan_pictures import graphviz_available, svg_of
from ..session import Session
from .catalog_view import catalog_json
from .editing import completions
from .json_values import json_rows

# Results kept for paging, across workspaces (the oldest go first).
KEPT_RESULTS = 32


class ConsoleError(Exception):
    """A request the console refuses: an HTTP status and a JSON body."""

    def __init__(
        self, status: int, body: dict[str, Any], cause: GeaflowError | None = None
    ) -> None:
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body
        # (the user error it answers, when there is one: the CLI prints it whole)
        self.cause = cause


@dataclass
class Workspace:
    session: Session
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Opening:
    """A workspace being opened: ``done`` once its init script has run (or
    failed with ``error``); ``session`` the Session it runs in, to cancel;
    ``cancelled`` once a cancel came for it (before its init script started
    a job, the Session has nothing to cancel yet: the script does not start)."""

    done: threading.Event = field(default_factory=threading.Event)
    session: Session | None = None
    error: ConsoleError | None = None
    cancelled: bool = False


@dataclass(frozen=True)
class KeptResult:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class Workspaces:
    """The named workspaces of one server.

    ``new_session()`` makes a workspace's Session; ``init`` (script text and
    its name) runs in each new workspace first.  ``max_rows``: the most rows
    of a query the console fetches; ``max_workspaces``: the most it keeps.
    ``first``: a Session made already, taken by the first workspace opened.
    ``open_wait``: how many seconds a request for a workspace that another
    request is opening waits for it before it is refused (503, to ask again)."""

    def __init__(
        self,
        new_session: Callable[[], Session],
        init: tuple[str, str] | None = None,
        max_rows: int = 10_000,
        max_workspaces: int = 64,
        first: Session | None = None,
        open_wait: float = 120.0,
    ) -> None:
        self._new_session = new_session
        self._init = init
        self.max_rows = max_rows
        self.max_workspaces = max_workspaces
        self._first = first
        self.open_wait = open_wait
        self._lock = threading.Lock()
        self._spaces: dict[str, Workspace] = {}
        # Workspaces being opened (their init script running), by name: a
        # request for one waits for it; requests for others do not.
        self._opening: dict[str, _Opening] = {}
        self._closed = False
        self._results: OrderedDict[str, KeptResult] = OrderedDict()

    # ------------------------------------------------------------ workspaces
    def workspace(self, name: str) -> Workspace:
        """Workspace ``name``, opened (its init script run) if it is new.  A
        request for one another request is opening waits for it and answers
        as it does (the workspace, or the error its init script failed with)."""
        with self._lock:
            if self._closed:
                raise _stopping()
            found = self._spaces.get(name)
            if found is not None:
                return found
            opening = self._opening.get(name)
            mine = opening is None
            if opening is None:
                if len(self._spaces) + len(self._opening) >= self.max_workspaces:
                    raise ConsoleError(
                        429, {"error": f"at most {self.max_workspaces} workspaces are open"}
                    )
                opening = self._opening[name] = _Opening()
                session, self._first = self._first, None
        if not mine:
            if not opening.done.wait(self.open_wait):
                raise ConsoleError(
                    503,
                    {
                        "error": f"workspace {name!r} is still opening after "
                        f"{self.open_wait:g} s (its init script runs): ask again later"
                    },
                )
            if opening.error is not None:
                raise _again(opening.error)
            with self._lock:
                found = self._spaces.get(name)
            if found is None:  # (the console closed meanwhile)
                raise _stopping()
            return found
        space = None
        try:
            try:
                space = self._open(opening, session)
            except Exception as err:
                opening.error = self._refusal(err)
                raise opening.error from None
            finally:
                with self._lock:
                    # (one step: the name never counts twice, nor is left out)
                    del self._opening[name]
                    closed = self._closed
                    if space is not None and not closed:
                        self._spaces[name] = space
            if space is not None and closed:
                opening.error = _stopping()
                space.session.close()
                raise _again(opening.error)
        finally:
            opening.done.set()
        return space

    def _refusal(self, err: Exception) -> ConsoleError:
        """How a workspace that failed to open is answered, to every request
        waiting for it: an init script's error with its place in that script."""
        if isinstance(err, ConsoleError):
            return err
        if isinstance(err, GeaflowError) and self._init is not None:
            body = error_body(err, self._init[0])
            if isinstance(err, CancelledError):
                body["error"] = "the workspace's init script was cancelled"
            else:
                body["error"] = f"the workspace's init script failed: {body['error']}"
            return ConsoleError(500, body, err)
        return ConsoleError(
            500, {"error": f"the workspace could not open: {type(err).__name__}: {err}"}
        )

    def _open(self, opening: _Opening, session: Session | None) -> Workspace:
        """A new workspace's Session, its init script run (outside the lock:
        other workspaces go on meanwhile); none once the console closes."""
        if self._closed:
            raise _stopping()
        if session is None:
            session = self._new_session()
        opening.session = session
        try:
            if self._closed:
                raise _stopping()
            if self._init is not None:
                text, source = self._init
                with session.cancellable():
                    # (a cancel from here on finds this block's tag)
                    if opening.cancelled:
                        raise CancelledError("cancelled before it started")
                    session.execute(text, source)
        except BaseException:
            session.close()
            raise
        return Workspace(session)

    def close(self) -> None:
        """Close every workspace; one still opening is closed once its init
        script stops (its running Spark jobs are cancelled now)."""
        with self._lock:
            self._closed = True
            spaces = list(self._spaces.values())
            self._spaces.clear()
            opening = [o.session for o in self._opening.values() if o.session is not None]
        for session in opening:
            session.cancel()
        for space in spaces:
            space.session.close()

    # ------------------------------------------------------------ statements
    def run(self, name: str, text: str, page_size: int) -> dict[str, Any]:
        """Run ``text`` (one statement or a script) in workspace ``name``:
        the last statement's answer, a query's first page of rows."""
        space = self.workspace(name)
        with _running(space, name):
            session = space.session
            with session.cancellable():
                try:
                    results = session.execute(text, "<console>")
                    last = results[-1] if results else None
                    if last is None:
                        return {"message": "no statement to run"}
                    warnings = [w for r in results for w in r.warnings]
                    if last.query is None:
                        return _message(last, warnings)
                    query = last.query
                    table = query.head_arrow(self.max_rows + 1)
                except GeaflowError as err:
                    raise ConsoleError(400, error_body(err, text)) from None
            kept = KeptResult(
                list(query.columns),
                json_rows(table.slice(0, self.max_rows), query.time_zone),
                table.num_rows > self.max_rows,
            )
        result_id = self._keep(kept)
        out = self.page(result_id, 0, page_size)
        if warnings:
            out["warnings"] = warnings
        return out

    def explain(self, name: str, text: str) -> dict[str, Any]:
        """The plans of ``text``'s last query or INSERT in workspace ``name``,
        as text and as a picture (DOT, and SVG when Graphviz is installed);
        its definitions run as they would."""
        space = self.workspace(name)
        with _running(space, name):
            try:
                results = list(space.session.iter_execute(text, "<console>", explain=True))
            except GeaflowError as err:
                raise ConsoleError(400, error_body(err, text)) from None
        explained = [r for r in results if r.kind == "explain"]
        if not explained:
            raise ConsoleError(400, {"error": "no query or INSERT to explain"})
        last = explained[-1]
        dot = last.extra.get("dot")
        # (drawn here when the server has Graphviz: its picture nests the
        # ExecutionGroups as boxes, which the page's own layout cannot)
        svg = None
        if dot and graphviz_available():
            with contextlib.suppress(GeaflowError):  # (Graphviz failed: the page lays it out)
                svg = svg_of(dot)
        return {"text": last.text or "", "dot": dot, "svg": svg}

    def complete(self, name: str, text: str, cursor: int) -> list[dict[str, Any]]:
        """The shell's completions at ``cursor`` over workspace ``name``'s catalog."""
        return completions(self.workspace(name).session, text, cursor)

    def catalog(self, name: str) -> dict[str, Any]:
        return catalog_json(self.workspace(name).session.catalog)

    def progress(self, name: str) -> dict[str, Any]:
        """Whether workspace ``name`` runs a statement, and its Spark tasks so far."""
        with self._lock:
            space = self._spaces.get(name)
        if space is None or not space.lock.locked():
            return {"running": False, "done": 0, "total": 0}
        done, total = space.session.progress()
        return {"running": True, "done": done, "total": total}

    def cancel(self, name: str) -> bool:
        """Cancel the Spark jobs of the statement workspace ``name`` runs now,
        or of its init script while it opens: False when it runs none."""
        with self._lock:
            space = self._spaces.get(name)
            opening = self._opening.get(name) if space is None else None
            if opening is not None:
                opening.cancelled = True  # (its init script may not have started)
        if opening is not None:
            if opening.session is not None:
                opening.session.cancel()
            return True
        if space is None or not space.lock.locked():
            return False
        space.session.cancel()
        return True

    # --------------------------------------------------------------- results
    def _keep(self, kept: KeptResult) -> str:
        result_id = uuid.uuid4().hex
        with self._lock:
            self._results[result_id] = kept
            while len(self._results) > KEPT_RESULTS:
                self._results.popitem(last=False)
        return result_id

    def page(self, result_id: str, offset: int, limit: int) -> dict[str, Any]:
        with self._lock:
            kept = self._results.get(result_id)
        if kept is None:
            raise ConsoleError(
                404, {"error": f"no result {result_id!r} (results are kept a while)"}
            )
        return {
            "columns": kept.columns,
            "rows": kept.rows[offset : offset + limit],
            "offset": offset,
            "total": len(kept.rows),
            "truncated": kept.truncated,
            "result": result_id,
        }


def _stopping() -> ConsoleError:
    """The refusal of a request that comes while the console closes."""
    return ConsoleError(503, {"error": "the console is stopping"})


def _again(refusal: ConsoleError) -> ConsoleError:
    """A refusal told again (to another request: its own exception object)."""
    return ConsoleError(refusal.status, dict(refusal.body), refusal.cause)


@contextmanager
def _running(space: Workspace, name: str) -> Iterator[None]:
    """Inside: the workspace runs this request (refused while it runs another)."""
    if not space.lock.acquire(blocking=False):
        raise ConsoleError(409, {"error": f"workspace {name!r} is running a statement"})
    try:
        yield
    finally:
        space.lock.release()


def _message(result: Any, warnings: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"message": result.message or result.kind}
    if result.text is not None:
        out["text"] = result.text
    if result.rows_written is not None:
        out["rows_written"] = result.rows_written
    if warnings:
        out["warnings"] = warnings
    return out


def error_body(err: GeaflowError, text: str) -> dict[str, Any]:
    """A user error as the API answers it: the message, and where it is."""
    err.with_context(text=text, source="<console>")
    return {"error": err.message, "line": err.line, "column": err.column, "kind": err.kind}
