"""Errors a user can cause, each able to point at the text that caused it.

Every error carries an optional source span.  ``format()`` renders the message
the way compilers do: ``file:line:col: message`` followed by the offending line
and a caret under the column.  Spark and Java errors are translated into these
at the runtime boundary (see ``runtime.errors``), so no caller has to show a
raw traceback.
"""

from __future__ import annotations

from typing import Any


class GeaflowError(Exception):
    """Base of every error geaflow-sql reports to a user."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        span: Any = None,
        text: str | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.text = text
        self.source = source

    # Positions -------------------------------------------------------------
    @property
    def line(self) -> int | None:
        return self.span.line if self.span is not None and self.span.line else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span is not None and self.span.line else None

    def with_context(self, *, text: str | None = None, source: str | None = None) -> GeaflowError:
        """Attach the script text/name, keeping whatever was already known."""
        if self.text is None and text is not None:
            self.text = text
        if self.source is None and source is not None:
            self.source = source
        return self

    def at(self, span: Any) -> GeaflowError:
        """Attach a span if the error has none yet."""
        if self.span is None or not getattr(self.span, "line", 0):
            self.span = span
        return self

    # Rendering -------------------------------------------------------------
    def location(self) -> str:
        parts = [self.source or "<script>"]
        if self.line is not None:
            parts.append(str(self.line))
            parts.append(str(self.column))
        return ":".join(parts)

    def source_line(self) -> str | None:
        if self.text is None or self.line is None:
            return None
        lines = self.text.splitlines()
        if 0 < self.line <= len(lines):
            return lines[self.line - 1]
        return None

    def caret(self) -> str | None:
        line = self.source_line()
        if line is None or self.column is None:
            return None
        col = max(self.column, 1)
        width = 1
        if self.span is not None and self.span.end_line == self.span.line:
            width = max(1, self.span.end_column - self.span.column)
        width = min(width, max(1, len(line) - col + 1))
        # Keep tabs so the caret lines up under the text in a terminal.
        prefix = "".join("\t" if ch == "\t" else " " for ch in line[: col - 1])
        return prefix + "^" * width

    def format(self) -> str:
        head = f"{self.location()}: {self.kind}: {self.message}"
        line = self.source_line()
        if line is None:
            return head
        return f"{head}\n    {line}\n    {self.caret()}"

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.message} (line {self.line}, column {self.column})"
        return self.message


class ParseError(GeaflowError):
    """The text is not valid GeaFlow DSL."""

    kind = "syntax error"

    def __init__(self, message: str, *, expected: tuple[str, ...] = (), **kw: Any) -> None:
        super().__init__(message, **kw)
        self.expected = expected


class ValidationError(GeaflowError):
    """The text parses but does not make sense: unknown names, wrong types, arity."""

    kind = "error"


class CatalogError(ValidationError):
    """A table, view, graph or function is unknown or already exists."""


class TypeMismatchError(ValidationError):
    """An expression's operands have types that cannot be combined."""


class UnsupportedError(GeaflowError):
    """Valid GeaFlow DSL that this engine does not run (yet)."""

    kind = "unsupported"


class ConfigError(GeaflowError):
    """A configuration key has a value that cannot be used."""

    kind = "configuration error"


class ExecutionError(GeaflowError):
    """The statement was valid but failed while running (bad data, I/O, Spark)."""

    kind = "execution error"


class DataError(ExecutionError):
    """A row of input data could not be read as the table declares."""

    kind = "data error"


class CancelledError(ExecutionError):
    """The statement was cancelled by the user."""

    kind = "cancelled"
