"""``type='jdbc'``: a table in a database, with GeaFlow's option names.

    geaflow.dsl.jdbc.url / driver / username / password / table.name
    geaflow.dsl.jdbc.partition.num / partition.column / partition.lowerbound / partition.upperbound

Runs on Spark's JDBC source; drivers installed by Debian packages (PostgreSQL,
H2, SQLite) are put on Spark's classpath automatically.  As in GeaFlow, a row's
columns are taken by position (the database table's first columns, whatever
their names); rows are written by name (``INSERT INTO t (declared names)``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import ConfigError, ExecutionError
from runtime.context import RuntimeContext

from .base import Connector, ReadRequest, WriteRequest
from .file import option
from .spark_source import named_columns

PREFIX = "geaflow.dsl.jdbc."


def jdbc_options(table: TableInfo) -> dict[str, str]:
    opts = dict(table.options)
    url = option(opts, PREFIX + "url")
    name = option(opts, PREFIX + "table.name")
    if not url or not name:
        raise ConfigError(f"jdbc table {table.name!r} needs {PREFIX}url and {PREFIX}table.name")
    out = {"url": str(url), "dbtable": str(name)}
    for ours, spark in (
        ("driver", "driver"),
        ("username", "user"),
        ("password", "password"),
    ):
        value = option(opts, PREFIX + ours)
        if value is not None:
            out[spark] = str(value)
    column = option(opts, PREFIX + "partition.column")
    if column:
        out["partitionColumn"] = str(column)
        out["numPartitions"] = str(option(opts, PREFIX + "partition.num", 1))
        out["lowerBound"] = str(option(opts, PREFIX + "partition.lowerbound", 0))
        out["upperBound"] = str(option(opts, PREFIX + "partition.upperbound", 1))
    return out


def spark_options(spark: Any, table: TableInfo) -> dict[str, str]:
    """``jdbc_options`` with the URL by which this session's driver and
    executors reach the database (an in-memory H2 database served by the
    driver on a cluster: ``spark_adapter.shared_memory_database``)."""
    from runtime.spark_adapter import shared_memory_database

    options = jdbc_options(table)
    options["url"] = shared_memory_database(spark, options["url"])
    return options


def failure(verb: str, table: TableInfo, detail: str) -> str:
    """The message of a failed read or write: the table, its database table
    and the URL as the user wrote it (not the one Spark was given, e.g. an
    in-memory database served by the driver), with any password hidden."""
    import re

    options = jdbc_options(table)
    url = re.sub(r"(?i)(password=)[^;&]*", r"\1***", options["url"])
    return f"cannot {verb} jdbc table {table.name!r} ({options['dbtable']} at {url}): {detail}"


def columns_by_position(df: Any, table: TableInfo, projection: tuple[int, ...]) -> Any:
    """The table's columns as the database table's first columns, in order,
    whatever their names: GeaFlow's JDBC source reads ``SELECT *`` and takes
    column i of a row as the table's column i (extra columns are not read)."""
    from pyspark.sql import functions as F

    from geaflow_sql.core import types as T

    if len(df.columns) < len(table.columns):
        raise ConfigError(
            f"jdbc table {table.name!r} declares {len(table.columns)} columns but "
            f"{option(dict(table.options), PREFIX + 'table.name')} has {len(df.columns)} "
            f"({', '.join(df.columns)}); columns are matched by position, as in GeaFlow"
        )
    return df.select(
        *[
            F.col(f"`{df.columns[i]}`").cast(T.spark_sql_type(table.columns[i].type)).alias(f"c{n}")
            for n, i in enumerate(projection)
        ]
    )


class JdbcConnector(Connector):
    name = "jdbc"

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        jdbc_options(table)

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        options = spark_options(ctx.spark, req.table)
        with_driver(ctx.spark, req.table)
        try:
            # Spark asks the database for the table's schema here, so a wrong
            # URL, login or table name fails now: say which table it was.
            df = ctx.spark.read.format("jdbc").options(**options).load()
        except Exception as err:
            from runtime.errors import translate

            detail = missing_driver(err, options) or translate(err).message
            raise ExecutionError(failure("read", req.table, detail)) from None
        return columns_by_position(df, req.table, req.projection)

    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        options = spark_options(ctx.spark, req.table)
        with_driver(ctx.spark, req.table)
        out = named_columns(df, req.table)
        try:
            out.write.format("jdbc").options(**options).mode("append").save()
        except Exception as err:
            hint = missing_driver(err, options)
            if hint is None:
                raise
            raise ExecutionError(failure("write", req.table, hint)) from None
        return -1


def with_driver(spark: Any, table: TableInfo) -> None:
    """The table's JDBC driver jar on Spark's class path and the executors':
    the jar ``geaflow.dsl.jdbc.driver.jar`` names, or the one this machine's
    packages installed for the driver class (Debian's libh2-java, ...)."""
    from runtime.spark_adapter import add_jdbc_driver, driver_jar

    opts = dict(table.options)
    named = option(opts, PREFIX + "driver.jar")
    driver = option(opts, PREFIX + "driver")
    jar = driver_jar(str(driver) if driver else None, str(named) if named else None)
    if jar is not None:
        add_jdbc_driver(spark, jar)


def missing_driver(err: Exception, options: dict[str, str]) -> str | None:
    """What to do when Spark could not load the JDBC driver class (None for
    any other error)."""
    text = str(err)
    driver = options.get("driver")
    if "ClassNotFoundException" not in text and "No suitable driver" not in text:
        return None
    what = f"driver class {driver}" if driver else f"a driver for {options['url']}"
    return (
        f"Spark cannot load the JDBC {what}: name the jar that holds it with "
        f"{PREFIX}driver.jar='/path/to/driver.jar' in the table's WITH, or start Spark "
        "with spark.jars=/path/to/driver.jar (GEAFLOW_SQL_JARS when geaflow-sql starts it)"
    )


def close_memory_databases(spark: Any, tables: list[TableInfo]) -> list[str]:
    """Shut the in-memory H2 databases these jdbc tables point at.

    An in-memory H2 database with ``DB_CLOSE_DELAY=-1`` lives as long as the
    JVM, and the JVM is shared by every job of a session: a harness that wants
    each job to start from empty databases (as a fresh JVM would) closes them
    between jobs.  Returns the URLs that were shut.
    """
    from runtime.spark_adapter import shared_memory_database

    closed: list[str] = []
    for table in tables:
        if table.connector != "jdbc":
            continue
        try:
            options = jdbc_options(table)
        except ConfigError:
            continue
        url = options["url"]
        if not url.lower().startswith("jdbc:h2:mem:") or url in closed:
            continue
        # H2 runs the read's session statement on the connection it opens
        # for the rows: SHUTDOWN closes the database, and the query then
        # fails on the closed connection, which is expected.  Only the
        # DataFrame API, so this works over Spark Connect too; Spark
        # registers the driver class as for any jdbc read.
        reader = spark.read.format("jdbc").options(
            url=shared_memory_database(spark, url),
            query="SELECT 1",
            sessionInitStatement="SHUTDOWN",
            driver=options.get("driver", "org.h2.Driver"),
        )
        for key in ("user", "password"):
            if key in options:
                reader = reader.option(key, options[key])
        # The closed connection's error, or one of a database never opened.
        with contextlib.suppress(Exception):
            reader.load().collect()
        closed.append(url)
    return closed
