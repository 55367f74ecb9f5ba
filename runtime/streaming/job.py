"""Windowed jobs: one scheduler round per source window (filled in by the stream work)."""

from __future__ import annotations

from typing import Any

from geaflow_sql.errors import UnsupportedError
from runtime.scheduler import ExecutionCycle


class WindowCycle(ExecutionCycle):
    mode = "per_window"

    def __init__(self, ctx: Any, prepared: Any) -> None:
        super().__init__(prepared.execution.root.id)
        raise UnsupportedError("windowed execution is not supported yet")
