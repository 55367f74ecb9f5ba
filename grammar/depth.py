"""How deeply a statement may nest, checked on its syntax tree without recursion.

Everything after parsing (binding, rules, SQL generation for Spark) walks
expressions and queries recursively, so a statement is limited in depth, not
in size: chains of AND, OR, ``||`` and UNION are built as balanced trees (a
chain of thousands of terms nests a dozen deep) and a run of NOTs as at most
two, so what reaches this limit is real nesting (parentheses, function calls,
CASE in CASE, subqueries, joins) or a chain of ``+ - * / %``, which is kept in the
order written.  Past the limit the statement is a ``ParseError`` pointing at
the construct where it goes past, not a crash.
"""

from __future__ import annotations

import sys
from typing import Any

from geaflow_sql.core.errors import ParseError

from . import syntax as s

# Levels of syntax-tree nesting one statement may have.  Spark's own SQL
# parser, which reads the expressions geaflow-sql hands it, gives up between
# 250 and 300 nested calls or operators (FAILED_TO_PARSE_TOO_COMPLEX).
MAX_DEPTH = 200
# The interpreter's frame limit the stages after the parser need at that
# depth (about six frames a level, SQL generation the most; Python's default
# is 1,000), with room to spare.
RECURSION_LIMIT = 10_000


def ensure_recursion_limit() -> None:
    """Raise the interpreter's frame limit to what MAX_DEPTH needs (never lower it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def check_depth(statement: s.Node, limit: int = MAX_DEPTH) -> None:
    """Raise ParseError at the first node found nested deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(statement, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, s.Node):
            depth += 1
            if depth > limit:
                raise ParseError(
                    f"this is nested more than {limit} levels deep (parentheses, calls, "
                    "CASE, subqueries, joins or a chain of arithmetic); split the statement",
                    span=item.span,
                )
            stack.extend((getattr(item, name), depth) for name in item.__dataclass_fields__)
        elif isinstance(item, tuple):
            stack.extend((x, depth) for x in item)
