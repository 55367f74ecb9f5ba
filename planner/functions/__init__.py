"""Functions known to the planner: built-ins (data tables) and user functions.

``lookup(name)`` finds a scalar, aggregate or table function by its GeaFlow
name.  A function created with ``CREATE FUNCTION f AS 'class'`` resolves either
to a built-in (GeaFlow's own class names map to ours) or to a Python class.
"""

from .registry import (
    builtin_aggregate,
    builtin_scalar,
    builtin_table_function,
    resolve_class_name,
)
from .specs import AggregateSpec, FunctionKind, ScalarSpec, TableFunctionSpec

__all__ = [
    "AggregateSpec",
    "FunctionKind",
    "ScalarSpec",
    "TableFunctionSpec",
    "builtin_aggregate",
    "builtin_scalar",
    "builtin_table_function",
    "resolve_class_name",
]
