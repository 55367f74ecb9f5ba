"""push_filter_into_join: move filter conjuncts to where they can run first.

    Filter(Join(l, r, CROSS), l.a = r.b AND l.x > 1)
      ->  Join(Filter(l, x > 1), r, INNER, l.a = r.b)

Conjuncts over one side go below the join (for LEFT joins only left-side ones,
for RIGHT joins only right-side ones); conjuncts over both sides become the
condition of an inner join.  Single-side conjuncts of an inner join's own
condition are pushed the same way.
"""

from __future__ import annotations

from planner.expressions import and_all, conjuncts, input_refs, is_deterministic, remap_refs
from planner.logical import Filter, Join, LogicalNode


def _split(node: Join, parts: list) -> tuple[list, list, list]:  # type: ignore[type-arg]
    width = len(node.left.schema)
    left, right, both = [], [], []
    for p in parts:
        refs = input_refs(p)
        if not is_deterministic(p):
            both.append(p)
        elif refs and all(i < width for i in refs):
            left.append(p)
        elif refs and all(i >= width for i in refs):
            right.append(remap_refs(p, lambda i: i - width))
        else:
            both.append(p)
    return left, right, both


def _with_filter(node: LogicalNode, parts: list) -> LogicalNode:  # type: ignore[type-arg]
    cond = and_all(parts)
    return node if cond is None else Filter(node, cond)


def push_filter_into_join(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Join) and node.kind == "INNER" and node.condition is not None:
        left, right, both = _split(node, conjuncts(node.condition))
        if left or right:
            return Join(
                _with_filter(node.left, left),
                _with_filter(node.right, right),
                "INNER",
                and_all(both),
            ) if both else Join(
                _with_filter(node.left, left), _with_filter(node.right, right), "CROSS", None
            )
        return node
    if not (isinstance(node, Filter) and isinstance(node.input, Join)):
        return node
    join = node.input
    if join.kind not in ("INNER", "CROSS", "LEFT", "RIGHT", "SEMI", "ANTI"):
        return node
    parts = conjuncts(node.condition)
    left, right, both = _split(join, parts)
    keep: list = []  # type: ignore[type-arg]
    if join.kind == "LEFT":
        keep = [*both, *[remap_refs(p, lambda i: i + len(join.left.schema)) for p in right]]
        right, both = [], []
    elif join.kind == "RIGHT":
        keep = [*both, *left]
        left, both = [], []
    elif join.kind in ("SEMI", "ANTI"):
        keep = both + [remap_refs(p, lambda i: i + len(join.left.schema)) for p in right]
        right, both = [], []
    if not (left or right or both):
        return node
    kind = join.kind
    condition = join.condition
    if both:
        kind = "INNER" if kind in ("INNER", "CROSS") else kind
        condition = and_all(conjuncts(condition) + both)
    new_join = Join(_with_filter(join.left, left), _with_filter(join.right, right), kind, condition)
    return _with_filter(new_join, keep)
