"""``parse(text)``: script text -> syntax tree, or a ``ParseError`` that points at the text."""

from __future__ import annotations

import functools
import gc

from lark import Token
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from geaflow_sql.core.errors import GeaflowError, ParseError

from . import syntax as s
from .builder import TreeBuilder, building
from .depth import check_depth, ensure_recursion_limit
from .loader import parser

# How terminals read in an error message.
_FRIENDLY = {
    "IDENT": "a name",
    "QUOTED_IDENT": "a `quoted name`",
    "TILDE_IDENT": "~field",
    "INTEGER": "an integer",
    "DECIMAL": "a number",
    "STRING": "a 'string'",
    "DQ_STRING": 'a "string"',
    "PARAM_QMARK": "?",
    "PARAM_NAMED": ":parameter",
    "EDGE_DASH": "-",
    "LITERAL_ROW": "'('",  # a row of constants read whole (literal_rows.py)
    "$END": "end of input",
}
# Shown first when present: what a user most likely forgot.
_PREFERRED = ("RPAR", "SEMICOLON", "COMMA", "$END", "IDENT", "RSQB", "RBRACE")


@functools.lru_cache(maxsize=1)
def _terminal_text() -> dict[str, str]:
    out: dict[str, str] = {}
    for term in parser().terminals:
        if term.name in _FRIENDLY:
            out[term.name] = _FRIENDLY[term.name]
        elif term.pattern.type == "str":
            value = term.pattern.value
            out[term.name] = value.upper() if value.isalpha() else f"'{value}'"
        else:
            out[term.name] = term.name.lower()
    out.update({k: v for k, v in _FRIENDLY.items() if k not in out})
    return out


@functools.lru_cache(maxsize=1)
def _nonreserved_terminals() -> frozenset[str]:
    """Keywords that may also be names: an error lists them as 'a name'."""
    out: set[str] = set()
    for rule in parser().rules:
        if rule.origin.name == "nonreserved":
            out.update(sym.name for sym in rule.expansion)
    return frozenset(out)


# Terminals that can start an expression: when all of these are expected the
# message says "an expression" instead of listing them.
_EXPRESSION_START = {"IDENT", "INTEGER", "DECIMAL", "STRING", "CASE", "CAST", "NULL", "TRUE"}
_EXPRESSION_TERMINALS = _EXPRESSION_START | {
    "QUOTED_IDENT",
    "DQ_STRING",
    "FALSE",
    "LPAR",
    "MINUS",
    "PLUS",
    "EXISTS",
    "NOT",
    "PARAM_QMARK",
    "PARAM_NAMED",
    "IF",
    "LEFT",
    "RIGHT",
    "EDGE_DASH",
}


def describe_expected(expected: set[str] | frozenset[str]) -> tuple[str, ...]:
    names = _terminal_text()
    expected = set(expected)
    prefix: list[str] = []
    if expected >= _EXPRESSION_START:
        expected -= _EXPRESSION_TERMINALS | _nonreserved_terminals()
        prefix.append("an expression")
    elif "IDENT" in expected:
        expected -= _nonreserved_terminals() | {"QUOTED_IDENT"}
    ordered = [e for e in _PREFERRED if e in expected]
    ordered += sorted(e for e in expected if e not in _PREFERRED)
    seen: list[str] = list(prefix)
    for e in ordered:
        text = names.get(e, e)
        if text not in seen:
            seen.append(text)
    return tuple(seen)


def _token_text(tok: Token) -> str:
    if tok.type == "$END":
        return "end of input"
    return repr(str(tok))


def _span_at(text: str, line: int, column: int, length: int = 1) -> s.Span:
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: max(line - 1, 0)]) + max(column - 1, 0)
    return s.Span(line, column, line, column + length, start, start + length)


def _end_span(text: str) -> s.Span:
    lines = text.splitlines() or [""]
    # Point just after the last non-blank character.
    for idx in range(len(lines) - 1, -1, -1):
        if lines[idx].strip():
            col = len(lines[idx].rstrip()) + 1
            return _span_at(text, idx + 1, col)
    return _span_at(text, 1, 1)


def _to_parse_error(err: UnexpectedInput, text: str, source: str) -> ParseError:
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = describe_expected(err.expected)
        if tok.type == "$END":
            span = _end_span(text)
            message = "unexpected end of input"
        else:
            span = s.Span(
                tok.line or 1,
                tok.column or 1,
                tok.end_line or tok.line or 1,
                tok.end_column or (tok.column or 1) + 1,
                tok.start_pos or 0,
                tok.end_pos or 0,
            )
            message = f"unexpected {_token_text(tok)}"
    elif isinstance(err, UnexpectedCharacters):
        expected = describe_expected(err.allowed or set())
        pos = err.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        span = _span_at(text, err.line, err.column)
        if ch in "'\"`":
            message = f"unterminated quoted text starting with {ch}"
        else:
            message = f"unexpected character {ch!r}"
    elif isinstance(err, UnexpectedEOF):
        expected = describe_expected(set(err.expected))
        span = _end_span(text)
        message = "unexpected end of input"
    else:  # pragma: no cover - defensive
        expected = ()
        span = _span_at(text, getattr(err, "line", 1) or 1, getattr(err, "column", 1) or 1)
        message = "invalid syntax"
    if expected:
        shown = ", ".join(expected[:8])
        more = ", ..." if len(expected) > 8 else ""
        message += f"; expected {shown}{more}" if len(expected) > 1 else f"; expected {shown}"
    return ParseError(message, expected=expected, span=span, text=text, source=source)


def parse(text: str, source: str = "<script>") -> s.Script:
    """Parse a script of GeaFlow DSL statements.

    Raises ``ParseError`` (with ``.line``, ``.column`` and a caret rendering via
    ``.format()``) for any text that is not valid; never another exception.
    """
    if not isinstance(text, str):
        raise ParseError("script text must be a string", text="", source=source)
    ensure_recursion_limit()
    # Parsing allocates many small acyclic objects; the cycle collector's full
    # passes over them made the time of a long script grow with its square.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse(text, source)
    finally:
        if collecting:
            gc.enable()


def _parse(text: str, source: str) -> s.Script:
    builder = TreeBuilder(text)
    try:
        with building(builder):
            root = parser().parse(text)
            statements: list[s.Statement] = builder.fold(root)
    except UnexpectedInput as err:
        raise _to_parse_error(err, text, source) from None
    except VisitError as err:
        inner = err.orig_exc
        if isinstance(inner, GeaflowError):
            inner.with_context(text=text, source=source)
            if isinstance(inner, ParseError):
                raise inner from None
            raise ParseError(inner.message, span=inner.span, text=text, source=source) from None
        if isinstance(inner, RecursionError):
            raise _too_deep(text, source) from None
        raise ParseError(
            f"invalid syntax ({inner})", span=_span_at(text, 1, 1), text=text, source=source
        ) from None
    except RecursionError:
        raise _too_deep(text, source) from None
    except LarkError as err:  # pragma: no cover - defensive
        raise ParseError(f"invalid syntax: {err}", text=text, source=source) from None
    for statement in statements:
        try:
            check_depth(statement)
        except ParseError as err:
            err.with_context(text=text, source=source)
            raise
    return s.Script(tuple(statements), text=text, source=source, span=_span_at(text, 1, 1))


def _too_deep(text: str, source: str) -> ParseError:
    return ParseError(
        "statement is nested too deeply", span=_span_at(text, 1, 1), text=text, source=source
    )


def parse_statement(text: str, source: str = "<statement>") -> s.Statement:
    """Parse text holding exactly one statement."""
    script = parse(text, source)
    if len(script.statements) != 1:
        raise ParseError(
            f"expected one statement, found {len(script.statements)}",
            span=_span_at(text, 1, 1),
            text=text,
            source=source,
        )
    return script.statements[0]
