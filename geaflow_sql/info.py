"""SHOW TABLES / GRAPHS / FUNCTIONS, DESCRIBE and SET (show) as text results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.statements import InfoStatement
from runtime.results import StatementResult

from .core.errors import CatalogError


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [len(h) for h in header]
    for r in rows:
        widths = [max(w, len(str(c))) for w, c in zip(widths, r, strict=True)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [
        line,
        "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
        line,
    ]
    for r in rows:
        out.append(
            "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
        )
    out.append(line)
    return "\n".join(out)


def _rows_result(
    rows: Sequence[tuple[Any, ...]], header: tuple[str, ...], suffix: str = ""
) -> StatementResult:
    """The text table, plus the same rows in ``extra`` for callers that want data
    (the DB-API returns them as a result set; the shell prints them as CSV/JSON)."""
    texts = [tuple(str(c) for c in r) for r in rows]
    return StatementResult(
        "info", text=_table(texts, header) + suffix, extra={"columns": header, "rows": texts}
    )


def show(session: Any, st: InfoStatement) -> StatementResult:
    catalog = session.catalog
    if st.kind == "set":
        items = sorted(session.config.items())
        if st.what:
            items = [(k, v) for k, v in items if k == st.what]
            if not items:
                from .core.config import KNOWN_KEYS

                known = KNOWN_KEYS.get(st.what)
                items = [(st.what, known.default if known else "(not set)")]
        return _rows_result([(k, str(v)) for k, v in items], ("key", "value"))
    if st.what == "TABLES":
        rows: list[tuple[Any, ...]] = [(n, "table") for n in catalog.table_names()] + [
            (n, "view") for n in catalog.view_names()
        ]
        return _rows_result(sorted(rows), ("name", "kind"))
    if st.what == "VERSIONS":
        from runtime.stores.versions import version_rows

        graph = catalog.graph(st.name)
        if graph is None:
            raise CatalogError(f"unknown graph {'.'.join(st.name)!r}")
        rows = version_rows(session.runtime_context(start_spark=True), graph)
        return _rows_result(rows, ("version", "published (UTC)", "rows written", "current"))
    if st.what == "GRAPHS":
        rows = []
        for name in catalog.graph_names():
            g = catalog.graph((name,))
            rows.append(
                (
                    name,
                    g.store_type,
                    ", ".join(v.label for v in g.vertices),
                    ", ".join(e.label for e in g.edges),
                )
            )
        return _rows_result(rows, ("name", "store", "vertices", "edges"))
    from planner.functions.registry import all_builtin_names

    names = all_builtin_names()
    rows = [(n, "user") for n in catalog.function_names()]
    for kind in ("scalar", "aggregate", "table", "graph"):
        rows += [(n, kind) for n in names[kind]]
    return _rows_result(rows, ("name", "kind"))


def describe(session: Any, st: InfoStatement) -> StatementResult:
    catalog = session.catalog
    parts = st.name
    if st.what in ("", "TABLE"):
        table = catalog.table(parts)
        if table is not None:
            rows = [(c.name, str(c.type)) for c in table.columns]
            opts = "\n".join(f"  {k} = {v}" for k, v in table.options)
            return _rows_result(rows, ("column", "type"), f"\noptions:\n{opts}" if opts else "")
    if st.what in ("", "VIEW", "TABLE"):
        view = catalog.view(parts)
        if view is not None:
            return StatementResult("info", text=f"view {view.name} AS\n{view.text}")
    if st.what in ("", "GRAPH"):
        graph = catalog.graph(parts)
        if graph is not None:
            graph_rows: list[tuple[Any, ...]] = []
            for v in graph.vertices:
                for f in v.fields:
                    graph_rows.append(
                        (
                            "vertex",
                            v.label,
                            f.name,
                            str(f.type),
                            "ID" if f.name == v.id_field else "",
                        )
                    )
            for e in graph.edges:
                for f in e.fields:
                    role = (
                        "SOURCE ID"
                        if f.name == e.src_field
                        else "DESTINATION ID"
                        if f.name == e.dst_field
                        else "TIMESTAMP"
                        if f.name == e.ts_field
                        else ""
                    )
                    graph_rows.append(("edge", e.label, f.name, str(f.type), role))
            return _rows_result(graph_rows, ("kind", "label", "field", "type", "role"))
    raise CatalogError(f"unknown table, view or graph {'.'.join(parts)!r}")
