"""push_filter_through_project: filter before computing a projection.

    Filter(Project(x, [a, b+1]), $1 > 2)  ->  Project(Filter(x, b+1 > 2), [a, b+1])

Skipped when the projection computes something non-deterministic.
"""

from __future__ import annotations

from sqlglot import exp

from planner.expressions import is_deterministic, paren, substitute_refs
from planner.logical import Filter, LogicalNode, Project


def push_filter_through_project(node: LogicalNode) -> LogicalNode:
    if not (isinstance(node, Filter) and isinstance(node.input, Project)):
        return node
    project = node.input
    if not all(is_deterministic(e) for e in project.exprs):
        return node
    if any(isinstance(n, exp.AggFunc) for e in project.exprs for n in e.walk()):
        return node
    # Parenthesised so an inlined operator keeps its precedence.
    cond = substitute_refs(node.condition, {i: paren(e) for i, e in enumerate(project.exprs)})
    return Project(Filter(project.input, cond), project.exprs, project.fields_)
