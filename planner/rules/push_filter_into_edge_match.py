"""push_filter_into_edge_match: filter edges and target vertices before joining them.

    Filter(EdgeMatch(p, (a)-[e]->(b)), e.weight > 0.5 AND b.age < 30 AND a.id = 1)
      ->  EdgeMatch(Filter(p, a.id = 1), (a)-[e WHERE weight > 0.5]->(b WHERE age < 30))

Conditions on the paths so far go below the expansion, conditions on the new
edge or the new vertex alone become the expansion's own filters (applied to
the edge and vertex tables before the join).  For a variable-length edge only
the target vertex's conditions move: a condition on the last edge is not a
condition on every edge of the run.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from planner.expressions import and_all, conjuncts, input_refs, is_deterministic, remap_refs
from planner.graph_nodes import EdgeMatch
from planner.logical import Filter, LogicalNode


def push_filter_into_edge_match(node: LogicalNode) -> LogicalNode:
    if not (isinstance(node, Filter) and isinstance(node.input, EdgeMatch)):
        return node
    em = node.input
    n = len(em.input.schema)
    edge, target = n, em.target_index
    below: list[exp.Expression] = []
    edge_parts: list[exp.Expression] = list(conjuncts(em.edge_filter))
    target_parts: list[exp.Expression] = list(conjuncts(em.target_filter))
    keep: list[exp.Expression] = []
    for c in conjuncts(node.condition):
        refs = input_refs(c)
        if not is_deterministic(c) or not refs:
            keep.append(c)
        elif all(i < n for i in refs):
            below.append(c)
        elif refs == {edge} and not em.is_loop:
            edge_parts.append(remap_refs(c, {edge: 0}))
        elif refs == {target} and em.target_bound is None:
            target_parts.append(remap_refs(c, {target: 0}))
        else:
            keep.append(c)
    if len(keep) == len(conjuncts(node.condition)):
        return node
    new_input = em.input
    cond = and_all(below)
    if cond is not None:
        new_input = Filter(new_input, cond)
    new = replace(
        em, input=new_input, edge_filter=and_all(edge_parts), target_filter=and_all(target_parts)
    )
    rest = and_all(keep)
    return new if rest is None else Filter(new, rest)
