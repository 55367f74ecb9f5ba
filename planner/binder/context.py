"""What a binder needs to know while it binds one statement: catalog, config,
parameters, the text, and the user functions the statement calls."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from geaflow_sql.core.catalog import Catalog
from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import GeaflowError


@dataclass
class BindContext:
    catalog: Catalog
    config: Config
    text: str = ""
    source: str = "<script>"
    # DB-API parameters: positional list or mapping, bound as literals.
    parameters: Any = None
    # Views being expanded (to report recursive definitions instead of looping).
    expanding_views: tuple[str, ...] = ()
    # Request tables (``WITH p AS (...)`` before a graph query) in scope, by
    # lower-cased name: FROM and ``x IN p`` read them as tables.
    request_tables: dict[str, Any] = field(default_factory=dict)
    # User scalar functions the statement calls, by Spark name (they travel
    # on the bound statement: the runtime registers them before it runs).
    scalar_udfs: dict[str, Any] = field(default_factory=dict)
    _ids: Any = field(default_factory=lambda: itertools.count())

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def error(self, err: GeaflowError, span: Any) -> GeaflowError:
        err.at(span)
        err.with_context(text=self.text, source=self.source)
        return err
