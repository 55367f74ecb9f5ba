"""Tags on a session's Spark jobs, so another thread can cancel them.

A statement tags the jobs it starts; a query's rows are fetched lazily,
after the statement has returned, so front ends that fetch (the shell, the
DB-API) wrap statement and fetch in a ``scope`` and both can be cancelled.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from geaflow_sql.core.errors import CancelledError

from .spark_adapter import cancel_jobs, tag_jobs, tagged_job_progress, untag_jobs


class LocalRuns:
    """Work running outside Spark now (DuckDB connections), so a cancel can interrupt it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, Any] = {}
        self.cancelled: set[int] = set()

    def add(self, con: Any) -> None:
        with self._lock:
            self._running[id(con)] = con

    def remove(self, con: Any) -> bool:
        """Forget ``con``; was it cancelled?"""
        with self._lock:
            self._running.pop(id(con), None)
            was = id(con) in self.cancelled
            self.cancelled.discard(id(con))
            return was

    def interrupt_all(self) -> None:
        with self._lock:
            running = list(self._running.values())
            self.cancelled.update(id(c) for c in running)
        for con in running:
            con.interrupt()


# How often a cancelled statement's tag is cancelled again until the
# statement ends (it may start another Spark job before it next asks
# ``check``).
RECANCEL_SECONDS = 0.25


class JobTags:
    """The tags of the jobs running now, and which of them were cancelled.

    Spark stops a cancelled job, and a cancelled tag's later jobs are
    cancelled as they start (within ``RECANCEL_SECONDS``) until its block
    ends; work that runs no Spark job (a window held on the driver, the rounds
    of a driver-side iteration) asks ``check`` between its steps, which raises
    once a cancel has reached one of this thread's tags.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tags: set[str] = set()
        self._cancelled: set[str] = set()
        self._recanceller: threading.Thread | None = None
        self._mine = threading.local()
        self.local = LocalRuns()

    @contextlib.contextmanager
    def tagged(self, spark: Any, kind: str = "statement") -> Iterator[None]:
        """Tag every Spark job this thread starts inside the block."""
        tag = f"geaflow-sql-{kind}-{uuid.uuid4().hex[:12]}"
        with self._lock:
            self._tags.add(tag)
        mine = self._thread_tags()
        mine.append(tag)
        tag_jobs(spark, tag)
        try:
            yield
        finally:
            untag_jobs(spark, tag)
            mine.remove(tag)
            with self._lock:
                self._tags.discard(tag)
                self._cancelled.discard(tag)

    def _thread_tags(self) -> list[str]:
        tags: list[str] | None = getattr(self._mine, "tags", None)
        if tags is None:
            tags = self._mine.tags = []
        return tags

    def check(self) -> None:
        """Raise ``CancelledError`` if this thread's work was cancelled."""
        mine = self._thread_tags()
        if mine and any(tag in self._cancelled for tag in mine):
            raise CancelledError("the statement was cancelled")

    def progress(self, spark: Any) -> tuple[int, int]:
        """(completed tasks, total tasks) of the tagged jobs running now."""
        with self._lock:
            tags = list(self._tags)
        return tagged_job_progress(spark, tags) if tags else (0, 0)

    def cancel(self, spark: Any) -> None:
        """Cancel the tagged jobs running now (from any thread)."""
        with self._lock:
            tags = list(self._tags)
            self._cancelled.update(tags)
        self.local.interrupt_all()
        for tag in tags:
            cancel_jobs(spark, tag)
        with self._lock:
            if self._recanceller is None and self._cancelled:
                self._recanceller = threading.Thread(
                    target=self._keep_cancelling,
                    args=(spark,),
                    name="geaflow-sql-cancel",
                    daemon=True,
                )
                self._recanceller.start()

    def _keep_cancelling(self, spark: Any) -> None:
        """Cancel the cancelled tags' jobs again and again until their blocks
        end (a block's end forgets its tag): a statement runs several Spark
        jobs, and one it starts after the cancel reached it would otherwise
        run to its end."""
        try:
            while True:
                time.sleep(RECANCEL_SECONDS)
                with self._lock:
                    live = list(self._cancelled)
                    if not live:
                        self._recanceller = None
                        return
                for tag in live:
                    cancel_jobs(spark, tag)
        except Exception:  # noqa: BLE001 - the session stopped: no job is left to cancel
            with self._lock:
                self._recanceller = None
