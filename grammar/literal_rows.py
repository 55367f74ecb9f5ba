"""A VALUES row of constants, read in one token.

``INSERT ... VALUES`` with tens of thousands of rows of numbers and strings is
what generated scripts and loaders write.  Through the expression grammar
every constant is a chain of a dozen reductions (or, and, comparison, sum,
product, unary, primary, literal), each building a tree node: most of the
time of parsing such a script.  The grammar therefore also reads a
parenthesised row made only of constants (numbers with an optional minus,
'strings', "strings", TRUE, FALSE, NULL, with spaces between) as one
``LITERAL_ROW`` token, and this module splits it into the same ``Literal``
nodes, with the same spans, values and errors, as the expression rules give
(``build_expressions``); a row with anything else in it (an expression, a
parameter, a comment) does not match and goes through the expression
grammar.
"""

from __future__ import annotations

import re

from lark import Token

from . import syntax as s
from .build_expressions import decimal_literal, int_literal, negated, string_literal

# The terminals of common.lark, as alternatives of one constant.
_INT = r"[0-9]+[lL]|[0-9]+(?![0-9.eE])"
_DEC = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+"
_STRING = r"'[^'\\]*+(?:(?:\\.|'')[^'\\]*+)*+'"
_DQ_STRING = r'"[^"\\]*+(?:(?:\\.|"")[^"\\]*+)*+"'
_WORD = r"(?i:true|false|null)(?![A-Za-z0-9_$\u0080-\uffff])"
_SPACE = r"[ \t\f\r\n]*"

_CONSTANT = rf"(?:-{_SPACE})?(?:{_DEC}|{_INT})|{_STRING}|{_DQ_STRING}|{_WORD}"
# The grammar's terminal (query.lark, with the s flag): "(" constant ("," constant)* ")".
ROW_PATTERN = rf"\({_SPACE}(?:{_CONSTANT})(?:{_SPACE},{_SPACE}(?:{_CONSTANT}))*{_SPACE}\)"

_ITEM = re.compile(
    rf"(?P<minus>-{_SPACE})?(?:(?P<dec>{_DEC})|(?P<int>{_INT}))"
    rf"|(?P<str>{_STRING}|{_DQ_STRING})|(?P<word>{_WORD})",
    re.S,
)


def literal_row(token: Token) -> list[s.Expr]:
    """The constants of a ``LITERAL_ROW`` token, as the expression rules build them."""
    text = str(token)
    line = token.line or 1
    column = token.column or 1
    start = token.start_pos or 0
    # Where each line of the token starts (rows may span lines).
    breaks = [i for i, ch in enumerate(text) if ch == "\n"]

    def position(offset: int) -> tuple[int, int]:
        before = 0
        for b in breaks:
            if b >= offset:
                break
            before += 1
        if before == 0:
            return line, column + offset
        return line + before, offset - breaks[before - 1]

    def span(a: int, b: int) -> s.Span:
        l1, c1 = position(a)
        l2, c2 = position(b)
        return s.Span(l1, c1, l2, c2, start + a, start + b)

    out: list[s.Expr] = []
    for m in _ITEM.finditer(text):
        whole = span(m.start(), m.end())
        if m.group("word") is not None:
            word = m.group("word").upper()
            value = {"TRUE": True, "FALSE": False, "NULL": None}[word]
            kind = "null" if value is None else "bool"
            out.append(s.Literal(value, kind, word, span=whole))
        elif m.group("str") is not None:
            out.append(string_literal(m.group("str"), whole))
        else:
            number_at = m.start("dec") if m.group("dec") is not None else m.start("int")
            number = span(number_at, m.end())
            literal = (
                decimal_literal(m.group("dec"), number)
                if m.group("dec") is not None
                else int_literal(m.group("int"), number)
            )
            out.append(negated(literal, whole) if m.group("minus") is not None else literal)
    return out
