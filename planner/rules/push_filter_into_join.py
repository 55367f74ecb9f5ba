"""push_filter_into_join: move filter conjuncts to where they can run first.

    Filter(Join(Join(a, b, CROSS), c, CROSS), a.x = b.x AND b.y = c.y AND a.z > 1)
      ->  Join(Join(Filter(a, z > 1), b, INNER, a.x = b.x), c, INNER, b.y = c.y)

Conjuncts over one side go below the join (for LEFT joins only left-side ones,
for RIGHT joins only right-side ones); conjuncts over both sides become the
condition of an inner join, so a comma join with equalities in WHERE becomes
a chain of equi-joins (which Spark runs as hash joins, not a cross product).
A pushed filter keeps going down through further joins in the same pass.
An inner join's own single-side conjuncts are pushed the same way, as are the
right-side conjuncts of a LEFT join's ON (they only decide which right rows
can match) and the left-side ones of a RIGHT join's ON.
"""

from __future__ import annotations

from sqlglot import exp

from planner.expressions import and_all, conjuncts, input_refs, is_deterministic, remap_refs
from planner.logical import Filter, Join, JoinType, LogicalNode

Parts = list[exp.Expression]


def _split(node: Join, parts: Parts) -> tuple[Parts, Parts, Parts]:
    """Conjuncts over the left input only, the right input only (renumbered), and both."""
    width = len(node.left.schema)
    left: Parts = []
    right: Parts = []
    both: Parts = []
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


def _with_filter(node: LogicalNode, parts: Parts) -> LogicalNode:
    cond = and_all(parts)
    if cond is None:
        return node
    # Keep pushing through a join below, so long comma joins resolve in one pass.
    return push_filter_into_join(Filter(node, cond))


def _shift(parts: Parts, offset: int) -> Parts:
    return [remap_refs(p, lambda i: i + offset) for p in parts]


def _push_join_condition(node: Join) -> LogicalNode:
    """Single-side conjuncts of a join's own ON condition, where that is safe."""
    if node.condition is None or node.join_type not in ("INNER", "LEFT", "RIGHT"):
        return node
    left, right, both = _split(node, conjuncts(node.condition))
    width = len(node.left.schema)
    if node.join_type == "LEFT":
        # Left-side ON conjuncts only decide matches: they stay in the condition.
        both, left = both + left, []
    elif node.join_type == "RIGHT":
        both, right = both + _shift(right, width), []
    if not (left or right):
        return node
    kind: JoinType = node.join_type
    if kind == "INNER" and not both:
        kind = "CROSS"
    return Join(_with_filter(node.left, left), _with_filter(node.right, right), kind, and_all(both))


def push_filter_into_join(node: LogicalNode) -> LogicalNode:
    if isinstance(node, Join):
        return _push_join_condition(node)
    if not (isinstance(node, Filter) and isinstance(node.input, Join)):
        return node
    join = node.input
    if join.join_type not in ("INNER", "CROSS", "LEFT", "RIGHT", "SEMI", "ANTI"):
        return node
    left, right, both = _split(join, conjuncts(node.condition))
    width = len(join.left.schema)
    keep: Parts = []
    if join.join_type == "LEFT":
        # Right-side rows may be null-extended: such conditions run after the join.
        keep = [*both, *_shift(right, width)]
        right, both = [], []
    elif join.join_type == "RIGHT":
        keep = [*both, *left]
        left, both = [], []
    elif join.join_type in ("SEMI", "ANTI"):
        keep = [*both, *_shift(right, width)]
        right, both = [], []
    if not (left or right or both):
        return node
    kind = join.join_type
    condition = join.condition
    if both:
        kind = "INNER" if kind in ("INNER", "CROSS") else kind
        condition = and_all(conjuncts(condition) + both)
    new_join = Join(_with_filter(join.left, left), _with_filter(join.right, right), kind, condition)
    pushed = _push_join_condition(new_join) if new_join.join_type == "INNER" else new_join
    cond = and_all(keep)
    return pushed if cond is None else Filter(pushed, cond)
