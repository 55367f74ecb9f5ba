"""Graph time travel: the versions a persistent graph keeps, and reading one.

Every commit of a persistent graph keeps its manifest as
``versions/<n>.json`` (``commits.py``) with the time it was published and
the rows it added.  ``USE GRAPH g VERSION n`` makes the session's later
statements read that version (``Catalog.graph_versions``, turned into the
evaluation's ``Reads`` by ``runtime.evaluator``); ``SHOW VERSIONS OF GRAPH
g`` lists them.  A graph kept in memory has no versions outside its session.

``VACUUM GRAPH g RETAIN n`` forgets every version but the newest ``n`` and
those a session reads: a session pinned to a version holds a lease on it
(``leases/<session>.json``, with its process id and host), and a lease of a
process that is still running (or of another host, which cannot be told)
keeps its version.  A forgotten version can no longer be pinned; a session
that read it before goes on reading it (a version's parts stay: later
versions name them too).  A windowed job reads the current versions: pins
are for the statements a session runs outside windows.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.errors import ValidationError
from runtime.context import RuntimeContext
from runtime.durable import atomic_write_json
from runtime.processes import running

from .commits import VERSIONS, kept_versions, locked, read_version

LEASES = "leases"


def _persistent(ctx: RuntimeContext, graph: GraphInfo) -> Any:
    if not graph.is_persistent:
        raise ValidationError(
            f"graph {graph.name} is kept in memory (storeType='{graph.store_type}'): only a "
            "persistent graph keeps its versions"
        )
    return ctx.stores.store(ctx, graph)


def pin(ctx: RuntimeContext, graph: GraphInfo, version: int, holder: str) -> Path:
    """Session ``holder`` reads ``version`` of ``graph`` from now on: a
    ValidationError unless the graph keeps that version, else a lease (the
    file returned) that keeps VACUUM from removing it until released.  The
    check and the lease are one step under the graph's lock, the lock VACUUM
    holds while it reads the leases and removes versions: a version found
    here cannot be removed before its lease is written."""
    store = _persistent(ctx, graph)
    if version < 1:
        raise ValidationError(f"graph versions count from 1, not {version}")
    store.published()  # (finishes a change a writer left half done, before locking)
    with locked([store.path]):
        current = int(store.on_disk().get("version", 0))
        if not (version <= current and read_version(store.path, version) is not None):
            kept = [int(m["version"]) for m in kept_versions(store.path)]
            have = _kept_text([v for v in kept if v <= current])
            if version < current:
                raise ValidationError(
                    f"graph {graph.name} no longer keeps version {version}: VACUUM removed it, "
                    f"or it was published before graphs kept their versions (it keeps {have})"
                )
            raise ValidationError(f"graph {graph.name} has no version {version} (it keeps {have})")
        lease = {"version": int(version), "pid": os.getpid(), "host": socket.gethostname()}
        path = store.path / LEASES / f"{holder}.json"
        atomic_write_json(path, lease)
    return path


def _kept_text(kept: list[int]) -> str:
    if not kept:
        return "no version yet"
    return ("version " if len(kept) == 1 else "versions ") + _ranges(kept)


def _ranges(numbers: list[int]) -> str:
    """``1, 2, 3, 7`` as ``1 to 3, 7``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]} to {r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def release_lease(lease: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lease)


def _leased(graph_dir: Path) -> set[int]:
    """Versions held by live leases (a dead process's lease is removed)."""
    out: set[int] = set()
    host = socket.gethostname()
    for path in (graph_dir / LEASES).glob("*.json"):
        try:
            lease = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # (being written or removed)
        if lease.get("host") == host and not running(int(lease.get("pid", 0))):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            continue
        out.add(int(lease["version"]))
    return out


def vacuum(ctx: RuntimeContext, graph: GraphInfo, retain: int) -> str:
    """Forget every version of ``graph`` but the newest ``retain``, the
    current one and the leased ones; what was done, as a message."""
    store = _persistent(ctx, graph)
    store.published()  # (finishes a change a writer left half done, before locking)
    with locked([store.path]):
        current = int(store.on_disk().get("version", 0))
        kept = [int(m["version"]) for m in kept_versions(store.path) if m["version"] <= current]
        leased = _leased(store.path)
        keep = set(kept[-retain:]) | {current} | leased
        removed = [v for v in kept if v not in keep]
        for v in removed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(store.path / VERSIONS / f"{v}.json")
    left = sorted(set(kept) - set(removed))
    held = sorted(leased & set(left) - set(kept[-retain:]))
    note = f" ({', '.join(map(str, held))} kept: a session reads it)" if held else ""
    return (
        f"graph {graph.name}: removed {len(removed)} version{'s' if len(removed) != 1 else ''}, "
        f"keeps {_kept_text(left)}{note}"
    )


def version_rows(ctx: RuntimeContext, graph: GraphInfo) -> list[tuple[Any, ...]]:
    """One row per kept version: number, when it was published (UTC), rows it
    added, and whether it is the current one."""
    store = _persistent(ctx, graph)
    current = store.published().get("version", 0)
    rows = []
    for m in store.versions():
        stamp = m.get("time")
        when = (
            dt.datetime.fromtimestamp(float(stamp), dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
            if stamp is not None
            else ""
        )
        rows.append((int(m["version"]), when, m.get("rows", ""), m["version"] == current))
    return rows
