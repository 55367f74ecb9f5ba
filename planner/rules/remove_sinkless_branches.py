"""remove_sinkless_branches: drop parts of a job no sink reads (as Bigflow's planner does).

A job's plan is a ``Job`` node over its sinks; any statement whose result no
sink consumes (for example a query in a multi-statement job that only feeds
nothing) is removed.  Plans of a single statement are trees rooted at their
sink, so for them this rule changes nothing.
"""

from __future__ import annotations

from planner.logical import SINK_TYPES, Job, LogicalNode


def remove_sinkless_branches(plan: LogicalNode) -> LogicalNode:

    if isinstance(plan, Job):
        kept = tuple(s for s in plan.inputs_ if isinstance(s, SINK_TYPES))
        if len(kept) != len(plan.inputs_):
            return Job(kept)
    return plan
