"""Turns Lark's parse tree into the syntax tree of ``grammar.syntax``.

One method per grammar rule (or alias), in one module per sub-language, as
the grammar files are split (``build_expressions``, ``build_queries``,
``build_gql``, ``build_statements``).  Keyword tokens that the grammar keeps
(``DISTINCT``, ``NOT``, ...) arrive among the children; the helpers of
``tree_helpers`` pick out what each rule needs.  Every node gets the span of
the text it covers.

The parser builds the syntax tree as it goes (``FoldingTree``): each parse
tree node is turned into syntax when its parent is reduced, so Lark's tree
of the whole script never exists at once (it took ~250 bytes a character of
token-dense text; the syntax tree takes a fraction of that).
"""

from __future__ import annotations

import threading
from typing import Any

from lark import GrammarError, Token, Tree, v_args
from lark.exceptions import VisitError
from lark.visitors import Transformer_NonRecursive

from .build_expressions import ExpressionRules
from .build_gql import GqlRules
from .build_queries import QueryRules
from .build_statements import StatementRules
from .tree_helpers import span_of

__all__ = ["FoldingTree", "TreeBuilder", "building", "number_parameter", "span_of"]

_current = threading.local()


@v_args(meta=True)
class TreeBuilder(Transformer_NonRecursive, ExpressionRules, QueryRules, GqlRules, StatementRules):
    """Lark tree -> syntax tree, bottom-up without recursion (deeply nested
    text is limited by ``grammar.depth``, not by Python's stack)."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=False)
        self.text = text
        # Where each ``?`` starts in the text -> its number, counted as the
        # lexer meets them (in text order; nodes are folded in another order).
        self.parameter_numbers: dict[int, int] = {}
        # ``_fold`` as a plain bound method: a public method of a ``v_args``
        # class is a descriptor making a new wrapper (``functools.update_wrapper``)
        # at each lookup, and this one is looked up for every node.
        self.fold = self._fold

    def _fold(self, node: Tree) -> Any:
        """The syntax of one parse tree node whose children are syntax already."""
        rule = _rule_of(type(self), node.data)
        if rule is None:  # (no method, or one without v_args: Lark's own way)
            return self._call_userfunc(node, node.children)
        function, wrapper = rule
        try:
            return wrapper(function.__get__(self), node.data, node.children, node.meta)
        except GrammarError:
            raise
        except Exception as err:  # as Lark's _call_userfunc reports a rule's error
            raise VisitError(node.data, node, err) from err


# (builder class, rule name) -> (the rule's function, its ``v_args`` wrapper),
# or None when the class has no such method made by ``v_args``: read from the
# classes once, not through the descriptor Lark's wrapper is, which makes a
# new wrapper per lookup.
_RULES: dict[tuple[type, str], tuple[Any, Any] | None] = {}


def _rule_of(cls: type, name: str) -> tuple[Any, Any] | None:
    key = (cls, name)
    if key not in _RULES:
        found = None
        for klass in cls.__mro__:
            if name in klass.__dict__:
                value = klass.__dict__[name]
                wrapper = getattr(value, "visit_wrapper", None)
                function = getattr(value, "base_func", None)
                if wrapper is not None and callable(getattr(function, "__get__", None)):
                    found = (function, wrapper)
                break
        _RULES[key] = found
    return _RULES[key]


class FoldingTree(Tree):
    """The parser's tree class: a node turns its children into syntax as it is
    made, while the thread parses under ``building`` (else a plain tree).

    Lark sets a node's position (its meta) right after making it, from its
    children before they are filtered; so a child is complete when its parent
    is made, and is folded then.  A node the parser inlines (a ``?rule`` with
    one child) goes up unfolded and is folded by the node that takes it.
    """

    def __init__(self, data: str, children: list[Any], meta: Any = None) -> None:
        builder: TreeBuilder | None = getattr(_current, "builder", None)
        if builder is not None:
            if all(type(c) is FoldingTree or isinstance(c, Token) for c in children):
                # Perhaps the parser's own list of the rule's children, which
                # Lark reads again to place this node: fold into a copy.
                children = [builder.fold(c) if type(c) is FoldingTree else c for c in children]
            elif data.startswith("_"):
                # A list Lark built by splicing the folded items so far (an
                # inlined repetition, made again for each item with the same
                # list): fold the new items at its end, in place.
                for k in range(len(children) - 1, -1, -1):
                    child = children[k]
                    if type(child) is FoldingTree:
                        children[k] = builder.fold(child)
                    elif not isinstance(child, Token):
                        break
            else:
                for k, child in enumerate(children):
                    if type(child) is FoldingTree:
                        children[k] = builder.fold(child)
        super().__init__(data, children, meta)


def number_parameter(token: Token) -> Token:
    """Lexer callback for ``?``: numbers the parameters in the order written."""
    builder: TreeBuilder | None = getattr(_current, "builder", None)
    if builder is not None:
        numbers = builder.parameter_numbers
        numbers[token.start_pos or 0] = len(numbers)
    return token


class building:  # noqa: N801 - used as ``with building(builder):``
    """Within the block, parse trees made on this thread fold into ``builder``'s syntax."""

    def __init__(self, builder: TreeBuilder) -> None:
        self.builder = builder

    def __enter__(self) -> TreeBuilder:
        self.outer = getattr(_current, "builder", None)
        _current.builder = self.builder
        return self.builder

    def __exit__(self, *exc: object) -> None:
        _current.builder = self.outer
