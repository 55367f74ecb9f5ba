"""The names of the functions of graph values, bound by ``planner.binder.graph_functions``.

They take vertices, edges or paths, so they are not in the scalar tables;
they are listed here for what offers function names (SHOW FUNCTIONS, the
shell's completion) as well as for the binder.
"""

from __future__ import annotations

# Functions of vertex and edge values.
GRAPH_FUNCTIONS = frozenset(
    {
        "label",
        "id",
        "srcid",
        "source_id",
        "targetid",
        "target_id",
        "direction",
        "ts",
        "is_source_of",
        "is_not_source_of",
        "is_destination_of",
        "is_not_destination_of",
        "is_labeled",
        "is_not_labeled",
        "property_exists",
    }
)

# Functions of a path value (``p = (a)-...``); ``length`` of anything else is
# the string function.
PATH_FUNCTIONS = frozenset({"length", "path_length", "nodes", "edges", "path_cost"})
