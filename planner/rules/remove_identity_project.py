"""remove_identity_project: a projection that keeps every field in place, unrenamed, goes.

Project(x, [$0, $1]) with x = (a, b) and names (a, b)  ->  x
"""

from __future__ import annotations

from planner.logical import LogicalNode, Project


def remove_identity_project(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Project) and node.is_identity():
        return node.input
    return node
