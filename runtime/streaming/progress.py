"""What a front end sees of a running windowed job, and how it stops one.

A windowed job reports each window once it is done (and checkpointed, when the
job has a checkpoint folder); a front end may ask it to stop after the window
it is running, which ends the job as if its sources had ended there, with the
checkpoint intact, so that running it again goes on from the next window.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class WindowReport:
    window: int  # 0-based
    rows_in: int | None  # rows the window read from its sources (None: not known)
    rows_out: int | None  # rows its statements wrote (None: a sink did not count)
    seconds: float
    checkpointed: bool  # the job's checkpoint now holds this window


class WindowControl:
    def __init__(self) -> None:
        self.listener: Callable[[WindowReport], None] | None = None
        # Called on the job's thread as a job starts (Spark is up by then).
        self.on_start: Callable[[], None] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._running = False

    @property
    def running(self) -> bool:
        """Is a windowed job running now?"""
        return self._running

    def request_stop(self) -> bool:
        """Stop the running windowed job after its current window (from any
        thread); False when no windowed job is running."""
        with self._lock:
            if not self._running:
                return False
            self._stop.set()
            return True

    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def started(self) -> None:
        with self._lock:
            self._stop.clear()
            self._running = True
        if self.on_start is not None:
            self.on_start()

    def ended(self) -> None:
        with self._lock:
            self._running = False
            self._stop.clear()

    def report(self, report: WindowReport) -> None:
        if self.listener is not None:
            self.listener(report)
