"""Graph plan nodes: MATCH compiles into these plus ordinary relational nodes.

A MATCH produces a *path table*: one column per path variable, holding the
vertex or edge value (a struct of the graph's unified vertex/edge type), plus
the columns of a request table when there is one.  ``VertexMatch`` starts
paths at vertices; ``EdgeMatch`` extends each path by one edge (or, with a hop
range, by a variable-length run of edges — GeaFlow's LoopUntilMatch) and the
vertex at its end.  Filters, joins of patterns, unions, LET and RETURN are the
relational Filter/Join/Union/Project/Aggregate nodes over path tables, so the
relational rules work on them too; the graph rules push filters and labels
into these nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlglot import exp

from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.types import ArrayType

from .algorithms import AlgorithmSignature
from .expressions import render
from .logical import (
    Field,
    InvalidPlan,
    LogicalNode,
    Schema,
    SingleInput,
    check_condition,
    check_refs,
    names_of,
)

# How an edge pattern walks: along its direction, against it, or either way.
Direction = Literal["OUT", "IN", "BOTH"]
# The direction a hop walks when the path is read from its other end.
REVERSED: dict[Direction, Direction] = {"OUT": "IN", "IN": "OUT", "BOTH": "BOTH"}


def direction_of(text: str) -> Direction:
    """The direction a pattern's arrow names."""
    if text not in get_args(Direction):
        raise InvalidPlan(f"unknown direction {text!r}")
    return text  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class VertexMatch(LogicalNode):
    """Start paths at the vertices with one of ``labels`` (all labels if empty)
    that satisfy ``filter`` (over the single output field).  With an ``input``
    (a request table), every input row starts its own paths: the output is the
    input's fields followed by the vertex, and ``filter`` may read both."""

    graph: GraphInfo
    variable: str
    labels: tuple[str, ...]
    vertex_type: Any
    filter: exp.Expression | None = None
    input: LogicalNode | None = None
    hidden: bool = False
    # Equality of the vertex id with a column of the input (request ids):
    # the runtime joins on it instead of filtering a cross product.
    id_key: int | None = None

    def _check(self) -> None:
        width = len(self.input.schema) if self.input is not None else 0
        if self.id_key is not None and not 0 <= self.id_key < width:
            raise InvalidPlan(f"VertexMatch id key ${self.id_key} past its input's {width} fields")
        check_refs(self, (self.filter,), width + 1)
        check_condition(self, self.filter)

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ("input",)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,) if self.input is not None else ()

    def with_inputs(self, *new_inputs: LogicalNode) -> LogicalNode:
        from dataclasses import replace

        return replace(self, input=new_inputs[0] if new_inputs else None)

    def _compute_schema(self) -> Schema:
        prefix = self.input.schema if self.input is not None else ()
        return prefix + (Field(self.variable, self.vertex_type),)

    def explain_attrs(self) -> str:
        parts = [f"graph={self.graph.name}", f"{self.variable}:{'|'.join(self.labels) or '*'}"]
        if self.filter is not None:
            parts.append("filter=" + render(self.filter, names_of(self.schema)))
        if self.id_key is not None:
            parts.append(f"id=${self.id_key}")
        return ", ".join(parts)


# The upper bound of an open run that ends by itself: a shortest-walk search
# stops when a round reaches no vertex it had not reached before.
UNBOUNDED_HOPS = 2**31 - 1


@dataclass(frozen=True, slots=True)
class EdgeMatch(SingleInput):
    """Extend each path from the vertex in field ``source`` over one edge (or a
    run of ``min_hops``..``max_hops`` edges) to a target vertex.

    ``direction`` is OUT, IN or BOTH; an edge taken against its direction is
    seen reversed (its ``~src`` is the vertex left, ``~direction`` is IN).
    ``edge_filter`` reads the edge alone (field 0), ``target_filter`` the
    target vertex alone (field 0).  When ``target_bound`` is set the target is
    that existing path field (a cycle) and no vertex column is added.  For a
    hop range the edge column holds the last edge of the run (null for zero
    hops), ``edge_filter`` holds for every edge of the run, and the target
    conditions for the vertex the run ends at, whatever its length (a run of
    no hops ends at its start).

    ``via_labels`` and ``via_filter`` (over the vertex alone) are GeaFlow's
    loop body: its vertex step runs after every edge of a run, so every vertex
    a hop reaches must pass them, the vertex a run ends at included when
    ``via_end`` (the pattern is walked in its written direction) and not when
    the run is walked backwards (it ends at the vertex written before it).
    The start of a run is never checked: a run of no hops skips the body."""

    graph: GraphInfo
    source: int
    edge_variable: str
    edge_labels: tuple[str, ...]
    direction: Direction
    edge_type: Any
    target_variable: str
    target_labels: tuple[str, ...]
    vertex_type: Any
    edge_filter: exp.Expression | None = None
    target_filter: exp.Expression | None = None
    target_bound: int | None = None
    min_hops: int = 1
    max_hops: int = 1
    edge_hidden: bool = False
    target_hidden: bool = False
    edge_only: bool = False
    via_labels: tuple[str, ...] = ()
    via_filter: exp.Expression | None = None
    via_end: bool = True
    # A run that keeps its elements (for a path variable or a path mode): two
    # fields after the edge, the run's edges in walk order and the vertices
    # between them (not its start or end).
    keep_run: bool = False
    # A breadth-first search for shortest walks: a walk reaching a vertex that
    # its start reached in an earlier round is dropped (it is no part of a
    # shortest walk); "ANY" also keeps one walk per start and vertex a round,
    # "ALL" every one.  Only where the run is the whole path pattern (see
    # planner.binder.path_values.first_reach).
    first_reach: str | None = None
    # With ``first_reach``, a search by cost (ANY/ALL CHEAPEST) instead of by
    # hops: the cost of one edge (over the edge alone, field 0).  A walk is
    # dropped when its start reached its vertex in an earlier round at a
    # lower cost ("ALL") or at no higher cost ("ANY"; which also keeps one
    # cheapest walk per start and vertex a round, "ALL" every cheapest);
    # an edge of null cost is not taken.
    reach_cost: exp.Expression | None = None
    # With ``first_reach`` (by hops) and an end not bound before: a condition
    # over the end vertex alone that the MATCH's WHERE requires of every path
    # it keeps (a conjunct reading only the end).  A start that has reached
    # every vertex passing it walks no further: a search chooses per pair of
    # ends, so the walks it would add end where the WHERE drops them, or at a
    # vertex already reached sooner.
    search_ends: exp.Expression | None = None

    def _check(self) -> None:
        if self.search_ends is not None and (
            self.first_reach is None or self.reach_cost is not None or self.target_bound is not None
        ):
            raise InvalidPlan("search ends belong to a shortest-path search with an unbound end")
        if self.keep_run and not self.is_loop:
            raise InvalidPlan("only a variable-length edge keeps its run")
        if self.first_reach is not None and (
            not self.is_loop or self.min_hops > 1 or self.first_reach not in ("ANY", "ALL")
        ):
            raise InvalidPlan("a first-reach search is a run of {0,n} or {1,n} edges, ANY or ALL")
        if self.reach_cost is not None and self.first_reach is None:
            raise InvalidPlan("an edge cost orders a first-reach search only")
        if not self.is_loop and self.has_body:
            raise InvalidPlan(
                "only a variable-length edge has conditions on the vertices it passes"
            )
        if self.edge_only and (
            self.target_bound is not None or self.target_filter is not None or self.is_loop
        ):
            raise InvalidPlan("an edge-only expansion has one hop and no target vertex")
        width = len(self.input.schema)
        if not 0 <= self.source < width or (
            self.target_bound is not None and not 0 <= self.target_bound < width
        ):
            raise InvalidPlan(f"EdgeMatch reads a path field past the {width} it has")
        if self.direction not in get_args(Direction):
            raise InvalidPlan(f"unknown direction {self.direction!r}")
        if not 0 <= self.min_hops <= self.max_hops:
            raise InvalidPlan(f"EdgeMatch hops {{{self.min_hops},{self.max_hops}}}")
        # Each filter reads one field: the edge, or the target vertex.
        check_refs(
            self,
            (
                self.edge_filter,
                self.target_filter,
                self.via_filter,
                self.reach_cost,
                self.search_ends,
            ),
            1,
        )
        check_condition(self, self.edge_filter)
        check_condition(self, self.target_filter)
        check_condition(self, self.via_filter)

    @property
    def is_loop(self) -> bool:
        return not (self.min_hops == 1 and self.max_hops == 1)

    @property
    def target_index(self) -> int:
        """The output field of the target vertex (when it adds one)."""
        return len(self.input.schema) + (3 if self.keep_run else 1)

    @property
    def has_body(self) -> bool:
        """Does a hop of the run check the vertex it reaches (labels or filter)?"""
        return bool(self.via_labels) or self.via_filter is not None

    def _compute_schema(self) -> Schema:
        out = self.input.schema + (Field(self.edge_variable, self.edge_type),)
        if self.keep_run:
            out += (
                Field(f"{self.edge_variable}$run_edges", ArrayType(self.edge_type)),
                Field(f"{self.edge_variable}$run_vertices", ArrayType(self.vertex_type)),
            )
        if self.target_bound is None and not self.edge_only:
            out += (Field(self.target_variable, self.vertex_type),)
        return out

    def explain_attrs(self) -> str:
        arrow = {"OUT": "->", "IN": "<-", "BOTH": "-"}[self.direction]
        upper = "" if self.max_hops == UNBOUNDED_HOPS else str(self.max_hops)
        hops = "" if not self.is_loop else f"{{{self.min_hops},{upper}}}"
        src = self.input.schema[self.source].name
        if self.edge_only:
            target = "~"
        elif self.target_bound is not None:
            target = self.input.schema[self.target_bound].name
        else:
            target = f"{self.target_variable}:{'|'.join(self.target_labels) or '*'}"
        parts = [
            f"({src}){arrow}[{self.edge_variable}:{'|'.join(self.edge_labels) or '*'}]{hops}({target})"
        ]
        if self.edge_filter is not None:
            parts.append("edge_filter=" + render(self.edge_filter, [self.edge_variable]))
        if self.target_filter is not None:
            parts.append("target_filter=" + render(self.target_filter, [self.target_variable]))
        if self.keep_run:
            parts.append("keeps its run")
        if self.first_reach is not None and self.reach_cost is not None:
            cost = render(self.reach_cost, [self.edge_variable])
            parts.append(f"cheapest walks ({self.first_reach.lower()}, cost={cost})")
        elif self.first_reach is not None:
            parts.append(f"shortest walks ({self.first_reach.lower()})")
        if self.search_ends is not None:
            ends = render(self.search_ends, [self.target_variable])
            parts.append(f"stops at every end WHERE {ends}")
        if self.has_body:
            via = f"via={'|'.join(self.via_labels) or '*'}"
            if self.via_filter is not None:
                via += " WHERE " + render(self.via_filter, [self.target_variable])
            parts.append(via + ("" if self.via_end else " (not the end)"))
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class RepeatMatch(LogicalNode):
    """Extend each path from the vertex in field ``source`` over ``min_hops``
    to ``max_hops`` repetitions of a sub-path (ISO GQL's quantified path
    pattern), rounds of the node's iteration cycle.

    ``body`` is the sub-path matched alone: one row per walk of it, its
    first vertex in field ``first`` and its last in ``last``.  Each
    repetition starts at the vertex the one before ended at (by id).
    Walked ``forward``, a repetition's ``first`` meets the vertex the path
    stands at and the walk moves to its ``last``; walked backwards (the
    pattern was reached at its end), the other way round.  The output is
    the input's fields, then for each of ``groups`` (body fields) the list
    of its values in the repetitions in the order written (named by
    ``group_names``), then, when ``run`` is set (body fields of its edges,
    and of its vertices after the first, in the order written), the run's
    edges and the vertices strictly between the path's vertex before and
    after the repetitions, then the vertex the walk ends at (its start for
    no repetitions), unless ``target_bound`` names a path field it must be."""

    input: LogicalNode
    body: LogicalNode
    source: int
    first: int
    last: int
    groups: tuple[int, ...]
    group_names: tuple[str, ...]
    target_variable: str
    vertex_type: Any
    edge_type: Any
    min_hops: int = 1
    max_hops: int = 1
    forward: bool = True
    run: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    target_bound: int | None = None
    target_hidden: bool = False

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ("input", "body")

    def _check(self) -> None:
        width, body_width = len(self.input.schema), len(self.body.schema)
        if not 0 <= self.source < width or (
            self.target_bound is not None and not 0 <= self.target_bound < width
        ):
            raise InvalidPlan(f"RepeatMatch reads a path field past the {width} it has")
        run = self.run or ((), ())
        body_fields = (self.first, self.last, *self.groups, *run[0], *run[1])
        if any(not 0 <= i < body_width for i in body_fields):
            raise InvalidPlan(f"RepeatMatch reads a body field past the {body_width} it has")
        if len(self.groups) != len(self.group_names):
            raise InvalidPlan("RepeatMatch names each group field once")
        if not 0 <= self.min_hops <= self.max_hops:
            raise InvalidPlan(f"RepeatMatch repetitions {{{self.min_hops},{self.max_hops}}}")

    @property
    def target_index(self) -> int:
        """The output field of the vertex the walk ends at (when it adds one)."""
        return len(self.input.schema) + len(self.groups) + (2 if self.run is not None else 0)

    def _compute_schema(self) -> Schema:
        body = self.body.schema
        out = self.input.schema + tuple(
            Field(name, ArrayType(body[i].type))
            for i, name in zip(self.groups, self.group_names, strict=True)
        )
        if self.run is not None:
            out += (
                Field(f"{self.target_variable}$run_edges", ArrayType(self.edge_type)),
                Field(f"{self.target_variable}$run_vertices", ArrayType(self.vertex_type)),
            )
        if self.target_bound is None:
            out += (Field(self.target_variable, self.vertex_type),)
        return out

    def explain_attrs(self) -> str:
        upper = "" if self.max_hops == UNBOUNDED_HOPS else str(self.max_hops)
        src = self.input.schema[self.source].name
        body = self.body.schema
        sub = f"({body[self.first].name})..({body[self.last].name})"
        if not self.forward:
            sub += " walked from its end"
        if self.target_bound is not None:
            target = self.input.schema[self.target_bound].name
        else:
            target = self.target_variable
        parts = [f"({src}) {sub}{{{self.min_hops},{upper}}} ({target})"]
        if self.groups:
            parts.append("groups=" + "|".join(self.group_names))
        if self.run is not None:
            parts.append("keeps its run")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class GraphLabelScan(LogicalNode):
    """A vertex or edge label of a graph read as a table (its declared columns)."""

    graph: GraphInfo
    label: str
    is_vertex: bool
    fields_: Schema

    def _compute_schema(self) -> Schema:
        return self.fields_

    def explain_attrs(self) -> str:
        return f"graph={self.graph.name}, {'vertex' if self.is_vertex else 'edge'}={self.label}"


@dataclass(frozen=True, slots=True)
class GraphAlgorithm(LogicalNode):
    """``CALL name(args) YIELD (cols)`` over a graph: an iteration (cycle rounds).

    ``signature`` is what the call was bound against; ``function`` is the
    user's loaded algorithm when the signature is user-defined."""

    graph: GraphInfo
    signature: AlgorithmSignature
    args: tuple[Any, ...]
    fields_: Schema
    function: Any = None  # planner.user_functions.UserFunction

    @property
    def name(self) -> str:
        return self.signature.name

    def _compute_schema(self) -> Schema:
        return self.fields_

    def explain_attrs(self) -> str:
        args = ", ".join(repr(a) for a in self.args)
        return f"graph={self.graph.name}, {self.name}({args})"
