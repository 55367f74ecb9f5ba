"""``type='socket'``: rows read from a TCP socket, one line per row (streams)."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.errors import UnsupportedError

from .base import Connector, ReadRequest, register_connector


class SocketConnector(Connector):
    name = "socket"
    supports_windows = True

    def read(self, ctx: Any, req: ReadRequest) -> Any:
        raise UnsupportedError("socket tables are read as streams (windows); not supported yet")


register_connector(SocketConnector(), "socket")
