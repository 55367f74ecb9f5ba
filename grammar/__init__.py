"""The GeaFlow DSL grammar (Lark, LALR) and its syntax tree."""

from .parser import parse, parse_statement

__all__ = ["parse", "parse_statement"]
