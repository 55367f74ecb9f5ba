"""What a workspace's catalog holds, as the console's side panel shows it.

Tables with their connector and columns, views with their columns, graphs
with their store and each vertex and edge label's fields, the user's
functions, and the names of the built-in functions and algorithms.  Names
are shown as written in their definitions; types as GeaFlow writes them.
"""

from __future__ import annotations

from typing import Any

from ..core.catalog import Catalog, ColumnInfo


def catalog_json(catalog: Catalog) -> dict[str, Any]:
    from planner.algorithms import algorithm_names
    from planner.functions.registry import all_builtin_names

    builtin = all_builtin_names()
    return {
        "instance": catalog.instance,
        "current_graph": catalog.current_graph,
        "tables": [
            {
                "name": _name(t.instance, t.name, catalog),
                "connector": t.connector,
                "columns": _columns(t.columns),
            }
            for t in catalog.tables.values()
        ],
        "views": [
            {"name": _name(v.instance, v.name, catalog), "columns": list(v.columns)}
            for v in catalog.views.values()
        ],
        "graphs": [
            {
                "name": _name(g.instance, g.name, catalog),
                # (the name's parts, for a statement to quote each)
                "parts": _parts(g.instance, g.name, catalog),
                "store": g.store_type,
                "vertices": [
                    {"label": v.label, "id": v.id_field, "fields": _columns(v.fields)}
                    for v in g.vertices
                ],
                "edges": [
                    {
                        "label": e.label,
                        "source": e.src_field,
                        "destination": e.dst_field,
                        "fields": _columns(e.fields),
                    }
                    for e in g.edges
                ],
            }
            for g in catalog.graphs.values()
        ],
        "functions": sorted(catalog.function_names()),
        "builtin_functions": sorted(
            {*builtin["scalar"], *builtin["aggregate"], *builtin["table"], *builtin["graph"]}
        ),
        "algorithms": algorithm_names(),
    }


def _parts(instance: str, name: str, catalog: Catalog) -> list[str]:
    """A name's parts as the workspace writes it: qualified only outside its instance."""
    return [name] if instance.lower() == catalog.instance.lower() else [instance, name]


def _name(instance: str, name: str, catalog: Catalog) -> str:
    return ".".join(_parts(instance, name, catalog))


def _columns(columns: tuple[ColumnInfo, ...]) -> list[dict[str, str]]:
    return [{"name": c.name, "type": str(c.type)} for c in columns]
