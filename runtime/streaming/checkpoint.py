"""Durable checkpoints of a windowed job, for exactly-once restarts.

After every window the job commits, in one atomic rename of ``state.json``:
the last completed window, the committed length of every file the sinks
wrote, the graph writes of the window (memory stores: Parquet parts replayed
on restart; persistent stores: the manifest to roll back to), and the
algorithms' state.  A restarted job with the same checkpoint folder and the
same script truncates its sink files to the committed lengths, restores the
graphs and state, and resumes after the last completed window, so every row
reaches the sinks exactly once.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

STATE = "state.json"


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class JobCheckpoint:
    def __init__(self, folder: str | Path, job_fingerprint: str) -> None:
        self.folder = Path(folder)
        self.fingerprint = job_fingerprint
        self.folder.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ read
    def load(self) -> dict[str, Any] | None:
        """The state to resume from, or None to start afresh."""
        path = self.folder / STATE
        if not path.exists():
            return None
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("fingerprint") != self.fingerprint or state.get("finished"):
            return None
        return state

    def load_algorithm_state(self, name: str) -> Any:
        path = self.folder / name
        if not path.exists():
            return None
        with open(path, "rb") as fh:
            return pickle.load(fh)

    # ----------------------------------------------------------------- write
    def reset(self) -> None:
        """Forget an earlier (finished or different) job in this folder."""
        path = self.folder / STATE
        if path.exists():
            path.unlink()

    def save_algorithm_state(self, window: int, value: Any) -> str:
        name = f"algorithms-{window:08d}.pkl"
        tmp = self.folder / (name + ".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.folder / name)
        return name

    def part_path(self, graph_key: str, window: int, seq: int, label: str, is_vertex: bool) -> Path:
        kind = "v" if is_vertex else "e"
        return self.folder / "graphs" / graph_key / f"{window:08d}-{seq:04d}-{kind}-{label.lower()}"

    def commit(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["fingerprint"] = self.fingerprint
        tmp = self.folder / f".{STATE}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.folder / STATE)
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def truncate_sinks(sinks: dict[str, int]) -> None:
    """Cut every sink file back to its committed length (drops a lost window's rows)."""
    for path, size in sinks.items():
        p = Path(path)
        if not p.exists():
            continue
        with open(p, "r+b") as fh:
            fh.truncate(size)
            fh.flush()
            os.fsync(fh.fileno())
