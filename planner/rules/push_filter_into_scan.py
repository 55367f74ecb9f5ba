"""push_filter_into_scan: predicate pushdown into table scans.

    Filter(TableScan(t), p)  ->  TableScan(t, filters=[p])

The scan applies the predicate as it reads (and hands it to Spark's data
source, which may skip files or row groups).
"""

from __future__ import annotations

from dataclasses import replace

from planner.expressions import conjuncts, is_deterministic
from planner.logical import Filter, LogicalNode, TableScan


def push_filter_into_scan(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Filter) and isinstance(node.input, TableScan):
        parts = conjuncts(node.condition)
        if not all(is_deterministic(p) for p in parts):
            return node
        scan = node.input
        return replace(scan, filters=scan.filters + tuple(parts))
    return node
