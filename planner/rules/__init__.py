"""Optimizer rules, one per module, grouped into ordered phases.

A rule is a pure function from a plan to a plan (returning the same object
when nothing applies).  ``PHASES`` orders them the way GeaFlow groups its rule
sets: a pre-rewrite phase that normalises, a logical phase that pushes work
down, and a post-optimize phase that cleans up.  The optimizer runs these
unless it is given other rules (``planner.optimizer.optimize(..., rules=)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.logical import LogicalNode, transform_up

from .choose_match_start import choose_match_start
from .constant_folding import constant_folding
from .merge_filters import merge_filters
from .merge_projects import merge_projects
from .prune_columns import prune_columns
from .push_filter_into_edge_match import push_filter_into_edge_match
from .push_filter_into_join import push_filter_into_join
from .push_filter_into_scan import push_filter_into_scan
from .push_filter_into_vertex_match import push_filter_into_vertex_match
from .push_filter_through_project import push_filter_through_project
from .push_label_into_match import push_label_into_match
from .remove_identity_project import remove_identity_project
from .remove_single_union import remove_single_union
from .remove_sinkless_branches import remove_sinkless_branches
from .sql2graph import sql2graph


@dataclass(frozen=True)
class Rule:
    name: str
    # Rewrites one node (its inputs already rewritten); applied bottom-up.
    node_fn: Callable[[LogicalNode], LogicalNode] | None = None
    # Or rewrites a whole plan at once (for rules that need the full tree).
    plan_fn: Callable[[LogicalNode], LogicalNode] | None = None

    def apply(self, plan: LogicalNode) -> LogicalNode:
        if self.plan_fn is not None:
            return self.plan_fn(plan)
        assert self.node_fn is not None
        return transform_up(plan, self.node_fn)


PRE_REWRITE = (
    Rule("remove_sinkless_branches", plan_fn=remove_sinkless_branches),
    Rule("remove_single_union", node_fn=remove_single_union),
    Rule("constant_folding", node_fn=constant_folding),
)
LOGICAL = (
    Rule("merge_filters", node_fn=merge_filters),
    Rule("push_filter_through_project", node_fn=push_filter_through_project),
    Rule("push_filter_into_join", node_fn=push_filter_into_join),
    Rule("push_filter_into_scan", node_fn=push_filter_into_scan),
    Rule("sql2graph", node_fn=sql2graph),
    Rule("push_filter_into_vertex_match", node_fn=push_filter_into_vertex_match),
    Rule("push_filter_into_edge_match", node_fn=push_filter_into_edge_match),
    Rule("push_label_into_match", node_fn=push_label_into_match),
    Rule("choose_match_start", plan_fn=choose_match_start),
)
POST_OPTIMIZE = (
    Rule("prune_columns", plan_fn=prune_columns),
    Rule("merge_projects", node_fn=merge_projects),
    Rule("remove_identity_project", node_fn=remove_identity_project),
)


@dataclass(frozen=True)
class Phase:
    """Rules run together, in order, until none changes the plan (or a bound)."""

    name: str
    rules: tuple[Rule, ...]


PHASES: tuple[Phase, ...] = (
    Phase("pre_rewrite", PRE_REWRITE),
    Phase("logical", LOGICAL),
    Phase("post_optimize", POST_OPTIMIZE),
)


def all_rule_names() -> list[str]:
    return [r.name for phase in PHASES for r in phase.rules]


def rule_named(name: str) -> Rule:
    for phase in PHASES:
        for rule in phase.rules:
            if rule.name == name:
                return rule
    raise KeyError(name)
