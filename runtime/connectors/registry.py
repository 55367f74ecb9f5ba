"""The connector registry: a table's ``type=`` -> its Connector.

The built-in connectors are listed here; ``register_connector`` adds others
(or replaces one) under one or more names.
"""

from __future__ import annotations

from pathlib import Path

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import Config, table_options
from geaflow_sql.core.errors import ConfigError
from runtime.context import RuntimeContext

from .base import Connector, WindowSource
from .console import ConsoleConnector
from .file import FileConnector
from .jdbc import JdbcConnector
from .kafka import KafkaConnector
from .random_source import RandomConnector
from .socket import SocketConnector
from .spark_source import SparkSourceConnector

_REGISTRY: dict[str, Connector] = {
    c.name: c
    for c in (
        FileConnector(),
        ConsoleConnector(),
        JdbcConnector(),
        KafkaConnector(),
        RandomConnector(),
        SocketConnector(),
        SparkSourceConnector(),
    )
}


def register_connector(connector: Connector, *names: str) -> None:
    for n in names or (connector.name,):
        _REGISTRY[n.lower()] = connector


def connector_for(table: TableInfo) -> Connector:
    found = _REGISTRY.get(table.connector)
    if found is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(
            f"table {table.name!r} has unknown type {table.connector!r} (known: {known})"
        )
    return found


def reads_in_windows(table: TableInfo, config: Config) -> bool:
    """Is the table read window by window (a stream, or a window size set)?"""
    return connector_for(table).reads_in_windows(table, table_options(config, table))


def open_window_source(
    ctx: RuntimeContext, table: TableInfo, log_root: Path | None
) -> WindowSource:
    """The table's window source; a source that cannot be read again logs its
    windows under ``log_root`` (the job's checkpoint folder)."""
    log_dir = log_root / "sources" / table.name.lower() if log_root is not None else None
    options = table_options(ctx.config, table)
    return connector_for(table).window_source(ctx, table, options, log_dir)
