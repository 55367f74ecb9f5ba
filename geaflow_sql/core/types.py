"""GeaFlow's SQL types, their coercion rules, and their Spark counterparts.

GeaFlow types follow Calcite's: BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT,
FLOAT, DOUBLE, DECIMAL, VARCHAR, BINARY, DATE, TIMESTAMP, plus the graph types
VERTEX, EDGE and PATH.  A vertex or edge value is a struct whose fields are its
id (or source/target ids), ``~label``, optional timestamp, and properties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import ValidationError

# Meta field names carried by graph values (GeaFlow's reserved names).
LABEL_FIELD = "~label"
VERTEX_ID_FIELD = "~id"
EDGE_SRC_FIELD = "~src"
EDGE_DST_FIELD = "~dst"
EDGE_DIRECTION_FIELD = "~direction"
EDGE_TS_FIELD = "~ts"


class _Immutable:
    """Types never change once made: a copy, deep or not, is the type itself
    (bound expressions carry their type, and are copied often)."""

    __slots__ = ()

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self


@dataclass(frozen=True, slots=True)
class SqlType(_Immutable):
    """A scalar type.  ``name`` is the canonical upper-case GeaFlow name."""

    name: str
    precision: int | None = None
    scale: int | None = None

    def __str__(self) -> str:
        if self.name == "DECIMAL" and self.precision is not None:
            return f"DECIMAL({self.precision}, {self.scale or 0})"
        return self.name

    # Classification -------------------------------------------------------
    @property
    def is_integer(self) -> bool:
        return self.name in INTEGER_NAMES

    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC_NAMES

    @property
    def is_approx(self) -> bool:
        return self.name in ("FLOAT", "DOUBLE")

    @property
    def is_string(self) -> bool:
        return self.name == "VARCHAR"

    @property
    def is_graph(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class StructField(_Immutable):
    name: str
    type: Any  # SqlType | StructType | ...


@dataclass(frozen=True, slots=True)
class StructType(_Immutable):
    """A row of named fields; vertices and edges are structs with a kind."""

    fields: tuple[StructField, ...]
    kind: str = "STRUCT"  # 'STRUCT' | 'VERTEX' | 'EDGE'
    labels: tuple[str, ...] = ()
    # For VERTEX: the name of the id field; for EDGE: source, target, timestamp.
    id_field: str | None = None
    src_field: str | None = None
    dst_field: str | None = None
    ts_field: str | None = None
    name: str = field(default="STRUCT")
    # Declared names that read a meta field: a vertex's id column name reads
    # ``~id``; an edge's source/target/timestamp names read ``~src``/``~dst``/``~ts``.
    aliases: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.kind)

    def field_type(self, name: str) -> Any:
        for f in self.fields:
            if f.name == name:
                return f.type
        lowered = name.lower()
        for f in self.fields:
            if f.name.lower() == lowered:
                return f.type
        return None

    def resolve_field(self, name: str) -> str | None:
        """The stored name of field ``name`` (case-insensitively), or a meta alias."""
        for f in self.fields:
            if f.name == name:
                return f.name
        lowered = name.lower()
        for alias, stored in self.aliases:
            if alias.lower() == lowered:
                return stored
        for f in self.fields:
            if f.name.lower() == lowered:
                return f.name
        meta = {
            VERTEX_ID_FIELD: self.id_field,
            EDGE_SRC_FIELD: self.src_field,
            EDGE_DST_FIELD: self.dst_field,
            EDGE_TS_FIELD: self.ts_field,
        }
        if name in meta and meta[name] is not None:
            return meta[name]
        return None

    @property
    def is_graph(self) -> bool:
        return self.kind in ("VERTEX", "EDGE")

    @property
    def is_numeric(self) -> bool:
        return False

    @property
    def is_integer(self) -> bool:
        return False

    @property
    def is_string(self) -> bool:
        return False

    @property
    def is_approx(self) -> bool:
        return False

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name} {f.type}" for f in self.fields)
        return f"{self.kind}<{inner}>"


class _Collection(_Immutable):
    """What an array or a map is not (the scalar predicates ``SqlType`` answers)."""

    __slots__ = ()
    is_numeric = False
    is_integer = False
    is_string = False
    is_approx = False
    is_graph = False


@dataclass(frozen=True, slots=True)
class ArrayType(_Collection):
    element: Any
    name: str = "ARRAY"

    def __str__(self) -> str:
        return f"ARRAY<{self.element}>"


@dataclass(frozen=True, slots=True)
class MapType(_Collection):
    key: Any
    value: Any
    name: str = "MAP"

    def __str__(self) -> str:
        return f"MAP<{self.key}, {self.value}>"


# Any GeaFlow type a plan field can have.
DataType = SqlType | StructType | ArrayType | MapType

BOOLEAN = SqlType("BOOLEAN")
TINYINT = SqlType("TINYINT")
SMALLINT = SqlType("SMALLINT")
INTEGER = SqlType("INTEGER")
BIGINT = SqlType("BIGINT")
FLOAT = SqlType("FLOAT")
DOUBLE = SqlType("DOUBLE")
VARCHAR = SqlType("VARCHAR")
BINARY = SqlType("BINARY")
DATE = SqlType("DATE")
TIMESTAMP = SqlType("TIMESTAMP")
NULL = SqlType("NULL")  # the type of the NULL literal: coerces to anything
ANY = SqlType("ANY")  # a value whose type is only known at run time


def decimal(precision: int = 38, scale: int = 10) -> SqlType:
    return SqlType("DECIMAL", precision, scale)


INTEGER_NAMES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
NUMERIC_NAMES = INTEGER_NAMES + ("FLOAT", "DOUBLE", "DECIMAL")
# Widening order for numeric promotion.
_NUMERIC_RANK = {name: i for i, name in enumerate(INTEGER_NAMES + ("DECIMAL", "FLOAT", "DOUBLE"))}

_TYPE_ALIASES = {
    "BOOL": "BOOLEAN",
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "BYTE": "TINYINT",
    "SMALLINT": "SMALLINT",
    "SHORT": "SMALLINT",
    "INT": "INTEGER",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "LONG": "BIGINT",
    "FLOAT": "FLOAT",
    "REAL": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DECIMAL": "DECIMAL",
    "NUMERIC": "DECIMAL",
    "VARCHAR": "VARCHAR",
    "STRING": "VARCHAR",
    "CHAR": "VARCHAR",
    "TEXT": "VARCHAR",
    "BINARY": "BINARY",
    "VARBINARY": "BINARY",
    "BYTES": "BINARY",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "DATETIME": "TIMESTAMP",
}


def type_from_name(name: str, params: tuple[int, ...] = (), args: tuple[Any, ...] = ()) -> Any:
    """A type from its written name (``VARCHAR(8)``, ``long``, ``ARRAY<INT>``).

    Raises ``ValidationError`` for an unknown name; the caller attaches the span.
    """
    upper = name.upper()
    if upper == "ARRAY" and len(args) == 1:
        return ArrayType(args[0])
    if upper == "MAP" and len(args) == 2:
        return MapType(args[0], args[1])
    canonical = _TYPE_ALIASES.get(upper)
    if canonical is None:
        raise ValidationError(f"unknown type {name!r}")
    if canonical == "DECIMAL":
        precision = params[0] if params else 38
        scale = params[1] if len(params) > 1 else (0 if params else 10)
        return SqlType("DECIMAL", precision, scale)
    return SqlType(canonical)


def is_assignable(source: Any, target: Any) -> bool:
    """Can a value of ``source`` type be stored where ``target`` is declared?"""
    if source == target or source.name == "NULL" or target.name == "ANY" or source.name == "ANY":
        return True
    if source.is_numeric and target.is_numeric:
        return True
    if target.is_string:
        return True  # everything prints
    if source.is_string and target.name in (
        *NUMERIC_NAMES,
        "BOOLEAN",
        "DATE",
        "TIMESTAMP",
        "BINARY",
    ):
        return True  # implicit parse, as GeaFlow does for text sources
    if source.name in ("DATE", "TIMESTAMP") and target.name in ("DATE", "TIMESTAMP"):
        return True
    return isinstance(source, StructType) and isinstance(target, StructType)


def common_type(a: Any, b: Any) -> Any | None:
    """The type both operands are promoted to (for =, CASE, UNION, ...), or None."""
    if a == b:
        return a
    if a.name == "NULL":
        return b
    if b.name == "NULL":
        return a
    if a.name == "ANY":
        return b
    if b.name == "ANY":
        return a
    if a.is_numeric and b.is_numeric:
        return a if _NUMERIC_RANK[a.name] >= _NUMERIC_RANK[b.name] else b
    if a.is_string and b.is_string:
        return VARCHAR
    if a.is_string and (b.is_numeric or b.name in ("BOOLEAN", "DATE", "TIMESTAMP")):
        return b
    if b.is_string and (a.is_numeric or a.name in ("BOOLEAN", "DATE", "TIMESTAMP")):
        return a
    if {a.name, b.name} == {"DATE", "TIMESTAMP"}:
        return TIMESTAMP
    if isinstance(a, StructType) and isinstance(b, StructType) and a.kind == b.kind:
        return merge_struct(a, b)
    return None


def merge_struct(a: StructType, b: StructType) -> StructType:
    """Union of two graph element types: a field only one side has becomes nullable."""
    fields = list(a.fields)
    names = {f.name for f in fields}
    for f in b.fields:
        if f.name not in names:
            fields.append(f)
            names.add(f.name)
    return StructType(
        tuple(fields),
        a.kind,
        tuple(dict.fromkeys(a.labels + b.labels)),
        a.id_field or b.id_field,
        a.src_field or b.src_field,
        a.dst_field or b.dst_field,
        a.ts_field or b.ts_field,
        aliases=tuple(dict.fromkeys(a.aliases + b.aliases)),
    )


def arithmetic_type(op: str, a: Any, b: Any) -> Any | None:
    """Result type of ``a op b`` for + - * / % with GeaFlow's (Calcite's) rules."""
    if a.name == "NULL" and b.name == "NULL":
        return INTEGER
    if a.name == "NULL":
        a = b
    if b.name == "NULL":
        b = a
    if a.name == "ANY" or b.name == "ANY":
        return DOUBLE
    if a.is_string and b.is_numeric:
        a = DOUBLE
    if b.is_string and a.is_numeric:
        b = DOUBLE
    if not (a.is_numeric and b.is_numeric):
        return None
    wider = a if _NUMERIC_RANK[a.name] >= _NUMERIC_RANK[b.name] else b
    if wider.name in ("TINYINT", "SMALLINT"):
        return INTEGER
    return wider


# ---------------------------------------------------------------------------
# Spark mapping
# ---------------------------------------------------------------------------

_SPARK_SQL_NAMES = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "STRING",
    "BINARY": "BINARY",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "NULL": "STRING",
    "ANY": "STRING",
}


def spark_sql_type(t: Any) -> str:
    """The Spark SQL type name (for CAST and DDL strings)."""
    if isinstance(t, SqlType):
        if t.name == "DECIMAL":
            return f"DECIMAL({t.precision or 38},{t.scale or 0})"
        return _SPARK_SQL_NAMES[t.name]
    if isinstance(t, ArrayType):
        return f"ARRAY<{spark_sql_type(t.element)}>"
    if isinstance(t, MapType):
        return f"MAP<{spark_sql_type(t.key)},{spark_sql_type(t.value)}>"
    if isinstance(t, StructType):
        inner = ",".join(f"`{f.name}`:{spark_sql_type(f.type)}" for f in t.fields)
        return f"STRUCT<{inner}>"
    raise TypeError(t)


def to_spark_type(t: Any) -> Any:
    """The ``pyspark.sql.types`` instance for a type."""
    from pyspark.sql import types as T

    if isinstance(t, SqlType):
        simple = {
            "BOOLEAN": T.BooleanType(),
            "TINYINT": T.ByteType(),
            "SMALLINT": T.ShortType(),
            "INTEGER": T.IntegerType(),
            "BIGINT": T.LongType(),
            "FLOAT": T.FloatType(),
            "DOUBLE": T.DoubleType(),
            "VARCHAR": T.StringType(),
            "BINARY": T.BinaryType(),
            "DATE": T.DateType(),
            "TIMESTAMP": T.TimestampType(),
            "NULL": T.StringType(),
            "ANY": T.StringType(),
        }
        if t.name == "DECIMAL":
            return T.DecimalType(t.precision or 38, t.scale or 0)
        return simple[t.name]
    if isinstance(t, ArrayType):
        return T.ArrayType(to_spark_type(t.element))
    if isinstance(t, MapType):
        return T.MapType(to_spark_type(t.key), to_spark_type(t.value))
    if isinstance(t, StructType):
        return T.StructType([T.StructField(f.name, to_spark_type(f.type)) for f in t.fields])
    raise TypeError(t)


def from_spark_type(st: Any) -> Any:
    """The GeaFlow type of a Spark data type (for tables read through Spark sources)."""
    from pyspark.sql import types as T

    mapping = [
        (T.BooleanType, BOOLEAN),
        (T.ByteType, TINYINT),
        (T.ShortType, SMALLINT),
        (T.IntegerType, INTEGER),
        (T.LongType, BIGINT),
        (T.FloatType, FLOAT),
        (T.DoubleType, DOUBLE),
        (T.StringType, VARCHAR),
        (T.BinaryType, BINARY),
        (T.DateType, DATE),
        (T.TimestampType, TIMESTAMP),
    ]
    for cls, t in mapping:
        if isinstance(st, cls):
            return t
    if isinstance(st, T.DecimalType):
        return SqlType("DECIMAL", st.precision, st.scale)
    if isinstance(st, T.ArrayType):
        return ArrayType(from_spark_type(st.elementType))
    if isinstance(st, T.MapType):
        return MapType(from_spark_type(st.keyType), from_spark_type(st.valueType))
    if isinstance(st, T.StructType):
        return StructType(
            tuple(StructField(f.name, from_spark_type(f.dataType)) for f in st.fields)
        )
    return VARCHAR
