"""Logical plan nodes: frozen, hashable dataclasses; rules return new nodes.

Relational nodes mirror Calcite's (TableScan, Project, Filter, Aggregate, Sort,
Join, Union, Values, Correlate) and graph nodes mirror GeaFlow's (GraphMatch
with a tree of match operators, GraphAlgorithm).  Expressions inside a node are
bound sqlglot trees (``planner.expressions``) over the node's input fields.

A node checks its invariants when it is built (references within its input's
width, boolean conditions, union inputs of one width, ...) and computes its
schema once; a node that breaks one is a bug of the binder or of a rule, and
``InvalidPlan`` names it.

(Over 500 lines on purpose: the catalogue of relational plan nodes, each a
short class; kept together so every node the rules and operators match on is
in one place.  Graph nodes are in ``graph_nodes``.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, get_args

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo, TableInfo

from .expressions import input_refs, render, type_of


class InvalidPlan(ValueError):
    """A plan node built against its invariants (a planner bug, not a user error)."""


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: T.DataType


Schema = tuple[Field, ...]

JoinType = Literal["INNER", "LEFT", "RIGHT", "FULL", "CROSS", "SEMI", "ANTI"]
JOIN_TYPES: tuple[str, ...] = get_args(JoinType)


def join_type(name: str) -> JoinType:
    """A join type named in the text (``INNER``, ``LEFT``, ...)."""
    if name not in JOIN_TYPES:
        raise InvalidPlan(f"unknown join type {name!r}")
    return name  # type: ignore[return-value]


def check_refs(node: LogicalNode, exprs: Iterable[exp.Expression | None], width: int) -> None:
    """Every input reference of ``exprs`` is one of ``width`` input fields."""
    for e in exprs:
        if e is None:
            continue
        for i in input_refs(e):
            if i >= width:
                raise InvalidPlan(f"{node.kind} reads field ${i} of an input of {width} fields")


def check_condition(node: LogicalNode, condition: exp.Expression | None) -> None:
    """A condition is boolean (or of a type only known at run time)."""
    if condition is not None and type_of(condition).name not in ("BOOLEAN", "NULL", "ANY"):
        raise InvalidPlan(f"{node.kind} condition is {type_of(condition)}, not BOOLEAN")


def names_of(schema: Schema) -> list[str]:
    return [f.name for f in schema]


@dataclass(frozen=True, slots=True)
class LogicalNode:
    """Base of all plan nodes.  ``inputs`` are the child nodes, in order."""

    _schema: Schema = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        self._check()
        object.__setattr__(self, "_schema", self._compute_schema())

    def _check(self) -> None:
        """Raise InvalidPlan when the node breaks an invariant."""

    def _compute_schema(self) -> Schema:
        raise NotImplementedError

    @property
    def schema(self) -> Schema:
        """The output fields (computed once, when the node is built)."""
        return self._schema

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return tuple(getattr(self, f.name) for f in fields(self) if f.name in self._input_fields())

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ()

    def with_inputs(self, *new_inputs: LogicalNode) -> LogicalNode:
        names = self._input_fields()
        if len(names) == 1 and names[0] == "inputs_":
            return replace(self, inputs_=tuple(new_inputs))  # type: ignore[call-arg]
        return replace(self, **dict(zip(names, new_inputs, strict=True)))  # type: ignore[arg-type]

    @property
    def kind(self) -> str:
        return type(self).__name__

    def explain_attrs(self) -> str:
        return ""

    def input_names(self) -> list[str]:
        out: list[str] = []
        for i in self.inputs:
            out += names_of(i.schema)
        return out


@dataclass(frozen=True, slots=True)
class SingleInput(LogicalNode):
    """A node over one input; its fields are its input's unless it says otherwise."""

    input: LogicalNode

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ("input",)

    def _compute_schema(self) -> Schema:
        return self.input.schema


# ---------------------------------------------------------------------------
# Relational nodes
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableScan(LogicalNode):
    """Reads a table.  ``projection``: the table columns kept (in order), None = all;
    ``filters``: predicates pushed into the scan, over the projected columns."""

    table: TableInfo
    projection: tuple[int, ...] | None = None
    filters: tuple[exp.Expression, ...] = ()
    # Job config at plan time (windows, separators...) merged with table options.
    options: tuple[tuple[str, Any], ...] = ()

    def _check(self) -> None:
        n = len(self.table.columns)
        if self.projection is not None and any(not 0 <= i < n for i in self.projection):
            raise InvalidPlan(f"TableScan of {self.table.name} projects a column it lacks")
        width = n if self.projection is None else len(self.projection)
        check_refs(self, self.filters, width)
        for f in self.filters:
            check_condition(self, f)

    def _compute_schema(self) -> Schema:
        cols = self.table.columns
        idx = self.projection if self.projection is not None else range(len(cols))
        return tuple(Field(cols[i].name, cols[i].type) for i in idx)

    def explain_attrs(self) -> str:
        parts = [f"table={self.table.name}"]
        if self.projection is not None:
            parts.append("columns=[" + ", ".join(f.name for f in self.schema) + "]")
        if self.filters:
            names = names_of(self.schema)
            parts.append("filters=[" + ", ".join(render(f, names) for f in self.filters) + "]")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Values(LogicalNode):
    rows: tuple[tuple[exp.Expression, ...], ...]
    fields_: Schema

    def _check(self) -> None:
        if any(len(row) != len(self.fields_) for row in self.rows):
            raise InvalidPlan(f"Values rows must have {len(self.fields_)} values")

    def _compute_schema(self) -> Schema:
        return self.fields_

    def explain_attrs(self) -> str:
        shown = ", ".join("(" + ", ".join(render(e) for e in row) + ")" for row in self.rows[:5])
        more = ", ..." if len(self.rows) > 5 else ""
        return f"rows={len(self.rows)}: {shown}{more}"


@dataclass(frozen=True, slots=True)
class Project(SingleInput):
    exprs: tuple[exp.Expression, ...]
    fields_: Schema

    def _check(self) -> None:
        if len(self.exprs) != len(self.fields_):
            raise InvalidPlan(f"Project of {len(self.exprs)} values names {len(self.fields_)}")
        check_refs(self, self.exprs, len(self.input.schema))

    def _compute_schema(self) -> Schema:
        return self.fields_

    def explain_attrs(self) -> str:
        names = names_of(self.input.schema)
        return ", ".join(
            f"{f.name}={render(e, names)}" for f, e in zip(self.fields_, self.exprs, strict=True)
        )

    def is_identity(self) -> bool:
        from .expressions import ref_index

        in_schema = self.input.schema
        return len(self.exprs) == len(in_schema) and all(
            ref_index(e) == i and self.fields_[i].name == in_schema[i].name
            for i, e in enumerate(self.exprs)
        )


@dataclass(frozen=True, slots=True)
class Filter(SingleInput):
    condition: exp.Expression

    def _check(self) -> None:
        check_refs(self, (self.condition,), len(self.input.schema))
        check_condition(self, self.condition)

    def explain_attrs(self) -> str:
        return render(self.condition, names_of(self.input.schema))


@dataclass(frozen=True, slots=True)
class AggCall:
    """An aggregate over input fields.  ``constants`` are extra literal arguments
    (the fraction of PERCENTILE, the separator of a string aggregate...)."""

    function: str  # canonical upper-case name, or a user function's name
    args: tuple[int, ...]
    distinct: bool
    type: T.DataType
    constants: tuple[Any, ...] = ()
    user_function: Any = None  # a user-defined aggregate (planner.user_functions.UserFunction)

    def __str__(self) -> str:
        inner = ", ".join(f"${a}" for a in self.args) or "*"
        if self.constants:
            inner += ", " + ", ".join(repr(c) for c in self.constants)
        return f"{self.function}({'DISTINCT ' if self.distinct else ''}{inner})"


@dataclass(frozen=True, slots=True)
class Aggregate(SingleInput):
    """GROUP BY ``group`` (input field indexes) computing ``calls``.

    Output: the group fields, then one field per call."""

    group: tuple[int, ...]
    calls: tuple[AggCall, ...]
    fields_: Schema
    # True for aggregates the planner adds inside a graph query (path
    # subqueries), as opposed to the query's own GROUP BY.
    internal: bool = False

    def _check(self) -> None:
        width = len(self.input.schema)
        used = [*self.group, *(a for c in self.calls for a in c.args)]
        if any(not 0 <= i < width for i in used):
            raise InvalidPlan(f"Aggregate reads a field past the {width} of its input")
        if len(self.fields_) != len(self.group) + len(self.calls):
            raise InvalidPlan("Aggregate outputs its group fields, then one field per call")

    def _compute_schema(self) -> Schema:
        return self.fields_

    def explain_attrs(self) -> str:
        names = names_of(self.input.schema)
        keys = ", ".join(f"{names[g]}${g}" for g in self.group)
        calls = ", ".join(str(c) for c in self.calls)
        return f"group=[{keys}], calls=[{calls}]"


@dataclass(frozen=True, slots=True)
class SortKey:
    index: int
    descending: bool = False
    nulls_first: bool | None = None  # None: GeaFlow's default (nulls first ascending)


@dataclass(frozen=True, slots=True)
class Sort(SingleInput):
    """ORDER BY and/or LIMIT/OFFSET (GeaFlow and Calcite keep them together)."""

    keys: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int = 0

    def _check(self) -> None:
        width = len(self.input.schema)
        if any(not 0 <= k.index < width for k in self.keys):
            raise InvalidPlan(f"Sort key past the {width} fields of its input")
        if (self.limit is not None and self.limit < 0) or self.offset < 0:
            raise InvalidPlan("Sort limit and offset are not negative")

    def explain_attrs(self) -> str:
        names = names_of(self.input.schema)
        parts = []
        if self.keys:
            parts.append(
                "keys=["
                + ", ".join(
                    f"{names[k.index]}${k.index}{' DESC' if k.descending else ''}"
                    for k in self.keys
                )
                + "]"
            )
        if self.limit is not None:
            parts.append(f"limit={self.limit}")
        if self.offset:
            parts.append(f"offset={self.offset}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class GroupLimit(SingleInput):
    """Of the rows agreeing on ``keys``, keep the first ``count`` in ``order``
    (which ``count`` among equals is not fixed).  With ``ties``, keep instead
    every row whose ``order`` value is among the group's ``count`` least (a
    dense rank).  The search prefixes of ISO GQL paths (ANY SHORTEST, ALL
    SHORTEST, SHORTEST k, ANY k) are this over the paths' end vertices."""

    keys: tuple[exp.Expression, ...]
    order: exp.Expression
    count: int
    ties: bool = False

    def _check(self) -> None:
        check_refs(self, (*self.keys, self.order), len(self.input.schema))
        if self.count < 1:
            raise InvalidPlan("GroupLimit keeps at least one row of a group")

    def explain_attrs(self) -> str:
        names = self.input_names()
        keys = ", ".join(render(k, names) for k in self.keys)
        kind = "groups" if self.ties else "rows"
        return f"keys=[{keys}], order=[{render(self.order, names)}], {kind}={self.count}"


@dataclass(frozen=True, slots=True)
class Join(LogicalNode):
    """Joins two inputs; the condition refers to left fields then right fields.
    SEMI and ANTI joins output only the left fields."""

    left: LogicalNode
    right: LogicalNode
    join_type: JoinType
    condition: exp.Expression | None = None

    def _check(self) -> None:
        if self.join_type not in JOIN_TYPES:
            raise InvalidPlan(f"unknown join type {self.join_type!r}")
        check_refs(self, (self.condition,), len(self.left.schema) + len(self.right.schema))
        check_condition(self, self.condition)

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ("left", "right")

    def _compute_schema(self) -> Schema:
        if self.join_type in ("SEMI", "ANTI"):
            return self.left.schema
        return self.left.schema + self.right.schema

    def grows_with(self, side: str) -> bool:
        """When only the ``side`` input (``"left"`` or ``"right"``) gains rows,
        are the rows the join gains exactly those rows joined with the other
        input?  So for inner and cross joins, and for an outer join on the
        side it keeps whole, and a semi or anti join on its left."""
        kept = (
            ("INNER", "CROSS", "LEFT", "SEMI", "ANTI")
            if side == "left"
            else ("INNER", "CROSS", "RIGHT")
        )
        return self.join_type in kept

    def explain_attrs(self) -> str:
        cond = ""
        if self.condition is not None:
            cond = ", on=" + render(self.condition, self.input_names())
        return f"kind={self.join_type}{cond}"


@dataclass(frozen=True, slots=True)
class MultiInput(LogicalNode):
    """A node over any number of inputs."""

    inputs_: tuple[LogicalNode, ...]

    @classmethod
    def _input_fields(cls) -> tuple[str, ...]:
        return ("inputs_",)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return self.inputs_


@dataclass(frozen=True, slots=True)
class Union(MultiInput):
    all: bool = True

    def _check(self) -> None:
        if not self.inputs_:
            raise InvalidPlan("Union of no inputs")
        first = self.inputs_[0].schema
        for other in self.inputs_[1:]:
            if len(other.schema) != len(first):
                raise InvalidPlan(f"Union of inputs of {len(first)} and {len(other.schema)} fields")

    def _compute_schema(self) -> Schema:
        return self.inputs_[0].schema

    def explain_attrs(self) -> str:
        return "all=true" if self.all else "all=false"


@dataclass(frozen=True, slots=True)
class TableFunction:
    """A resolved table function (UDTF): built-in name or user class."""

    name: str
    args: tuple[exp.Expression, ...]
    output: Schema
    implementation: Any = field(default=None, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Correlate(SingleInput):
    """``input, LATERAL TABLE(f(args)) AS t(cols)``: each input row joined with
    the rows the function yields for it."""

    function: TableFunction

    def _check(self) -> None:
        check_refs(self, self.function.args, len(self.input.schema))

    def _compute_schema(self) -> Schema:
        return self.input.schema + self.function.output

    def explain_attrs(self) -> str:
        names = names_of(self.input.schema)
        args = ", ".join(render(a, names) for a in self.function.args)
        return f"function={self.function.name}({args})"


# ---------------------------------------------------------------------------
# Sinks: the roots of a plan
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSink(SingleInput):
    """Writes its input into a table; ``columns`` maps input fields to table columns."""

    table: TableInfo
    columns: tuple[int, ...]  # for each input field, the table column it fills
    options: tuple[tuple[str, Any], ...] = ()

    def _check(self) -> None:
        if len(self.columns) != len(self.input.schema):
            raise InvalidPlan(
                f"TableSink maps {len(self.columns)} of {len(self.input.schema)} fields"
            )

    def explain_attrs(self) -> str:
        return f"table={self.table.name}, connector={self.table.connector}"


@dataclass(frozen=True, slots=True)
class GraphWrite:
    """Writes some input fields into one label of a graph."""

    label: str
    is_vertex: bool
    columns: tuple[tuple[str, int | None], ...]  # (label field, input index or None)


@dataclass(frozen=True, slots=True)
class GraphSink(SingleInput):
    graph: GraphInfo
    writes: tuple[GraphWrite, ...]

    def _check(self) -> None:
        width = len(self.input.schema)
        used = [i for w in self.writes for _, i in w.columns if i is not None]
        if any(not 0 <= i < width for i in used):
            raise InvalidPlan(f"GraphSink writes a field past the {width} of its input")

    def explain_attrs(self) -> str:
        return f"graph={self.graph.name}, labels=[{', '.join(w.label for w in self.writes)}]"


@dataclass(frozen=True, slots=True)
class CollectSink(SingleInput):
    """Returns its input to the caller (a query statement)."""


SINK_TYPES = (TableSink, GraphSink, CollectSink)


@dataclass(frozen=True, slots=True)
class Job(MultiInput):
    """Several sinks planned and run together (a script's statements in one job)."""

    def _compute_schema(self) -> Schema:
        return ()


def walk(node: LogicalNode) -> list[LogicalNode]:
    """All nodes of a plan, parents before children (shared subtrees once)."""
    seen: set[int] = set()
    out: list[LogicalNode] = []

    def visit(n: LogicalNode) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        out.append(n)
        for i in n.inputs:
            visit(i)

    visit(node)
    return out


def transform_up(node: LogicalNode, fn: Any) -> LogicalNode:
    """Rebuild a plan bottom-up, applying ``fn`` to every node (children first)."""
    memo: dict[int, LogicalNode] = {}

    def go(n: LogicalNode) -> LogicalNode:
        key = id(n)
        if key in memo:
            return memo[key]
        new_inputs = tuple(go(i) for i in n.inputs)
        if any(a is not b for a, b in zip(new_inputs, n.inputs, strict=True)):
            n2 = n.with_inputs(*new_inputs)
        else:
            n2 = n
        result = fn(n2)
        memo[key] = result
        return result

    return go(node)
