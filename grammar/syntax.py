"""The syntax tree: immutable dataclasses, each carrying the source span it came from.

The tree is a faithful picture of the text (no name resolution, no types); the
binder in ``planner`` turns it into a logical plan.  Every node has ``span`` so
that any later error can point at the text that caused it.

(Over 500 lines on purpose: the catalogue of syntax nodes, each a few lines;
one module, like the grammar's one tree builder interface, so the binder's
``_bind_<Node>`` methods have one place to look the nodes up.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Span:
    """A region of the script: 1-based line/column of its first and last character."""

    line: int
    column: int
    end_line: int
    end_column: int
    start: int  # character offsets into the script text
    end: int

    @staticmethod
    def unknown() -> Span:
        return Span(0, 0, 0, 0, 0, 0)

    def merge(self, other: Span) -> Span:
        first, last = (self, other) if self.start <= other.start else (other, self)
        return Span(first.line, first.column, last.end_line, last.end_column, first.start, last.end)


NO_SPAN = Span.unknown()


@dataclass(frozen=True, slots=True)
class Node:
    span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


def descendants(root: Node) -> list[Node]:
    """``root`` and every node below it (fields, tuples of nodes, pairs),
    without recursion."""
    out: list[Node] = []
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, Node):
            out.append(item)
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
        elif isinstance(item, tuple):
            stack.extend(item)
    return out


# ---------------------------------------------------------------------------
# Names and types
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Name(Node):
    """A possibly qualified name: ``a``, ``db.t``, ``g.person``."""

    parts: tuple[str, ...]

    @property
    def last(self) -> str:
        return self.parts[-1]

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True, slots=True)
class TypeName(Node):
    name: str  # upper-cased base name, e.g. VARCHAR, BIGINT, ARRAY
    params: tuple[int, ...] = ()
    args: tuple[TypeName, ...] = ()


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


class Expr(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    value: Any
    kind: str  # 'int' | 'decimal' | 'string' | 'bool' | 'null'
    text: str = ""


@dataclass(frozen=True, slots=True)
class Parameter(Expr):
    """A bound parameter: ``?`` (index) or ``:name``."""

    name: str | None
    index: int


@dataclass(frozen=True, slots=True)
class Column(Expr):
    """A bare name in an expression; the binder decides what it refers to."""

    name: str


@dataclass(frozen=True, slots=True)
class Field(Expr):
    """``expr.name``: a qualified column, or a field of a vertex/edge/struct."""

    base: Expr
    name: str


@dataclass(frozen=True, slots=True)
class Subscript(Expr):
    base: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Star(Expr):
    """``*`` or ``t.*`` in a select list."""

    qualifier: Expr | None = None


@dataclass(frozen=True, slots=True)
class FunctionCall(Expr):
    name: str
    args: tuple[Expr, ...]
    distinct: bool = False
    star: bool = False  # COUNT(*)


@dataclass(frozen=True, slots=True)
class PathFunction(Expr):
    """An aggregate over a path subquery: ``COUNT((a)->(b) => b.id)``."""

    name: str
    path: PathPattern
    value: Expr


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str  # '-', '+', 'NOT'
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    # '+', '-', '*', '/', '%', '||', 'AND', 'OR', '=', '<>', '<', '<=', '>', '>=',
    # 'IS DISTINCT FROM', 'IS NOT DISTINCT FROM'
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class IsTest(Expr):
    operand: Expr
    what: str  # 'NULL' | 'TRUE' | 'FALSE'
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Like(Expr):
    operand: Expr
    pattern: Expr
    negated: bool = False
    escape: Expr | None = None


@dataclass(frozen=True, slots=True)
class InList(Expr):
    operand: Expr
    items: tuple[Expr, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class InQuery(Expr):
    operand: Expr
    query: Query
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Between(Expr):
    operand: Expr
    low: Expr
    high: Expr
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Case(Expr):
    operand: Expr | None
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None = None


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    operand: Expr
    type: TypeName


@dataclass(frozen=True, slots=True)
class ScalarSubquery(Expr):
    query: Query


@dataclass(frozen=True, slots=True)
class Exists(Expr):
    """``EXISTS (SELECT ...)`` or ``EXISTS (a)->(b)``."""

    query: Query | None = None
    path: PathPattern | None = None


@dataclass(frozen=True, slots=True)
class PathExpr(Expr):
    """A path pattern written where an expression may stand (argument of EXISTS)."""

    path: PathPattern


# ---------------------------------------------------------------------------
# Graph patterns
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelExpr(Node):
    """A label expression beyond a list of alternatives: ``op`` is ``name``
    (``name`` set), ``any`` (``%``), ``not``, ``and`` or ``or`` (``args``)."""

    op: str
    name: str | None = None
    args: tuple[LabelExpr, ...] = ()

    def labels(self, every: tuple[str, ...]) -> tuple[str, ...]:
        """The labels among ``every`` it admits (an element has one label),
        in ``every``'s order."""
        if self.op == "name":
            assert self.name is not None
            return tuple(x for x in every if x.lower() == self.name.lower())
        if self.op == "any":
            return every
        sets = [set(a.labels(every)) for a in self.args]
        if self.op == "not":
            kept = set(every) - sets[0]
        elif self.op == "and":
            kept = set.intersection(*sets)
        else:
            kept = set.union(*sets)
        return tuple(x for x in every if x in kept)

    def names(self) -> list[LabelExpr]:
        """The ``name`` leaves, to check they exist."""
        if self.op == "name":
            return [self]
        return [leaf for a in self.args for leaf in a.names()]


@dataclass(frozen=True, slots=True)
class NodePattern(Node):
    variable: str | None
    labels: tuple[str, ...] = ()
    where: Expr | None = None
    # ``{name: value, ...}``: each property must equal its value.
    properties: tuple[tuple[str, Expr], ...] = ()
    # A label expression other than ``A|B|...`` (``labels`` is then empty).
    label_expr: LabelExpr | None = None


@dataclass(frozen=True, slots=True)
class EdgePattern(Node):
    variable: str | None
    direction: str  # 'OUT' | 'IN' | 'BOTH'
    labels: tuple[str, ...] = ()
    where: Expr | None = None
    min_hops: int = 1
    max_hops: int | None = 1  # None: unbounded ({m,})
    properties: tuple[tuple[str, Expr], ...] = ()
    label_expr: LabelExpr | None = None  # as NodePattern's
    # ``COST expr``: what one edge adds to its path's cost under a CHEAPEST
    # search (an expression of the edge alone).
    cost: Expr | None = None

    @property
    def is_loop(self) -> bool:
        return not (self.min_hops == 1 and self.max_hops == 1)


@dataclass(frozen=True, slots=True)
class QuantifiedPattern(Node):
    """``((a)-[e]->(b) WHERE ...){m,n}``: a sub-path repeated ``m`` to ``n``
    times (ISO GQL's quantified path pattern).  It sits in its path between
    two node patterns, as an edge does: the vertex before it is the first
    vertex of its first repetition, each repetition starts where the last
    ended, and the vertex after it is where the last repetition ends (the
    vertex before it, for no repetitions).  Its variables are bound once per
    repetition: outside it they are lists (group variables)."""

    body: PathPattern
    where: Expr | None = None
    min_hops: int = 1
    max_hops: int | None = 1  # None: unbounded ({m,})

    @property
    def variable(self) -> None:
        return None  # (the sub-path's own variables are its group variables)

    @property
    def is_loop(self) -> bool:
        return True

    @property
    def group_variables(self) -> tuple[str, ...]:
        return tuple(e.variable for e in self.body.elements if e.variable)


@dataclass(frozen=True, slots=True)
class PathSearch(Node):
    """An ISO GQL search prefix: of the paths with the same two end vertices,
    keep ``count`` (in order of length when ``shortest``), or, with
    ``groups``, the paths of the ``count`` shortest lengths.

    ANY SHORTEST is (shortest, 1); ALL SHORTEST (shortest, 1, groups);
    ANY k is (not shortest, k); SHORTEST k and SHORTEST k GROUPS as written.
    With ``cheapest`` (ANY CHEAPEST, ALL CHEAPEST, CHEAPEST k [GROUPS]) the
    order is the path's cost, the sum of its edges' COST, not its length."""

    shortest: bool
    count: int
    groups: bool = False
    cheapest: bool = False

    def __str__(self) -> str:
        if self.cheapest:
            if self.groups:
                return "ALL CHEAPEST" if self.count == 1 else f"CHEAPEST {self.count} GROUPS"
            return "ANY CHEAPEST" if self.count == 1 else f"CHEAPEST {self.count}"
        if not self.shortest:
            return f"ANY {self.count}"
        if self.groups:
            return "ALL SHORTEST" if self.count == 1 else f"SHORTEST {self.count} GROUPS"
        return "ANY SHORTEST" if self.count == 1 else f"SHORTEST {self.count}"


@dataclass(frozen=True, slots=True)
class PathPattern(Node):
    """``(a)-[e]->(b)...``: alternating nodes and edges, starting and ending with a node."""

    # Nodes at even positions; an edge or a quantified sub-path between each two.
    elements: tuple[NodePattern | EdgePattern | QuantifiedPattern, ...]
    variable: str | None = None
    mode: str | None = None  # WALK, TRAIL, ACYCLIC or SIMPLE when written
    search: PathSearch | None = None  # a search prefix other than ALL

    @property
    def nodes(self) -> tuple[NodePattern, ...]:
        return tuple(e for e in self.elements if isinstance(e, NodePattern))

    @property
    def edges(self) -> tuple[EdgePattern, ...]:
        return tuple(e for e in self.elements if isinstance(e, EdgePattern))

    @property
    def quantified(self) -> tuple[QuantifiedPattern, ...]:
        return tuple(e for e in self.elements if isinstance(e, QuantifiedPattern))

    @property
    def steps(self) -> tuple[EdgePattern | QuantifiedPattern, ...]:
        """What lies between its nodes: edges and quantified sub-paths."""
        return self.elements[1::2]  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class PatternUnion(Node):
    """``p1 | p2 |+| p3``; ``|`` keeps duplicates, ``|+|`` removes them."""

    paths: tuple[PathPattern, ...]
    distinct: tuple[bool, ...] = ()  # for each union operator, True for |+|


# ---------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------


class Query(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class SelectItem(Node):
    expr: Expr
    alias: str | None = None


@dataclass(frozen=True, slots=True)
class OrderItem(Node):
    expr: Expr
    descending: bool = False
    nulls_first: bool | None = None


class FromItem(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TableRef(FromItem):
    name: Name
    alias: str | None = None
    column_aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SubqueryRef(FromItem):
    query: Query
    alias: str | None = None
    column_aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LateralRef(FromItem):
    call: FunctionCall
    alias: str | None = None
    column_aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JoinRef(FromItem):
    kind: str  # 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS' | 'COMMA'
    left: FromItem
    right: FromItem
    condition: Expr | None = None


@dataclass(frozen=True, slots=True)
class Select(Query):
    items: tuple[SelectItem, ...]
    from_: FromItem | None = None
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    having: Expr | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: Expr | None = None
    offset: Expr | None = None
    distinct: bool = False


@dataclass(frozen=True, slots=True)
class Values(Query):
    rows: tuple[tuple[Expr, ...], ...]


@dataclass(frozen=True, slots=True)
class SetOperation(Query):
    op: str  # 'UNION'
    all: bool
    left: Query
    right: Query


@dataclass(frozen=True, slots=True)
class OrderedQuery(Query):
    """A query with ORDER BY / LIMIT applying to the whole of it (e.g. a union)."""

    query: Query
    order_by: tuple[OrderItem, ...] = ()
    limit: Expr | None = None
    offset: Expr | None = None


# Graph query clauses ---------------------------------------------------------


class GraphClause(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class MatchClause(GraphClause):
    patterns: tuple[PatternUnion, ...]
    where: Expr | None = None
    # OPTIONAL MATCH: a row of the paths so far that the pattern does not
    # extend is kept, with its new variables null.
    optional: bool = False


@dataclass(frozen=True, slots=True)
class LetAssign(Node):
    variable: str
    field: str
    value: Expr
    is_global: bool = False


@dataclass(frozen=True, slots=True)
class LetClause(GraphClause):
    assignments: tuple[LetAssign, ...]


@dataclass(frozen=True, slots=True)
class ReturnClause(GraphClause):
    items: tuple[SelectItem, ...]
    distinct: bool = False


@dataclass(frozen=True, slots=True)
class GroupByClause(GraphClause):
    keys: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class OrderByClause(GraphClause):
    items: tuple[OrderItem, ...]


@dataclass(frozen=True, slots=True)
class LimitClause(GraphClause):
    limit: Expr
    offset: Expr | None = None


@dataclass(frozen=True, slots=True)
class FilterClause(GraphClause):
    condition: Expr


@dataclass(frozen=True, slots=True)
class CallClause(GraphClause):
    name: str
    args: tuple[Expr, ...]
    yields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RequestTable(Node):
    """``WITH p AS (SELECT ...)`` before a MATCH: one independent match per row."""

    name: str
    query: Query


@dataclass(frozen=True, slots=True)
class GraphQuery(Query):
    clauses: tuple[GraphClause, ...]
    request: RequestTable | None = None


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


class Statement(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ColumnDef(Node):
    name: str
    type: TypeName


@dataclass(frozen=True, slots=True)
class CreateTable(Statement):
    name: Name
    columns: tuple[ColumnDef, ...]
    options: tuple[tuple[str, Any], ...] = ()
    primary_key: tuple[str, ...] = ()
    if_not_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True, slots=True)
class CreateView(Statement):
    name: Name
    columns: tuple[str, ...]
    query: Query
    if_not_exists: bool = False
    or_replace: bool = False


@dataclass(frozen=True, slots=True)
class GraphColumn(Node):
    name: str
    type: TypeName | None  # None when declared ``FROM label``
    role: str | None = None  # 'ID' | 'SOURCE' | 'DESTINATION' | 'TIMESTAMP'
    from_label: str | None = None


@dataclass(frozen=True, slots=True)
class VertexDef(Node):
    label: str
    columns: tuple[GraphColumn, ...] = ()
    using: Name | None = None
    id_column: str | None = None


@dataclass(frozen=True, slots=True)
class EdgeDef(Node):
    label: str
    columns: tuple[GraphColumn, ...] = ()
    using: Name | None = None
    source_column: str | None = None
    target_column: str | None = None
    timestamp_column: str | None = None


@dataclass(frozen=True, slots=True)
class CreateGraph(Statement):
    name: Name
    vertices: tuple[VertexDef, ...]
    edges: tuple[EdgeDef, ...]
    options: tuple[tuple[str, Any], ...] = ()
    if_not_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True, slots=True)
class CreateFunction(Statement):
    name: Name
    class_name: str
    using: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class Drop(Statement):
    kind: str  # TABLE | VIEW | GRAPH | FUNCTION
    name: Name
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class UseGraph(Statement):
    name: Name
    version: int | None = None  # VERSION n: read that version


@dataclass(frozen=True, slots=True)
class UseInstance(Statement):
    name: Name


@dataclass(frozen=True, slots=True)
class VacuumGraph(Statement):
    name: Name
    retain: int  # the newest versions kept


@dataclass(frozen=True, slots=True)
class SetOption(Statement):
    key: str | None  # None: show all
    value: Any = None
    show: bool = False


@dataclass(frozen=True, slots=True)
class Insert(Statement):
    target: Name
    columns: tuple[Name, ...]
    query: Query
    overwrite: bool = False


@dataclass(frozen=True, slots=True)
class QueryStatement(Statement):
    query: Query


@dataclass(frozen=True, slots=True)
class Explain(Statement):
    statement: Statement


@dataclass(frozen=True, slots=True)
class Show(Statement):
    what: str  # TABLES | GRAPHS | FUNCTIONS | VERSIONS
    name: Name | None = None  # SHOW VERSIONS OF GRAPH name


@dataclass(frozen=True, slots=True)
class ShowGraph(Statement):
    """``SHOW GRAPH g [SAMPLE n]``: the graph's vertices (at most ``sample``)
    and the edges among them, as rows."""

    name: Name
    sample: int | None = None


@dataclass(frozen=True, slots=True)
class Describe(Statement):
    name: Name
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Script(Node):
    statements: tuple[Statement, ...]
    text: str = field(default="", compare=False, repr=False)
    source: str = field(default="<script>", compare=False, repr=False)

    def statement_text(self, statement: Statement) -> str:
        return self.text[statement.span.start : statement.span.end]
