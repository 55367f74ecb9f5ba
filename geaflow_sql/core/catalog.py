"""The catalog: tables, views, graphs and functions a session has defined.

Names are case-insensitive (as in GeaFlow) and live in an *instance* (GeaFlow's
namespace; ``USE INSTANCE x``).  Definitions are immutable records; the data of
a graph lives in its store (``runtime.stores``), keyed by the graph's name.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import types as T
from .errors import CatalogError

DEFAULT_INSTANCE = "default"


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    name: str
    type: Any


@dataclass(frozen=True, slots=True)
class TableInfo:
    name: str
    columns: tuple[ColumnInfo, ...]
    options: tuple[tuple[str, Any], ...] = ()
    primary_key: tuple[str, ...] = ()
    temporary: bool = False
    instance: str = DEFAULT_INSTANCE

    @property
    def connector(self) -> str:
        return str(self.option("type", "file")).lower()

    def option(self, key: str, default: Any = None) -> Any:
        for k, v in self.options:
            if k == key:
                return v
        lowered = key.lower()
        for k, v in self.options:
            if k.lower() == lowered:
                return v
        return default

    def column_index(self, name: str) -> int | None:
        for i, c in enumerate(self.columns):
            if c.name == name:
                return i
        lowered = name.lower()
        for i, c in enumerate(self.columns):
            if c.name.lower() == lowered:
                return i
        return None


@dataclass(frozen=True, slots=True)
class ViewInfo:
    name: str
    columns: tuple[str, ...]
    query: Any  # grammar.syntax.Query
    text: str = ""
    instance: str = DEFAULT_INSTANCE


@dataclass(frozen=True, slots=True)
class VertexTableInfo:
    """One vertex label of a graph: its fields (the id field among them)."""

    label: str
    fields: tuple[ColumnInfo, ...]
    id_field: str
    using: str | None = None  # the table that holds the data, for USING graphs

    def struct_type(self) -> T.StructType:
        return vertex_struct(self.label, self.fields, self.id_field)


@dataclass(frozen=True, slots=True)
class EdgeTableInfo:
    label: str
    fields: tuple[ColumnInfo, ...]
    src_field: str
    dst_field: str
    ts_field: str | None = None
    using: str | None = None
    src_label: str | None = None  # from ``srcId from buyer SOURCE ID``
    dst_label: str | None = None

    def struct_type(self) -> T.StructType:
        return edge_struct(self.label, self.fields, self.src_field, self.dst_field, self.ts_field)


def vertex_struct(label: str, fields: Iterable[ColumnInfo], id_field: str) -> T.StructType:
    """A vertex value: ``~id``, ``~label``, then its properties (the id column is
    not repeated; its declared name reads ``~id``)."""
    fields = tuple(fields)
    id_type = next(f.type for f in fields if f.name == id_field)
    struct_fields = [
        T.StructField(T.VERTEX_ID_FIELD, id_type),
        T.StructField(T.LABEL_FIELD, T.VARCHAR),
    ]
    struct_fields += [T.StructField(f.name, f.type) for f in fields if f.name != id_field]
    return T.StructType(
        tuple(struct_fields),
        "VERTEX",
        (label,),
        id_field=id_field,
        aliases=((id_field, T.VERTEX_ID_FIELD),),
    )


def edge_struct(
    label: str,
    fields: Iterable[ColumnInfo],
    src_field: str,
    dst_field: str,
    ts_field: str | None,
) -> T.StructType:
    """An edge value: ``~src``, ``~dst``, ``~label``, ``~direction``, optional
    ``~ts``, then its properties.  As in GeaFlow, an edge reached against its
    direction is seen reversed: its source is the vertex the traversal left."""
    fields = tuple(fields)
    types = {f.name: f.type for f in fields}
    struct_fields = [
        T.StructField(T.EDGE_SRC_FIELD, types[src_field]),
        T.StructField(T.EDGE_DST_FIELD, types[dst_field]),
        T.StructField(T.LABEL_FIELD, T.VARCHAR),
        T.StructField(T.EDGE_DIRECTION_FIELD, T.VARCHAR),
    ]
    aliases = [(src_field, T.EDGE_SRC_FIELD), (dst_field, T.EDGE_DST_FIELD)]
    if ts_field is not None:
        struct_fields.append(T.StructField(T.EDGE_TS_FIELD, types[ts_field]))
        aliases.append((ts_field, T.EDGE_TS_FIELD))
    keys = {src_field, dst_field, ts_field}
    struct_fields += [T.StructField(f.name, f.type) for f in fields if f.name not in keys]
    return T.StructType(
        tuple(struct_fields),
        "EDGE",
        (label,),
        src_field=src_field,
        dst_field=dst_field,
        ts_field=ts_field,
        aliases=tuple(aliases),
    )


def unified_type(structs: list[T.StructType], kind: str) -> T.StructType:
    """One type for every vertex (or edge) of a graph: the union of all labels'
    fields, so values of different labels can share a column (GeaFlow's rule:
    a property only some labels have is null for the others)."""
    if not structs:
        if kind == "VERTEX":
            return T.StructType(
                (
                    T.StructField(T.VERTEX_ID_FIELD, T.BIGINT),
                    T.StructField(T.LABEL_FIELD, T.VARCHAR),
                ),
                "VERTEX",
            )
        return T.StructType(
            (
                T.StructField(T.EDGE_SRC_FIELD, T.BIGINT),
                T.StructField(T.EDGE_DST_FIELD, T.BIGINT),
                T.StructField(T.LABEL_FIELD, T.VARCHAR),
                T.StructField(T.EDGE_DIRECTION_FIELD, T.VARCHAR),
            ),
            "EDGE",
        )
    merged = structs[0]
    for st in structs[1:]:
        merged = T.merge_struct(merged, st)
    # Meta fields first, in a fixed order, so every edge struct lines up.
    meta_order = [
        T.VERTEX_ID_FIELD,
        T.EDGE_SRC_FIELD,
        T.EDGE_DST_FIELD,
        T.LABEL_FIELD,
        T.EDGE_DIRECTION_FIELD,
        T.EDGE_TS_FIELD,
    ]
    meta = [f for name in meta_order for f in merged.fields if f.name == name]
    rest = [f for f in merged.fields if f.name not in meta_order]
    # Widen meta types that differ between labels (e.g. ids of different types).
    widened = []
    for f in meta:
        t = f.type
        for st in structs:
            other = st.field_type(f.name)
            if other is not None and other != t:
                t = T.common_type(t, other) or T.VARCHAR
        widened.append(T.StructField(f.name, t))
    return T.StructType(
        tuple(widened + rest),
        merged.kind,
        merged.labels,
        merged.id_field,
        merged.src_field,
        merged.dst_field,
        merged.ts_field,
        aliases=merged.aliases,
    )


@dataclass(frozen=True, slots=True)
class GraphInfo:
    name: str
    vertices: tuple[VertexTableInfo, ...]
    edges: tuple[EdgeTableInfo, ...]
    options: tuple[tuple[str, Any], ...] = ()
    temporary: bool = False
    instance: str = DEFAULT_INSTANCE

    def option(self, key: str, default: Any = None) -> Any:
        lowered = key.lower()
        for k, v in self.options:
            if k.lower() == lowered:
                return v
        return default

    @property
    def store_type(self) -> str:
        return str(self.option("storeType", "memory")).lower()

    @property
    def is_persistent(self) -> bool:
        return self.store_type != "memory"

    @property
    def shard_count(self) -> int:
        value = self.option("shardCount", self.option("shardNum", 1))
        try:
            return max(1, int(value))
        except (TypeError, ValueError, OverflowError):
            return 1

    def vertex(self, label: str) -> VertexTableInfo | None:
        lowered = label.lower()
        return next((v for v in self.vertices if v.label.lower() == lowered), None)

    def edge(self, label: str) -> EdgeTableInfo | None:
        lowered = label.lower()
        return next((e for e in self.edges if e.label.lower() == lowered), None)

    def vertex_type(self) -> T.StructType:
        return unified_type([v.struct_type() for v in self.vertices], "VERTEX")

    def edge_type(self) -> T.StructType:
        return unified_type([e.struct_type() for e in self.edges], "EDGE")

    @property
    def is_static(self) -> bool:
        """Graphs over tables (``USING``) are read-only views of those tables."""
        return all(v.using for v in self.vertices) and all(e.using for e in self.edges)


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    name: str
    class_name: str
    using: str | None = None
    instance: str = DEFAULT_INSTANCE
    # What the class resolves to, loaded when CREATE FUNCTION was bound (the
    # planner's UserFunction or BuiltinAlias); None until then.
    implementation: Any = field(default=None, compare=False)


class Definitions:
    """The named things of a catalog: shared by every scope of a session.

    Copy on write: a change builds a new dict and swaps it in under the lock,
    so a thread listing or resolving names from the dict it holds never sees
    it change size under it, and two threads creating the same name cannot
    both succeed.
    """

    def __init__(
        self,
        tables: dict[tuple[str, str], TableInfo] | None = None,
        views: dict[tuple[str, str], ViewInfo] | None = None,
        graphs: dict[tuple[str, str], GraphInfo] | None = None,
        functions: dict[tuple[str, str], FunctionInfo] | None = None,
    ) -> None:
        self.tables: dict[tuple[str, str], TableInfo] = tables if tables is not None else {}
        self.views: dict[tuple[str, str], ViewInfo] = views if views is not None else {}
        self.graphs: dict[tuple[str, str], GraphInfo] = graphs if graphs is not None else {}
        self.functions: dict[tuple[str, str], FunctionInfo] = (
            functions if functions is not None else {}
        )
        self.lock = threading.Lock()

    def copy(self) -> Definitions:
        return Definitions(
            dict(self.tables), dict(self.views), dict(self.graphs), dict(self.functions)
        )


class Catalog:
    """The names a session (or a scope of it) resolves: shared definitions,
    and its own current instance (``USE INSTANCE``) and graph (``USE GRAPH``)."""

    def __init__(
        self,
        definitions: Definitions | None = None,
        instance: str = DEFAULT_INSTANCE,
        current_graph: str | None = None,
    ) -> None:
        self.definitions = definitions if definitions is not None else Definitions()
        self.instance = instance
        self.current_graph = current_graph
        # ``USE GRAPH g VERSION n``: the version the session reads of a graph,
        # by ``instance.graph`` (lower case); a graph not named reads its current one.
        self.graph_versions: dict[str, int] = {}

    @property
    def tables(self) -> dict[tuple[str, str], TableInfo]:
        return self.definitions.tables

    @property
    def views(self) -> dict[tuple[str, str], ViewInfo]:
        return self.definitions.views

    @property
    def graphs(self) -> dict[tuple[str, str], GraphInfo]:
        return self.definitions.graphs

    @property
    def functions(self) -> dict[tuple[str, str], FunctionInfo]:
        return self.definitions.functions

    # Keys ------------------------------------------------------------------
    def _key(self, name: str) -> tuple[str, str]:
        parts = name.split(".")
        if len(parts) == 2:
            return parts[0].lower(), parts[1].lower()
        return self.instance.lower(), name.lower()

    def _key_parts(self, parts: tuple[str, ...]) -> tuple[str, str]:
        if len(parts) >= 2:
            return parts[-2].lower(), parts[-1].lower()
        return self.instance.lower(), parts[0].lower()

    def copy(self) -> Catalog:
        """An independent catalog with the same definitions and names."""
        out = Catalog(self.definitions.copy(), self.instance, self.current_graph)
        out.graph_versions = dict(self.graph_versions)
        return out

    def scope(self) -> Catalog:
        """The same definitions (changes show in both), its own current
        instance and graph."""
        # (not the versions pinned: a scope holds no lease on them, so it reads
        # current versions until it pins its own)
        return Catalog(self.definitions, self.instance, self.current_graph)

    # Tables and views ------------------------------------------------------
    def name_taken(self, key: tuple[str, str]) -> str | None:
        d = self.definitions
        if key in d.tables:
            return "table"
        if key in d.views:
            return "view"
        if key in d.graphs:
            return "graph"
        return None

    def _add(
        self,
        kind: str,
        key: tuple[str, str],
        value: Any,
        *,
        if_not_exists: bool,
        name: str,
        replace: bool = False,
    ) -> bool:
        d = self.definitions
        with d.lock:
            taken = self.name_taken(key)
            if taken and not (replace and taken == kind):
                if if_not_exists:
                    return False
                raise CatalogError(f"{taken} {name!r} already exists")
            self._swap(kind, key, value)
        return True

    def _swap(self, kind: str, key: tuple[str, str], value: Any) -> None:
        """Replace the ``kind`` dict by a copy with ``key`` set to ``value``
        (or removed when ``value`` is None); the caller holds the lock."""
        attr = {"table": "tables", "view": "views", "graph": "graphs", "function": "functions"}[
            kind
        ]
        d = self.definitions
        new = dict(getattr(d, attr))
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
        setattr(d, attr, new)

    def add_table(self, table: TableInfo, *, if_not_exists: bool = False) -> bool:
        key = (table.instance.lower(), table.name.lower())
        return self._add("table", key, table, if_not_exists=if_not_exists, name=table.name)

    def add_view(
        self, view: ViewInfo, *, if_not_exists: bool = False, replace: bool = False
    ) -> bool:
        key = (view.instance.lower(), view.name.lower())
        return self._add(
            "view", key, view, if_not_exists=if_not_exists, name=view.name, replace=replace
        )

    def add_graph(self, graph: GraphInfo, *, if_not_exists: bool = False) -> bool:
        key = (graph.instance.lower(), graph.name.lower())
        return self._add("graph", key, graph, if_not_exists=if_not_exists, name=graph.name)

    def add_function(self, fn: FunctionInfo, *, if_not_exists: bool = False) -> bool:
        key = (fn.instance.lower(), fn.name.lower())
        with self.definitions.lock:
            if key in self.functions and if_not_exists:
                return False
            # Re-registering a function replaces it, as GeaFlow does.
            self._swap("function", key, fn)
        return True

    def table(self, parts: tuple[str, ...]) -> TableInfo | None:
        return self.tables.get(self._key_parts(parts))

    def view(self, parts: tuple[str, ...]) -> ViewInfo | None:
        return self.views.get(self._key_parts(parts))

    def graph(self, parts: tuple[str, ...]) -> GraphInfo | None:
        return self.graphs.get(self._key_parts(parts))

    def function(self, name: str) -> FunctionInfo | None:
        return self.functions.get(self._key(name))

    def tables_of(self, graph: GraphInfo) -> list[TableInfo]:
        """The tables a graph's labels are defined USING (those that exist)."""
        names = [v.using for v in graph.vertices] + [e.using for e in graph.edges]
        found = [self.table((name,)) for name in names if name]
        return [t for t in found if t is not None]

    def drop(self, kind: str, parts: tuple[str, ...]) -> bool:
        key = self._key_parts(parts)
        kind = kind.lower()
        with self.definitions.lock:
            attr = {"table": "tables", "view": "views", "graph": "graphs", "function": "functions"}[
                kind
            ]
            if key not in getattr(self.definitions, attr):
                return False
            self._swap(kind, key, None)
        if kind == "graph":
            self.graph_versions.pop(".".join(key), None)  # (a new graph of the name is new)
        return True

    # Listing ---------------------------------------------------------------
    def table_names(self) -> list[str]:
        return sorted(t.name for k, t in self.tables.items() if k[0] == self.instance.lower())

    def view_names(self) -> list[str]:
        return sorted(v.name for k, v in self.views.items() if k[0] == self.instance.lower())

    def graph_names(self) -> list[str]:
        return sorted(g.name for k, g in self.graphs.items() if k[0] == self.instance.lower())

    def function_names(self) -> list[str]:
        return sorted(f.name for k, f in self.functions.items() if k[0] == self.instance.lower())
