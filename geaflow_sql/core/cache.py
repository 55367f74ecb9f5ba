"""Where geaflow-sql keeps what it can rebuild: the parser's tables and the
driver JVM's class archive.  ``GEAFLOW_SQL_CACHE_DIR`` names the directory;
by default it is ``geaflow-sql-<uid>`` in the system's temporary directory."""

from __future__ import annotations

import os
import tempfile


def cache_dir() -> str:
    """The cache directory, created if missing."""
    uid = os.getuid() if hasattr(os, "getuid") else "u"
    base = os.environ.get("GEAFLOW_SQL_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"geaflow-sql-{uid}"
    )
    os.makedirs(base, exist_ok=True)
    return base
