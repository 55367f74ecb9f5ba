"""Loads the Lark grammar once per process.

The grammar is split by sub-language into ``*.lark`` files beside this module;
they are concatenated in a fixed order (Lark's ``%import`` would namespace the
rules, and the sub-languages refer to each other: expressions hold subqueries,
queries hold expressions).  The LALR tables are cached on disk by Lark itself,
keyed by the grammar text, so a CLI start does not rebuild them.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Any

from lark import Lark
from lark.parse_tree_builder import PropagatePositions

from geaflow_sql.core.cache import cache_dir

from .builder import FoldingTree, number_parameter

GRAMMAR_DIR = Path(__file__).resolve().parent
GRAMMAR_FILES = (
    "script.lark",
    "ddl.lark",
    "dml.lark",
    "query.lark",
    "gql.lark",
    "expressions.lark",
    "common.lark",
)


def grammar_text() -> str:
    """The full grammar, as the concatenation of the sub-language files."""
    return "\n".join((GRAMMAR_DIR / name).read_text(encoding="utf-8") for name in GRAMMAR_FILES)


def _cache_path() -> str | None:
    folder = cache_dir()
    return None if folder is None else os.path.join(folder, "grammar.lark.cache")


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The script parser (LALR, contextual lexer, positions on every node,
    nodes folded into syntax as they are made: ``builder.FoldingTree``)."""
    return _inlining_fast(lark_parser())


def lark_parser() -> Lark:
    """A new Lark parser of the grammar, placing every node as Lark does
    (``parser`` is this one with ``_PassSingleChild``)."""
    # Lark logs shift/reduce resolutions at DEBUG; keep them out of user output.
    logging.getLogger("lark").setLevel(logging.WARNING)
    text = grammar_text()
    options: dict[str, Any] = {
        "parser": "lalr",
        "lexer": "contextual",
        "propagate_positions": True,
        "maybe_placeholders": False,
        "tree_class": FoldingTree,
        "lexer_callbacks": {"PARAM_QMARK": number_parameter},
    }
    path = _cache_path()
    if path is None:  # no cache directory of our own
        return Lark(text, **options)
    try:
        return Lark(text, cache=path, **options)
    except OSError:  # no writable cache: build the tables in memory
        return Lark(text, **options)


class _PassSingleChild:
    """A ``?rule``'s reduction that hands its one child up as it is.

    Lark places every reduced node (``PropagatePositions``), also the child a
    ``?rule`` hands up unchanged, which already has its place: the wrapper
    sets it again to the same values.  An expression's precedence levels are
    such rules, so that was several idle calls per operand.  Here a
    reduction whose one child comes back as the result returns it; any
    other goes through Lark's own placing."""

    __slots__ = ("build", "place")

    def __init__(self, place: PropagatePositions) -> None:
        self.place = place
        self.build = place.node_builder

    def __call__(self, children: list[Any]) -> Any:
        if len(children) != 1:
            return self.place(children)
        made = self.build(children)
        if made is children[0]:
            return made
        # (one child filtered out, say: place the node Lark made, as Lark does)
        return PropagatePositions(lambda _: made, self.place.node_filter)(children)


def _inlining_fast(lark: Lark) -> Lark:
    """``lark`` with its ``?rule`` reductions as ``_PassSingleChild``.  (The
    parser reads the callbacks from this dict; left as they are when a Lark
    release keeps them elsewhere.)"""
    callbacks = getattr(lark, "_callbacks", None)
    if not isinstance(callbacks, dict):
        return lark
    for rule, callback in list(callbacks.items()):
        options = getattr(rule, "options", None)
        inlined = options is not None and options.expand1 and not getattr(rule, "alias", None)
        if inlined and type(callback) is PropagatePositions:
            callbacks[rule] = _PassSingleChild(callback)
    return lark
