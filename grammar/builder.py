"""Turns Lark's parse tree into the syntax tree of ``grammar.syntax``.

One method per grammar rule (or alias), in one module per sub-language, as
the grammar files are split (``build_expressions``, ``build_queries``,
``build_gql``, ``build_statements``).  Keyword tokens that the grammar keeps
(``DISTINCT``, ``NOT``, ...) arrive among the children; the helpers of
``tree_helpers`` pick out what each rule needs.  Every node gets the span of
the text it covers.
"""

from __future__ import annotations

from lark import v_args
from lark.visitors import Transformer_NonRecursive

from .build_expressions import ExpressionRules
from .build_gql import GqlRules
from .build_queries import QueryRules
from .build_statements import StatementRules
from .tree_helpers import span_of

__all__ = ["TreeBuilder", "span_of"]


@v_args(meta=True)
class TreeBuilder(Transformer_NonRecursive, ExpressionRules, QueryRules, GqlRules, StatementRules):
    """Lark tree -> syntax tree, bottom-up without recursion (deeply nested
    text is limited by ``grammar.depth``, not by Python's stack)."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=False)
        self.text = text
        self._param_index = 0
