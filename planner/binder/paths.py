"""The state of a graph query while it is bound: the path table so far.

``PathState`` is a plan node and the names of its fields (path variables,
request columns, hidden helpers); ``struct_with_field`` rebuilds a vertex or
edge value with one field set (LET); ``graph_label_scan`` reads a label of the
current graph as a table (sql2graph).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.expressions import cast_to, ref, type_of, typed
from planner.graph_nodes import (
    GraphLabelScan,
)
from planner.logical import Field, LogicalNode, Project

from .scope import Scope, ScopeField

_HIDDEN = itertools.count()


def _hidden(prefix: str) -> str:
    return f"${prefix}{next(_HIDDEN)}"


@dataclass
class PathState:
    """The paths bound so far: a plan node and the names of its fields."""

    node: LogicalNode | None
    fields: list[ScopeField] = field(default_factory=list)

    @property
    def width(self) -> int:
        return len(self.fields)

    def index_of(self, variable: str) -> int | None:
        lowered = variable.lower()
        for f in self.fields:
            if f.relation is None and f.name.lower() == lowered:
                return f.index
        return None

    def scope(self) -> Scope:
        return Scope(list(self.fields))

    def with_node(self, node: LogicalNode, extra: list[ScopeField] | None = None) -> PathState:
        return PathState(node, list(self.fields) + list(extra or []))

    def replacing(
        self, node: LogicalNode, idx: int, value: exp.Expression, value_type: Any
    ) -> PathState:
        """The paths over ``node`` (whose first fields are these), with field
        ``idx`` set to ``value`` (a vertex or edge rebuilt by LET)."""
        exprs = []
        fields = []
        for f in self.fields:
            if f.index == idx:
                exprs.append(value)
                fields.append(ScopeField(f.name, value_type, f.index, f.relation, f.hidden))
            else:
                exprs.append(ref(f.index, f.type))
                fields.append(f)
        projected = Project(node, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
        return PathState(projected, fields)

    def variables(self) -> list[ScopeField]:
        return [f for f in self.fields if f.relation is None]


def graph_label_scan(qb: Any, parts: tuple[str, ...]) -> LogicalNode | None:
    """A vertex or edge label of the current graph used as a table (sql2graph)."""
    catalog = qb.ctx.catalog
    if len(parts) != 1 or catalog.current_graph is None:
        return None
    graph = catalog.graph((catalog.current_graph,))
    if graph is None:
        return None
    vertex = graph.vertex(parts[0])
    if vertex is not None:
        fields = tuple(Field(c.name, c.type) for c in vertex.fields)
        return GraphLabelScan(graph, vertex.label, True, fields)
    edge = graph.edge(parts[0])
    if edge is not None:
        fields = tuple(Field(c.name, c.type) for c in edge.fields)
        return GraphLabelScan(graph, edge.label, False, fields)
    return None


def struct_with_field(
    base: exp.Expression, t: T.StructType, name: str, value: exp.Expression
) -> tuple[exp.Expression, T.StructType]:
    """``base`` with field ``name`` set to ``value`` (added, or replaced); a
    missing ``base`` stays missing."""
    stored = t.resolve_field(name)
    vt = type_of(value)
    if vt.name == "NULL":
        vt = T.VARCHAR
    fields = []
    args: list[exp.Expression] = []
    replaced = False
    for f in t.fields:
        args.append(exp.Literal.string(f.name))
        if stored is not None and f.name == stored:
            args.append(cast_to(value, vt))
            fields.append(T.StructField(f.name, vt))
            replaced = True
        else:
            args.append(
                exp.Dot(this=base.copy(), expression=exp.Identifier(this=f.name, quoted=True))
            )
            fields.append(f)
    if not replaced:
        args.append(exp.Literal.string(name))
        args.append(cast_to(value, vt))
        fields.append(T.StructField(name, vt))
    new_type = T.StructType(
        tuple(fields),
        t.kind,
        t.labels,
        t.id_field,
        t.src_field,
        t.dst_field,
        t.ts_field,
        aliases=t.aliases,
    )
    built = typed(exp.Anonymous(this="named_struct", expressions=args), new_type)
    # A LET on a vertex or edge that is not there (OPTIONAL MATCH found
    # none, or another branch of a pattern union bound it) leaves it not
    # there, as Cypher's SET on null does: not a value of null properties.
    missing = exp.Is(this=base.copy(), expression=exp.Null())
    return typed(exp.If(this=missing, true=exp.Null(), false=built), new_type), new_type


def vertex_id(f: ScopeField, offset: int) -> exp.Expression:
    """The id of vertex field ``f`` of a row whose fields start at ``offset``."""
    return typed(
        exp.Dot(
            this=ref(offset + f.index, f.type),
            expression=exp.Identifier(this=T.VERTEX_ID_FIELD, quoted=True),
        ),
        f.type.field_type(T.VERTEX_ID_FIELD),
    )
