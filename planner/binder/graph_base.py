"""The graph binder's shared part: the current graph, errors, and binding
expressions and filters over the path table (``GraphHook`` resolves the
graph syntax in them)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.errors import CatalogError, GeaflowError, ValidationError
from grammar import syntax as s
from planner.expressions import ref, typed
from planner.logical import (
    Field,
    Filter,
    Join,
    LogicalNode,
    Project,
)

from .expressions import ExprBinder
from .graph_hook import GraphHook
from .paths import PathState, struct_with_field


class GraphBinderBase:
    """What the pattern and clause rules of ``GraphQueryBinder`` share."""

    def __init__(self, qb: Any) -> None:
        self.qb = qb
        self.ctx = qb.ctx
        self.graph: GraphInfo | None = None
        self.vertex_type: T.StructType | None = None
        self.edge_type: T.StructType | None = None
        # LET GLOBAL: vertex fields visible to every later vertex of this query.
        self.global_fields: list[tuple[str, Any, LogicalNode]] = []

    def error(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

    def _current_graph(self, at: s.Node) -> GraphInfo:
        catalog = self.ctx.catalog
        if catalog.current_graph is None:
            raise self.error(
                ValidationError("no graph is selected: run USE GRAPH <name> before MATCH or CALL"),
                at,
            )
        graph = catalog.graph((catalog.current_graph,))
        if graph is None:
            raise self.error(CatalogError(f"graph {catalog.current_graph!r} no longer exists"), at)
        return graph

    def _setup(self, at: s.Node) -> None:
        if self.graph is None:
            self.graph = self._current_graph(at)
            self.vertex_type = self.graph.vertex_type()
            self.edge_type = self.graph.edge_type()

    def hook(self, state: PathState) -> GraphHook:
        """The resolver of graph syntax for a clause over ``state`` (made by
        ``GraphQueryBinder``, which has the pattern rules path subqueries use)."""
        raise NotImplementedError

    def binder(self, state: PathState, hook: GraphHook, local: str | None = None) -> ExprBinder:
        return ExprBinder(self.ctx, state.scope(), graph_hook=hook, local_relation=local)

    def filter(self, state: PathState, condition: s.Expr, local: str | None = None) -> PathState:
        hook = self.hook(state)
        cond = self.binder(state, hook, local).bind_condition(condition)
        node = hook.state.node
        assert node is not None
        filtered: LogicalNode = Filter(node, cond)
        extra = hook.state.width - state.width
        if extra:
            # Drop the columns path subqueries added.
            filtered = Project(
                filtered,
                tuple(ref(f.index, f.type) for f in state.fields),
                tuple(Field(f.name, f.type) for f in state.fields),
            )
        return state.with_node(filtered)

    # ------------------------------------------------------------ LET GLOBAL
    def _apply_globals(self, state: PathState, idx: int) -> PathState:
        for name, t, overlay in self.global_fields:
            state = self._overlay(state, idx, name, t, overlay)
        return state

    def _overlay(
        self, state: PathState, idx: int, name: str, t: Any, overlay: LogicalNode
    ) -> PathState:
        assert state.node is not None
        width = state.width
        vt = state.fields[idx].type
        vid = typed(
            exp.Dot(
                this=ref(idx, vt), expression=exp.Identifier(this=T.VERTEX_ID_FIELD, quoted=True)
            ),
            vt.field_type(T.VERTEX_ID_FIELD),
        )
        cond = typed(exp.EQ(this=vid, expression=ref(width, overlay.schema[0].type)), T.BOOLEAN)
        joined = Join(state.node, overlay, "LEFT", cond)
        new_value, new_type = struct_with_field(ref(idx, vt), vt, name, ref(width + 1, t))
        return state.replacing(joined, idx, new_value, new_type)
