"""A SQLAlchemy dialect for geaflow-sql, registered as ``geaflow://``.

    from sqlalchemy import create_engine
    import pandas as pd

    engine = create_engine("geaflow://?init=tables.gql&conf.geaflow.dsl.window.size=-1")
    pd.read_sql("SELECT name, age FROM users WHERE age > ?", engine, params=(20,))

URL query parameters: ``master`` (Spark master URL) or ``remote`` (a Spark
Connect server, ``sc://host:15002``), ``graph`` (made current
with USE GRAPH), ``init`` (a script run on every new connection, to define
tables, views and graphs), ``base_dir`` (where relative paths point), and
``conf.<key>=<value>`` or ``spark.<key>=<value>`` for configuration.
``connect_args={"spark": spark}`` reuses a SparkSession;
``connect_args={"session": session}`` shares one geaflow-sql Session (and so
one catalog) between all pooled connections.

Each new connection is a Session with its own catalog, so a pool of several
connections needs ``init`` (or a shared ``session``) to see the same tables.
The inspector lists tables and views with their columns and types straight
from the catalog; a view over ``MATCH`` makes graph results reachable to any
tool that speaks SQLAlchemy.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy import schema as sa_schema
from sqlalchemy import types as sa_types
from sqlalchemy.engine import URL, default, reflection
from sqlalchemy.engine.interfaces import (
    IsolationLevel,
    ReflectedColumn,
    ReflectedPrimaryKeyConstraint,
    ReflectedTableComment,
)
from sqlalchemy.sql import compiler

from .core import types as T
from .shell_syntax import TYPE_NAMES, keywords

# GeaFlow writes OFFSET only after a LIMIT, so an OFFSET alone gets a LIMIT no result reaches;
# Spark wants LIMIT + OFFSET to fit in 32 bits, which leaves offsets up to 2**30.
_NO_LIMIT = 2**30


class GeaflowIdentifierPreparer(compiler.IdentifierPreparer):
    """Backquoted identifiers (a backquote inside is doubled), as the grammar reads them."""

    reserved_words = {k.lower() for k in (*keywords(), *TYPE_NAMES)}

    def __init__(self, dialect: Any) -> None:
        super().__init__(dialect, initial_quote="`", escape_quote="`")


class GeaflowCompiler(compiler.SQLCompiler):
    """SQL our grammar accepts: ``LIMIT n OFFSET m`` (LIMIT first), FETCH as LIMIT."""

    def limit_clause(self, select: Any, **kw: Any) -> str:
        text = ""
        if select._limit_clause is not None:
            text += "\n LIMIT " + self.process(select._limit_clause, **kw)
        if select._offset_clause is not None:
            if select._limit_clause is None:
                text += f"\n LIMIT {_NO_LIMIT}"
            text += " OFFSET " + self.process(select._offset_clause, **kw)
        return text

    def fetch_clause(
        self,
        select: Any,
        fetch_clause: Any = None,
        require_offset: bool = False,
        use_literal_execute_for_simple_int: bool = False,
        **kw: Any,
    ) -> str:
        clause = select._fetch_clause if fetch_clause is None else fetch_clause
        text = "\n LIMIT " + self.process(clause, **kw)
        if select._offset_clause is not None:
            text += " OFFSET " + self.process(select._offset_clause, **kw)
        return text

    def render_literal_value(self, value: Any, type_: Any) -> str:
        # A backslash starts an escape in GeaFlow strings, so it is doubled as well.
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
        return str(super().render_literal_value(value, type_))


class GeaflowTypeCompiler(compiler.GenericTypeCompiler):
    """Type names for CAST and CREATE TABLE in GeaFlow's spelling."""

    def visit_string(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"

    visit_VARCHAR = visit_NVARCHAR = visit_CHAR = visit_NCHAR = visit_TEXT = visit_CLOB = (
        visit_string
    )
    visit_unicode = visit_unicode_text = visit_text = visit_string

    def visit_INTEGER(self, type_: Any, **kw: Any) -> str:
        return "INT"

    def visit_DOUBLE(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    visit_DOUBLE_PRECISION = visit_double = visit_DOUBLE

    def visit_FLOAT(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE" if getattr(type_, "precision", None) and type_.precision > 24 else "FLOAT"

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "FLOAT"

    def visit_DATETIME(self, type_: Any, **kw: Any) -> str:
        return "TIMESTAMP"

    visit_datetime = visit_DATETIME

    def visit_TIME(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"  # GeaFlow has no TIME type

    def visit_BLOB(self, type_: Any, **kw: Any) -> str:
        return "BINARY"

    visit_VARBINARY = visit_large_binary = visit_BINARY = visit_BLOB

    def visit_uuid(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"

    visit_UUID = visit_uuid


class GeaflowDDLCompiler(compiler.DDLCompiler):
    """``CREATE TABLE t (c type, ...) WITH (...)``: options from ``geaflow_with``.

    Table("users", metadata, Column("id", BigInteger), ...,
          geaflow_with={"type": "file", "geaflow.dsl.file.path": "users.txt"})
    """

    def get_column_specification(self, column: Any, **kw: Any) -> str:
        # GeaFlow columns have a name and a type: no NOT NULL, defaults or identity.
        type_text = self.dialect.type_compiler_instance.process(column.type, type_expression=column)
        return f"{self.preparer.format_column(column)} {type_text}"

    def post_create_table(self, table: Any) -> str:
        options = table.dialect_options["geaflow"].get("with") or {}
        if not options:
            return ""
        rendered = ", ".join(f"{key} = {_option_literal(value)}" for key, value in options.items())
        return f"\nWITH ({rendered})"

    def visit_foreign_key_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""  # not in GeaFlow

    def visit_unique_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""

    def visit_check_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""


def _option_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def sqlalchemy_type(t: Any) -> Any:
    """The SQLAlchemy type for a GeaFlow type (NullType for graph values)."""
    if isinstance(t, T.ArrayType):
        inner = sqlalchemy_type(t.element)
        return (
            sa_types.ARRAY(inner)
            if not isinstance(inner, sa_types.NullType)
            else sa_types.NullType()
        )
    name = getattr(t, "name", "")
    simple = {
        "VARCHAR": sa_types.String,
        "BOOLEAN": sa_types.Boolean,
        "TINYINT": sa_types.SmallInteger,
        "SMALLINT": sa_types.SmallInteger,
        "INTEGER": sa_types.Integer,
        "BIGINT": sa_types.BigInteger,
        "FLOAT": sa_types.Float,
        "DOUBLE": sa_types.Double,
        "DATE": sa_types.Date,
        "TIMESTAMP": sa_types.DateTime,
        "BINARY": sa_types.LargeBinary,
    }
    if name in simple:
        return simple[name]()
    if name == "DECIMAL":
        return sa_types.Numeric(precision=t.precision, scale=t.scale)
    return sa_types.NullType()


class GeaflowDialect(default.DefaultDialect):
    """geaflow-sql through its DB-API driver (``geaflow_sql.dbapi``)."""

    name = "geaflow"
    driver = "geaflow_sql"
    supports_statement_cache = True
    default_paramstyle = "qmark"
    supports_native_boolean = True
    supports_native_decimal = True
    returns_native_bytes = True
    supports_alter = False
    supports_sequences = False
    supports_default_values = False
    supports_empty_insert = False
    supports_multivalues_insert = True
    use_insertmanyvalues = False
    postfetch_lastrowid = False
    supports_server_side_cursors = False
    supports_comments = False
    max_identifier_length = 255
    statement_compiler = GeaflowCompiler
    ddl_compiler = GeaflowDDLCompiler
    type_compiler_cls = GeaflowTypeCompiler
    preparer = GeaflowIdentifierPreparer  # type: ignore[assignment]  # a subclass, as intended
    construct_arguments = [(sa_schema.Table, {"with": None})]

    @classmethod
    def import_dbapi(cls) -> Any:
        from . import dbapi

        return dbapi

    # ------------------------------------------------------------ connecting
    def create_connect_args(self, url: URL) -> tuple[list[Any], dict[str, Any]]:
        if url.host or url.username or url.password or url.port:
            raise sa_exc.ArgumentError(
                "geaflow:// takes no host or user; give the Spark master as "
                "geaflow://?master=spark://host:7077 (or ?remote=sc://host:15002 for Spark Connect)"
            )
        kwargs: dict[str, Any] = {}
        conf: dict[str, Any] = {}
        for key, value in url.query.items():
            if isinstance(value, tuple):
                value = value[-1]
            if key in ("master", "remote", "graph", "init", "base_dir"):
                kwargs[key] = value
            elif key.startswith("conf."):
                conf[key[len("conf.") :]] = value
            elif key.startswith(("spark.", "geaflow.")):
                conf[key] = value
            else:
                raise sa_exc.ArgumentError(
                    f"unknown geaflow:// parameter {key!r}; use master, remote, graph, init, base_dir, "
                    "conf.<key> or spark.<key>"
                )
        if url.database:
            raise sa_exc.ArgumentError(
                f"geaflow:// takes no database path ({url.database!r}); "
                "run a script on connect with ?init=script.gql"
            )
        if conf:
            kwargs["conf"] = conf
        return [], kwargs

    def do_rollback(self, dbapi_connection: Any) -> None:
        """Statements commit as they run; the pool's reset-on-return has nothing to undo."""

    def do_ping(self, dbapi_connection: Any) -> bool:
        return not dbapi_connection.closed

    def is_disconnect(self, e: Any, connection: Any, cursor: Any) -> bool:
        return False

    def _get_server_version_info(self, connection: Any) -> tuple[int, ...]:
        from . import __version__

        return tuple(int(p) for p in __version__.split(".") if p.isdigit())

    def _get_default_schema_name(self, connection: Any) -> str:
        return str(_session(connection).catalog.instance)

    def get_isolation_level(self, dbapi_connection: Any) -> IsolationLevel:
        return "AUTOCOMMIT"

    def get_default_isolation_level(self, dbapi_conn: Any) -> IsolationLevel:
        return "AUTOCOMMIT"

    def get_isolation_level_values(self, dbapi_conn: Any) -> list[IsolationLevel]:
        return ["AUTOCOMMIT"]

    def set_isolation_level(self, dbapi_connection: Any, level: str) -> None:
        if level != "AUTOCOMMIT":
            raise sa_exc.ArgumentError(
                "geaflow-sql only runs in AUTOCOMMIT: it has no transactions"
            )

    # ------------------------------------------------------------ reflection
    @reflection.cache
    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        catalog = _session(connection).catalog
        found = {
            key[0] for store in (catalog.tables, catalog.views, catalog.graphs) for key in store
        }
        return sorted(found | {catalog.instance.lower()})

    @reflection.cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return _names(_session(connection).catalog.tables, _session(connection), schema)

    @reflection.cache
    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return _names(_session(connection).catalog.views, _session(connection), schema)

    def get_temp_table_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_temp_view_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_materialized_view_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_sequence_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def has_table(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        session = _session(connection)
        parts = _parts(table_name, schema)
        return session.catalog.table(parts) is not None or session.catalog.view(parts) is not None

    @reflection.cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedColumn]:
        session = _session(connection)
        parts = _parts(table_name, schema)
        table = session.catalog.table(parts)
        if table is not None:
            fields = [(c.name, c.type) for c in table.columns]
        elif session.catalog.view(parts) is not None:
            fields = _view_fields(session, parts)
        else:
            raise sa_exc.NoSuchTableError(table_name)
        return [
            ReflectedColumn(
                name=name,
                type=sqlalchemy_type(t),
                nullable=True,
                default=None,
                autoincrement=False,
                comment=None,
            )
            for name, t in fields
        ]

    @reflection.cache
    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedPrimaryKeyConstraint:
        table = _session(connection).catalog.table(_parts(table_name, schema))
        columns = list(table.primary_key) if table else []
        return ReflectedPrimaryKeyConstraint(constrained_columns=columns, name=None)

    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_table_comment(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedTableComment:
        return ReflectedTableComment(text=None)

    def get_view_definition(
        self, connection: Any, view_name: str, schema: str | None = None, **kw: Any
    ) -> str:
        view = _session(connection).catalog.view(_parts(view_name, schema))
        if view is None:
            raise sa_exc.NoSuchTableError(view_name)
        return str(view.text)


def _session(connection: Any) -> Any:
    """The geaflow-sql Session behind a SQLAlchemy connection."""
    dbapi_connection = connection.connection.dbapi_connection
    return dbapi_connection.session


def _parts(name: str, schema: str | None) -> tuple[str, ...]:
    return (schema, name) if schema else (name,)


def _names(store: dict[tuple[str, str], Any], session: Any, schema: str | None) -> list[str]:
    instance = (schema or session.catalog.instance).lower()
    return sorted(item.name for key, item in store.items() if key[0] == instance)


def _view_fields(session: Any, parts: tuple[str, ...]) -> list[tuple[str, Any]]:
    """A view's columns and types, by planning ``SELECT *`` over it (nothing runs)."""
    name = ".".join("`" + p.replace("`", "``") + "`" for p in parts)
    return list(session.columns_of(f"SELECT * FROM {name}"))
