"""push_filter_into_vertex_match: filter vertices where paths start.

    Filter(VertexMatch(a:person), a.age > 30)  ->  VertexMatch(a:person, filter=a.age > 30)

With a request table as input, conditions on the input alone go below the
match, and ``a.~id = p.id`` becomes the key the runtime joins on (one lookup
per request instead of a filtered cross product).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from planner.expressions import and_all, conjuncts, input_refs, is_deterministic, ref_index
from planner.graph_nodes import VertexMatch
from planner.logical import Filter, LogicalNode


def _id_key(cond: exp.Expression, vertex: int) -> int | None:
    """The input column of ``vertex.~id = $k`` (either way round), else None."""
    inner = cond.unnest() if isinstance(cond, exp.Paren) else cond
    if not isinstance(inner, exp.EQ):
        return None
    sides = [inner.this, inner.expression]
    sides = [s.unnest() if isinstance(s, exp.Paren) else s for s in sides]
    for a, b in (sides, sides[::-1]):
        if (
            isinstance(a, exp.Dot)
            and a.name == "~id"
            and ref_index(a.this) == vertex
            and ref_index(b) is not None
            and ref_index(b) != vertex
        ):
            return ref_index(b)
    return None


def push_filter_into_vertex_match(node: LogicalNode) -> LogicalNode:
    if not (isinstance(node, Filter) and isinstance(node.input, VertexMatch)):
        return node
    vm = node.input
    vertex = len(vm.schema) - 1
    below: list[exp.Expression] = []
    inside: list[exp.Expression] = list(conjuncts(vm.filter))
    keep: list[exp.Expression] = []
    id_key = vm.id_key
    for c in conjuncts(node.condition):
        if not is_deterministic(c):
            keep.append(c)
            continue
        refs = input_refs(c)
        if vm.input is not None and refs and vertex not in refs:
            below.append(c)
        elif id_key is None and vm.input is not None and _id_key(c, vertex) is not None:
            id_key = _id_key(c, vertex)
        else:
            inside.append(c)
    new_input = vm.input
    if below and new_input is not None:
        cond = and_all(below)
        assert cond is not None
        new_input = Filter(new_input, cond)
    new = replace(vm, filter=and_all(inside), input=new_input, id_key=id_key)
    rest = and_all(keep)
    return new if rest is None else Filter(new, rest)
