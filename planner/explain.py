"""EXPLAIN text for every level of a statement's plan."""

from __future__ import annotations

from .logical import LogicalNode
from .optimizer import OptimizeResult
from .physical import PER_ITERATION, PER_WINDOW, ExecutionGraph, ExecutionGroup
from .pipeline import PipelineGraph


def render_logical(node: LogicalNode) -> str:
    lines: list[str] = []
    seen: dict[int, int] = {}

    def visit(n: LogicalNode, depth: int) -> None:
        attrs = n.explain_attrs()
        fields = ", ".join(f"{f.name}:{f.type}" for f in n.schema)
        name = type(n).__name__
        text = f"{'  ' * depth}{name}({attrs})" if attrs else f"{'  ' * depth}{name}"
        if id(n) in seen:
            lines.append(f"{text}  [shared #{seen[id(n)]}]")
            return
        seen[id(n)] = len(seen)
        lines.append(f"{text}  -> [{fields}]" if fields else text)
        for extra in getattr(n, "explain_children", lambda: [])():
            lines.append(f"{'  ' * (depth + 1)}{extra}")
        for c in n.inputs:
            visit(c, depth + 1)

    visit(node, 0)
    return "\n".join(lines)


def render_pipeline(graph: PipelineGraph) -> str:
    lines = []
    for v in graph.vertices:
        ins = graph.inputs_of(v.id)
        src = ", ".join(
            f"{e.src}{'/' + e.partition if e.partition else ''}"
            + (f"{list(e.keys)}" if e.keys else "")
            for e in ins
        )
        lines.append(
            f"  [{v.id}] {v.kind:<10} {v.operator:<14} parallelism={v.parallelism}"
            + (f"  <- {src}" if src else "")
        )
    return "\n".join(lines)


def render_groups(graph: ExecutionGraph) -> str:
    """Each group, nested under its parent, with the rounds its cycle runs."""
    lines: list[str] = []

    def visit(g: ExecutionGroup, parent: ExecutionGroup | None, depth: int) -> None:
        pad = "  " * (depth + 1)
        lines.append(
            f"{pad}group {g.id} mode={g.mode} vertices={list(g.vertex_ids)} "
            f"head={list(g.head)} tail={list(g.tail)}"
        )
        lines.append(f"{pad}  cycle {g.id}: {rounds_of(g, parent)}")
        for c in g.children:
            visit(c, g, depth + 1)

    visit(graph.root, None, 0)
    return "\n".join(lines)


def rounds_of(group: ExecutionGroup, parent: ExecutionGroup | None) -> str:
    """The rounds ``group``'s cycle runs, in words (under ``parent``)."""
    if group.mode == PER_WINDOW:
        return "a round per source window"
    if group.mode == PER_ITERATION:
        return "a round per iteration, until convergence or the bound"
    if parent is None:
        return "1 round (batch)"
    if parent.mode == PER_WINDOW:
        return "1 round in each window, in statement order"
    return "1 round"


def render_all(
    optimized: OptimizeResult,
    pipeline: PipelineGraph,
    execution: ExecutionGraph,
    spark_plan: str | None,
) -> str:
    applied = [a.rule for a in optimized.trace if a.changed]
    parts = [
        "== Logical Plan (before rules) ==",
        render_logical(optimized.before),
        "",
        "== Rules applied ==",
        "  " + (", ".join(dict.fromkeys(applied)) if applied else "(none)"),
        "",
        "== Logical Plan (after rules) ==",
        render_logical(optimized.after),
        "",
        "== PipelineGraph ==",
        render_pipeline(pipeline),
        "",
        "== ExecutionGroups and cycles ==",
        render_groups(execution),
    ]
    if spark_plan is not None:
        parts += ["", "== Spark Plan ==", spark_plan.rstrip()]
    return "\n".join(parts)
