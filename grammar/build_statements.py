"""The tree builder's rules for statements: DDL, INSERT, SET, USE, SHOW, EXPLAIN."""

from __future__ import annotations

import math
from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from geaflow_sql.core.errors import ParseError

from . import syntax as s
from .build_expressions import MAX_INT_DIGITS
from .literals import decode_string_token
from .tree_helpers import Tagged, by_tag, span_of, tagged, tokens_of, values_of

# The most vertices SHOW GRAPH ... SAMPLE n takes (Spark's LIMIT is an int).
MAX_SAMPLE = 2**31 - 1


@v_args(meta=True)
class StatementRules(Transformer):
    """The tree builder's rules for statements: DDL, INSERT, SET, USE, SHOW, EXPLAIN."""

    text: str  # the script (set by TreeBuilder)

    def if_not_exists(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("if_not_exists", True)

    def with_options(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("options", tuple(values_of(ch)))

    def option(self, meta: Meta, ch: list[Any]) -> tuple[str, Any]:
        return (ch[0], ch[1])

    def option_key(self, meta: Meta, ch: list[Any]) -> str:
        return ".".join(ch)

    def opt_str(self, meta: Meta, ch: list[Any]) -> str:
        return decode_string_token(str(ch[0]))

    def opt_true(self, meta: Meta, ch: list[Any]) -> bool:
        return True

    def opt_false(self, meta: Meta, ch: list[Any]) -> bool:
        return False

    def opt_ident(self, meta: Meta, ch: list[Any]) -> str:
        return str(ch[0])

    def signed_number(self, meta: Meta, ch: list[Any]) -> int | float:
        text = "".join(str(c) for c in ch)
        if meta is not None and not getattr(meta, "empty", False):
            text = self.text[meta.start_pos : meta.end_pos].replace(" ", "")
        digits = text.rstrip("lL").lstrip("-")
        if digits.isdigit():
            if len(digits.lstrip("0")) <= MAX_INT_DIGITS:
                return int(text.rstrip("lL"))
        elif not math.isinf(float(text)):
            return float(text)
        raise ParseError(f"number {text[:40]} is out of range", span=span_of(meta))

    def column_def(self, meta: Meta, ch: list[Any]) -> s.ColumnDef:
        name, type_name = ch
        return s.ColumnDef(name, type_name, span=span_of(meta))

    def primary_key(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("pk", tuple(values_of(ch)))

    def create_table(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = values_of(ch)
        parts = by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        columns = tuple(v for v in vals if isinstance(v, s.ColumnDef))
        return s.CreateTable(
            name,
            columns,
            tuple(parts.get("options", ())),
            tuple(parts.get("pk", ())),
            bool(parts.get("if_not_exists")),
            "TEMPORARY" in tokens_of(ch),
            span=span_of(meta),
        )

    def create_view(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = values_of(ch)
        parts = by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        cols = next((v for v in vals if isinstance(v, list)), [])
        query = vals[-1]
        return s.CreateView(
            name,
            tuple(cols),
            query,
            bool(parts.get("if_not_exists")),
            "REPLACE" in tokens_of(ch),
            span=span_of(meta),
        )

    def graph_column(self, meta: Meta, ch: list[Any]) -> s.GraphColumn:
        vals = values_of(ch)
        role = vals[2] if len(vals) > 2 else None
        return s.GraphColumn(vals[0], vals[1], role, span=span_of(meta))

    def graph_column_from(self, meta: Meta, ch: list[Any]) -> s.GraphColumn:
        vals = values_of(ch)
        role = vals[2] if len(vals) > 2 else None
        return s.GraphColumn(vals[0], None, role, vals[1], span=span_of(meta))

    def role_id(self, meta: Meta, ch: list[Any]) -> str:
        return "ID"

    def role_source(self, meta: Meta, ch: list[Any]) -> str:
        return "SOURCE"

    def role_destination(self, meta: Meta, ch: list[Any]) -> str:
        return "DESTINATION"

    def role_timestamp(self, meta: Meta, ch: list[Any]) -> str:
        return "TIMESTAMP"

    def vertex_inline(self, meta: Meta, ch: list[Any]) -> s.VertexDef:
        vals = values_of(ch)
        return s.VertexDef(vals[0], tuple(vals[1:]), span=span_of(meta))

    def edge_inline(self, meta: Meta, ch: list[Any]) -> s.EdgeDef:
        vals = values_of(ch)
        return s.EdgeDef(vals[0], tuple(vals[1:]), span=span_of(meta))

    def vertex_using(self, meta: Meta, ch: list[Any]) -> s.VertexDef:
        label, table, id_col = values_of(ch)
        return s.VertexDef(label, (), table, id_col, span=span_of(meta))

    def edge_using(self, meta: Meta, ch: list[Any]) -> s.EdgeDef:
        label, table, src, dst = values_of(ch)
        return s.EdgeDef(label, (), table, src, dst, span=span_of(meta))

    def edge_using_ts(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("ts", (values_of(ch)[0], span_of(meta)))

    def create_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = values_of(ch)
        parts = by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        vertices: list[s.VertexDef] = []
        edges: list[s.EdgeDef] = []
        for v in vals:
            if isinstance(v, s.VertexDef):
                vertices.append(v)
            elif isinstance(v, s.EdgeDef):
                edges.append(v)
            elif isinstance(v, Tagged) and v.tag == "ts":
                ts_name, ts_span = v.value
                if edges:
                    last = edges[-1]
                    edges[-1] = s.EdgeDef(
                        last.label,
                        last.columns,
                        last.using,
                        last.source_column,
                        last.target_column,
                        ts_name,
                        span=last.span.merge(ts_span),
                    )
                else:
                    raise ParseError("TIMESTAMP(...) must follow an edge definition", span=ts_span)
        return s.CreateGraph(
            name,
            tuple(vertices),
            tuple(edges),
            tuple(parts.get("options", ())),
            bool(parts.get("if_not_exists")),
            "TEMPORARY" in tokens_of(ch),
            span=span_of(meta),
        )

    def string_value(self, meta: Meta, ch: list[Any]) -> str:
        return decode_string_token(str(ch[0]))

    def create_function(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = values_of(ch)
        parts = by_tag(vals)
        name = next(v for v in vals if isinstance(v, s.Name))
        strings = [v for v in vals if isinstance(v, str)]
        return s.CreateFunction(
            name,
            strings[0],
            strings[1] if len(strings) > 1 else None,
            bool(parts.get("if_not_exists")),
            span=span_of(meta),
        )

    def drop_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        toks = tokens_of(ch)
        kind = next(k for k in ("TABLE", "VIEW", "GRAPH", "FUNCTION") if k in toks)
        return s.Drop(kind, values_of(ch)[0], "EXISTS" in toks, span=span_of(meta))

    def use_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        version = next(
            (int(str(c)) for c in ch if isinstance(c, Token) and c.type == "INTEGER"), None
        )
        return s.UseGraph(values_of(ch)[0], version, span=span_of(meta))

    def vacuum_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        count = next(c for c in ch if isinstance(c, Token) and c.type == "INTEGER")
        if int(str(count)) < 1:
            raise ParseError(
                "RETAIN keeps at least 1 version (the current one)", span=span_of(count)
            )
        return s.VacuumGraph(values_of(ch)[0], int(str(count)), span=span_of(meta))

    def use_instance(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.UseInstance(values_of(ch)[0], span=span_of(meta))

    def set_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = [c for c in ch if not (isinstance(c, Token) and c.type == "SET")]
        return s.SetOption(vals[0], vals[1], span=span_of(meta))

    def set_show(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.SetOption(values_of(ch)[0], None, True, span=span_of(meta))

    def set_show_all(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.SetOption(None, None, True, span=span_of(meta))

    def show_tables(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("TABLES", span=span_of(meta))

    def show_graphs(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("GRAPHS", span=span_of(meta))

    def show_functions(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("FUNCTIONS", span=span_of(meta))

    def show_versions(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Show("VERSIONS", values_of(ch)[0], span=span_of(meta))

    def show_graph(self, meta: Meta, ch: list[Any]) -> s.Statement:
        count = next((c for c in ch if isinstance(c, Token) and c.type == "INTEGER"), None)
        if count is not None and not 1 <= int(str(count)) <= MAX_SAMPLE:
            raise ParseError(f"SAMPLE takes from 1 to {MAX_SAMPLE} vertices", span=span_of(count))
        sample = int(str(count)) if count is not None else None
        return s.ShowGraph(values_of(ch)[0], sample, span=span_of(meta))

    def describe_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        toks = tokens_of(ch)
        kind = next((k for k in ("TABLE", "GRAPH", "VIEW") if k in toks), None)
        return s.Describe(values_of(ch)[0], kind, span=span_of(meta))

    # --------------------------------------------------------------------- dml
    def insert_columns(self, meta: Meta, ch: list[Any]) -> Tagged:
        return tagged("columns", tuple(ch))

    def insert(self, meta: Meta, ch: list[Any]) -> s.Statement:
        vals = values_of(ch)
        parts = by_tag(vals)
        target = vals[0]
        query = vals[-1]
        return s.Insert(
            target,
            tuple(parts.get("columns", ())),
            query,
            "OVERWRITE" in tokens_of(ch),
            span=span_of(meta),
        )

    # ------------------------------------------------------------------ script
    def query_stmt(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.QueryStatement(ch[0], span=span_of(meta))

    def explain(self, meta: Meta, ch: list[Any]) -> s.Statement:
        return s.Explain(values_of(ch)[0], span=span_of(meta))

    def start(self, meta: Meta, ch: list[Any]) -> list[s.Statement]:
        return [c for c in ch if isinstance(c, s.Statement)]
