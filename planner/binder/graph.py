"""Binding graph queries: MATCH patterns, LET, RETURN, THEN FILTER, CALL ... YIELD.

A graph query is bound clause by clause into a *path table* plan (see
``planner.graph_nodes``): each MATCH pattern extends or joins the paths so
far, WHERE clauses become filters, LET rebuilds a vertex/edge value with a new
field, and RETURN is an ordinary SELECT over the path table.  Graph-only
expressions (``label(e)``, ``COUNT((a)->(b) => b.id)``, vertex comparison)
are bound through ``GraphHook``.

The binder is split along what it binds: ``graph_patterns`` (MATCH),
``graph_clauses`` (LET, path sorts, RETURN, THEN FILTER, CALL), ``graph_hook``
(graph syntax in expressions) over ``graph_base`` (the current graph,
filters, LET GLOBAL) and ``paths`` (the path table so far).
"""

from __future__ import annotations

from geaflow_sql.core.errors import ValidationError
from grammar import syntax as s
from planner.expressions import ref
from planner.logical import (
    Aggregate,
    Field,
    LogicalNode,
    Project,
)

from .graph_clauses import ClauseRules
from .graph_components import Components
from .graph_hook import GraphHook
from .graph_optional import bind_optional
from .graph_patterns import PatternRules
from .paths import PathState
from .scope import ScopeField


class GraphQueryBinder(PatternRules, ClauseRules):
    """Binds a graph query clause by clause (see the module doc)."""

    # ------------------------------------------------------------------ query
    def bind(self, q: s.GraphQuery) -> LogicalNode:
        self._setup(q)
        state = PathState(None)
        base = state  # what a MATCH's own path table starts from
        request_key = None
        if q.request is not None:
            req = self.qb.bind_query(q.request.query).node
            # Requests are a set: a repeated request row is answered once (in
            # a stream, once per window: this is not the query's DISTINCT).
            req = Aggregate(req, tuple(range(len(req.schema))), (), req.schema, internal=True)
            request_key = q.request.name.lower()
            self.ctx.request_tables[request_key] = req
            if _runs_per_request_row(q, request_key):
                # The query runs once per request row, which its rows carry.
                state = PathState(
                    req,
                    [
                        ScopeField(f.name, f.type, i, q.request.name)
                        for i, f in enumerate(req.schema)
                    ],
                )
                base = state
        try:
            return self._bind_clauses(q, state, base)
        finally:
            if request_key is not None:
                self.ctx.request_tables.pop(request_key, None)

    def _bind_clauses(self, q: s.GraphQuery, state: PathState, base: PathState) -> LogicalNode:
        clauses = list(q.clauses)
        returned = False
        result: LogicalNode | None = None
        i = 0
        while i < len(clauses):
            clause = clauses[i]
            if isinstance(clause, s.MatchClause) and clause.optional:
                if returned:
                    raise self.error(ValidationError("MATCH cannot follow RETURN"), clause)
                state = bind_optional(self, base, state, clause)
            elif isinstance(clause, s.MatchClause):
                if returned:
                    raise self.error(ValidationError("MATCH cannot follow RETURN"), clause)
                # A run of MATCH clauses is bound as path tables joined where they meet.
                run = Components(self, base, state)
                while (
                    i < len(clauses)
                    and isinstance(clauses[i], s.MatchClause)
                    and not clauses[i].optional  # type: ignore[attr-defined]
                ):
                    match = clauses[i]
                    assert isinstance(match, s.MatchClause)
                    self._match_where = match.where  # (for a search's ends)
                    try:
                        for union in match.patterns:
                            run.add_pattern(union)
                    finally:
                        self._match_where = None
                    if match.where is not None:
                        run.add_where(match.where)
                    i += 1
                state = run.result()
                continue
            elif isinstance(clause, s.LetClause):
                if returned:
                    raise self.error(ValidationError("LET cannot follow RETURN"), clause)
                state = self.bind_let(state, clause)
            elif isinstance(clause, s.CallClause):
                state = self.bind_call(state, clause)
            elif isinstance(clause, (s.OrderByClause, s.LimitClause)) and not returned:
                order: tuple[s.OrderItem, ...] = ()
                limit = None
                if isinstance(clause, s.OrderByClause):
                    order = clause.items
                    if i + 1 < len(clauses) and isinstance(clauses[i + 1], s.LimitClause):
                        i += 1
                        limit = clauses[i]
                else:
                    limit = clause
                state = self.bind_path_sort(state, order, limit)  # type: ignore[arg-type]
            elif isinstance(clause, s.ReturnClause):
                if returned:
                    raise self.error(ValidationError("a graph query has one RETURN"), clause)
                group: tuple[s.Expr, ...] = ()
                order = ()
                limit_clause: s.LimitClause | None = None
                j = i + 1
                while j < len(clauses) and isinstance(
                    clauses[j], (s.GroupByClause, s.OrderByClause, s.LimitClause)
                ):
                    c = clauses[j]
                    if isinstance(c, s.GroupByClause):
                        group = c.keys
                    elif isinstance(c, s.OrderByClause):
                        order = c.items
                    else:
                        assert isinstance(c, s.LimitClause)
                        limit_clause = c
                    j += 1
                i = j - 1
                result = self.bind_return(state, clause, group, order, limit_clause)
                returned = True
            elif isinstance(clause, s.FilterClause):
                if not returned or result is None:
                    raise self.error(ValidationError("THEN FILTER must follow RETURN"), clause)
                result = self.bind_then_filter(result, clause)
            elif isinstance(clause, s.GroupByClause):
                raise self.error(ValidationError("GROUP BY must follow RETURN"), clause)
            else:
                raise self.error(
                    ValidationError(f"unexpected {type(clause).__name__} here"), clause
                )
            i += 1
        if result is not None:
            return result
        if state.node is None:
            raise self.error(ValidationError("a graph query needs MATCH or CALL"), q)
        # No RETURN: the path variables themselves (GeaFlow returns the path).
        visible = [f for f in state.fields if f.relation is None and not f.hidden]
        if not visible:
            visible = [f for f in state.fields if not f.hidden]
        return Project(
            state.node,
            tuple(ref(f.index, f.type) for f in visible),
            tuple(Field(f.name, f.type) for f in visible),
        )

    def hook(self, state: PathState) -> GraphHook:
        return GraphHook(self, state)


def _runs_per_request_row(q: s.GraphQuery, name: str) -> bool:
    """A graph query runs once per request row (GeaFlow's parameterised
    query), unless it uses the request only as a set of values (``x IN p``)
    and reads none of its columns (``p.col``, ``p.*``)."""
    as_set = False
    for clause in q.clauses:
        for node in s.descendants(clause):
            base = node.base if isinstance(node, s.Field) else None
            if isinstance(node, s.Star):
                base = node.qualifier
            if isinstance(base, s.Column) and base.name.lower() == name:
                return True
            if isinstance(node, s.TableRef) and [p.lower() for p in node.name.parts] == [name]:
                as_set = True
    return not as_set
