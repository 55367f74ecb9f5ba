"""Bound statements: what the session does for each statement of a script."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grammar import syntax as s

from .logical import LogicalNode


@dataclass(frozen=True)
class BoundStatement:
    syntax: s.Statement = field(compare=False, repr=False)


@dataclass(frozen=True)
class CatalogChange(BoundStatement):
    """CREATE / DROP of a table, view, graph or function."""

    action: str = "create"  # create | drop
    kind: str = "table"  # table | view | graph | function
    record: Any = None
    if_not_exists: bool = False
    replace: bool = False
    name: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionChange(BoundStatement):
    """SET, USE GRAPH, USE INSTANCE."""

    kind: str = "set"
    key: str | None = None
    value: Any = None
    version: int | None = None  # USE GRAPH g VERSION n; VACUUM ... RETAIN n: n


@dataclass(frozen=True)
class PlanStatement(BoundStatement):
    """A statement that runs a plan: INSERT (into a table or graph) or a query."""

    root: LogicalNode | None = None
    kind: str = "query"  # query | insert
    target: str | None = None
    # User scalar functions the plan calls (planner.user_functions.ScalarUdf).
    udfs: tuple[Any, ...] = ()


@dataclass(frozen=True)
class InfoStatement(BoundStatement):
    """SHOW TABLES/GRAPHS/FUNCTIONS, DESCRIBE x, SET (show)."""

    kind: str = "show"
    what: str = ""
    name: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExplainStatement(BoundStatement):
    inner: BoundStatement | None = None
