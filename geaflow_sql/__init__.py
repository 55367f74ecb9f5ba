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
    # Session pulls in PySpark; import it only when asked for.
    if name == "Session":
        from .session import Session

        return Session
    if name == "QueryResult":
        from .results import QueryResult

        return QueryResult
    raise AttributeError(name)


__all__ = [
    "CatalogError",
    "ConfigError",
    "DataError",
    "ExecutionError",
    "GeaflowError",
    "ParseError",
    "Session",
    "TypeMismatchError",
    "UnsupportedError",
    "ValidationError",
    "parse",
]
