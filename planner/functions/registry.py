"""The lookup the binder uses: built-in functions by GeaFlow name or Java class.

Importing the function tables (``aggregate``, ``classes``, ``scalar``,
``table``) fills ``specs``' tables; the lookups read them.
"""

from __future__ import annotations

from . import aggregate, classes, scalar, table  # noqa: F401 - importing fills the tables
from .graph_names import GRAPH_FUNCTIONS, PATH_FUNCTIONS
from .specs import (
    AGGREGATES,
    CLASSES,
    SCALARS,
    TABLES,
    AggregateSpec,
    FunctionKind,
    ScalarSpec,
    TableFunctionSpec,
)


def builtin_scalar(name: str) -> ScalarSpec | None:
    return SCALARS.get(name.lower())


def builtin_aggregate(name: str) -> AggregateSpec | None:
    return AGGREGATES.get(name.lower())


def builtin_table_function(name: str) -> TableFunctionSpec | None:
    return TABLES.get(name.lower())


def resolve_class_name(class_name: str) -> tuple[FunctionKind, str] | None:
    """GeaFlow's Java class name of a built-in -> (kind, our built-in name)."""
    return CLASSES.get(class_name)


def all_builtin_names() -> dict[str, list[str]]:
    return {
        "scalar": sorted(SCALARS),
        "aggregate": sorted(AGGREGATES),
        "table": sorted(TABLES),
        "graph": sorted(GRAPH_FUNCTIONS | PATH_FUNCTIONS),
    }
