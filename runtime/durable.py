"""Writing a small JSON file so that readers see the old one or the new one, whole.

Both durable stores of the runtime commit this way: a graph store's manifest
and a windowed job's checkpoint state.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk and
    rename it over ``path`` (atomic on POSIX), then sync the folder so the
    rename itself survives a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
