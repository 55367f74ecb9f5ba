"""The interactive shell (prompt_toolkit); see issue "The ways in"."""

from __future__ import annotations

import sys
from typing import Any


def run_shell(master: str | None = None, conf: dict[str, Any] | None = None, output: str = "table") -> int:
    print("geaflow-sql: the interactive shell is not available yet; use -f or -e", file=sys.stderr)
    return 2
