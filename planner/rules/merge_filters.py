"""merge_filters: two stacked filters become one.

Filter(Filter(x, a), b)  ->  Filter(x, a AND b)
"""

from __future__ import annotations

from planner.expressions import and_all, conjuncts
from planner.logical import Filter, LogicalNode


def merge_filters(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Filter) and isinstance(node.input, Filter):
        inner = node.input
        cond = and_all(conjuncts(inner.condition) + conjuncts(node.condition))
        assert cond is not None
        return Filter(inner.input, cond)
    return node
