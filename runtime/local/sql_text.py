"""Quoting for the DuckDB SQL text the local engine writes."""

from __future__ import annotations


def q(name: str) -> str:
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def string_literal(value: str) -> str:
    """A quoted string literal."""
    return "'" + value.replace("'", "''") + "'"
