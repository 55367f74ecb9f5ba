"""A prepared plan as one DuckDB query over Arrow copies of its inputs.

Each plan node becomes a common table expression whose columns are the
node's fields: a scalar field ``i`` is the column ``c<i>``; a vertex or edge
field is flattened into one column per property, ``c<i>.<property>`` (``~id``,
``~label``, ``~src`` ...), so joins and filters read plain columns and DuckDB
drops the properties no one reads.

Only what gives the same values as the Spark path is translated; anything
else raises ``NotLocal`` and the statement runs distributed.  The rules
(each one a difference between Spark, as this engine configures it, and
DuckDB, or a place where the two were not compared):

* types: booleans, integers, FLOAT/DOUBLE and VARCHAR.  No decimals, dates,
  timestamps, binaries, arrays or maps (their casts, arithmetic and text
  forms differ), but for the lists and structs of path values, each one
  column (``local.nested``).  A vertex or edge is held as its properties: it is compared
  with another of its type property by property, counted by its label (a
  found element always has one), built property by property where LET
  adds a property, and made one struct again where the result returns it
  (NULL when it has no label: one an outer join did not find); no other
  expression takes one whole.
* expressions: column and property references, literals, comparisons of
  values of one family (numbers, strings, booleans), AND/OR/NOT, IS NULL,
  IN lists, BETWEEN, COALESCE widening its arguments to its type, and
  + - * and unary minus on integers and floats.
  Spark wraps an integer overflow (ANSI mode off) where DuckDB raises: the
  raise sends the statement back to Spark, so an overflow gives Spark's
  answer.  No division, modulo or other functions (Spark gives NULL for x/0,
  DuckDB +-inf; GeaFlow's integer division truncates) and no casts but
  widening ones (Spark truncates a double to an int, DuckDB rounds).
* aggregates: COUNT, MIN, MAX, and SUM/AVG of integers (GeaFlow's SUM of no
  values is 0).  SUM/AVG of floats as Spark's exact sum computes them, to
  the bit (``local.exact_sum``); with ``geaflow.dsl.sum.exact`` off they
  depend on the order of addition, which neither engine fixes, and stay on
  Spark.
* a sort numbers its rows (``__ord``) and the final query orders by that
  number, since an ORDER BY inside a subquery promises nothing.
* VALUES: rows of constants of the columns' types (as the Spark path hands
  them to Spark in one local relation), or of expressions cast widening only.
* no cross joins: their output is the product of their inputs, which only a
  distributed, cancellable job should take on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from geaflow_sql.core.config import EXACT_DOUBLE_SUM
from planner.dialect import FloatArithmetic
from planner.expressions import ref_index, type_of
from planner.graph_nodes import (
    EdgeMatch,
    GraphAlgorithm,
    GraphLabelScan,
    RepeatMatch,
    VertexMatch,
)
from planner.logical import (
    Aggregate,
    CollectSink,
    Filter,
    GroupLimit,
    Join,
    LogicalNode,
    Project,
    Sort,
    TableScan,
    Union,
    Values,
    walk,
)
from runtime.operators.literal_rows import python_rows

from .exact_sum import exact_sum, helper_layers
from .inputs import HeldRows
from .nested import Nested, is_nested, nested_duck_type, packed
from .sql_text import q, string_literal
from .types import FLOATS, NotLocal, duck_type, family, narrowing_cast, widens


def is_element(t: Any) -> bool:
    return isinstance(t, T.StructType) and t.kind in ("VERTEX", "EDGE")


def _run_lists(node: EdgeMatch, edge: str, prev: str) -> list[tuple[str, str, str]]:
    """The lists a walk that keeps its run carries, as (name, value at the
    start, value one ``edge`` further for the walk ``w`` whose lists are
    ``prev`` + name): the edges taken, and the vertices between them (the
    vertex the walk stood at, ``w.__atv``, once it moves on)."""
    etype, vtype = T.ArrayType(node.edge_type), T.ArrayType(node.vertex_type)
    return [
        ("redges", f"CAST([] AS {nested_duck_type(etype)})", f"list_append({prev}redges, {edge})"),
        (
            "rverts",
            f"CAST([] AS {nested_duck_type(vtype)})",
            f"CASE WHEN w.__hops > 0 THEN list_append({prev}rverts, w.__atv) ELSE {prev}rverts END",
        ),
    ]


def _no_vertex(node: EdgeMatch) -> str:
    """A null vertex of the loop's type (where a walk stands before it moves)."""
    return f"CAST(NULL AS {nested_duck_type(node.vertex_type)})"


@dataclass(frozen=True)
class Slot:
    """How one field of a relation is held: a column, or a column per property."""

    type: Any
    column: str = ""  # scalar
    properties: tuple[tuple[str, str], ...] = ()  # element: (property, column)

    def property(self, name: str) -> str:
        for prop, col in self.properties:
            if prop == name:
                return col
        lowered = name.lower()
        for prop, col in self.properties:
            if prop.lower() == lowered:
                return col
        raise NotLocal(f"property {name}")


def slots_for(schema: Any, offset: int = 0) -> list[Slot]:
    out = []
    for i, f in enumerate(schema):
        name = f"c{offset + i}"
        if is_element(f.type):
            for sf in f.type.fields:
                duck_type(sf.type)
            props = tuple((sf.name, f"{name}.{sf.name}") for sf in f.type.fields)
            out.append(Slot(f.type, properties=props))
        elif is_nested(f.type):
            # (a path, or a run's list of vertices or edges: one column)
            nested_duck_type(f.type)
            out.append(Slot(f.type, column=name))
        else:
            if f.type != T.NULL:  # (a NULL column: of no type until a union gives it one)
                duck_type(f.type)
            out.append(Slot(f.type, column=name))
    return out


def columns_of(slots: list[Slot]) -> list[str]:
    out: list[str] = []
    for s in slots:
        if s.properties:
            out.extend(col for _, col in s.properties)
        else:
            out.append(s.column)
    return out


@dataclass
class Relation:
    name: str  # the CTE
    slots: list[Slot]
    ordered: bool = False  # carries __ord from a sort


@dataclass
class Source:
    """An input the query reads: rows of a scan, registered under ``name``
    (or rows computed from other sources' rows: an algorithm's output)."""

    name: str
    key: Any  # what identifies the input (the scan object)
    columns: list[str]  # the input's column names
    types: list[Any]  # their GeaFlow types
    # For a computed input: its Arrow rows from the Arrow rows of the sources
    # before it (by source name).
    compute: Callable[[dict[str, Any]], Any] | None = None


# Given a TableScan node or (graph, label, is_vertex): the scan and its
# (column names, GeaFlow types), or raise NotLocal.
Inputs = Callable[[Any], tuple[Any, list[str], list[Any]]]


@dataclass
class Translation:
    sql: str
    sources: list[Source] = field(default_factory=list)


def _sums_doubles(call: Any, slots: list[Slot]) -> bool:
    """Is this a SUM or AVG of floating-point values that Spark sums exactly
    (``runtime.operators.exact_sum``), as one of ours?"""
    return (
        call.function in ("SUM", "AVG")
        and call.user_function is None
        and not call.constants
        and not call.distinct
        and len(call.args) == 1
        and not slots[call.args[0]].properties
        and family(slots[call.args[0]].type) == "float"
    )


class Translator:
    """Translates one plan.  ``tags`` (optional) name the version of the graph
    each read takes: ``(id(node), True)`` for the vertices a VertexMatch or
    EdgeMatch reads, ``(id(node), False)`` for an EdgeMatch's edges, else
    ``default_tag``; a tagged read asks ``inputs`` for
    ``(graph, label, is_vertex, tag)`` (incremental MATCH reads hops of one
    plan at different versions).  ``rows`` stands given Arrow rows in for a
    node (by id): columns as ``columns_of(slots_for(node.schema))`` names them."""

    def __init__(
        self,
        inputs: Inputs,
        config: Any = None,
        tags: dict[tuple[int, bool], str] | None = None,
        default_tag: str | None = None,
        rows: dict[int, Any] | None = None,
        so_far: Inputs | None = None,
        before: Inputs | None = None,
        windowed: Callable[[Any], bool] | None = None,
    ) -> None:
        self.inputs = inputs
        # In a window of a stream: the inputs over every row so far, for the
        # GROUP BYs that emit the groups the window touched (``aggregate``),
        # and over every row up to the window before (None in the first
        # window), for the DISTINCTs and UNIONs that emit the rows no
        # earlier window had (``_new_rows``).
        self.so_far = so_far
        self.before = before
        # Which tables the window reads a part of (their rows change from
        # window to window): for a join's emissions.
        self.windowed = windowed or (lambda table: False)
        self.config = config
        self.tags = tags or {}
        self.default_tag = default_tag
        self.rows = rows or {}
        self.ctes: list[tuple[str, str]] = []
        self.recursive = False  # a CTE reads itself (WITH RECURSIVE)
        self.sources: list[Source] = []
        self._memo: dict[int, Relation] = {}
        self.nested = Nested(self)

    # ---------------------------------------------------------------- driver
    def translate(self, root: LogicalNode) -> Translation:
        if not isinstance(root, CollectSink):
            raise NotLocal(f"{root.kind} at the top")
        rel = self.relation(root.input)
        for s in rel.slots:
            if is_nested(s.type):
                raise NotLocal("a path or list of vertices or edges in the result")
        cols = ", ".join(_element_value(s) if s.properties else q(s.column) for s in rel.slots)
        order = f" ORDER BY {q('__ord')}" if rel.ordered else ""
        return Translation(self._with(f"SELECT {cols or '1'} FROM {rel.name}{order}"), self.sources)

    def translate_rows(self, node: LogicalNode) -> Translation:
        """``node``'s rows with every column, vertices and edges flattened
        (``columns_of``): for rows to stand in for it later (``rows``)."""
        rel = self.relation(node)
        cols = ", ".join(q(c) for c in columns_of(rel.slots))
        return Translation(self._with(f"SELECT {cols or '1'} FROM {rel.name}"), self.sources)

    def _with(self, select: str) -> str:
        """``select`` after the CTEs built for it."""
        if not self.ctes:
            return select
        with_ = ",\n".join(f"{name} AS ({body})" for name, body in self.ctes)
        return f"WITH {'RECURSIVE ' if self.recursive else ''}{with_}\n{select}"

    def relation(self, node: LogicalNode) -> Relation:
        # Children first without recursion: plans of long chains are deep.
        stack: list[tuple[LogicalNode, bool]] = [(node, False)]
        while stack:
            current, ready = stack.pop()
            if id(current) in self._memo:
                continue
            if id(current) in self.rows:
                self._memo[id(current)] = self._given(current)
                continue
            if not ready:
                stack.append((current, True))
                stack.extend((c, False) for c in current.inputs if id(c) not in self._memo)
                continue
            self._memo[id(current)] = self._node(current)
        return self._memo[id(node)]

    def _given(self, node: LogicalNode) -> Relation:
        """The rows given for ``node``, as its relation."""
        slots = slots_for(node.schema)
        table = self.rows[id(node)]
        source = Source(
            f"input{len(self.sources)}",
            ("rows", id(node)),
            columns_of(slots),
            [],
            compute=lambda _: table,
        )
        self.sources.append(source)
        cols = ", ".join(q(c) for c in columns_of(slots))
        return self._add(f"SELECT {cols or '1'} FROM {source.name}", slots)

    def _tagged(self, key: tuple[Any, str, bool], node: LogicalNode, reads_vertices: bool) -> Any:
        tag = self.tags.get((id(node), reads_vertices), self.default_tag)
        return key if tag is None else (*key, tag)

    def _add(self, body: str, slots: list[Slot], ordered: bool = False) -> Relation:
        name = f"n{len(self.ctes)}"
        self.ctes.append((name, body))
        return Relation(name, slots, ordered)

    def _source(self, key: Any) -> Source:
        scan, columns, types = self.inputs(key)
        for s in self.sources:
            if s.key is scan:
                return s
        source = Source(f"input{len(self.sources)}", scan, columns, types)
        self.sources.append(source)
        return source

    def _node(self, node: LogicalNode) -> Relation:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            raise NotLocal(node.kind)
        return handler(self, node)

    def _input(self, node: LogicalNode, i: int = 0) -> Relation:
        return self._memo[id(node.inputs[i])]

    # ------------------------------------------------------------ relational
    def table_scan(self, node: TableScan) -> Relation:
        source = self._source(node)
        slots = slots_for(node.schema)
        cols = ", ".join(
            f"{q(src)} AS {q(s.column)}" for src, s in zip(source.columns, slots, strict=True)
        )
        where = ""
        if node.filters:
            where = " WHERE " + " AND ".join(f"({self.condition(f, slots)})" for f in node.filters)
        return self._add(f"SELECT {cols} FROM {source.name}{where}", slots)

    def values(self, node: Values) -> Relation:
        """A VALUES table: rows of constants as one Arrow input (the values
        Spark's local relation holds), other rows as DuckDB text whose
        values are cast as the Spark path casts them, widening only."""
        slots = slots_for(node.schema)
        if not slots:
            # Rows of no columns (a SELECT without FROM): DuckDB needs one.
            return self._add(f"SELECT NULL AS {q('__unit')} FROM range({len(node.rows)})", [])
        if any(s.properties for s in slots):
            raise NotLocal("a VALUES row of a vertex or edge")
        cols = columns_of(slots)
        types = [f.type for f in node.fields_]
        constants = python_rows(node)
        if constants is not None:
            source = Source(
                f"input{len(self.sources)}",
                ("values", id(node)),
                cols,
                types,
                compute=lambda _: _arrow_rows(constants, cols, types),
            )
            self.sources.append(source)
            return self._add(f"SELECT {', '.join(q(c) for c in cols)} FROM {source.name}", slots)
        rows = []
        for row in node.rows:
            parts = []
            for e, t in zip(row, types, strict=True):
                text, fam = self._expr(e, [])
                if fam != "null" and not widens(type_of(e), t):
                    raise NotLocal(f"a cast of {type_of(e)} to {t}")
                parts.append(f"CAST({text} AS {duck_type(t)})")
            rows.append("(" + ", ".join(parts) + ")")
        names = ", ".join(q(c) for c in cols)
        return self._add(f"SELECT * FROM (VALUES {', '.join(rows)}) AS v({names})", slots)

    def filter(self, node: Filter) -> Relation:
        child = self._input(node)
        cond = self.condition(node.condition, child.slots)
        return self._add(f"SELECT * FROM {child.name} WHERE {cond}", child.slots, child.ordered)

    def project(self, node: Project) -> Relation:
        child = self._input(node)
        slots = slots_for(node.schema)
        parts = []
        for e, out in zip(node.exprs, slots, strict=True):
            if out.properties:
                i = ref_index(e)
                if i is None or not child.slots[i].properties:
                    parts += self._built_element(e, out, child.slots)
                    continue
                src = child.slots[i]
                for prop, col in out.properties:
                    parts.append(f"{q(src.property(prop))} AS {q(col)}")
                continue
            parts.append(f"{self.value(e, child.slots)} AS {q(out.column)}")
        if child.ordered:
            parts.append(q("__ord"))
        return self._add(
            f"SELECT {', '.join(parts) or '1'} FROM {child.name}", slots, child.ordered
        )

    def _built_element(self, e: exp.Expression, out: Slot, slots: list[Slot]) -> list[str]:
        """The columns of a vertex or edge an expression builds, one per
        property of ``out``, in order."""
        values = self._element_values(e, out, slots)
        return [f"{v} AS {q(col)}" for v, (_, col) in zip(values, out.properties, strict=True)]

    def _element_values(self, e: exp.Expression, out: Slot, slots: list[Slot]) -> list[str]:
        """The property values of a vertex or edge that a ``named_struct``
        builds (LET adds or replaces a property so); of a missing one (NULL:
        another branch of a pattern union); or of ``IF(missing, NULL, built)``
        (a LET on a vertex that may be missing keeps it missing)."""
        if isinstance(e, exp.If) and isinstance(e.args.get("true"), exp.Null):
            missing = self.condition(e.this, slots)
            built = self._element_values(e.args["false"], out, slots)
            return [f"(CASE WHEN {missing} THEN NULL ELSE {v} END)" for v in built]
        inner = e.this if isinstance(e, exp.Cast) else e
        if isinstance(inner, exp.Null):
            return [f"CAST(NULL AS {duck_type(out.type.field_type(p))})" for p, _ in out.properties]
        if not (isinstance(e, exp.Anonymous) and str(e.this).lower() == "named_struct"):
            raise NotLocal("a vertex or edge built by an expression")
        args = e.expressions
        names = [a.this if isinstance(a, exp.Literal) and a.is_string else None for a in args[::2]]
        if [p for p, _ in out.properties] != names:
            raise NotLocal("a vertex or edge built by an expression")
        values = []
        for (prop, _), value in zip(out.properties, args[1::2], strict=True):
            if self._type_of(value, slots) != out.type.field_type(prop):
                raise NotLocal(f"property {prop} built from another type")
            values.append(self.value(value, slots))
        return values

    def _type_of(self, e: exp.Expression, slots: list[Slot]) -> Any:
        """A value's type; a property read off a vertex or edge has its
        property's type (the binder leaves such a read untyped)."""
        while isinstance(e, exp.Paren) and type_of(e) == T.ANY:
            e = e.this
        untyped = type_of(e) == T.ANY
        exact = self.nested.scalar_type(e, slots) if untyped else None
        if exact is not None:
            return exact
        if untyped and isinstance(e, exp.Literal) and not e.is_string:
            # (an integer literal the binder wrote untyped, as _literal reads it)
            text = str(e.this)
            if text.lstrip("-").isdigit():
                return T.INTEGER if -(2**31) <= int(text) < 2**31 else T.BIGINT
        if untyped and (
            isinstance(e, exp.ArraySize)
            or (isinstance(e, exp.Anonymous) and str(e.this).lower() == "array_size")
        ):
            return T.INTEGER  # (Spark's size and array_size)
        if isinstance(e, exp.Dot) and isinstance(e.this, exp.Column):
            i = ref_index(e.this)
            if i is not None and i < len(slots) and slots[i].properties:
                return slots[i].type.field_type(e.expression.name)
        return type_of(e)

    def aggregate(self, node: Aggregate) -> Relation:
        if self.so_far is not None and not node.internal:
            if not node.calls:
                return self._new_rows(node, self._aggregate(node, self._input(node)))
            return self._touched_groups(node)
        return self._aggregate(node, self._input(node))

    def _new_rows(self, node: LogicalNode, window: Relation) -> Relation:
        """A DISTINCT or UNION in a window of a stream, as GeaFlow's global
        distinct emits it (``runtime.streaming.emissions``): the window's
        distinct rows that no earlier window had (NULLs equal: a set
        difference), from ``node`` over the window (``window``) and over
        every row up to the window before."""
        if self.before is None:
            cols = ", ".join(q(c) for c in columns_of(window.slots))
            return self._add(f"SELECT DISTINCT {cols} FROM {window.name}", window.slots)
        return self._less(window, self._over_rows(node, self.before), "EXCEPT")

    def _touched_groups(self, node: Aggregate) -> Relation:
        """A GROUP BY in a window of a stream, as GeaFlow's incremental
        aggregate emits it (``runtime.streaming.emissions``): the groups the
        window's rows touch, with their values over every row so far."""
        window = self._input(node)
        totals = self._aggregate(node, self._over_every_row(node.input))
        if not node.group:
            return self._add(
                f"SELECT * FROM {totals.name} WHERE EXISTS (SELECT 1 FROM {window.name})",
                totals.slots,
            )
        same = []
        for g, out in zip(node.group, totals.slots, strict=False):
            if window.slots[g].properties:
                raise NotLocal("a stream's groups of vertices or edges")
            same.append(f"w.{q(window.slots[g].column)} IS NOT DISTINCT FROM t.{q(out.column)}")
        touched = f"EXISTS (SELECT 1 FROM {window.name} w WHERE {' AND '.join(same)})"
        return self._add(f"SELECT t.* FROM {totals.name} t WHERE {touched}", totals.slots)

    def _over_every_row(self, node: LogicalNode) -> Relation:
        """``node`` over every row read so far (the ``so_far`` inputs), with
        no window's emissions inside: as ``emissions._so_far`` evaluates it."""
        assert self.so_far is not None
        return self._over_rows(node, self.so_far)

    def _over_rows(self, node: LogicalNode, inputs: Inputs) -> Relation:
        """``node`` over the rows ``inputs`` gives, with no window's emissions inside."""
        saved = (self.inputs, self.so_far, self.before, self._memo)
        self.inputs, self.so_far, self.before, self._memo = inputs, None, None, {}
        try:
            return self.relation(node)
        finally:
            self.inputs, self.so_far, self.before, self._memo = saved

    def _aggregate(self, node: Aggregate, child: Relation) -> Relation:
        slots = slots_for(node.schema)
        # A vertex or edge key groups by all its properties (a struct's equality).
        keys: list[str] = []
        parts: list[str] = []
        for g, out in zip(node.group, slots, strict=False):
            held = child.slots[g]
            if held.properties:
                for prop, col in out.properties:
                    keys.append(q(held.property(prop)))
                    parts.append(f"{keys[-1]} AS {q(col)}")
            else:
                keys.append(q(held.column))
                parts.append(f"{keys[-1]} AS {q(out.column)}")
        if not node.calls:
            if not keys:
                raise NotLocal("an aggregate of no keys and no calls")
            return self._add(f"SELECT DISTINCT {', '.join(parts)} FROM {child.name}", slots)
        exact = sorted({c.args[0] for c in node.calls if _sums_doubles(c, child.slots)})
        if exact:
            if self.config is not None and not self.config.get_bool(EXACT_DOUBLE_SUM):
                raise NotLocal(f"a sum of floats in Spark's order ({EXACT_DOUBLE_SUM.name} off)")
            # What Spark's exact sum adds up (local.exact_sum), computed once a row.
            layers = [
                helper_layers(f"CAST({q(child.slots[a].column)} AS DOUBLE)", f"__x{a}")
                for a in exact
            ]
            for k in range(len(layers[0])):
                items = ", ".join(item for layer in layers for item in layer[k])
                child = self._add(
                    f"SELECT *, {items} FROM {child.name}", child.slots, child.ordered
                )
        for call, out in zip(node.calls, slots[len(node.group) :], strict=True):
            parts.append(f"{self.aggregate_call(call, child.slots, out.type)} AS {q(out.column)}")
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        return self._add(f"SELECT {', '.join(parts)} FROM {child.name}{group}", slots)

    def aggregate_call(self, call: Any, slots: list[Slot], out_type: Any) -> str:
        if call.user_function is not None or call.constants:
            raise NotLocal(f"aggregate {call.function}")
        name = call.function
        args = []
        for a in call.args:
            if slots[a].properties:
                # COUNT counts the rows where the vertex or edge is there: an
                # element always has a label, and one an outer join did not
                # find has none.  Other aggregates (and DISTINCT) read the
                # whole value, which the local engine never builds.
                if name != "COUNT" or call.distinct:
                    raise NotLocal("an aggregate of a vertex or edge")
                args.append((q(slots[a].property(T.LABEL_FIELD)), "string"))
                continue
            args.append((q(slots[a].column), family(slots[a].type)))
        distinct = "DISTINCT " if call.distinct else ""
        target = duck_type(out_type)
        if name == "COUNT":
            if not args:
                return "count(*)"
            if len(args) == 1:
                return f"count({distinct}{args[0][0]})"
            if call.distinct:
                raise NotLocal("COUNT(DISTINCT a, b)")
            cond = " AND ".join(f"{a} IS NOT NULL" for a, _ in args)
            return f"count(CASE WHEN {cond} THEN 1 END)"
        if len(args) != 1:
            raise NotLocal(f"aggregate {name}")
        arg, fam = args[0]
        if name in ("MIN", "MAX") and fam in ("integer", "float", "string", "boolean"):
            return f"CAST({name.lower()}({distinct}{arg}) AS {target})"
        if name == "SUM" and fam == "integer":
            # GeaFlow's SUM starts from 0: all nulls (or no rows) sum to 0.
            return f"COALESCE(CAST(sum({distinct}{arg}) AS {target}), CAST(0 AS {target}))"
        if _sums_doubles(call, slots):
            # Spark's exact sum of doubles, to the bit (local.exact_sum).
            total, count = exact_sum(f"__x{call.args[0]}")
            if name == "AVG":
                return f"CAST(({total}) / {count} AS {target})"
            return f"COALESCE(CAST({total} AS {target}), CAST(0 AS {target}))"
        if name == "AVG" and fam == "integer":
            # Spark's avg(CAST(x AS DOUBLE)): integers add exactly in a double
            # below 2^53, so the sum, and the quotient, are the same.
            return f"CAST(avg({distinct}CAST({arg} AS DOUBLE)) AS {target})"
        raise NotLocal(f"aggregate {name} of {fam}")

    def sort(self, node: Sort) -> Relation:
        child = self._input(node)
        order = []
        for k in node.keys:
            slot = child.slots[k.index]
            nulls_first = k.nulls_first if k.nulls_first is not None else not k.descending
            if slot.properties:
                order += _element_order(slot, k.descending, nulls_first)
                continue
            order.append(
                f"{q(slot.column)} {'DESC' if k.descending else 'ASC'} "
                f"NULLS {'FIRST' if nulls_first else 'LAST'}"
            )
        over = f"ORDER BY {', '.join(order)}" if order else ""
        cols = ", ".join(q(c) for c in columns_of(child.slots))
        body = f"SELECT {cols}, row_number() OVER ({over}) AS {q('__ord')} FROM {child.name}"
        bounds = []
        if node.offset:
            bounds.append(f"{q('__ord')} > {int(node.offset)}")
        if node.limit is not None:
            bounds.append(f"{q('__ord')} <= {int(node.offset or 0) + int(node.limit)}")
        if bounds:
            body += " QUALIFY " + " AND ".join(bounds)
        return self._add(body, child.slots, ordered=True)

    def group_limit(self, node: GroupLimit) -> Relation:
        """The first ``count`` rows of each group in order (a row number),
        or the rows of its ``count`` least order values (a dense rank), as
        the Spark path numbers them: ascending, nulls first."""
        child = self._input(node)
        keys = []
        for k in node.keys:
            text, fam = self._expr(k, child.slots)
            if fam == "nested":
                raise NotLocal("groups of lists or structs")
            keys.append(text)
        order, fam = self._expr(node.order, child.slots)
        if fam == "nested":
            raise NotLocal("an order of lists or structs")
        rank = "dense_rank" if node.ties else "row_number"
        over = f"PARTITION BY {', '.join(keys)} ORDER BY {order} ASC NULLS FIRST"
        cols = columns_of(child.slots) + (["__ord"] if child.ordered else [])
        return self._add(
            f"SELECT {', '.join(q(c) for c in cols)} FROM {child.name} "
            f"QUALIFY {rank}() OVER ({over}) <= {int(node.count)}",
            child.slots,
            child.ordered,
        )

    def join(self, node: Join) -> Relation:
        if self.so_far is not None:
            # In a window of a stream (``runtime.streaming.emissions``): a
            # join whose rows grow with the one side that changes joins the
            # window's rows; else the rows new since the window before.
            left_changes, right_changes = (self._changes(n) for n in (node.left, node.right))
            if left_changes or right_changes:
                one = node.grows_with("left" if left_changes else "right")
                if left_changes == right_changes or not one:
                    return self._joined_since_last_window(node)
        left, right = self._input(node, 0), self._input(node, 1)
        if node.join_type == "CROSS" or node.condition is None:
            raise NotLocal("a cross join")
        lw = len(node.left.schema)
        slots = slots_for(node.schema)
        right_slots = (
            slots[lw:]
            if node.join_type not in ("SEMI", "ANTI")
            else slots_for(node.right.schema, lw)
        )
        renamed = self._renamed(right, right_slots)
        cond = self.condition(node.condition, left.slots + right_slots)
        left_cols = ", ".join(f"l.{q(c)}" for c in columns_of(left.slots))
        if node.join_type in ("SEMI", "ANTI"):
            body = (
                f"SELECT {left_cols} FROM {left.name} l {node.join_type} JOIN {renamed} r ON {cond}"
            )
            return self._add(body, left.slots)
        how = {"INNER": "INNER", "LEFT": "LEFT", "RIGHT": "RIGHT", "FULL": "FULL"}.get(
            node.join_type
        )
        if how is None:
            raise NotLocal(f"{node.join_type} join")
        right_cols = ", ".join(f"r.{q(c)}" for c in columns_of(right_slots))
        body = (
            f"SELECT {left_cols}, {right_cols} FROM {left.name} l {how} JOIN {renamed} r ON {cond}"
        )
        return self._add(body, slots)

    def _changes(self, node: LogicalNode) -> bool:
        return any(isinstance(n, TableScan) and self.windowed(n.table) for n in walk(node))

    def _joined_since_last_window(self, node: Join) -> Relation:
        """The join over every row so far, less (as a bag) the join over
        every row up to the window before."""
        assert self.so_far is not None
        now = self._over_rows(node, self.so_far)
        if self.before is None:
            return now
        return self._less(now, self._over_rows(node, self.before), "EXCEPT ALL")

    def _less(self, rel: Relation, earlier: Relation, op: str) -> Relation:
        """``rel`` less ``earlier``'s rows (the same node over other rows):
        ``op`` EXCEPT (a set) or EXCEPT ALL (a bag); NULLs compare equal."""
        cols = ", ".join(q(c) for c in columns_of(rel.slots))
        renamed = self._renamed(earlier, rel.slots)
        return self._add(
            f"SELECT {cols} FROM {rel.name} {op} SELECT {cols} FROM {renamed}", rel.slots
        )

    def _renamed(self, rel: Relation, slots: list[Slot]) -> str:
        """``rel`` with its columns named as ``slots`` (same fields, other
        positions); a NULL column of ``rel`` as NULLs of its slot's type (a
        vertex or edge: a NULL per property)."""
        parts = []
        for a, b in zip(rel.slots, slots, strict=True):
            if a.type == T.NULL and b.type != T.NULL:
                parts += [
                    f"CAST(NULL AS {duck_type(_column_type(b, c))}) AS {q(c)}"
                    for c in columns_of([b])
                ]
            else:
                parts += [
                    f"{q(x)} AS {q(y)}"
                    for x, y in zip(columns_of([a]), columns_of([b]), strict=True)
                ]
        return f"(SELECT {', '.join(parts)} FROM {rel.name})"

    def union(self, node: Union) -> Relation:
        rels = [self._memo[id(c)] for c in node.inputs]
        slots = slots_for(node.schema)
        for r in rels:
            for a, b in zip(r.slots, slots, strict=True):
                if a.type != b.type and a.type != T.NULL:
                    raise NotLocal("a union of different types")
        word = " UNION ALL " if node.all else " UNION "
        body = word.join(self._renamed(r, slots).strip("()") for r in rels)
        if self.so_far is not None and not node.all:
            return self._new_rows(node, self._add(body, slots))
        return self._add(body, slots)

    # ----------------------------------------------------------------- graph
    def _values(
        self,
        graph: Any,
        labels: tuple[str, ...],
        vtype: Any,
        name: str,
        is_vertex: bool,
        direction: str = "OUT",
        node: LogicalNode | None = None,
    ) -> tuple[str, Slot]:
        """A union over the labels' rows of their values as the columns of ``name``."""
        slot = Slot(vtype, properties=tuple((f.name, f"{name}.{f.name}") for f in vtype.fields))
        infos = (
            [graph.vertex(lab) if is_vertex else graph.edge(lab) for lab in labels]
            if labels
            else list(graph.vertices if is_vertex else graph.edges)
        )
        selects = []
        for info in infos:
            key = (graph, info.label, is_vertex)
            source = self._source(key if node is None else self._tagged(key, node, is_vertex))
            directions = ["OUT", "IN"] if direction == "BOTH" else [direction]
            for d in directions:
                parts = []
                for f in vtype.fields:
                    parts.append(
                        f"{self._value_of(info, source, f, d, is_vertex)} "
                        f"AS {q(slot.property(f.name))}"
                    )
                selects.append(f"SELECT {', '.join(parts)} FROM {source.name}")
        if not selects:
            nulls = ", ".join(
                f"CAST(NULL AS {duck_type(f.type)}) AS {q(slot.property(f.name))}"
                for f in vtype.fields
            )
            selects.append(f"SELECT {nulls} WHERE false")
        return " UNION ALL ".join(selects), slot

    def _value_of(self, info: Any, source: Source, f: Any, d: str, is_vertex: bool) -> str:
        def column(name: str | None) -> tuple[str, Any] | None:
            if not name:
                return None
            lowered = name.lower()
            for c, t in zip(source.columns, source.types, strict=True):
                if c.lower() == lowered:
                    return c, t
            return None

        def cast(found: tuple[str, Any] | None) -> str:
            target = duck_type(f.type)
            if found is None:
                return f"CAST(NULL AS {target})"
            if not widens(found[1], f.type):
                raise NotLocal(f"a cast of {found[1]} to {f.type}")
            return f"CAST({q(found[0])} AS {target})"

        if f.name == T.LABEL_FIELD:
            return string_literal(info.label)
        if is_vertex:
            if f.name == T.VERTEX_ID_FIELD:
                return cast(column(info.id_field))
            keep = f.name.lower() != info.id_field.lower()
            return cast(column(f.name) if keep else None)
        first, second = (info.src_field, info.dst_field)
        if d == "IN":
            first, second = second, first
        if f.name == T.EDGE_SRC_FIELD:
            return cast(column(first))
        if f.name == T.EDGE_DST_FIELD:
            return cast(column(second))
        if f.name == T.EDGE_DIRECTION_FIELD:
            return string_literal(d)
        if f.name == T.EDGE_TS_FIELD:
            return cast(column(info.ts_field))
        keys = {info.src_field.lower(), info.dst_field.lower(), (info.ts_field or "").lower()}
        return cast(column(f.name) if f.name.lower() not in keys else None)

    def _filtered(self, body: str, slot: Slot, condition: Any) -> str:
        if condition is None:
            return body
        # The filter reads the element alone, as field 0.
        cond = self.condition(condition, [slot])
        return f"SELECT * FROM ({body}) WHERE {cond}"

    def vertex_match(self, node: VertexMatch) -> Relation:
        n = len(node.input.schema) if node.input is not None else 0
        body, slot = self._values(
            node.graph, node.labels, node.vertex_type, f"c{n}", True, node=node
        )
        if node.input is None:
            cond = None if node.filter is None else self.condition(node.filter, [slot])
            where = f" WHERE {cond}" if cond else ""
            return self._add(f"SELECT * FROM ({body}){where}", [slot])
        base = self._input(node)
        slots = base.slots + [slot]
        if node.id_key is None:
            # Every input row with every vertex its filter (reading both) keeps.
            joined = f"SELECT * FROM {base.name} p, ({body}) v"
        else:
            key = base.slots[node.id_key]
            if key.properties:
                raise NotLocal("a vertex id held as an element")
            joined = (
                f"SELECT * FROM {base.name} p JOIN ({body}) v "
                f"ON p.{q(key.column)} = v.{q(slot.property(T.VERTEX_ID_FIELD))}"
            )
        if node.filter is not None:
            joined += f" WHERE {self.condition(node.filter, slots)}"
        return self._add(joined, slots, base.ordered)

    def edge_match(self, node: EdgeMatch) -> Relation:
        path = self._input(node)
        n = len(node.input.schema)
        body, eslot = self._values(
            node.graph, node.edge_labels, node.edge_type, f"c{n}", False, node.direction, node
        )
        edges = self._filtered(body, eslot, node.edge_filter)
        at = path.slots[node.source]
        if not at.properties:
            raise NotLocal("a path step from a scalar")
        if node.is_loop:
            return self._run(node, path, edges, eslot)
        on = f"p.{q(at.property(T.VERTEX_ID_FIELD))} = e.{q(eslot.property(T.EDGE_SRC_FIELD))}"
        dst = f"e.{q(eslot.property(T.EDGE_DST_FIELD))}"
        if node.edge_only:
            return self._add(
                f"SELECT * FROM {path.name} p JOIN ({edges}) e ON {on}", path.slots + [eslot]
            )
        if node.target_bound is not None:
            bound = path.slots[node.target_bound]
            bound_id = f"p.{q(bound.property(T.VERTEX_ID_FIELD))}"
            return self._add(
                f"SELECT * FROM {path.name} p JOIN ({edges}) e ON {on} AND {dst} = {bound_id}",
                path.slots + [eslot],
            )
        vbody, vslot = self._values(
            node.graph, node.target_labels, node.vertex_type, f"c{n + 1}", True, node=node
        )
        vertices = self._filtered(vbody, vslot, node.target_filter)
        vid = f"v.{q(vslot.property(T.VERTEX_ID_FIELD))}"
        cols = ", ".join(
            [f"p.{q(c)}" for c in columns_of(path.slots)]
            + [f"e.{q(c)}" for c in columns_of([eslot])]
            + [f"v.{q(c)}" for c in columns_of([vslot])]
        )
        return self._add(
            f"SELECT {cols} FROM {path.name} p JOIN ({edges}) e ON {on} "
            f"JOIN ({vertices}) v ON {dst} = {vid}",
            path.slots + [eslot, vslot],
        )

    def _run(self, node: EdgeMatch, path: Relation, edges: str, eslot: Slot) -> Relation:
        """A variable-length edge as Spark's loop (runtime.operators.graph)
        walks it, in one recursive query: walks from the distinct vertices the
        paths stand at, each round one edge further; a walk goes on only from
        a vertex that exists and passes the loop's body, and is emitted
        before that test when the body does not hold at its end (``via_end``
        false).  A run of no hops ends at its start itself.

        A run that keeps its elements (``keep_run``) carries them in each
        walk: the edges taken, the vertices between them, and the vertex it
        stands at, added once it moves on (where two labels share an id, the
        vertex of the least label, as the Spark path picks it)."""
        n = len(node.input.schema)
        keep = node.keep_run
        at = path.slots[node.source]
        start_id = q(at.property(T.VERTEX_ID_FIELD))
        starts = self._add(
            f"SELECT DISTINCT {start_id} AS __from FROM {path.name} WHERE {start_id} IS NOT NULL",
            [],
        )
        vbody, vslot = self._values(
            node.graph, node.via_labels, node.vertex_type, f"c{n + 1}", True, node=node
        )
        vid = q(vslot.property(T.VERTEX_ID_FIELD))
        passing = self._filtered(vbody, vslot, node.via_filter)
        if keep:
            label = q(vslot.property(T.LABEL_FIELD))
            body_ids = self._add(
                f"SELECT {vid} AS __vid, arg_min({packed(vslot)}, {label}) AS __atv "
                f"FROM ({passing}) GROUP BY {vid}",
                [],
            )
        else:
            body_ids = self._add(f"SELECT DISTINCT {vid} AS __vid FROM ({passing})", [])
        src, dst = q(eslot.property(T.EDGE_SRC_FIELD)), q(eslot.property(T.EDGE_DST_FIELD))
        nulls = ", ".join(
            f"CAST(NULL AS {duck_type(eslot.type.field_type(prop))}) AS {q(col)}"
            for prop, col in eslot.properties
        )
        taken = ", ".join(f"e.{q(col)}" for col in columns_of([eslot]))
        run0 = run = ""
        run_slots: list[Slot] = []
        if keep:
            lists = _run_lists(node, packed(eslot, "e."), "w.__")
            run0 = "".join(f", {first} AS __{name}" for name, first, _ in lists)
            run0 += f", {_no_vertex(node)} AS __atv"
            run = "".join(f", {step}" for _, _, step in lists) + ", b.__atv"
            run_slots = [
                Slot(T.ArrayType(node.edge_type), column=f"c{n + 1}"),
                Slot(T.ArrayType(node.vertex_type), column=f"c{n + 2}"),
            ]
        name = f"n{len(self.ctes)}"
        if node.first_reach is not None:
            walks = self._first_walks(node, starts, edges, body_ids, eslot)
        else:
            walks = self._add(
                f"SELECT __from, __from AS __at, 0 AS __hops, {nulls}, TRUE AS __go{run0} "
                f"FROM {starts.name} UNION ALL "
                f"SELECT w.__from, e.{dst}, w.__hops + 1, {taken}, b.__vid IS NOT NULL{run} "
                f"FROM {name} w JOIN ({edges}) e ON w.__at = e.{src} "
                f"LEFT JOIN {body_ids.name} b ON b.__vid = e.{dst} "
                f"WHERE w.__go AND w.__hops < {int(node.max_hops)}",
                [eslot],
            )
        self.recursive = True
        emitted = f"w.__hops >= {int(node.min_hops)}"
        if node.via_end:
            emitted += " AND (w.__hops = 0 OR w.__go)"
        cols = [f"p.{q(c)}" for c in columns_of(path.slots)]
        cols += [f"w.{q(c)}" for c in columns_of([eslot])]
        if keep:
            cols += [f"w.__redges AS {q(f'c{n + 1}')}", f"w.__rverts AS {q(f'c{n + 2}')}"]
        joined = f"{path.name} p JOIN {walks.name} w ON p.{start_id} = w.__from AND {emitted}"
        if node.target_bound is not None:
            bound = q(path.slots[node.target_bound].property(T.VERTEX_ID_FIELD))
            return self._add(
                f"SELECT {', '.join(cols)} FROM {joined} WHERE w.__at = p.{bound}",
                path.slots + [eslot, *run_slots],
            )
        tbody, tslot = self._values(
            node.graph,
            node.target_labels,
            node.vertex_type,
            f"c{n + 1 + len(run_slots)}",
            True,
            node=node,
        )
        hopped = "w.__hops > 0"
        if node.via_end and node.has_body:
            hopped += f" AND {self._body_test(node, tslot)}"
        if node.min_hops == 0:
            label = q(tslot.property(T.LABEL_FIELD))
            start_label = q(at.property(T.LABEL_FIELD))
            hopped = f"({hopped}) OR (w.__hops = 0 AND v.{label} = p.{start_label})"
        cols += [f"v.{q(c)}" for c in columns_of([tslot])]
        return self._add(
            f"SELECT {', '.join(cols)} FROM {joined} "
            f"JOIN ({self._filtered(tbody, tslot, node.target_filter)}) v "
            f"ON w.__at = v.{q(tslot.property(T.VERTEX_ID_FIELD))} AND ({hopped})",
            path.slots + [eslot, *run_slots, tslot],
        )

    def _first_walks(
        self, node: EdgeMatch, starts: Relation, edges: str, body_ids: Relation, eslot: Slot
    ) -> Relation:
        """The walks of a shortest-path search (``EdgeMatch.first_reach``),
        as the Spark path's rounds keep them: a walk reaching a vertex its
        start reached in an earlier round is dropped ("ANY" also keeps one
        walk per start and vertex a round).  One recursive query keyed by
        (start, vertex) (DuckDB's ``USING KEY``): a row holds the walks of
        the round that first reached the pair, and each round reads the
        pairs reached so far (``recurring``).  The start itself counts as
        reached only where a run may have no edges; the walks come out as
        ``_run``'s other walks do, one row each.

        A search by cost (``EdgeMatch.reach_cost``) keeps a walk cheaper
        ("ALL": no dearer) than every earlier walk to its pair, and of a
        round's walks to a pair the cheapest (one, or "ALL" every one): a
        pair's row is replaced by a cheaper round's, or for "ALL" joined by
        one as cheap (``__walks``), and a round goes on from the walks the
        round before kept (``__fresh``)."""
        keep = node.keep_run
        src, dst = q(eslot.property(T.EDGE_SRC_FIELD)), q(eslot.property(T.EDGE_DST_FIELD))
        edge = packed(eslot, "e.")
        seed = [f"e := CAST(NULL AS {nested_duck_type(node.edge_type)})"]
        step = [f"e := {edge}"]
        if keep:
            lists = _run_lists(node, edge, "u.")
            seed += [f"{field} := {first}" for field, first, _ in lists]
            step += [f"{field} := {next_}" for field, _, next_ in lists]
        walk = f"struct_pack({', '.join(step)})"
        name = f"n{len(self.ctes)}"
        # (the start itself is a pair reached, at no edges, only where a run may have none)
        met = "" if node.min_hops == 0 else " AND NOT r.__seed"
        if node.reach_cost is not None:
            body = self._cheapest(node, name, starts, edges, body_ids, eslot, seed, walk, met)
        else:
            atv0 = f", {_no_vertex(node)} AS __atv" if keep else ""
            atv = ", any_value(b.__atv)" if keep else ""
            gathered = f"list({walk})" if node.first_reach == "ALL" else f"[any_value({walk})]"
            body = (
                f"SELECT __from, __from AS __at, TRUE AS __seed, 0 AS __hops, TRUE AS __go{atv0}, "
                f"[struct_pack({', '.join(seed)})] AS __walks FROM {starts.name} UNION "
                f"SELECT w.__from, e.{dst}, FALSE, w.__hops + 1, b.__vid IS NOT NULL{atv}, "
                f"{gathered} FROM {name} w, unnest(w.__walks) AS t(u) "
                f"JOIN ({edges}) e ON w.__at = e.{src} "
                f"LEFT JOIN {body_ids.name} b ON b.__vid = e.{dst} "
                f"WHERE w.__go AND w.__hops < {int(node.max_hops)} AND NOT EXISTS (SELECT 1 "
                f"FROM recurring.{name} r WHERE r.__from = w.__from AND r.__at = e.{dst}{met}) "
                f"GROUP BY w.__from, e.{dst}, w.__hops, b.__vid"
            )
        self.ctes.append((f"{name} USING KEY (__from, __at, __seed)", body))
        return self._unnested(name, eslot, keep)

    def _unnested(self, name: str, eslot: Slot, keep: bool) -> Relation:
        """A search's walks (the lists in its rows), one row each."""
        cols = [
            f"struct_extract(struct_extract(u, 'e'), {string_literal(prop)}) AS {q(col)}"
            for prop, col in eslot.properties
        ]
        if keep:
            cols += [
                "struct_extract(u, 'redges') AS __redges",
                "struct_extract(u, 'rverts') AS __rverts",
            ]
        return self._add(
            f"SELECT w.__from, w.__at, w.__hops, {', '.join(cols)}, w.__go "
            f"FROM {name} w, unnest(w.__walks) AS t(u)",
            [eslot],
        )

    def _cheapest(
        self,
        node: EdgeMatch,
        name: str,
        starts: Relation,
        edges: str,
        body_ids: Relation,
        eslot: Slot,
        seed: list[str],
        walk: str,
        met: str,
    ) -> str:
        """The recursive query of a search by cost (see ``_first_walks``)."""
        assert node.reach_cost is not None
        cost, fam = self._expr(node.reach_cost, [eslot])
        if fam not in ("integer", "float"):
            raise NotLocal(f"an edge cost of {fam}")
        # (the Spark path's rule: integers add up as BIGINT where the cost is
        # typed an integer, else as DOUBLE, exact for integers below 2^53)
        integral = getattr(type_of(node.reach_cost), "is_integer", False)
        ctype = T.BIGINT if integral and fam == "integer" else T.DOUBLE
        src, dst = q(eslot.property(T.EDGE_SRC_FIELD)), q(eslot.property(T.EDGE_DST_FIELD))
        costed = (
            f"SELECT *, CAST({cost} AS {ctype.name}) AS __ecost FROM ({edges}) "
            f"WHERE ({cost}) IS NOT NULL"
        )
        keep = node.keep_run
        atv0 = f", {_no_vertex(node)} AS __atv" if keep else ""
        any_ = node.first_reach == "ANY"
        # A round's walks to a pair at its least cost (ANY: one of them), when
        # cheaper (ANY) or no dearer (ALL) than every earlier walk to it.
        than = "<" if any_ else "<="
        fresh = "[arg_min(c.__walk, c.__cost)]" if any_ else "list(c.__walk)"
        walks = (
            "x.__fresh"
            if any_
            else "CASE WHEN o.__cost = x.__cost THEN list_concat(o.__walks, x.__fresh) "
            "ELSE x.__fresh END"
        )
        return (
            f"SELECT __from, __from AS __at, TRUE AS __seed, 0 AS __hops, TRUE AS __go{atv0}, "
            f"CAST(0 AS {ctype.name}) AS __cost, [struct_pack({', '.join(seed)})] AS __walks, "
            f"[struct_pack({', '.join(seed)})] AS __fresh FROM {starts.name} UNION "
            f"SELECT x.__from, x.__at, FALSE, x.__hops, x.__go{', x.__atv' if keep else ''}, "
            f"x.__cost, {walks}, x.__fresh FROM ("
            f"SELECT c.__from, c.__at, any_value(c.__hops) AS __hops, any_value(c.__go) AS __go"
            f"{', any_value(c.__atv) AS __atv' if keep else ''}, "
            f"min(c.__cost) AS __cost, {fresh} AS __fresh FROM ("
            f"SELECT w.__from, e.{dst} AS __at, w.__hops + 1 AS __hops, "
            f"b.__vid IS NOT NULL AS __go{', b.__atv AS __atv' if keep else ''}, "
            f"w.__cost + e.__ecost AS __cost, {walk} AS __walk, "
            f"min(w.__cost + e.__ecost) OVER (PARTITION BY w.__from, e.{dst}) AS __least "
            f"FROM {name} w, unnest(w.__fresh) AS t(u) JOIN ({costed}) e ON w.__at = e.{src} "
            f"LEFT JOIN {body_ids.name} b ON b.__vid = e.{dst} "
            f"WHERE w.__go AND w.__hops < {int(node.max_hops)}) c "
            f"WHERE c.__cost = c.__least AND NOT EXISTS (SELECT 1 FROM recurring.{name} r "
            f"WHERE r.__from = c.__from AND r.__at = c.__at{met} "
            f"AND NOT (c.__cost {than} r.__cost)) "
            f"GROUP BY c.__from, c.__at) x "
            f"LEFT JOIN recurring.{name} o "
            f"ON o.__from = x.__from AND o.__at = x.__at AND NOT o.__seed"
        )

    def repeat_match(self, node: RepeatMatch) -> Relation:
        """A quantified sub-path as Spark's rounds chain it
        (runtime.operators.repeat), in one recursive query: the sub-path's
        walks, each one step (where it joins the path and where it leaves
        it, and what it adds to each list), chained from the distinct
        vertices the paths stand at; a walk of ``min_hops`` to ``max_hops``
        steps is joined back to its paths.  Walked from the pattern's end, a
        step's values go before the ones gathered so far, so the lists stay
        in the order written."""
        path, body = self._input(node, 0), self._input(node, 1)
        n = len(node.input.schema)
        at = path.slots[node.source]
        if not at.properties:
            raise NotLocal("a path step from a scalar")
        joins_at, moves_to = (node.first, node.last) if node.forward else (node.last, node.first)
        body_id = T.VERTEX_ID_FIELD
        # Each list: (its name, its GeaFlow type, what one step adds to it).
        lists: list[tuple[str, Any, str]] = []
        for j, i in enumerate(node.groups):
            ltype = T.ArrayType(node.body.schema[i].type)
            if not is_nested(ltype):
                raise NotLocal(f"a group of {node.body.schema[i].type}")
            lists.append((f"__g{j}", ltype, f"[{self._nested_value(body.slots[i])}]"))
        if node.run is not None:
            for name, fields, element in (
                ("__re", node.run[0], node.edge_type),
                ("__rv", node.run[1], node.vertex_type),
            ):
                ltype = T.ArrayType(element)
                values = ", ".join(self._nested_value(body.slots[i]) for i in fields)
                lists.append((name, ltype, f"CAST([{values}] AS {nested_duck_type(ltype)})"))
        leaves = body.slots[moves_to]
        step_cols = [
            f"{q(body.slots[joins_at].property(body_id))} AS __on",
            f"{q(leaves.property(body_id))} AS __to",
            *(f"{added} AS {name}" for name, _, added in lists),
            f"CAST({self._nested_value(leaves)} AS {nested_duck_type(node.vertex_type)}) AS __endv",
        ]
        steps = self._add(f"SELECT {', '.join(step_cols)} FROM {body.name}", [])
        start_id = q(at.property(body_id))
        starts = self._add(
            f"SELECT DISTINCT {start_id} AS __from FROM {path.name} WHERE {start_id} IS NOT NULL",
            [],
        )
        empty = "".join(
            f", CAST([] AS {nested_duck_type(ltype)}) AS {name}" for name, ltype, _ in lists
        )

        def grown(name: str) -> str:
            parts = (f"w.{name}", f"s.{name}") if node.forward else (f"s.{name}", f"w.{name}")
            return f"list_concat({parts[0]}, {parts[1]})"

        name = f"n{len(self.ctes)}"
        walks = self._add(
            f"SELECT __from, __from AS __at, 0 AS __hops{empty}, "
            f"CAST(NULL AS {nested_duck_type(node.vertex_type)}) AS __endv "
            f"FROM {starts.name} UNION ALL "
            f"SELECT w.__from, s.__to, w.__hops + 1"
            f"{''.join(', ' + grown(ln) for ln, _, _ in lists)}, s.__endv "
            f"FROM {name} w JOIN {steps.name} s ON w.__at = s.__on "
            f"WHERE w.__hops < {int(node.max_hops)}",
            [],
        )
        assert walks.name == name
        self.recursive = True
        cols = [f"p.{q(c)}" for c in columns_of(path.slots)]
        slots = list(path.slots)
        for j, (ln, ltype, _) in enumerate(lists[: len(node.groups)]):
            cols.append(f"w.{ln} AS {q(f'c{n + j}')}")
            slots.append(Slot(ltype, column=f"c{n + j}"))
        if node.run is not None:
            k = n + len(node.groups)
            # The run's vertices strictly between those before and after it:
            # the last one a step adds is the vertex after the pattern.
            cols += [
                f"w.__re AS {q(f'c{k}')}",
                f"w.__rv[1:greatest(len(w.__rv) - 1, 0)] AS {q(f'c{k + 1}')}",
            ]
            slots += [
                Slot(T.ArrayType(node.edge_type), column=f"c{k}"),
                Slot(T.ArrayType(node.vertex_type), column=f"c{k + 1}"),
            ]
        joined = (
            f"{path.name} p JOIN {walks.name} w "
            f"ON p.{start_id} = w.__from AND w.__hops >= {int(node.min_hops)}"
        )
        if node.target_bound is not None:
            bound = q(path.slots[node.target_bound].property(body_id))
            return self._add(
                f"SELECT {', '.join(cols)} FROM {joined} WHERE w.__at = p.{bound}", slots
            )
        target = Slot(
            node.vertex_type,
            properties=tuple(
                (f.name, f"c{node.target_index}.{f.name}") for f in node.vertex_type.fields
            ),
        )
        for prop, col in target.properties:
            cols.append(
                f"CASE WHEN w.__hops = 0 THEN p.{q(at.property(prop))} "
                f"ELSE struct_extract(w.__endv, {string_literal(prop)}) END AS {q(col)}"
            )
        return self._add(f"SELECT {', '.join(cols)} FROM {joined}", slots + [target])

    def _nested_value(self, slot: Slot) -> str:
        """A body field as one value of a list: a vertex or edge packed."""
        if slot.properties:
            return packed(slot)
        if is_nested(slot.type):
            return q(slot.column)
        raise NotLocal(f"a list of {slot.type}")

    def _body_test(self, node: EdgeMatch, slot: Slot) -> str:
        """Whether the vertex in ``slot`` passes a loop's body: labels and filter."""
        tests = []
        if node.via_labels:
            labels = ", ".join(string_literal(lab) for lab in node.via_labels)
            tests.append(f"{q(slot.property(T.LABEL_FIELD))} IN ({labels})")
        if node.via_filter is not None:
            tests.append(f"COALESCE({self.condition(node.via_filter, [slot])}, FALSE)")
        return " AND ".join(tests) or "TRUE"

    def graph_label_scan(self, node: GraphLabelScan) -> Relation:
        """A label read as a table: its declared columns, as the Spark path casts them."""
        source = self._source((node.graph, node.label, node.is_vertex))
        slots = slots_for(node.schema)
        by_name = {c.lower(): (c, t) for c, t in zip(source.columns, source.types, strict=True)}
        parts = []
        for f, slot in zip(node.schema, slots, strict=True):
            found = by_name.get(f.name.lower())
            target = duck_type(f.type)
            if found is None:
                parts.append(f"CAST(NULL AS {target}) AS {q(slot.column)}")
                continue
            if not widens(found[1], f.type):
                raise NotLocal(f"a cast of {found[1]} to {f.type}")
            parts.append(f"CAST({q(found[0])} AS {target}) AS {q(slot.column)}")
        return self._add(f"SELECT {', '.join(parts) or '1'} FROM {source.name}", slots)

    def graph_algorithm(self, node: GraphAlgorithm) -> Relation:
        """A built-in algorithm's numpy kernel over the graph's rows, as an input.

        The kernel is the one the local algorithm engine runs inside a Spark
        task, given the same one-table layout (``union_frame``): vertices
        first, in storage order, then edges."""
        slots = slots_for(node.schema)
        if any(s.properties for s in slots):
            raise NotLocal("an algorithm that returns vertices or edges")
        graph = node.graph
        labels = [(info, True) for info in graph.vertices] + [(info, False) for info in graph.edges]
        sources = [
            (info, is_vertex, self._source((graph, info.label, is_vertex)))
            for info, is_vertex in labels
        ]
        if any(isinstance(s.key, HeldRows) for _, _, s in sources):
            # Kernels see vertices in storage order, which Spark's ranking of
            # rewritten ids does not keep: only tables read as they stand.
            raise NotLocal("an algorithm over a graph written by INSERT")
        from .algorithms import local_call  # loads the algorithms (numpy, pandas, scipy)

        call = local_call(
            node, self.config, [(info, v, s.columns, s.types) for info, v, s in sources]
        )
        names = [s.name for _, _, s in sources]
        source = Source(
            f"input{len(self.sources)}",
            ("algorithm", id(node)),
            [f"c{i}" for i in range(len(slots))],
            [f.type for f in node.schema],
            compute=lambda tables: call([tables[n] for n in names]),
        )
        self.sources.append(source)
        cols = ", ".join(q(s.column) for s in slots)
        return self._add(f"SELECT {cols} FROM {source.name}", slots)

    # ----------------------------------------------------------- expressions
    def condition(self, e: exp.Expression, slots: list[Slot]) -> str:
        text, fam = self._expr(e, slots)
        if fam not in ("boolean", "null"):
            raise NotLocal("a condition that is not a boolean")
        return text

    def value(self, e: exp.Expression, slots: list[Slot]) -> str:
        return self._expr(e, slots)[0]

    def _element(self, e: exp.Expression, slots: list[Slot]) -> Slot | None:
        """The slot of a reference to a vertex or edge field, else None."""
        i = ref_index(e) if isinstance(e, exp.Column) else None
        if i is None or i >= len(slots) or not slots[i].properties:
            return None
        return slots[i]

    def _case(
        self,
        whens: list[tuple[exp.Expression, exp.Expression]],
        default: exp.Expression | None,
        slots: list[Slot],
    ) -> tuple[str, str]:
        """CASE WHEN ... (and IF): a NULL condition takes the next branch, as
        in Spark.  The binder has cast the branches to one type."""
        parts = []
        families = set()
        for cond, value in whens:
            text, fam = self._expr(value, slots)
            families.add(fam)
            parts.append(f"WHEN {self.condition(cond, slots)} THEN {text}")
        if default is not None:
            text, fam = self._expr(default, slots)
            families.add(fam)
            parts.append(f"ELSE {text}")
        families.discard("null")
        if len(families) > 1:
            raise NotLocal("CASE branches of different families")
        return f"(CASE {' '.join(parts)} END)", families.pop() if families else "null"

    def _same_element(self, e: exp.Expression, slots: list[Slot]) -> str | None:
        """``a = b`` or ``a IS NOT DISTINCT FROM b`` of two vertices or edges
        of one type (a subquery joins its rows back to the vertex it started
        from so), as Spark compares structs: field by field, a null field
        equal to a null one.  An element an outer join did not find has no
        label, a found one always has one: ``=`` is NULL when either side is
        missing, ``IS NOT DISTINCT FROM`` true only when both are."""
        a, b = self._element(e.this, slots), self._element(e.expression, slots)
        if a is None or b is None:
            return None
        if a.type != b.type:
            raise NotLocal("a comparison of vertices or edges of different types")
        fields = " AND ".join(
            f"({q(x)} IS NOT DISTINCT FROM {q(y)})"
            for (_, x), (_, y) in zip(a.properties, b.properties, strict=True)
        )
        if isinstance(e, exp.NullSafeEQ):
            return f"({fields})"
        label_a, label_b = q(a.property(T.LABEL_FIELD)), q(b.property(T.LABEL_FIELD))
        return f"(CASE WHEN {label_a} IS NULL OR {label_b} IS NULL THEN NULL ELSE {fields} END)"

    def _expr(self, e: exp.Expression, slots: list[Slot]) -> tuple[str, str]:
        """DuckDB text of a bound expression and its family."""
        over_lists = self.nested.scalar(e, slots)
        if over_lists is not None:
            return over_lists
        if isinstance(e, exp.Paren):
            text, fam = self._expr(e.this, slots)
            return f"({text})", fam
        if isinstance(e, exp.Column):
            i = ref_index(e)
            if i is None or i >= len(slots) or slots[i].properties:
                raise NotLocal("a reference that is not a scalar field")
            return q(slots[i].column), family(slots[i].type)
        if isinstance(e, exp.Dot):
            i = ref_index(e.this)
            if i is None or i >= len(slots) or not slots[i].properties:
                raise NotLocal("a property of something other than a vertex or edge")
            prop = e.expression.name
            slot = slots[i]
            ptype = slot.type.field_type(prop)
            if ptype is None:
                raise NotLocal(f"property {prop}")
            return q(slot.property(prop)), family(ptype)
        if isinstance(e, exp.Boolean):
            return ("TRUE" if e.this else "FALSE"), "boolean"
        if isinstance(e, exp.Null):
            return "NULL", "null"
        if isinstance(e, exp.Literal):
            return self._literal(e)
        if isinstance(e, (exp.And, exp.Or)):
            a = self.condition(e.this, slots)
            b = self.condition(e.expression, slots)
            return f"({a} {'AND' if isinstance(e, exp.And) else 'OR'} {b})", "boolean"
        if isinstance(e, exp.Not):
            return f"(NOT {self.condition(e.this, slots)})", "boolean"
        if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
            element = self._element(e.this, slots)
            if element is not None:
                # A found vertex or edge always has a label.
                return f"({q(element.property(T.LABEL_FIELD))} IS NULL)", "boolean"
            return f"({self._expr(e.this, slots)[0]} IS NULL)", "boolean"
        if isinstance(e, exp.If):
            return self._case([(e.this, e.args["true"])], e.args.get("false"), slots)
        if isinstance(e, exp.Case) and e.this is None:
            whens = [(i.this, i.args["true"]) for i in e.args.get("ifs") or []]
            return self._case(whens, e.args.get("default"), slots)
        if isinstance(e, (exp.EQ, exp.NullSafeEQ)):
            same = self._same_element(e, slots)
            if same is not None:
                return same, "boolean"
        if isinstance(e, tuple(_COMPARISONS)):
            a, fa = self._expr(e.this, slots)
            b, fb = self._expr(e.expression, slots)
            _comparable(fa, fb)
            return f"({a} {_COMPARISONS[type(e)]} {b})", "boolean"
        if isinstance(e, exp.In) and not e.args.get("query") and not e.args.get("unnest"):
            a, fa = self._expr(e.this, slots)
            items = []
            for item in e.expressions:
                text, fi = self._expr(item, slots)
                _comparable(fa, fi)
                items.append(text)
            if not items:
                raise NotLocal("an empty IN list")
            return f"({a} IN ({', '.join(items)}))", "boolean"
        if isinstance(e, exp.Between):
            a, fa = self._expr(e.this, slots)
            lo, fl = self._expr(e.args["low"], slots)
            hi, fh = self._expr(e.args["high"], slots)
            _comparable(fa, fl)
            _comparable(fa, fh)
            return f"({a} BETWEEN {lo} AND {hi})", "boolean"
        if isinstance(e, exp.Mod):
            a, fa = self._expr(e.this, slots)
            b, fb = self._expr(e.expression, slots)
            if _numeric(fa, fb) != "integer":
                raise NotLocal("a remainder of floats")
            # Of integers Spark's remainder by zero is NULL (ANSI mode off);
            # otherwise both take the dividend's sign, as Java's % does.
            return f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} % {b} END)", "integer"
        if isinstance(e, FloatArithmetic):
            # DuckDB's doubles divide by a zero as Java's do (+-Infinity, NaN).
            if type_of(e).name != "DOUBLE":
                raise NotLocal("a FLOAT quotient or remainder")
            a, fa = self._expr(e.this, slots)
            b, fb = self._expr(e.expression, slots)
            _numeric(fa, fb)
            return f"(CAST({a} AS DOUBLE) {e.args['op']} CAST({b} AS DOUBLE))", "float"
        if isinstance(e, tuple(_ARITHMETIC)):
            a, fa = self._expr(e.this, slots)
            b, fb = self._expr(e.expression, slots)
            fam = _numeric(fa, fb)
            return f"({a} {_ARITHMETIC[type(e)]} {b})", fam
        if isinstance(e, exp.Neg):
            a, fa = self._expr(e.this, slots)
            return f"(- {a})", _numeric(fa, fa)
        if isinstance(e, exp.Coalesce):
            return self._coalesce(e, [e.this, *e.expressions], slots)
        if isinstance(e, exp.Anonymous) and str(e.this).lower() == "coalesce":
            return self._coalesce(e, e.expressions, slots)
        if isinstance(e, exp.Cast):
            a, fa = self._expr(e.this, slots)
            source = self._type_of(e.this, slots)
            target = type_of(e)
            if target == T.ANY:
                # (the binder types every cast but those summing a path's cost)
                raise NotLocal("a cast to an open type (a path's cost)")
            if fa == "null":
                return f"CAST(NULL AS {duck_type(target)})", family(target)
            if widens(source, target):
                return f"CAST({a} AS {duck_type(target)})", family(target)
            narrowed = narrowing_cast(a, source, target)
            if narrowed is None:
                raise NotLocal(f"a cast of {source} to {target}")
            return narrowed, family(target)
        raise NotLocal(f"expression {type(e).__name__}")

    def _coalesce(
        self, e: exp.Expression, args: list[exp.Expression], slots: list[Slot]
    ) -> tuple[str, str]:
        """COALESCE of values each widened to the bound type (a subquery's
        COUNT or SUM over no rows is COALESCE(agg, 0))."""
        target = type_of(e)
        if target is None or is_element(target):
            raise NotLocal("a COALESCE of vertices or edges")
        parts = []
        for arg in args:
            text, fam = self._expr(arg, slots)
            source = type_of(arg)
            if fam == "null":
                parts.append(f"CAST(NULL AS {duck_type(target)})")
                continue
            if source != target and not widens(source, target):
                raise NotLocal(f"a COALESCE of {source} to {target}")
            parts.append(f"CAST({text} AS {duck_type(target)})")
        return f"COALESCE({', '.join(parts)})", family(target)

    def _literal(self, e: exp.Literal) -> tuple[str, str]:
        if e.is_string:
            return string_literal(str(e.this)), "string"
        text = str(e.this)
        upper = text.upper()
        for suffix, t in (
            ("BD", None),
            ("D", "DOUBLE"),
            ("F", "FLOAT"),
            ("L", "BIGINT"),
            ("S", "SMALLINT"),
            ("Y", "TINYINT"),
        ):
            if upper.endswith(suffix):
                if t is None:
                    raise NotLocal("a decimal literal")
                number = text[: -len(suffix)]
                _check_number(number)
                if t in FLOATS:
                    # (from text: a number literal -0.0 is a DECIMAL, whose zero has no sign)
                    return f"CAST('{number}' AS {t})", "float"
                return f"CAST({number} AS {t})", family(T.SqlType(t))
        _check_number(text)
        if any(ch in text for ch in ".eE"):
            t = type_of(e)
            if isinstance(t, T.SqlType) and t.name in FLOATS:
                return f"CAST('{text}' AS {t.name})", "float"
            raise NotLocal("a decimal literal")
        value = int(text)
        if -(2**31) <= value < 2**31:
            return f"CAST({text} AS INTEGER)", "integer"
        if -(2**63) <= value < 2**63:
            return f"CAST({text} AS BIGINT)", "integer"
        raise NotLocal("an integer literal past BIGINT")


def _arrow_rows(rows: list[tuple[Any, ...]], columns: list[str], types: list[Any]) -> Any:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    arrays = [
        pa.array([r[i] for r in rows], type=to_arrow_type(T.to_spark_type(t)))
        for i, t in enumerate(types)
    ]
    return pa.Table.from_arrays(arrays, names=columns)


def _check_number(text: str) -> None:
    try:
        float(text)
    except ValueError:
        raise NotLocal(f"literal {text}") from None


def _comparable(a: str, b: str) -> None:
    numbers = ("integer", "float")
    if "nested" in (a, b):
        raise NotLocal("a comparison of lists or structs")
    if a == "null" or b == "null" or a == b or (a in numbers and b in numbers):
        return
    raise NotLocal(f"a comparison of {a} with {b}")


def _column_type(slot: Slot, column: str) -> Any:
    """The type of one of ``slot``'s columns (a property's, or its own)."""
    for prop, col in slot.properties:
        if col == column:
            return slot.type.field_type(prop)
    return slot.type


def _element_value(slot: Slot) -> str:
    """A vertex or edge as the struct of its properties, in its type's order
    (the Spark path's value); NULL for one an outer join did not find (no
    label: a found one always has one)."""
    fields = ", ".join(f"{string_literal(prop)}: {q(col)}" for prop, col in slot.properties)
    missing = q(slot.property(T.LABEL_FIELD))
    return f"CASE WHEN {missing} IS NULL THEN NULL ELSE {{{fields}}} END"


def _element_order(slot: Slot, descending: bool, nulls_first: bool) -> list[str]:
    """ORDER BY a vertex or edge, as Spark orders structs: a missing one (no
    label) where the key puts NULLs, then property by property in the
    type's order, each ascending with NULLs first, all reversed for DESC."""
    missing = q(slot.property(T.LABEL_FIELD))
    keys = [f"({missing} IS NULL) {'DESC' if nulls_first else 'ASC'}"]
    for prop, col in slot.properties:
        family(slot.type.field_type(prop))
        way = "DESC NULLS LAST" if descending else "ASC NULLS FIRST"
        keys.append(f"{q(col)} {way}")
    return keys


def _numeric(a: str, b: str) -> str:
    if a not in ("integer", "float", "null") or b not in ("integer", "float", "null"):
        raise NotLocal("arithmetic on something other than numbers")
    return "float" if "float" in (a, b) else "integer"


_COMPARISONS: dict[type, str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
}
_ARITHMETIC: dict[type, str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}

_HANDLERS: dict[type, Callable[[Translator, Any], Relation]] = {
    TableScan: Translator.table_scan,
    Values: Translator.values,
    Filter: Translator.filter,
    Project: Translator.project,
    Aggregate: Translator.aggregate,
    Sort: Translator.sort,
    GroupLimit: Translator.group_limit,
    Join: Translator.join,
    Union: Translator.union,
    VertexMatch: Translator.vertex_match,
    EdgeMatch: Translator.edge_match,
    RepeatMatch: Translator.repeat_match,
    GraphAlgorithm: Translator.graph_algorithm,
    GraphLabelScan: Translator.graph_label_scan,
}
