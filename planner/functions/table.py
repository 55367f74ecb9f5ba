"""Built-in table functions (used with ``LATERAL TABLE(f(...)) AS t(cols)``)."""

from __future__ import annotations

from geaflow_sql.core import types as T

from .specs import TableFunctionSpec, register_table_function

# split(text [, separator]): one row per piece (separator ',' by default).
register_table_function(TableFunctionSpec("split", 1, 2, lambda args: [T.VARCHAR]))
