"""geaflow-sql as a Python DB-API 2.0 (PEP 249) driver.

    from geaflow_sql import dbapi

    with dbapi.connect(init="tables.gql") as conn:       # a script defining tables
        cur = conn.cursor()
        cur.execute("SELECT name FROM users WHERE age > ?", [20])
        rows = cur.fetchall()

SQL and GQL (``MATCH ... RETURN``) run through the same cursor.  Parameters
use ``?`` (a sequence) or ``:name`` (a mapping) and are bound as typed values,
never pasted into the statement.  ``cursor.fetch_arrow_table()`` returns the
rows as Arrow without copying.
"""

from __future__ import annotations

from .connection import Connection, connect
from .cursor import Cursor
from .exceptions import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
)
from .types import (
    BINARY,
    BOOLEAN,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)

#: PEP 249 globals.
apilevel = "2.0"
#: Threads may share the module, not connections: each connection is one session.
threadsafety = 1
#: ``?`` placeholders; ``:name`` (named style) works as well.
paramstyle = "qmark"

__all__ = [
    "BINARY",
    "BOOLEAN",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]
