"""What the query binder's parts share: the context, errors, expression binders."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import GeaflowError
from grammar import syntax as s
from planner.logical import AggCall, LogicalNode

from .context import BindContext
from .expressions import ExprBinder
from .scope import Bound, Scope


class QueryBinderBase:
    """The helpers every part of the query binder uses, and the entry points
    the parts call each other through."""

    def __init__(self, ctx: BindContext) -> None:
        self.ctx = ctx

    # ---------------------------------------------------------------- helpers
    def count_call(self) -> Any:

        return AggCall("COUNT", (), False, T.BIGINT)

    def expr_binder(self, scope: Scope, **kw: Any) -> ExprBinder:
        return ExprBinder(self.ctx, scope, **kw)

    def error(self, err: GeaflowError, node: s.Node) -> GeaflowError:
        return self.ctx.error(err, node.span)

    def bind_query(self, q: s.Query, relation: str | None = None) -> Bound:
        """A query of any kind (``QueryBinder`` binds them)."""
        raise NotImplementedError

    def bind_values(self, q: s.Values, names: tuple[str, ...] = ()) -> LogicalNode:
        """A VALUES list (``QueryBinder`` binds it)."""
        raise NotImplementedError
