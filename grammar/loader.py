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
