"""What the command-line programs (``geaflow-sql``, ``geaflow-sql serve``)
make of their arguments: ``--conf`` settings, and where user code is found."""

from __future__ import annotations

import os
import sys


def parse_conf(items: list[str] | None) -> dict[str, str]:
    conf: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"geaflow-sql: --conf needs key=value, got {item!r}")
        k, v = item.split("=", 1)
        conf[k.strip()] = v.strip()
    return conf


def find_user_code(script: str | None) -> None:
    """Put the script's folder and the working folder on the Python path, as
    ``python script.py`` does, so CREATE FUNCTION finds the user's modules
    kept beside the script (the ``geaflow-sql`` launcher's own path is its
    install folder).  On a cluster, those modules are sent to the executors
    when a statement runs (``runtime.spark_adapter.ship_user_code``)."""
    folders = [os.getcwd()]
    if script is not None:
        folders.insert(0, os.path.dirname(os.path.abspath(script)))
    for folder in reversed(folders):
        if folder not in sys.path:
            sys.path.insert(0, folder)
