"""Binding statements: DDL into catalog records, DML and queries into plans."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import (
    ColumnInfo,
    EdgeTableInfo,
    FunctionInfo,
    GraphInfo,
    TableInfo,
    VertexTableInfo,
    ViewInfo,
)
from geaflow_sql.core.config import GRAPH_STORE_TYPE
from geaflow_sql.core.errors import CatalogError, GeaflowError, TypeMismatchError, ValidationError
from grammar import parse_statement
from grammar import syntax as s
from planner.expressions import ref, typed
from planner.logical import (
    CollectSink,
    Field,
    GraphSink,
    GraphWrite,
    LogicalNode,
    Project,
    TableSink,
)
from planner.statements import (
    BoundStatement,
    CatalogChange,
    ExplainStatement,
    InfoStatement,
    PlanStatement,
    SessionChange,
)
from planner.user_functions import resolve_function

from .context import BindContext
from .query import QueryBinder


class StatementBinder:
    def __init__(self, ctx: BindContext) -> None:
        self.ctx = ctx
        self.queries = QueryBinder(ctx)

    def error(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

    def bind(self, st: s.Statement) -> BoundStatement:
        method = getattr(self, "_bind_" + type(st).__name__, None)
        if method is None:  # pragma: no cover - every grammar statement has a binder
            raise self.error(ValidationError(f"{type(st).__name__} is not supported"), st)
        try:
            return method(st)  # type: ignore[no-any-return]
        except GeaflowError as err:
            raise self.error(err, st) from None

    # ------------------------------------------------------------------ types
    def _type(self, t: s.TypeName) -> Any:
        try:
            args = tuple(self._type(a) for a in t.args)
            return T.type_from_name(t.name, t.params, args)
        except ValidationError as err:
            raise self.error(err, t) from None

    # -------------------------------------------------------------------- ddl
    def _bind_CreateTable(self, st: s.CreateTable) -> BoundStatement:
        seen: set[str] = set()
        columns = []
        for c in st.columns:
            if c.name.lower() in seen:
                raise self.error(ValidationError(f"column {c.name!r} is declared twice"), c)
            seen.add(c.name.lower())
            columns.append(ColumnInfo(c.name, self._type(c.type)))
        for pk in st.primary_key:
            if pk.lower() not in seen:
                # GeaFlow accepts (and ignores) keys that are not columns.
                pass
        instance, name = self._instance_name(st.name)
        table = TableInfo(
            name,
            tuple(columns),
            tuple((k, v) for k, v in st.options),
            st.primary_key,
            st.temporary,
            instance,
        )
        return CatalogChange(st, "create", "table", table, st.if_not_exists, False, st.name.parts)

    def _instance_name(self, name: s.Name) -> tuple[str, str]:
        if len(name.parts) >= 2:
            return name.parts[-2], name.parts[-1]
        return self.ctx.catalog.instance, name.parts[0]

    def _bind_CreateView(self, st: s.CreateView) -> BoundStatement:
        instance, name = self._instance_name(st.name)
        # Check the query now, as GeaFlow does, so a bad view fails at CREATE.
        bound = self.queries.bind_query(st.query).node
        if st.columns and len(st.columns) != len(bound.schema):
            raise self.error(
                ValidationError(
                    f"view {name!r} names {len(st.columns)} columns but its query has "
                    f"{len(bound.schema)}"
                ),
                st,
            )
        text = self.ctx.text[st.query.span.start : st.query.span.end] if self.ctx.text else ""
        view = ViewInfo(name, tuple(st.columns), st.query, text, instance)
        return CatalogChange(
            st, "create", "view", view, st.if_not_exists, st.or_replace, st.name.parts
        )

    def _bind_CreateGraph(self, st: s.CreateGraph) -> BoundStatement:
        instance, name = self._instance_name(st.name)
        vertices: list[VertexTableInfo] = []
        for v in st.vertices:
            vertices.append(self._vertex(v))
        edges: list[EdgeTableInfo] = []
        for e in st.edges:
            edges.append(self._edge(e, vertices))
        labels = [v.label.lower() for v in vertices] + [e.label.lower() for e in edges]
        for lab in labels:
            if labels.count(lab) > 1:
                raise self.error(ValidationError(f"label {lab!r} is declared twice"), st)
        options = tuple(st.options)
        for key, value in options:
            if key.lower() in ("shardcount", "shardnum") and not _is_count(value):
                raise self.error(
                    ValidationError(
                        f"{key} must be a whole number from 1 to 2^31 - 1, not {value!r}"
                    ),
                    st,
                )
        if not any(k.lower() == "storetype" for k, _ in options):
            # The job's default store type (GeaFlow's geaflow.dsl.graph.store.type)
            # is fixed into the graph at CREATE, so a later SET cannot move it.
            default = self.ctx.config.get_str(GRAPH_STORE_TYPE) or "memory"
            if default.lower() != "memory":
                options += (("storeType", default),)
        graph = GraphInfo(name, tuple(vertices), tuple(edges), options, st.temporary, instance)
        return CatalogChange(st, "create", "graph", graph, st.if_not_exists, False, st.name.parts)

    def _table_columns(self, name: s.Name) -> tuple[str, tuple[ColumnInfo, ...]]:
        table = self.ctx.catalog.table(name.parts)
        if table is None:
            raise self.error(CatalogError(f"unknown table {str(name)!r}"), name)
        return table.name, table.columns

    def _vertex(self, v: s.VertexDef) -> VertexTableInfo:
        if v.using is not None:
            table_name, columns = self._table_columns(v.using)
            id_col = self._column_named(columns, v.id_column or "", v)
            return VertexTableInfo(v.label, columns, id_col, table_name)
        fields = []
        id_field = None
        for c in v.columns:
            if c.type is None:
                raise self.error(ValidationError("FROM <label> is only allowed in edge columns"), c)
            if c.role not in (None, "ID"):
                raise self.error(ValidationError(f"a vertex column cannot be {c.role} ID"), c)
            fields.append(ColumnInfo(c.name, self._type(c.type)))
            if c.role == "ID":
                if id_field is not None:
                    raise self.error(ValidationError(f"vertex {v.label} has two ID columns"), c)
                id_field = c.name
        if id_field is None:
            raise self.error(ValidationError(f"vertex {v.label} needs a column marked ID"), v)
        return VertexTableInfo(v.label, tuple(fields), id_field)

    def _column_named(self, columns: tuple[ColumnInfo, ...], name: str, at: s.Node) -> str:
        for c in columns:
            if c.name.lower() == name.lower():
                return c.name
        raise self.error(
            ValidationError(
                f"no column {name!r} in the table (it has: {', '.join(c.name for c in columns)})"
            ),
            at,
        )

    def _edge(self, e: s.EdgeDef, vertices: list[VertexTableInfo]) -> EdgeTableInfo:
        src: str | None = None
        dst: str | None = None
        ts: str | None = None
        if e.using is not None:
            table_name, columns = self._table_columns(e.using)
            src = self._column_named(columns, e.source_column or "", e)
            dst = self._column_named(columns, e.target_column or "", e)
            ts = self._column_named(columns, e.timestamp_column, e) if e.timestamp_column else None
            return EdgeTableInfo(e.label, columns, src, dst, ts, table_name)
        fields = []
        src_label: str | None = None
        dst_label: str | None = None
        for c in e.columns:
            if c.type is None:
                vertex = next(
                    (v for v in vertices if v.label.lower() == (c.from_label or "").lower()), None
                )
                if vertex is None:
                    raise self.error(ValidationError(f"unknown vertex label {c.from_label!r}"), c)
                ctype = next(f.type for f in vertex.fields if f.name == vertex.id_field)
            else:
                ctype = self._type(c.type)
            fields.append(ColumnInfo(c.name, ctype))
            if c.role == "SOURCE":
                src, src_label = c.name, c.from_label
            elif c.role == "DESTINATION":
                dst, dst_label = c.name, c.from_label
            elif c.role == "TIMESTAMP":
                ts = c.name
            elif c.role == "ID":
                raise self.error(
                    ValidationError("an edge has SOURCE ID and DESTINATION ID, not ID"), c
                )
        if src is None or dst is None:
            raise self.error(
                ValidationError(f"edge {e.label} needs SOURCE ID and DESTINATION ID columns"), e
            )
        return EdgeTableInfo(e.label, tuple(fields), src, dst, ts, None, src_label, dst_label)

    def _bind_CreateFunction(self, st: s.CreateFunction) -> BoundStatement:
        instance, name = self._instance_name(st.name)
        info = FunctionInfo(name, st.class_name, st.using, instance)
        # Load the class now (a wrong class path fails at CREATE FUNCTION);
        # statements that call the function find it loaded on the record.
        info = replace(info, implementation=resolve_function(info))
        return CatalogChange(st, "create", "function", info, st.if_not_exists, True, st.name.parts)

    def _bind_Drop(self, st: s.Drop) -> BoundStatement:
        return CatalogChange(st, "drop", st.kind.lower(), None, st.if_exists, False, st.name.parts)

    # -------------------------------------------------------------- session
    def _bind_SetOption(self, st: s.SetOption) -> BoundStatement:
        if st.show:
            return InfoStatement(st, "set", st.key or "")
        return SessionChange(st, "set", st.key, st.value)

    def _graph_named(self, st: s.Statement, name: s.Name, versioned: bool) -> Any:
        """The graph ``name`` names; with ``versioned``, one that keeps its
        versions (USE ... VERSION, SHOW VERSIONS, VACUUM)."""
        graph = self.ctx.catalog.graph(name.parts)
        if graph is None:
            known = self.ctx.catalog.graph_names()
            hint = f" (known: {', '.join(known)})" if known else ""
            raise self.error(CatalogError(f"unknown graph {str(name)!r}{hint}"), name)
        if versioned and not graph.is_persistent:
            raise self.error(
                ValidationError(
                    f"graph {graph.name} is kept in memory (storeType='{graph.store_type}'): "
                    "only a persistent graph keeps its versions"
                ),
                st,
            )
        return graph

    def _bind_UseGraph(self, st: s.UseGraph) -> BoundStatement:
        graph = self._graph_named(st, st.name, st.version is not None)
        return SessionChange(st, "use_graph", graph.name, graph, st.version)

    def _bind_VacuumGraph(self, st: s.VacuumGraph) -> BoundStatement:
        graph = self._graph_named(st, st.name, True)
        return SessionChange(st, "vacuum", graph.name, graph, st.retain)

    def _bind_UseInstance(self, st: s.UseInstance) -> BoundStatement:
        return SessionChange(st, "use_instance", st.name.last)

    def _bind_Show(self, st: s.Show) -> BoundStatement:
        if st.name is not None:  # SHOW VERSIONS OF GRAPH name
            self._graph_named(st, st.name, True)
            return InfoStatement(st, "show", st.what, st.name.parts)
        return InfoStatement(st, "show", st.what)

    def _bind_ShowGraph(self, st: s.ShowGraph) -> BoundStatement:
        """``SHOW GRAPH g [SAMPLE n]`` is the query of ``sampled_graph_query``
        over ``g`` (read at the version the session reads), bound as a query:
        rows of a ``vertex`` column and an ``edge`` column, one set a row."""
        graph = self._graph_named(st, st.name, False)
        query = parse_statement(sampled_graph_query(graph, st.sample))
        assert isinstance(query, s.QueryStatement)
        catalog = self.ctx.catalog
        scoped = catalog.scope()
        # (a graph of another instance is read in its own)
        scoped.instance = graph.instance
        scoped.current_graph = graph.name
        scoped.graph_versions = dict(catalog.graph_versions)
        self.ctx.catalog = scoped
        try:
            node = self.queries.bind_query(query.query).node
        except GeaflowError as err:
            raise ValidationError(f"cannot show graph {graph.name!r}: {err.message}") from None
        finally:
            self.ctx.catalog = catalog
        return self._plan(st, CollectSink(node), "query")

    def _bind_Describe(self, st: s.Describe) -> BoundStatement:
        return InfoStatement(st, "describe", st.kind or "", st.name.parts)

    def _bind_Explain(self, st: s.Explain) -> BoundStatement:
        return ExplainStatement(st, self.bind(st.statement))

    # -------------------------------------------------------------- queries
    def _bind_QueryStatement(self, st: s.QueryStatement) -> BoundStatement:
        node = self.queries.bind_query(st.query).node
        return self._plan(st, CollectSink(node), "query")

    def _plan(
        self, st: s.Statement, root: LogicalNode, kind: str, target: str | None = None
    ) -> PlanStatement:
        return PlanStatement(st, root, kind, target, tuple(self.ctx.scalar_udfs.values()))

    def _bind_Insert(self, st: s.Insert) -> BoundStatement:
        catalog = self.ctx.catalog
        parts = st.target.parts
        table = catalog.table(parts)
        if table is not None and not (len(parts) == 2 and catalog.graph(parts[:1])):
            return self._insert_table(st, table)
        graph = catalog.graph(parts[:1]) if len(parts) == 2 else None
        if graph is not None:
            return self._insert_graph(st, graph, parts[1])
        graph = catalog.graph(parts)
        if graph is not None:
            return self._insert_graph(st, graph, None)
        if catalog.view(parts) is not None:
            raise self.error(
                ValidationError(f"cannot INSERT INTO view {str(st.target)!r}"), st.target
            )
        raise self.error(CatalogError(f"unknown table {str(st.target)!r}"), st.target)

    def _insert_table(self, st: s.Insert, table: TableInfo) -> BoundStatement:
        query = self.queries.bind_query(st.query).node
        out = query.schema
        if st.columns:
            targets = []
            for c in st.columns:
                idx = table.column_index(c.last)
                if idx is None or len(c.parts) > 1:
                    raise self.error(
                        ValidationError(f"table {table.name!r} has no column {str(c)!r}"), c
                    )
                targets.append(idx)
        else:
            targets = list(range(len(table.columns)))
        if len(targets) != len(out):
            raise self.error(
                ValidationError(
                    f"INSERT INTO {table.name} gives {len(out)} values for {len(targets)} columns"
                ),
                st.query,
            )
        exprs = []
        fields = []
        for col_idx, column in enumerate(table.columns):
            if col_idx in targets:
                i = targets.index(col_idx)
                if not T.is_assignable(out[i].type, column.type):
                    raise self.error(
                        TypeMismatchError(
                            f"cannot insert a {out[i].type} value into column "
                            f"{column.name} {column.type}"
                        ),
                        st.query,
                    )
                exprs.append(ref(i, out[i].type))
                fields.append(Field(column.name, out[i].type))
            else:
                from sqlglot import exp

                exprs.append(typed(exp.Null(), column.type))
                fields.append(Field(column.name, column.type))
        node = Project(query, tuple(exprs), tuple(fields))
        sink = TableSink(node, table, tuple(range(len(table.columns))))
        return self._plan(st, sink, "insert", table.name)

    def _insert_graph(self, st: s.Insert, graph: GraphInfo, label: str | None) -> BoundStatement:
        query = self.queries.bind_query(st.query).node
        out = query.schema
        writes: list[GraphWrite] = []
        if label is not None:
            vertex = graph.vertex(label)
            edge = graph.edge(label)
            if vertex is None and edge is None:
                raise self.error(
                    CatalogError(f"graph {graph.name!r} has no vertex or edge label {label!r}"),
                    st.target,
                )
            fields = (vertex or edge).fields  # type: ignore[union-attr]
            names = [c.last for c in st.columns] if st.columns else [f.name for f in fields]
            if len(names) != len(out):
                raise self.error(
                    ValidationError(
                        f"INSERT INTO {graph.name}.{label} gives {len(out)} values for "
                        f"{len(names)} fields"
                    ),
                    st.query,
                )
            writes.append(
                self._graph_write(
                    st, graph, label, vertex is not None, fields, names, list(range(len(out)))
                )
            )
        else:
            if not st.columns:
                raise self.error(
                    ValidationError(
                        f"INSERT INTO graph {graph.name} needs a column list (label.field, ...) "
                        f"or a label: INSERT INTO {graph.name}.<label>"
                    ),
                    st.target,
                )
            by_label: dict[str, list[tuple[str, int]]] = {}
            for i, c in enumerate(st.columns):
                if len(c.parts) != 2:
                    raise self.error(
                        ValidationError(f"column {str(c)!r} must be written label.field"), c
                    )
                by_label.setdefault(c.parts[0], []).append((c.parts[1], i))
            if len(st.columns) != len(out):
                raise self.error(
                    ValidationError(
                        f"INSERT gives {len(out)} values for {len(st.columns)} columns"
                    ),
                    st.query,
                )
            for lab, cols in by_label.items():
                vertex = graph.vertex(lab)
                edge = graph.edge(lab)
                if vertex is None and edge is None:
                    raise self.error(
                        CatalogError(f"graph {graph.name!r} has no label {lab!r}"), st.target
                    )
                fields = (vertex or edge).fields  # type: ignore[union-attr]
                writes.append(
                    self._graph_write(
                        st,
                        graph,
                        lab,
                        vertex is not None,
                        fields,
                        [c for c, _ in cols],
                        [i for _, i in cols],
                    )
                )
        return self._plan(st, GraphSink(query, graph, tuple(writes)), "insert", graph.name)

    def _graph_write(
        self,
        st: s.Insert,
        graph: GraphInfo,
        label: str,
        is_vertex: bool,
        fields: tuple[ColumnInfo, ...],
        names: list[str],
        indexes: list[int],
    ) -> GraphWrite:
        query_schema = None
        mapping: dict[str, int] = {}
        for name, idx in zip(names, indexes, strict=True):
            match = next((f for f in fields if f.name.lower() == name.lower()), None)
            if match is None:
                raise self.error(
                    ValidationError(
                        f"{label} has no field {name!r} (it has: {', '.join(f.name for f in fields)})"
                    ),
                    st,
                )
            mapping[match.name] = idx
        del query_schema
        info = graph.vertex(label) if is_vertex else graph.edge(label)
        required = (
            [info.id_field] if is_vertex else [info.src_field, info.dst_field]  # type: ignore[union-attr]
        )
        for r in required:
            if r not in mapping:
                what = "id" if is_vertex else ("source id" if r == info.src_field else "target id")  # type: ignore[union-attr]
                raise self.error(
                    ValidationError(f"INSERT into {graph.name}.{label} gives no {what} ({r})"),
                    st.query,
                )
        return GraphWrite(
            info.label,  # type: ignore[union-attr]
            is_vertex,
            tuple((f.name, mapping.get(f.name)) for f in fields),
        )


def _is_count(value: object) -> bool:
    """A positive 32-bit whole number, written as one (GeaFlow reads shard counts as ints)."""
    text = str(value).strip()
    return text.isdigit() and len(text) <= 10 and 1 <= int(text) < 2**31


def sampled_graph_query(graph: GraphInfo, sample: int | None) -> str:
    """The query ``SHOW GRAPH`` runs: the graph's vertices in the order of
    their label and id (the first ``sample`` of them), then its edges whose
    two ends are among them (without a sample, every edge between two of its
    vertices: as a MATCH finds them), in the order of their label, source
    and target."""
    limit = "" if sample is None else f" LIMIT {sample}"
    first = "ORDER BY label(v), id(v)" + limit
    vertices = f"MATCH (v) RETURN v, label(v) AS l, id(v) AS i {first}"
    rows = f"SELECT v AS vertex, NULL AS edge, 0 AS k, l, i, NULL AS j FROM ({vertices}) vs"
    if graph.edges:
        edges = "MATCH (a)-[e]->(b) RETURN e, label(e) AS l, srcid(e) AS s, targetid(e) AS t"
        among = f"SELECT NULL, e, 1, l, s, t FROM ({edges}) es"
        if sample is not None:
            ids = f"SELECT i FROM (MATCH (v) RETURN id(v) AS i {first}) ids"
            among += f" WHERE es.s IN ({ids}) AND es.t IN ({ids})"
        rows += f" UNION ALL {among}"
    return f"SELECT vertex, edge FROM ({rows}) r ORDER BY k, l, i, j"
