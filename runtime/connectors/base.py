"""The connector registry: ``CREATE TABLE ... WITH (type='x')`` -> a Connector.

A connector reads a table into a DataFrame whose columns are ``c0..cN`` (the
table's columns, or the projected subset) and writes a DataFrame into a table.
New connectors register with ``register_connector``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import ConfigError


@dataclass(frozen=True)
class ReadRequest:
    table: TableInfo
    options: dict[str, Any]  # job config merged with table options (table wins)
    projection: tuple[int, ...]  # table column indexes to produce, in order


class Connector:
    name = "base"
    # Whether this connector's source can be read in windows of rows.
    supports_windows = False

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        """Check a table definition at CREATE TABLE time (raise ConfigError)."""

    def read(self, ctx: Any, req: ReadRequest) -> Any:
        raise ConfigError(f"tables of type {self.name!r} cannot be read")

    def read_windows(self, ctx: Any, req: ReadRequest, window_size: int) -> Iterator[Any]:
        """Yield the source as consecutive DataFrames of ``window_size`` rows each."""
        yield self.read(ctx, req)

    def write(
        self, ctx: Any, df: Any, table: TableInfo, options: dict[str, Any], types: list[Any]
    ) -> int:
        """Write ``df`` (columns c0..cN, of GeaFlow ``types``); return rows written or -1."""
        raise ConfigError(f"tables of type {self.name!r} cannot be written")


_REGISTRY: dict[str, Connector] = {}


def register_connector(connector: Connector, *names: str) -> None:
    for n in names or (connector.name,):
        _REGISTRY[n.lower()] = connector


def connector_for(table: TableInfo) -> Connector:
    _load()
    kind = table.connector
    found = _REGISTRY.get(kind)
    if found is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"table {table.name!r} has unknown type {kind!r} (known: {known})")
    return found


def connector_names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def _load() -> None:
    from . import console, file, jdbc, random_source, socket, spark_source  # noqa: F401


def merged_options(
    ctx: Any, table: TableInfo, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Job configuration overlaid by the table's own options (GeaFlow's precedence)."""
    out: dict[str, Any] = {k: v for k, v in ctx.config.items()}
    out.update(extra or {})
    for k, v in table.options:
        out[k] = v
    return out
