"""Path values and path modes (ISO GQL).

``MATCH p = (a)-[e]->{1,3}(b)`` binds ``p`` to the path: a struct of kind
PATH holding ``nodes`` (the vertices in the order written, a variable-length
edge's intermediate vertices included) and ``edges`` (likewise).  A path mode
before the pattern keeps only the paths it allows:

* ``WALK``: any path (the default);
* ``TRAIL``: no edge twice.  An edge is its stored value: label, source,
  target and properties, whichever way it was walked (GeaFlow has no edge
  ids, so two parallel edges with equal properties are one edge);
* ``ACYCLIC``: no vertex twice (by id);
* ``SIMPLE``: no vertex twice, except that the last may be the first.

The pattern is bound as always; its variable-length edges keep their runs
(``EdgeMatch.keep_run``), and a projection puts the path together from the
fields in the order the pattern is written (a part walked backwards is
reversed).  A mode is a filter on that value, so it holds across the whole
path, fixed hops and runs alike.

``length(p)`` (ISO ``path_length``) is the number of edges; ``nodes(p)``
and ``edges(p)`` the lists.
"""

from __future__ import annotations

from typing import Any, cast

import sqlglot
from sqlglot import exp

from geaflow_sql.core import types as T
from grammar import syntax as s
from planner.expressions import type_of, typed

MODES = ("WALK", "TRAIL", "ACYCLIC", "SIMPLE")


def path_type(vertex_type: Any, edge_type: Any) -> T.StructType:
    return T.StructType(
        (
            T.StructField("nodes", T.ArrayType(vertex_type)),
            T.StructField("edges", T.ArrayType(edge_type)),
        ),
        kind="PATH",
    )


def is_path(t: Any) -> bool:
    return isinstance(t, T.StructType) and t.kind == "PATH"


class Track:
    """Where each element of one path pattern is, as it is bound."""

    def __init__(self) -> None:
        self.nodes: dict[int, int] = {}  # id(node pattern) -> field
        # id(edge pattern) -> (edge field, (run edges, run vertices) fields or
        # None, walked as written)
        self.edges: dict[int, tuple[int, tuple[int, int] | None, bool]] = {}

    def node(self, pattern: Any, index: int) -> None:
        self.nodes[id(pattern)] = index

    def edge(self, pattern: Any, index: int, run: tuple[int, int] | None, forward: bool) -> None:
        self.edges[id(pattern)] = (index, run, forward)

    def value(self, elements: tuple[Any, ...], ptype: T.StructType) -> exp.Expression:
        """The path as a struct, from the fields the elements were bound to."""
        nodes = [f"array(c{self.nodes[id(elements[0])]})"]
        edges: list[str] = []
        for k in range(1, len(elements), 2):
            index, run, forward = self.edges[id(elements[k])]
            target = self.nodes[id(elements[k + 1])]
            if run is None:
                edges.append(f"array(c{index})")
                nodes.append(f"array(c{target})")
                continue
            run_edges, run_vertices = (f"c{run[0]}", f"c{run[1]}")
            if not forward:
                run_edges, run_vertices = f"reverse({run_edges})", f"reverse({run_vertices})"
            edges.append(run_edges)
            nodes.append(run_vertices)
            # A run of no edges ends where it started: that vertex once.
            nodes.append(f"slice(array(c{target}), 1, IF(size(c{run[0]}) = 0, 0, 1))")
        text = (
            f"named_struct('nodes', {_concat(nodes)}, "
            f"'edges', {_concat(edges) if edges else 'array()'})"
        )
        value = _parse(text)
        if not edges:
            # An empty list of the edge type, not of nothing.
            value = _replace_empty_edges(value, ptype)
        return typed(value, ptype)


def _parse(text: str) -> exp.Expression:
    """Spark SQL text over fields ``c<i>`` as a plan expression: ``c5.edges``
    reads field ``edges`` of field 5 (a Dot on a reference, as the binder
    writes it), not a column of a table ``c5``."""

    def dotted(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.table:
            base = exp.Column(this=exp.Identifier(this=node.table, quoted=False))
            return exp.Dot(this=base, expression=node.this)
        return node

    parsed = cast(exp.Expression, sqlglot.parse_one(text, read="spark"))
    return parsed.transform(dotted)


def _concat(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "concat(" + ", ".join(parts) + ")"


def _replace_empty_edges(value: exp.Expression, ptype: T.StructType) -> exp.Expression:
    edges_type = T.spark_sql_type(ptype.field_type("edges"))
    empty = _parse(f"CAST(array() AS {edges_type})")
    for node in value.find_all(exp.Array):
        if not node.expressions:
            node.replace(empty)
            break
    return value


def _stored_edge(var: str, edge_type: T.StructType) -> str:
    """An edge value as stored, whichever way it was walked (for TRAIL)."""
    walked_in = f"{var}.`{T.EDGE_DIRECTION_FIELD}` = 'IN'"
    src, dst = (f"{var}.`{T.EDGE_SRC_FIELD}`", f"{var}.`{T.EDGE_DST_FIELD}`")
    parts = []
    for f in edge_type.fields:
        if f.name == T.EDGE_DIRECTION_FIELD:
            continue
        if f.name == T.EDGE_SRC_FIELD:
            value = f"IF({walked_in}, {dst}, {src})"
        elif f.name == T.EDGE_DST_FIELD:
            value = f"IF({walked_in}, {src}, {dst})"
        else:
            value = f"{var}.`{f.name}`"
        parts.append(f"'{f.name}', {value}")
    return f"named_struct({', '.join(parts)})"


def mode_condition(mode: str, index: int, ptype: T.StructType) -> exp.Expression | None:
    """The filter a path mode puts on the path in field ``index`` (None for WALK)."""
    p = f"c{index}"
    ids = f"transform({p}.nodes, x_ -> x_.`{T.VERTEX_ID_FIELD}`)"
    if mode == "TRAIL":
        edge_type = ptype.field_type("edges").element
        keys = f"transform({p}.edges, x_ -> {_stored_edge('x_', edge_type)})"
        text = f"size(array_distinct({keys})) = size({p}.edges)"
    elif mode == "ACYCLIC":
        text = f"size(array_distinct({ids})) = size({p}.nodes)"
    elif mode == "SIMPLE":
        inner = f"slice({ids}, 1, size({p}.nodes) - 1)"
        text = (
            f"size(array_distinct({ids})) = size({p}.nodes) OR "
            f"(size({p}.nodes) > 1 AND element_at({ids}, 1) = element_at({ids}, -1) "
            f"AND size(array_distinct({inner})) = size({p}.nodes) - 1)"
        )
    else:
        return None
    return typed(_parse(text), T.BOOLEAN)


def path_length(value: exp.Expression) -> exp.Expression:
    """The number of edges of a path value (null for a null path, where
    ``size`` would give -1)."""
    edges = exp.Dot(this=value, expression=exp.Identifier(this="edges", quoted=False))
    return typed(exp.Anonymous(this="array_size", expressions=[edges]), T.INTEGER)


# The hidden field holding the cost of path variable ``p`` under a CHEAPEST
# search (``path_cost(p)`` reads it).
COST_PREFIX = "$cost$"


def cost_field(variable: str) -> str:
    return COST_PREFIX + variable


def is_cost_field(name: str) -> bool:
    return name.startswith(COST_PREFIX)


def cost_type(costs: list[exp.Expression | None]) -> Any:
    """BIGINT when every edge's cost is an integer (1 where none is given), else DOUBLE."""
    integral = all(c is None or getattr(type_of(c), "is_integer", False) for c in costs)
    return T.BIGINT if integral else T.DOUBLE


def path_cost(
    track: Track, steps: tuple[Any, ...], costs: dict[int, exp.Expression], ctype: Any
) -> exp.Expression:
    """The cost of a path: the sum over its edges of the COST of the edge
    pattern each matched (``costs``, by ``id`` of the pattern, expressions
    of the edge alone, field 0), 1 for a pattern without one.  A null cost
    makes the path's cost null."""
    sql = T.spark_sql_type(ctype)
    parts: list[exp.Expression] = []
    for step in steps:
        index, run, _ = track.edges[id(step)]
        if run is None:
            parts.append(_cast(_of(costs.get(id(step)), ref_expr(index)), sql))
            continue
        run_edges = ref_expr(run[0])
        body = step.body.edges if isinstance(step, s.QuantifiedPattern) else (step,)
        each = [costs.get(id(e)) for e in body]
        if all(c is None for c in each):
            parts.append(_parse(f"CAST(array_size({run_edges.sql()}) AS {sql})"))
            continue
        # The run's edges in order: repetition after repetition of the body's
        # edges (one edge for a variable-length edge).
        item = exp.Column(this=exp.Identifier(this="x_", quoted=False))
        if len(body) == 1:
            one = _cast(_of(each[0], item), sql)
            parts.append(_aggregate(run_edges, one, sql, "x_"))
            continue
        whens = " ".join(f"WHEN {k} THEN __cost{k}__" for k in range(len(body)))
        per = _parse(f"transform({run_edges.sql()}, (x_, i_) -> CASE i_ % {len(body)} {whens} END)")
        for k, c in enumerate(each):
            slot = next(a for a in per.find_all(exp.Column) if a.name == f"__cost{k}__")
            slot.replace(_cast(_of(c, item), sql))
        parts.append(_aggregate(per, exp.Column(this=exp.Identifier(this="y_")), sql, "y_"))
    total = parts[0]
    for part in parts[1:]:
        total = exp.Add(this=total, expression=part)
    # (every cast written above is to the cost's type; a COST expression's
    # own casts were typed when it was bound)
    for cast_ in total.find_all(exp.Cast):
        if type_of(cast_) == T.ANY:
            typed(cast_, ctype)
    return typed(total, ctype)


def ref_expr(index: int) -> exp.Expression:
    return exp.Column(this=exp.Identifier(this=f"c{index}", quoted=False))


def _of(cost: exp.Expression | None, edge: exp.Expression) -> exp.Expression | None:
    """The cost expression (of field 0) of the edge ``edge`` (None: none written)."""
    from planner.expressions import substitute_refs

    return None if cost is None else substitute_refs(cost, {0: edge})


def _cast(e: exp.Expression | None, sql: str) -> exp.Expression:
    if e is None:
        return _parse(f"CAST(1 AS {sql})")
    return exp.Cast(this=exp.Paren(this=e), to=exp.DataType.build(sql, dialect="spark"))


def _aggregate(items: exp.Expression, each: exp.Expression, sql: str, var: str) -> exp.Expression:
    """``aggregate(items, 0, (a_, var) -> a_ + each)``: the sum of ``each``
    over the list (0 for an empty one, null if any is null)."""
    template = _parse(f"aggregate(__items__, CAST(0 AS {sql}), (a_, {var}) -> a_ + __each__)")
    for slot in list(template.find_all(exp.Column)):
        if slot.name == "__items__":
            slot.replace(items.copy())
        elif slot.name == "__each__":
            slot.replace(each.copy())
    return template


def first_reach(path: Any) -> str | None:
    """How the variable-length edge of a shortest- or cheapest-path search
    may keep its walks (see ``EdgeMatch.first_reach``): when the path is
    that one edge, in any walk (WALK), its shortest (cheapest) walks between
    two vertices are made of shortest (cheapest) walks, so a walk reaching a
    vertex its start reached in an earlier round (at no higher cost) is no
    part of one: that earlier walk, with fewer edges, would do as well.  Not
    when the run must be longer than one edge (a shortest walk of at least
    three edges may pass a vertex met earlier), nor for SHORTEST k, CHEAPEST
    k or ANY k (they want longer walks too)."""
    search = path.search
    edges = path.steps
    if (
        search is None
        or not (search.shortest or search.cheapest)
        or search.count != 1
        or path.mode not in (None, "WALK")
        or len(edges) != 1
        or not isinstance(edges[0], s.EdgePattern)
        or not edges[0].is_loop
        or edges[0].min_hops > 1
    ):
        return None
    return "ALL" if search.groups else "ANY"


def path_function(name: str, value: exp.Expression) -> exp.Expression | None:
    """``length(p)``/``path_length(p)``, ``nodes(p)``, ``edges(p)`` of a bound path."""
    t = value.meta.get("type") if value.meta else None
    if not is_path(t):
        return None
    assert isinstance(t, T.StructType)
    if name in ("length", "path_length"):
        return path_length(value)
    if name in ("nodes", "edges"):
        part = exp.Dot(this=value, expression=exp.Identifier(this=name, quoted=False))
        return typed(part, t.field_type(name))
    return None
