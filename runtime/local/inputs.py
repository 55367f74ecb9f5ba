"""The local engine's inputs: rows already on the driver, and small kept
scans' Arrow copies (``runtime.connectors.scan_copies``)."""

from __future__ import annotations

from typing import Any

from runtime.connectors.scan_copies import COPIES


class HeldRows:
    """A graph label's rows already on the driver (``runtime.stores.arrow_parts``),
    as the local engine's input for that label (no copy to make)."""

    def __init__(self, table: Any) -> None:
        self.table = table


def rows_of(key: Any) -> Any:
    """The Arrow rows of an input: held ones as they are, a kept scan's copy."""
    if isinstance(key, HeldRows):
        return key.table
    return COPIES.get(key)
