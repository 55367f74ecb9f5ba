"""geaflow-sql: GeaFlow's Hybrid DSL (SQL + ISO-GQL) on Apache Spark."""

from __future__ import annotations

from .core.errors import (
    CatalogError,
    ConfigError,
    DataError,
    ExecutionError,
    GeaflowError,
    ParseError,
    TypeMismatchError,
    UnsupportedError,
    ValidationError,
)

__version__ = "0.1.0"


def parse(text: str, source: str = "<script>"):  # type: ignore[no-untyped-def]
    """Parse a script into its syntax tree (``grammar.syntax.Script``)."""
    from grammar import parse as _parse

    return _parse(text, source)


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    # The Session pulls in the runtime and PySpark: import it only when asked
    # for, so that ``geaflow_sql.core`` (which every layer imports, and which
    # loads this package first) loads without the rest of the project.
    if name == "Session":
        from .session import Session

        return Session
    if name in ("QueryResult", "StatementResult"):
        from runtime import results

        return getattr(results, name)
    raise AttributeError(name)


__all__ = [
    "CatalogError",
    "ConfigError",
    "DataError",
    "ExecutionError",
    "GeaflowError",
    "ParseError",
    "QueryResult",
    "Session",
    "StatementResult",
    "TypeMismatchError",
    "UnsupportedError",
    "ValidationError",
    "parse",
]
