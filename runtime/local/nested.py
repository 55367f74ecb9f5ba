"""Lists and structs in the local engine: path values and their functions.

A path variable's value (``planner.binder.path_values``) is a PATH struct of
two lists, its vertices and its edges; a variable-length edge that keeps its
run adds two lists (``EdgeMatch.keep_run``).  The local engine holds each as
one DuckDB column: a list of structs, or a struct of such lists, with the
fields of the GeaFlow type in its order, so that DISTINCT over paths and the
modes' tests compare what Spark compares.

Only the Spark functions the binder writes over these values are translated,
each as Spark computes it (ANSI mode off):

* ``array(a, ...)`` of vertices or edges (a missing one is a null item),
  ``concat`` of lists (null when any is null: DuckDB's ``list_concat``
  skips a null), ``reverse``, ``slice(x, start, length)`` for a constant
  start from the front (a negative length is Spark's error: DuckDB raises
  too and the statement runs on Spark), an empty list cast to its type;
* ``named_struct`` and reading a field of a struct;
* ``transform`` (Spark numbers items from 0, DuckDB from 1), ``aggregate``
  (a left fold from its start value: DuckDB's ``list_reduce`` with one);
* ``size`` (-1 for a null list), ``array_size`` (null for one),
  ``size(array_distinct(x))`` (a null item counts once; DuckDB's
  ``list_distinct`` drops nulls), ``element_at`` and GeaFlow's ``x[i]``
  (from 0; Spark's error at the index that is 0 for it is DuckDB's error
  here, so Spark runs it).

Anything else over a list or struct raises ``NotLocal``; so do comparisons
and ordering of whole lists or structs, and a list or struct in the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.dialect import SparkTemplate
from planner.expressions import ref_index

from .sql_text import q
from .types import NotLocal, duck_type, family

if TYPE_CHECKING:
    from .translate import Slot, Translator


@dataclass(frozen=True)
class ListOf:
    element: Kind


@dataclass(frozen=True)
class StructOf:
    fields: tuple[tuple[str, Kind], ...]

    def field(self, name: str) -> tuple[str, Kind]:
        """The field called ``name`` (any case when no other matches): its name and kind."""
        for f, kind in self.fields:
            if f == name:
                return f, kind
        lowered = name.lower()
        for f, kind in self.fields:
            if f.lower() == lowered:
                return f, kind
        raise NotLocal(f"field {name}")


# What a value is: a list, a struct, or a scalar: of its GeaFlow type, or of
# a family ("integer", ...) where the plan does not say its exact type.
Kind = ListOf | StructOf | T.SqlType | str


def kind_of(t: Any) -> Kind:
    if isinstance(t, T.ArrayType):
        return ListOf(kind_of(t.element))
    if isinstance(t, T.StructType):
        return StructOf(tuple((f.name, kind_of(f.type)) for f in t.fields))
    family(t)  # (a scalar the engine keeps)
    return t


def family_of(kind: Kind) -> str:
    """``nested`` for a list or struct, else the scalar's family."""
    if isinstance(kind, (ListOf, StructOf)):
        return "nested"
    return kind if isinstance(kind, str) else family(kind)


def is_nested(t: Any) -> bool:
    """A value the local engine holds as one nested column: a path, or a
    list of vertices or edges (the graph's own values, never a table's)."""
    if isinstance(t, T.ArrayType):
        return isinstance(t.element, T.StructType) and t.element.is_graph
    return isinstance(t, T.StructType) and t.kind == "PATH"


def nested_duck_type(t: Any) -> str:
    if isinstance(t, T.ArrayType):
        return f"{nested_duck_type(t.element)}[]"
    if isinstance(t, T.StructType):
        fields = ", ".join(f"{q(f.name)} {nested_duck_type(f.type)}" for f in t.fields)
        return f"STRUCT({fields})"
    return duck_type(t)


def packed(slot: Slot, prefix: str = "") -> str:
    """A vertex or edge held as columns, as one struct (null when missing:
    a found element always has a label)."""
    fields = ", ".join(f"{q(prop)} := {prefix}{q(col)}" for prop, col in slot.properties)
    return (
        f"(CASE WHEN {prefix}{q(slot.property(T.LABEL_FIELD))} IS NULL THEN NULL "
        f"ELSE struct_pack({fields}) END)"
    )


# The expressions that have a list or struct value.
_VALUES = (
    exp.Struct,
    exp.Concat,
    exp.Array,
    exp.Reverse,
    exp.ArraySlice,
    exp.Transform,
    exp.ArrayDistinct,
)


class Nested:
    """Translates the list- and struct-valued parts of one expression for a
    translator, which hands back every scalar part (``Translator._expr``)."""

    def __init__(self, tr: Translator) -> None:
        self.tr = tr
        # The lambda parameters in scope: name -> (DuckDB name, kind).
        self.params: dict[str, tuple[str, Kind]] = {}
        self._count = 0

    # -------------------------------------------------------------- dispatch
    def scalar(self, e: exp.Expression, slots: list[Slot]) -> tuple[str, str] | None:
        """The text and family of ``e`` when it reads a list or struct (or
        is one: family ``nested``), else None."""
        if _is_value(e) or self._is_nested_ref(e, slots):
            return self.value(e, slots)[0], "nested"
        if isinstance(e, (exp.Identifier, exp.Column)) and self._param(e) is not None:
            text, kind = self._param(e)  # type: ignore[misc]
            return text, family_of(kind)
        if isinstance(e, exp.Dot) and not self._element_ref(e.this, slots):
            return self._field(e, slots)
        if isinstance(e, exp.ArraySize):
            if isinstance(e.this, exp.ArrayDistinct):
                return f"COALESCE({self._distinct_count(e.this.this, slots)}, -1)", "integer"
            return f"COALESCE(len({self.value(e.this, slots)[0]}), -1)", "integer"
        if isinstance(e, exp.Anonymous) and str(e.this).lower() == "array_size":
            (arg,) = e.expressions
            if isinstance(arg, exp.ArrayDistinct):
                return self._distinct_count(arg.this, slots), "integer"
            return f"len({self.value(arg, slots)[0]})", "integer"
        if isinstance(e, exp.Bracket):
            return self._scalar_of(self._element_at(e, slots))
        if isinstance(e, SparkTemplate) and e.template == "try_element_at({0}, {1} + 1)":
            return self._scalar_of(self._item(e, slots))
        if isinstance(e, exp.Reduce):
            return self._scalar_of(self._fold(e, slots))
        return None

    def value(self, e: exp.Expression, slots: list[Slot]) -> tuple[str, Kind]:
        """The text and kind of a list- or struct-valued expression."""
        if isinstance(e, exp.Paren):
            return self.value(e.this, slots)
        if isinstance(e, exp.Column) and self._param(e) is None:
            i = ref_index(e)
            if i is None or i >= len(slots):
                raise NotLocal("a reference that is not a field")
            slot = slots[i]
            if slot.properties:
                return packed(slot), kind_of(slot.type)
            if not is_nested(slot.type):
                raise NotLocal("a scalar where a list or struct is read")
            return q(slot.column), kind_of(slot.type)
        if isinstance(e, (exp.Identifier, exp.Column)):
            found = self._param(e)
            if found is None:
                raise NotLocal(f"name {e.name}")
            return found
        if isinstance(e, exp.Dot):
            text, kind = self._field(e, slots, nested=True)
            return text, kind
        if isinstance(e, exp.Struct):
            return self._struct(e, slots)
        if isinstance(e, exp.Array):
            return self._array(e, slots)
        if isinstance(e, exp.Concat):
            parts = [self._list(a, slots) for a in e.expressions]
            text, kind = parts[0]
            for other, okind in parts[1:]:
                if okind != kind:
                    raise NotLocal("a concatenation of lists of different types")
                text = f"list_concat({text}, {other})"
            nulls = " OR ".join(f"({p}) IS NULL" for p, _ in parts)
            return f"(CASE WHEN {nulls} THEN NULL ELSE {text} END)", kind
        if isinstance(e, exp.Reverse):
            text, kind = self._list(e.this, slots)
            return f"list_reverse({text})", kind
        if isinstance(e, exp.ArraySlice):
            return self._slice(e, slots)
        if isinstance(e, (exp.Cast, exp.TryCast)):
            return self._empty_list(e)
        if isinstance(e, exp.Transform):
            return self._transform(e, slots)
        if isinstance(e, exp.Bracket):
            return self._element_at(e, slots)
        if isinstance(e, SparkTemplate) and e.template == "try_element_at({0}, {1} + 1)":
            return self._item(e, slots)
        if isinstance(e, exp.ArrayDistinct):
            # (DuckDB's list_distinct neither keeps Spark's order nor a null)
            raise NotLocal("array_distinct other than counted")
        raise NotLocal(f"expression {type(e).__name__} over lists or structs")

    # ----------------------------------------------------------------- parts
    def _is_nested_ref(self, e: exp.Expression, slots: list[Slot]) -> bool:
        if not isinstance(e, exp.Column) or self._param(e) is not None:
            return False
        i = ref_index(e)
        return i is not None and i < len(slots) and is_nested(slots[i].type)

    def _element_ref(self, e: exp.Expression, slots: list[Slot]) -> bool:
        i = ref_index(e) if isinstance(e, exp.Column) and self._param(e) is None else None
        return i is not None and i < len(slots) and bool(slots[i].properties)

    def _param(self, e: exp.Expression) -> tuple[str, Kind] | None:
        if isinstance(e, exp.Column) and e.table:
            return None
        return self.params.get(e.name) if e.name else None

    def _list(self, e: exp.Expression, slots: list[Slot]) -> tuple[str, ListOf]:
        text, kind = self.value(e, slots)
        if not isinstance(kind, ListOf):
            raise NotLocal("a list function of something other than a list")
        return text, kind

    def _scalar_of(self, found: tuple[str, Kind]) -> tuple[str, str]:
        text, kind = found
        return text, family_of(kind)

    def scalar_type(self, e: exp.Expression, slots: list[Slot]) -> Any:
        """The GeaFlow type of a scalar read off a lambda's parameter or a
        list or struct (``x_.w``), where its kind says it; else None."""
        param = self._param(e) if isinstance(e, (exp.Identifier, exp.Column)) else None
        if param is not None:
            kind = param[1]
        elif isinstance(e, exp.Dot) and not self._element_ref(e.this, slots):
            kind = self._field(e, slots, nested=True)[1]
        else:
            return None
        return kind if isinstance(kind, T.SqlType) else None

    def _field(self, e: exp.Dot, slots: list[Slot], nested: bool = False) -> tuple[str, Any]:
        base, kind = self.value(e.this, slots)
        if not isinstance(kind, StructOf):
            raise NotLocal("a field of something other than a struct")
        name, fkind = kind.field(e.expression.name)
        text = f"struct_extract({base}, '{name.replace(chr(39), chr(39) * 2)}')"
        if nested:
            return text, fkind
        return text, family_of(fkind)

    def _struct(self, e: exp.Struct, slots: list[Slot]) -> tuple[str, StructOf]:
        fields: list[tuple[str, Kind]] = []
        parts = []
        for item in e.expressions:
            if not isinstance(item, (exp.PropertyEQ, exp.Alias)):
                raise NotLocal("a struct of unnamed fields")
            name = item.this.name if isinstance(item, exp.PropertyEQ) else item.alias
            value = item.expression if isinstance(item, exp.PropertyEQ) else item.this
            text, kind = self._any(value, slots)
            fields.append((name, kind))
            parts.append(f"{q(name)} := {text}")
        return f"struct_pack({', '.join(parts)})", StructOf(tuple(fields))

    def _any(self, e: exp.Expression, slots: list[Slot]) -> tuple[str, Kind]:
        """A value of either sort: a list or struct, or a scalar (its family)."""
        found = self.scalar(e, slots)
        if (found is not None and found[1] == "nested") or self._element_ref(e, slots):
            return self.value(e, slots)
        text, fam = found if found is not None else self.tr._expr(e, slots)
        exact = self.tr._type_of(e, slots)
        return text, exact if isinstance(exact, T.SqlType) and exact != T.ANY else fam

    def _array(self, e: exp.Array, slots: list[Slot]) -> tuple[str, ListOf]:
        if not e.expressions:
            raise NotLocal("an empty list of no type")
        items = [self._any(a, slots) for a in e.expressions]
        kinds = {k for _, k in items}
        if len(kinds) != 1:
            raise NotLocal("a list of values of different types")
        return f"[{', '.join(t for t, _ in items)}]", ListOf(kinds.pop())

    def _slice(self, e: exp.ArraySlice, slots: list[Slot]) -> tuple[str, ListOf]:
        text, kind = self._list(e.this, slots)
        start = e.args.get("start")
        if not (
            e.args.get("is_length")
            and isinstance(start, exp.Literal)
            and not start.is_string
            and str(start.this).isdigit()
            and int(str(start.this)) > 0
        ):
            raise NotLocal("a slice from other than a constant start")
        first = int(str(start.this))
        length, fam = self.tr._expr(e.args["end"], slots)
        if fam not in ("integer", "null"):
            raise NotLocal("a slice of a length that is not an integer")
        return (
            f"(CASE WHEN ({length}) < 0 THEN error('slice of a negative length') "
            f"ELSE list_slice({text}, {first}, {first} - 1 + ({length})) END)",
            kind,
        )

    def _empty_list(self, e: exp.Expression) -> tuple[str, ListOf]:
        """``CAST(array() AS ARRAY<...>)``: an empty list of its type."""
        if not (isinstance(e.this, exp.Array) and not e.this.expressions):
            raise NotLocal("a cast of a list or struct")
        to = e.args["to"]
        kind = _kind_of_spark(to)
        if not isinstance(kind, ListOf):
            raise NotLocal("a cast of a list to other than a list")
        return f"CAST([] AS {to.sql(dialect='duckdb')})", kind

    def _lambda(self, e: exp.Expression, kinds: list[Kind], slots: list[Slot]) -> tuple[str, Kind]:
        """``lambda a, b: body`` with the parameters of the kinds given (a
        Spark index parameter, counted from 0, passes DuckDB's less one)."""
        if not isinstance(e, exp.Lambda) or len(e.expressions) != len(kinds):
            raise NotLocal("a function that is not a lambda of its arguments")
        saved = dict(self.params)
        names = []
        try:
            for p, kind in zip(e.expressions, kinds, strict=True):
                self._count += 1
                name = f"__l{self._count}"
                names.append(name)
                if kind == "index":
                    self.params[p.name] = (f"({name} - 1)", "integer")
                else:
                    self.params[p.name] = (name, kind)
            body, kind = self._any(e.this, slots)
        finally:
            self.params = saved
        return f"lambda {', '.join(names)}: {body}", kind

    def _transform(self, e: exp.Transform, slots: list[Slot]) -> tuple[str, ListOf]:
        text, kind = self._list(e.this, slots)
        fn = e.expression
        kinds: list[Kind] = [kind.element]
        if isinstance(fn, exp.Lambda) and len(fn.expressions) == 2:
            kinds.append("index")
        body, out = self._lambda(fn, kinds, slots)
        return f"list_transform({text}, {body})", ListOf(out)

    def _fold(self, e: exp.Reduce, slots: list[Slot]) -> tuple[str, Kind]:
        """``aggregate(x, start, (acc, item) -> merge)`` without a finish."""
        if e.args.get("finish") is not None:
            raise NotLocal("aggregate with a finishing function")
        text, kind = self._list(e.this, slots)
        start, skind = self._any(e.args["initial"], slots)
        if family_of(skind) not in ("integer", "float"):
            raise NotLocal("an aggregate over a list to other than a number")
        body, out = self._lambda(e.args["merge"], [skind, kind.element], slots)
        if family_of(out) != family_of(skind):
            raise NotLocal("an aggregate whose step changes its type")
        # (DuckDB's fold keeps the start's type: Spark's sums in it too)
        return f"list_reduce({text}, {body}, {start})", skind

    def _distinct_count(self, e: exp.Expression, slots: list[Slot]) -> str:
        """How many distinct items (a null one too) a list has; null for a null list."""
        text, _ = self._list(e, slots)
        self._count += 1
        v = f"__l{self._count}"
        return (
            f"(len(list_distinct({text})) + "
            f"(CASE WHEN len(list_filter({text}, lambda {v}: {v} IS NULL)) > 0 THEN 1 ELSE 0 END))"
        )

    def _at(self, text: str, kind: ListOf, index: str) -> tuple[str, Kind]:
        # (Spark's element_at raises at index 0; DuckDB's error hands it to Spark)
        return (
            f"(CASE WHEN ({index}) = 0 THEN error('element_at index 0') "
            f"ELSE list_extract({text}, {index}) END)",
            kind.element,
        )

    def _element_at(self, e: exp.Bracket, slots: list[Slot]) -> tuple[str, Kind]:
        if e.args.get("offset") != 1 or len(e.expressions) != 1:
            raise NotLocal("an index of a list other than element_at")
        text, kind = self._list(e.this, slots)
        index, fam = self.tr._expr(e.expressions[0], slots)
        if fam not in ("integer", "null"):
            raise NotLocal("an index that is not an integer")
        return self._at(text, kind, index)

    def _item(self, e: SparkTemplate, slots: list[Slot]) -> tuple[str, Kind]:
        """GeaFlow's ``x[i]``, from 0: ``try_element_at(x, i + 1)``."""
        base, index = e.expressions
        text, kind = self._list(base, slots)
        i, fam = self.tr._expr(index, slots)
        if fam not in ("integer", "null"):
            raise NotLocal("an index that is not an integer")
        return self._at(text, kind, f"({i}) + 1")


def _is_value(e: exp.Expression) -> bool:
    """Does ``e`` make a list or struct?  (``concat`` and ``reverse`` of
    text too: those the local engine does not run either way.)"""
    if isinstance(e, (exp.Cast, exp.TryCast)):
        return isinstance(e.this, exp.Array) and not e.this.expressions
    return isinstance(e, _VALUES)


# The scalar Spark types an empty list's cast may name, as GeaFlow types.
_SPARK_TYPES = {
    exp.DataType.Type.TINYINT: T.TINYINT,
    exp.DataType.Type.SMALLINT: T.SMALLINT,
    exp.DataType.Type.INT: T.INTEGER,
    exp.DataType.Type.BIGINT: T.BIGINT,
    exp.DataType.Type.FLOAT: T.FLOAT,
    exp.DataType.Type.DOUBLE: T.DOUBLE,
    exp.DataType.Type.VARCHAR: T.VARCHAR,
    exp.DataType.Type.TEXT: T.VARCHAR,
    exp.DataType.Type.BOOLEAN: T.BOOLEAN,
}


def _kind_of_spark(t: exp.DataType) -> Kind:
    """The kind of a Spark SQL type the binder wrote (an empty list's cast)."""
    if t.this == exp.DataType.Type.ARRAY and len(t.expressions) == 1:
        return ListOf(_kind_of_spark(t.expressions[0]))
    if t.this == exp.DataType.Type.STRUCT:
        fields = []
        for f in t.expressions:
            if not isinstance(f, exp.ColumnDef) or not isinstance(f.args.get("kind"), exp.DataType):
                raise NotLocal(f"type {t.sql(dialect='spark')}")
            fields.append((f.name, _kind_of_spark(f.args["kind"])))
        return StructOf(tuple(fields))
    found = _SPARK_TYPES.get(t.this)
    if found is None:
        raise NotLocal(f"type {t.sql(dialect='spark')}")
    return found
