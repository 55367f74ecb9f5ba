"""push_label_into_match: label conditions become the label sets of vertex and edge scans.

    VertexMatch(a:*, filter=label(a) = 'person' AND a.age > 3)
      ->  VertexMatch(a:person, filter=a.age > 3)
    EdgeMatch((a)-[e:*]->(b:person|software), target_filter=b.~label IN ('person', 'city'))
      ->  EdgeMatch((a)-[e:*]->(b:person))

Only exact rewrites: a conjunct ``x.~label = 'lit'`` or ``x.~label IN ('l1', ...)``
over the scanned element alone, compared with the label names as the graph
declares them (``~label`` holds the declared spelling, and string equality is
case-sensitive, so ``'Person'`` matches no label ``person``).  The new label
set is the old one (every label when empty) restricted to the literals; when
nothing would be left the conjunct stays, because an empty label set means
"every label", not "none".  A variable-length edge's filter holds for every
edge of the run, so its label conjuncts restrict every hop, as labels do.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from planner.expressions import and_all, conjuncts, ref_index
from planner.graph_nodes import EdgeMatch, VertexMatch
from planner.logical import LogicalNode


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _is_label_of(e: exp.Expression, index: int) -> bool:
    e = _unparen(e)
    return (
        isinstance(e, exp.Dot) and e.name == T.LABEL_FIELD and ref_index(_unparen(e.this)) == index
    )


def _string(e: exp.Expression) -> str | None:
    e = _unparen(e)
    if isinstance(e, exp.Literal) and e.is_string:
        return str(e.this)
    return None


def label_literals(cond: exp.Expression, index: int) -> list[str] | None:
    """The labels ``cond`` allows for the element in field ``index``, or None
    when it is not a plain label test of that element."""
    c = _unparen(cond)
    if isinstance(c, exp.EQ):
        for a, b in ((c.this, c.expression), (c.expression, c.this)):
            lit = _string(b)
            if _is_label_of(a, index) and lit is not None:
                return [lit]
        return None
    if isinstance(c, exp.In) and not c.args.get("query") and _is_label_of(c.this, index):
        values = [_string(v) for v in c.expressions]
        if values and all(v is not None for v in values):
            return [v for v in values if v is not None]
    return None


def _narrow(
    condition: exp.Expression | None, index: int, labels: tuple[str, ...], every: tuple[str, ...]
) -> tuple[exp.Expression | None, tuple[str, ...], bool]:
    """Fold the label conjuncts of ``condition`` into ``labels``; the flag says
    whether any conjunct was folded (one the labels already imply included)."""
    kept: list[exp.Expression] = []
    current = labels
    folded = False
    for c in conjuncts(condition):
        allowed = label_literals(c, index)
        narrowed = (
            tuple(lab for lab in (current or every) if lab in allowed)
            if allowed is not None
            else ()
        )
        if not narrowed:
            kept.append(c)
            continue
        current, folded = narrowed, True
    if not folded:
        return condition, labels, False
    return and_all(kept), current, True


def _vertex_labels(graph: GraphInfo) -> tuple[str, ...]:
    return tuple(v.label for v in graph.vertices)


def _edge_labels(graph: GraphInfo) -> tuple[str, ...]:
    return tuple(e.label for e in graph.edges)


def push_label_into_match(node: LogicalNode) -> LogicalNode:
    if isinstance(node, VertexMatch) and node.filter is not None:
        vertex = len(node.schema) - 1
        cond, labels, folded = _narrow(node.filter, vertex, node.labels, _vertex_labels(node.graph))
        return replace(node, filter=cond, labels=labels) if folded else node
    if isinstance(node, EdgeMatch):
        edge_cond, edge_labels, edge_folded = _narrow(
            node.edge_filter, 0, node.edge_labels, _edge_labels(node.graph)
        )
        target_cond, target_labels, target_folded = node.target_filter, node.target_labels, False
        if node.target_bound is None and not node.edge_only:
            target_cond, target_labels, target_folded = _narrow(
                node.target_filter, 0, node.target_labels, _vertex_labels(node.graph)
            )
        if edge_folded or target_folded:
            return replace(
                node,
                edge_filter=edge_cond,
                edge_labels=edge_labels,
                target_filter=target_cond,
                target_labels=target_labels,
            )
    return node
