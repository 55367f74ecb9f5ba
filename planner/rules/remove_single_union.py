"""remove_single_union: a union of one input is that input (as Bigflow's planner does).

Union([x])  ->  x
"""

from __future__ import annotations

from planner.logical import LogicalNode, Union


def remove_single_union(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Union) and len(node.inputs_) == 1 and node.all:
        return node.inputs_[0]
    return node
