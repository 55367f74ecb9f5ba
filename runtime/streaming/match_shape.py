"""A statement's plan read as one chain of single-hop expansions (the
shape incremental MATCH can run on the change of a graph)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.expressions import is_deterministic, ref_index
from planner.graph_nodes import EdgeMatch, VertexMatch
from planner.logical import Aggregate, Filter, LogicalNode, Project


@dataclass(frozen=True, slots=True)
class MatchShape:
    """A statement's plan read as: row-wise nodes and DISTINCTs over one chain
    ``root -> hop -> hop ...`` of single-hop expansions (with filters between
    them, which keep the path's fields)."""

    top: LogicalNode
    chain: tuple[LogicalNode, ...]  # the root first, the last hop last
    # The highest DISTINCT, and which of its fields are which path vertices.
    distinct: Aggregate | None = None
    keys: tuple[tuple[int, int], ...] = ()

    @property
    def root(self) -> VertexMatch:
        root = self.chain[0]
        assert isinstance(root, VertexMatch)
        return root

    @property
    def hops(self) -> tuple[EdgeMatch, ...]:
        return tuple(n for n in self.chain if isinstance(n, EdgeMatch))

    @property
    def graph(self) -> Any:
        return self.root.graph

    @property
    def chain_top(self) -> LogicalNode:
        return self.chain[-1]

    def producer(self, field: int) -> EdgeMatch | None:
        """The hop whose target vertex is ``field`` of the path."""
        for hop in self.hops:
            if target_field(hop) == field:
                return hop
        return None

    def vertex_reads(self) -> list[tuple[int, tuple[str, ...]]]:
        """(path field, labels) of every vertex the pattern reads."""
        out = [(0, self.root.labels)]
        for hop in self.hops:
            field = target_field(hop)
            if field is not None:
                out.append((field, hop.target_labels))
        return out

    def is_linear(self) -> bool:
        """Does every hop leave from the vertex the previous one reached?"""
        at: int | None = 0
        for hop in self.hops:
            if hop.source != at:
                return False
            at = target_field(hop)
        return True


def target_field(hop: EdgeMatch) -> int | None:
    """The path field of the vertex a hop reads (None: it reads none)."""
    if hop.target_bound is not None or hop.edge_only:
        return None
    return hop.target_index


def match_shape(top: LogicalNode) -> MatchShape | None:
    """The shape of a plan below its sink, or None when it is not one this
    module can run incrementally (see the module docstring)."""
    node = top
    distinct: Aggregate | None = None
    while isinstance(node, (Filter, Project, Aggregate)):
        if isinstance(node, Aggregate):
            if node.calls:
                return None
            distinct = distinct or node
        if isinstance(node, Project) and not all(is_deterministic(e) for e in node.exprs):
            return None
        if isinstance(node, Filter) and not is_deterministic(node.condition):
            return None
        node = node.inputs[0]
    chain: list[LogicalNode] = []
    while isinstance(node, (EdgeMatch, Filter)):
        if isinstance(node, EdgeMatch) and node.is_loop:
            return None
        if isinstance(node, Filter) and not is_deterministic(node.condition):
            return None
        chain.append(node)
        node = node.inputs[0]
    if not isinstance(node, VertexMatch) or node.input is not None or not chain:
        return None
    if any(isinstance(n, EdgeMatch) and n.graph != node.graph for n in chain):
        return None
    shape = MatchShape(top, (node, *reversed(chain)))
    if distinct is None:
        return shape
    vertex_fields = {f for f, _ in shape.vertex_reads()}
    keys = []
    for i, g in enumerate(distinct.group):
        field = chain_field(distinct.input, g, shape.chain_top)
        if field in vertex_fields:
            keys.append((i, field))
    if not keys:
        return None
    return MatchShape(top, shape.chain, distinct, tuple(keys))


def chain_field(node: LogicalNode, index: int, chain_top: LogicalNode) -> int | None:
    """The path field that field ``index`` of ``node`` passes on unchanged, if any."""
    while node is not chain_top:
        if isinstance(node, Project):
            found = ref_index(node.exprs[index])
            if found is None:
                return None
            index = found
        elif isinstance(node, Aggregate):
            if index >= len(node.group):
                return None
            index = node.group[index]
        node = node.inputs[0]
    return index
