"""Plan checks: what every rule must keep true (run after each rule in tests).

Each node checks its own invariants when it is built (``planner.logical``);
these checks look at the plan a rule returned as a whole:

* the plan still has the shape it had: the same kind of root, the same sinks
  with the same fields (a rule never adds, drops or changes what is written),
  and the same output fields (names and types);
* every node of it holds its invariants (each node checks them when it is
  built; they are checked again here, in case a node was made some other way).
"""

from __future__ import annotations

from .logical import SINK_TYPES, InvalidPlan, LogicalNode, walk


def _sinks(plan: LogicalNode) -> list[LogicalNode]:
    return [n for n in walk(plan) if isinstance(n, SINK_TYPES)]


def _fields(plan: LogicalNode) -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in plan.schema]


def check_plan(rule: str, before: LogicalNode, after: LogicalNode) -> None:
    """Raise InvalidPlan when ``rule`` turned ``before`` into a broken ``after``."""
    if type(after) is not type(before):
        raise InvalidPlan(f"{rule}: the plan's root became {after.kind}, was {before.kind}")
    if _fields(after) != _fields(before):
        raise InvalidPlan(f"{rule}: the plan's fields became {_fields(after)}")
    old = [(n.kind, _fields(n)) for n in _sinks(before)]
    if [(n.kind, _fields(n)) for n in _sinks(after)] != old:
        raise InvalidPlan(f"{rule}: the plan's sinks changed")
    for node in walk(after):
        node._check()  # noqa: SLF001 - the node's own invariants, once more
