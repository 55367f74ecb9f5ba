"""Operator registry: logical node class -> function building its DataFrame."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

OperatorFn = Callable[[Any, Any, list[Any]], Any]
_OPERATORS: dict[type, OperatorFn] = {}


def operator(node_type: type) -> Callable[[OperatorFn], OperatorFn]:
    def register(fn: OperatorFn) -> OperatorFn:
        _OPERATORS[node_type] = fn
        return fn

    return register


def operator_for(node: Any) -> OperatorFn | None:
    _load()
    for cls in type(node).__mro__:
        if cls in _OPERATORS:
            return _OPERATORS[cls]
    return None


def _load() -> None:
    from . import graph, relational, sinks  # noqa: F401
