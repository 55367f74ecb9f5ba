"""What the Spark plan behind a query's result reads, and what it does."""

from __future__ import annotations

from typing import Any


def plan_leaves(result: Any) -> set[str]:
    """The kinds of the leaves of the optimized Spark plan that computes a
    statement's rows: ``LocalRelation`` for rows held on the driver,
    ``LogicalRelation`` for files Spark reads."""
    return frame_leaves(result.query.dataframe)


def frame_leaves(df: Any) -> set[str]:
    """The kinds of the leaves of a DataFrame's optimized plan (as
    ``plan_leaves``; ``LogicalRDD`` for an RDD, such as PySpark's Python
    rows)."""
    plan = df._jdf.queryExecution().optimizedPlan()  # noqa: SLF001
    leaves = plan.collectLeaves().iterator()
    kinds = set()
    while leaves.hasNext():
        kinds.add(str(leaves.next().nodeName()))
    return kinds


def plan_nodes(df: Any) -> list[str]:
    """The names of the nodes of ``df``'s physical plan (the plan Spark
    starts from under adaptive execution), not looking into cached frames."""
    plan = df._jdf.queryExecution().executedPlan()  # noqa: SLF001
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.initialPlan()
    names, todo = [], [plan]
    while todo:
        node = todo.pop()
        names.append(str(node.nodeName()))
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return names
