"""EXPLAIN as a picture: a statement's plan levels in Graphviz's DOT language.

One digraph with a cluster per level, drawn as ``explain.py`` writes them:
the logical plan before and after the rules (each operator a box, an arrow
from each input to what reads it; a subtree two operators share is drawn
once), the PipelineGraph (its vertices and edges, with how rows are
partitioned between them) and the ExecutionGroups (each group a box around
the pipeline vertices it runs, nested as the groups are, labelled with the
rounds its cycle runs).  ``geaflow-sql --explain --format dot|svg`` writes
it; the web console draws it.
"""

from __future__ import annotations

from .explain import rounds_of
from .logical import LogicalNode
from .optimizer import OptimizeResult
from .physical import ExecutionGraph, ExecutionGroup
from .pipeline import PipelineGraph

# (attributes kept short: a label longer than this is cut)
_LABEL_CHARS = 80


def explain_dot(
    optimized: OptimizeResult, pipeline: PipelineGraph, execution: ExecutionGraph
) -> str:
    lines = [
        "digraph explain {",
        "  rankdir=BT;",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    # (every arrow at the top level, after the clusters: some DOT readers,
    # vis-network's among them, skip edges written inside a subgraph)
    arrows: list[str] = []
    for cluster, its_arrows in (
        _logical("before", "Logical plan (before rules)", optimized.before),
        _logical("after", "Logical plan (after rules)", optimized.after),
        _pipeline(pipeline),
        _groups(execution),
    ):
        lines += cluster
        arrows += its_arrows
    lines += arrows
    lines.append("}")
    return "\n".join(lines) + "\n"


def _logical(prefix: str, title: str, root: LogicalNode) -> tuple[list[str], list[str]]:
    """The cluster of a logical plan's operators, and the arrows between them."""
    arrows: list[str] = []
    out = [f"  subgraph cluster_{prefix} {{", f"    label={_quote(title)};"]
    names: dict[int, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in names:
            continue
        names[id(node)] = name = f"{prefix}{len(names)}"
        attrs = node.explain_attrs()
        text = f"{type(node).__name__}({attrs})" if attrs else type(node).__name__
        out.append(f"    {name} [label={_quote(text)}];")
        stack.extend(node.inputs)
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for child in node.inputs:
            arrows.append(f"  {names[id(child)]} -> {names[id(node)]};")
            stack.append(child)
    out.append("  }")
    return out, arrows


def _pipeline(graph: PipelineGraph) -> tuple[list[str], list[str]]:
    arrows: list[str] = []
    out = ["  subgraph cluster_pipeline {", f"    label={_quote('PipelineGraph')};"]
    for v in graph.vertices:
        text = f"[{v.id}] {v.kind} {v.operator}\\nparallelism={v.parallelism}"
        out.append(f"    p{v.id} [label={_quote(text, escaped=True)}];")
    for e in graph.edges:
        how = e.partition + (f" {list(e.keys)}" if e.keys else "")
        label = f" [label={_quote(how)}]" if how else ""
        arrows.append(f"  p{e.src} -> p{e.dst}{label};")
    out.append("  }")
    return out, arrows


def _groups(graph: ExecutionGraph) -> tuple[list[str], list[str]]:
    arrows: list[str] = []
    out = ["  subgraph cluster_groups {", f"    label={_quote('ExecutionGroups and cycles')};"]

    def visit(group: ExecutionGroup, parent: ExecutionGroup | None, depth: int) -> None:
        pad = "    " + "  " * depth
        out.append(f"{pad}subgraph cluster_group{group.id} {{")
        text = f"group {group.id} ({group.mode}): {rounds_of(group, parent)}"
        out.append(f"{pad}  label={_quote(text)};")
        inner = {v for c in group.children for g in c.all_groups() for v in g.vertex_ids}
        for vid in group.vertex_ids:
            if vid not in inner:
                out.append(f"{pad}  g{vid} [label={_quote(f'[{vid}]')}];")
        for child in group.children:
            visit(child, group, depth + 1)
        out.append(f"{pad}}}")

    visit(graph.root, None, 0)
    for e in graph.pipeline.edges:
        arrows.append(f"  g{e.src} -> g{e.dst};")
    out.append("  }")
    return out, arrows


def _quote(text: str, escaped: bool = False) -> str:
    """A DOT string of ``text`` (cut to ``_LABEL_CHARS``); ``escaped``: its
    backslashes are DOT escapes already (``\\n``)."""
    if len(text) > _LABEL_CHARS:
        text = text[: _LABEL_CHARS - 1] + "…"
    if not escaped:
        text = text.replace("\\", "\\\\")
    return '"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'
