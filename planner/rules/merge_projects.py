"""merge_projects: a projection of a projection becomes one, by inlining.

    Project(Project(x, [a+1, b]), [$0 * 2])  ->  Project(x, [(a+1) * 2])

Only when each inner expression used more than once is a plain reference or a
literal (so no work is duplicated) and all inner expressions are deterministic.
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp

from planner.expressions import is_deterministic, paren, ref_index, substitute_refs
from planner.logical import LogicalNode, Project


def _cheap(e: exp.Expression) -> bool:
    return ref_index(e) is not None or isinstance(e, (exp.Literal, exp.Null, exp.Boolean))


def merge_projects(node: LogicalNode) -> LogicalNode:
    if not (isinstance(node, Project) and isinstance(node.input, Project)):
        return node
    inner = node.input
    if not all(is_deterministic(e) for e in inner.exprs):
        return node
    uses: Counter[int] = Counter()
    for e in node.exprs:
        for col in e.find_all(exp.Column):
            i = ref_index(col)
            if i is not None:
                uses[i] += 1
    if any(n > 1 and not _cheap(inner.exprs[i]) for i, n in uses.items()):
        return node
    # Parenthesised: an inlined a + 1 inside $0 * 2 must stay (a + 1) * 2.
    values = {i: paren(e) for i, e in enumerate(inner.exprs)}
    merged = tuple(substitute_refs(e, values) for e in node.exprs)
    return Project(inner.input, merged, node.fields_)
