"""The PEP 249 exception hierarchy, and the translation from geaflow-sql errors.

Every DB-API error keeps where in the statement text it happened (``line``,
``column``, ``source``) and the geaflow-sql error it came from, so a tool can
point at the text; ``str(err)`` is the full report with the line and a caret,
which is what a notebook or a traceback shows.

    Warning
    Error
     +-- InterfaceError
     +-- DatabaseError
          +-- DataError
          +-- OperationalError
          +-- IntegrityError
          +-- InternalError
          +-- ProgrammingError
          +-- NotSupportedError
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import errors as gerr


class Warning(Exception):  # noqa: A001 - the name PEP 249 requires
    """Important warnings (PEP 249); geaflow-sql raises none today."""


class Error(Exception):
    """Base of every DB-API error; carries the statement position when known."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        source: str | None = None,
        report: str | None = None,
        geaflow_error: gerr.GeaflowError | None = None,
    ) -> None:
        super().__init__(report or message)
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        self.report = report or message
        self.geaflow_error = geaflow_error

    def format(self) -> str:
        """``source:line:col: kind: message`` with the offending line and a caret."""
        return self.report


class InterfaceError(Error):
    """The driver itself was misused (PEP 249)."""


class DatabaseError(Error):
    """An error of the engine (PEP 249)."""


class DataError(DatabaseError):
    """Input data could not be read as declared (a malformed row of a file)."""


class OperationalError(DatabaseError):
    """The statement was valid but failed while running, or was cancelled."""


class IntegrityError(DatabaseError):
    """Relational integrity violated (PEP 249); GeaFlow has no constraints to violate."""


class InternalError(DatabaseError):
    """A bug in geaflow-sql: please report it."""


class ProgrammingError(DatabaseError):
    """Bad statement: syntax, unknown names, wrong types, wrong parameters, closed objects."""


class NotSupportedError(DatabaseError):
    """Valid GeaFlow DSL or DB-API use that geaflow-sql does not support."""


# Most specific first: CatalogError is a ValidationError, DataError an ExecutionError.
_MAPPING: tuple[tuple[type[gerr.GeaflowError], type[Error]], ...] = (
    (gerr.ParseError, ProgrammingError),
    (gerr.UnsupportedError, NotSupportedError),
    (gerr.DataError, DataError),
    (gerr.ExecutionError, OperationalError),
    (gerr.ValidationError, ProgrammingError),
    (gerr.ConfigError, ProgrammingError),
)


def translate(err: BaseException, *, text: str | None = None, source: str | None = None) -> Error:
    """The DB-API error for any exception raised while running a statement."""
    if isinstance(err, Error):
        return err
    if isinstance(err, gerr.GeaflowError):
        err.with_context(text=text, source=source)
        cls = next((dbapi for g, dbapi in _MAPPING if isinstance(err, g)), DatabaseError)
        return cls(
            err.message,
            line=err.line,
            column=err.column,
            source=err.source,
            report=err.format(),
            geaflow_error=err,
        )
    return InternalError(
        f"internal error: {type(err).__name__}: {err} "
        "(a bug in geaflow-sql; set GEAFLOW_SQL_DEBUG=1 to see the cause)"
    )


def programming_error(
    message: str, node: Any = None, text: str | None = None, source: str | None = None
) -> Error:
    """A ProgrammingError pointing at ``node``'s span in ``text`` when given."""
    err = gerr.ValidationError(message, span=getattr(node, "span", None), text=text, source=source)
    return translate(err)
