"""Binding OPTIONAL MATCH (ISO GQL, as in Cypher): the paths so far, each
extended by the pattern where it can be, kept with the pattern's new
variables null where it cannot.

The pattern is bound on its own, as a MATCH run of one clause would bind it
(its variables met afresh), and the paths so far are left-joined to it on the
vertices they share (by id) and on the clause's WHERE.  The WHERE is part of
the join's condition, not a filter after it: a row it rejects keeps its outer
part with nulls, as ISO GQL says, and it may read variables of the paths so
far that the pattern does not mention.  Several OPTIONAL MATCH clauses in a
row each extend what the one before gave.

Before any MATCH, the paths so far are one row of nothing (or the request
row): an OPTIONAL MATCH that finds nothing gives one row of nulls.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ValidationError
from grammar import syntax as s
from planner.expressions import and_all, ref, typed
from planner.logical import Field, Join, Project, Values

from .graph_components import Components, field_named
from .paths import PathState, vertex_id
from .scope import ScopeField


def bind_optional(
    binder: Any, base: PathState, state: PathState, clause: s.MatchClause
) -> PathState:
    """``state`` extended by the OPTIONAL MATCH ``clause`` (see the module doc)."""
    if state.node is None:
        state = PathState(Values(((),), ()), [])
    run = Components(binder, base, base)
    for union in clause.patterns:
        run.add_pattern(union)
    found = run.result()
    assert found.node is not None and state.node is not None
    width = state.width
    terms: list[exp.Expression] = []
    shared: set[int] = set()
    for rf in found.fields:
        lf = field_named(state, rf)
        if lf is None:
            continue
        shared.add(rf.index)
        left, right = ref(lf.index, lf.type), ref(width + rf.index, rf.type)
        if rf.relation is not None:
            terms.append(typed(exp.NullSafeEQ(this=left, expression=right), T.BOOLEAN))
            continue
        if not _is_vertex(lf.type) or not _is_vertex(rf.type):
            raise binder.error(
                ValidationError(
                    f"OPTIONAL MATCH meets {rf.name!r}, bound before it, as an edge or a "
                    "value: it can meet the paths so far on vertices only"
                ),
                clause,
            )
        terms.append(
            typed(exp.EQ(this=vertex_id(lf, 0), expression=vertex_id(rf, width)), T.BOOLEAN)
        )
    new = [f for f in found.fields if f.index not in shared]
    if clause.where is not None:
        # Bound over the paths so far beside the pattern's new fields.
        scope = list(state.fields) + [
            ScopeField(f.name, f.type, width + f.index, f.relation, f.hidden) for f in new
        ]
        inner = PathState(Join(state.node, found.node, "CROSS", None), scope)
        hook = binder.hook(inner)
        condition = binder.binder(inner, hook).bind_condition(clause.where)
        if hook.state.node is not inner.node:
            raise binder.error(
                ValidationError("a path subquery in the WHERE of an OPTIONAL MATCH"), clause.where
            )
        terms.append(condition)
    on = and_all(terms) or typed(exp.Boolean(this=True), T.BOOLEAN)
    joined = Join(state.node, found.node, "LEFT", on)
    exprs = [ref(f.index, f.type) for f in state.fields] + [
        ref(width + f.index, f.type) for f in new
    ]
    fields = [
        ScopeField(f.name, f.type, i, f.relation, f.hidden)
        for i, f in enumerate(list(state.fields) + new)
    ]
    node = Project(joined, tuple(exprs), tuple(Field(f.name, f.type) for f in fields))
    return PathState(node, fields)


def _is_vertex(t: Any) -> bool:
    return isinstance(t, T.StructType) and t.kind == "VERTEX"
