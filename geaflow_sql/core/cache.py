"""Where geaflow-sql keeps what it can rebuild: the parser's tables and the
driver JVM's class archive.  ``GEAFLOW_SQL_CACHE_DIR`` names the directory;
by default it is ``geaflow-sql-<uid>`` in the system's temporary directory.

Both are loaded as trusted code or data (Lark's cache is a pickle, the
archive holds classes), so a directory another user could have made, or
could write to, is not used: then nothing is cached."""

from __future__ import annotations

import os
import stat
import tempfile


def cache_dir() -> str | None:
    """The cache directory (created, readable by its owner only, if missing);
    None when it is not ours alone."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    base = os.environ.get("GEAFLOW_SQL_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"geaflow-sql-{uid if uid is not None else 'u'}"
    )
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        found = os.stat(base)
    except OSError:
        return None
    if uid is not None and (
        found.st_uid != uid
        or not stat.S_ISDIR(found.st_mode)
        or found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        return None
    return base
