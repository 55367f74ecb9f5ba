"""Graph time travel: the versions a persistent graph keeps, and reading one.

Every commit of a persistent graph keeps its manifest as
``versions/<n>.json`` (``commits.py``) with the time it was published and
the rows it added.  ``USE GRAPH g VERSION n`` makes the session's later
statements read that version (``Catalog.graph_versions``, turned into the
evaluation's ``Reads`` by ``runtime.evaluator``); ``SHOW VERSIONS OF GRAPH
g`` lists them.  A graph kept in memory has no versions outside its session.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.errors import ValidationError
from runtime.context import RuntimeContext


def _persistent(ctx: RuntimeContext, graph: GraphInfo) -> Any:
    if not graph.is_persistent:
        raise ValidationError(
            f"graph {graph.name} is kept in memory (storeType='{graph.store_type}'): only a "
            "persistent graph keeps its versions"
        )
    return ctx.stores.store(ctx, graph)


def check_version(ctx: RuntimeContext, graph: GraphInfo, version: int) -> None:
    """Raise a ValidationError unless ``graph`` keeps version ``version``."""
    store = _persistent(ctx, graph)
    if store.at(version) is not None:
        return
    kept = [int(m["version"]) for m in store.versions()]
    have = f"versions {kept[0]} to {kept[-1]}" if kept else "no version yet"
    raise ValidationError(f"graph {graph.name} has no version {version} (it keeps {have})")


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
