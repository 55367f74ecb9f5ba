"""Binding graph queries (MATCH ... RETURN, CALL ... YIELD) and graph label scans.

Filled in by the graph work (issue: Graphs on Spark); until then graph queries
report that they are not supported.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.errors import UnsupportedError
from grammar import syntax as s


class GraphQueryBinder:
    def __init__(self, qb: Any) -> None:
        self.qb = qb

    def bind(self, q: s.GraphQuery) -> Any:
        raise self.qb.error(UnsupportedError("graph queries (MATCH/CALL) are not supported yet"), q)


def graph_label_scan(qb: Any, parts: tuple[str, ...]) -> Any:
    """A vertex or edge label of the current graph used as a table, else None."""
    return None
