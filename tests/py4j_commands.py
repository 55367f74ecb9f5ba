"""The commands a test's Python sends to the JVM through py4j, recorded: to
count the round trips a call makes, or to see what it asks the JVM for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def sent_commands(gateway_client: Any) -> Iterator[list[str]]:
    """Inside: every command sent through ``gateway_client`` from now on, in
    order (a test may clear the list to start counting again)."""
    sent: list[str] = []
    send = gateway_client.send_command

    def recording(command: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(command)
        return send(command, *args, **kwargs)

    gateway_client.send_command = recording
    try:
        yield sent
    finally:
        del gateway_client.send_command  # the instance's own, back to the class's
