"""Publishing graph versions: one lock per graph, one record per change.

A persistent graph's current version is its ``manifest.json``; replacing it
is one atomic rename, so a change to one graph (every label a statement
wrote) is all-or-nothing by itself.  A change to several graphs at once (a
window of a job that writes two persistent graphs) is made atomic with a
commit record, as a write-ahead log does:

1. every graph's new manifest goes into one record under ``<root>/.txn/``,
   written atomically: this is the commit point;
2. each graph's manifest is then replaced;
3. the record is deleted.

A process killed after step 1 leaves the record; the next reader of any of
its graphs finishes step 2 (``recover``), so no reader ever sees one graph
of the change without the others.  A killed writer before step 1 leaves only
orphan Parquet parts, which no manifest names.

Publishing holds an exclusive ``flock`` on each graph's ``.lock`` file (taken
in path order, so two writers never wait on each other in a circle): a
writer re-reads the manifest under the lock and adds its parts to whatever
another process published meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runtime.durable import atomic_write_json

MANIFEST = "manifest.json"
# Every published version's manifest, kept for reading that version later
# (``USE GRAPH g VERSION n``): ``versions/<n>.json``, written before the
# manifest names it the current version.
VERSIONS = "versions"
TXN = ".txn"
# Fault injection for tests: seconds to wait after publishing each graph of a
# change of several graphs, so a test can kill the writer between two.
PAUSE_BETWEEN_ENV = "GEAFLOW_SQL_STORE_PAUSE_BETWEEN_GRAPHS"


def read_manifest(graph_dir: Path) -> dict[str, Any] | None:
    """The manifest as on disk, or None when the graph has none yet (raises
    ``OSError``/``ValueError`` when it cannot be read)."""
    path = graph_dir / MANIFEST
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_version(graph_dir: Path, version: int) -> dict[str, Any] | None:
    """Version ``version``'s manifest, or None when it was never kept."""
    path = graph_dir / VERSIONS / f"{int(version)}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return data


def kept_versions(graph_dir: Path) -> list[dict[str, Any]]:
    """Every kept version's manifest, oldest first."""
    folder = graph_dir / VERSIONS
    numbers = sorted(int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit())
    found = (read_version(graph_dir, n) for n in numbers)
    return [m for m in found if m is not None]


def _write(graph_dir: Path, manifest: dict[str, Any]) -> None:
    """Keep the version, then make it the current one."""
    atomic_write_json(graph_dir / VERSIONS / f"{int(manifest['version'])}.json", manifest)
    atomic_write_json(graph_dir / MANIFEST, manifest)


@contextlib.contextmanager
def locked(graph_dirs: list[Path]) -> Iterator[None]:
    """Hold the exclusive publishing lock of every graph in ``graph_dirs``."""
    handles = []
    try:
        for d in sorted(set(graph_dirs), key=str):
            d.mkdir(parents=True, exist_ok=True)
            fh = open(d / ".lock", "a+b")  # noqa: SIM115 - closed below
            handles.append(fh)
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        for fh in reversed(handles):
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()


def publish_all(root: Path, manifests: dict[Path, dict[str, Any]]) -> None:
    """Replace the manifests of the graphs in ``manifests`` as one change
    (the caller holds their locks)."""
    if len(manifests) == 1:
        [(graph_dir, manifest)] = manifests.items()
        _write(graph_dir, manifest)
        return
    record = root / TXN / f"{uuid.uuid4().hex}.json"
    atomic_write_json(record, {"manifests": {str(d): m for d, m in manifests.items()}})
    _apply(record, manifests, os.environ.get(PAUSE_BETWEEN_ENV))


def _apply(record: Path, manifests: dict[Path, dict[str, Any]], pause: str | None = None) -> None:
    for graph_dir, manifest in manifests.items():
        current = read_manifest(graph_dir)
        if current is None or int(current.get("version", 0)) < int(manifest["version"]):
            _write(graph_dir, manifest)
        if pause:
            time.sleep(float(pause))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(record)


def _records_naming(root: Path, graph_dir: Path) -> list[tuple[Path, dict[Path, Any]]]:
    folder = root / TXN
    if not folder.is_dir():
        return []
    out = []
    for record in sorted(folder.glob("*.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # deleted meanwhile (records are written whole)
        manifests = {Path(d): m for d, m in data.get("manifests", {}).items()}
        if graph_dir in manifests:
            out.append((record, manifests))
    return out


def recover(root: Path, graph_dir: Path) -> None:
    """Finish every change whose record names ``graph_dir`` and whose writer
    stopped before deleting the record (see the module's docstring)."""
    for record, manifests in _records_naming(root, graph_dir):
        with locked(list(manifests)):
            if record.exists():  # the writer may have finished meanwhile
                _apply(record, manifests)


def forget(root: Path, graph_dir: Path) -> None:
    """Drop the unfinished changes naming ``graph_dir`` (a job restarting from
    its checkpoint redoes them; the caller holds the graph's lock)."""
    for record, _ in _records_naming(root, graph_dir):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record)
