"""Helpers of the tree builder: spans, and picking what a rule needs from its children."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Token
from lark.tree import Meta

from . import syntax as s


def span_of(meta: Meta | Token | None) -> s.Span:
    if meta is None or getattr(meta, "empty", False):
        return s.NO_SPAN
    try:
        return s.Span(
            meta.line,  # type: ignore[arg-type]
            meta.column,  # type: ignore[arg-type]
            meta.end_line,  # type: ignore[arg-type]
            meta.end_column,  # type: ignore[arg-type]
            meta.start_pos,  # type: ignore[arg-type]
            meta.end_pos,  # type: ignore[arg-type]
        )
    except AttributeError:
        return s.NO_SPAN


def tokens_of(children: list[Any]) -> set[str]:
    return {c.type for c in children if isinstance(c, Token)}


def values_of(children: list[Any]) -> list[Any]:
    """Children that are not keyword tokens."""
    return [c for c in children if not isinstance(c, Token)]


class Tagged(tuple):  # noqa: SLOT000 - a tiny marker type for optional clauses
    """``(tag, value)`` produced by optional clauses so the parent can tell them apart."""

    __slots__ = ()

    @property
    def tag(self) -> str:
        return self[0]

    @property
    def value(self) -> Any:
        return self[1]


def tagged(tag: str, value: Any) -> Tagged:
    return Tagged((tag, value))


def by_tag(children: list[Any]) -> dict[str, Any]:
    return {c.tag: c.value for c in children if isinstance(c, Tagged)}


class Alias(tuple):  # noqa: SLOT000
    """``(name, column_aliases)`` from an ``alias`` rule."""

    __slots__ = ()


def balanced(items: list[Any], join: Callable[[Any, Any, s.Span], Any]) -> Any:
    """``items`` joined by an associative operation as a tree of depth log2(n),
    built pairwise (a chain of thousands of terms nests a dozen deep);
    ``join(left, right, span)`` makes one node, ``span`` covering both."""
    level = list(items)
    while len(level) > 1:
        paired = [
            join(level[k], level[k + 1], level[k].span.merge(level[k + 1].span))
            for k in range(0, len(level) - 1, 2)
        ]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]
