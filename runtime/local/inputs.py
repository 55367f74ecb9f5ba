"""Arrow copies of kept scans, for the local engine.

A kept scan (``runtime.connectors.scan_cache``) is one DataFrame object while
its files stay the same, so its rows, fetched once, stay right with it: the
copy is kept under the scan object (weakly: it goes when the scan does), and
the least recently used copies go first when they hold more than ``BUDGET``
bytes together.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

BUDGET = 1 << 30


class ArrowCopies:
    def __init__(self, budget: int = BUDGET) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._copies: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        # id(scan) -> (weak reference to the scan, bytes), least recently used first.
        self._order: OrderedDict[int, tuple[Any, int]] = OrderedDict()

    def get(self, scan: Any) -> Any:
        """The scan's rows as an Arrow table (one Spark job the first time)."""
        with self._lock:
            table = self._copies.get(scan)
            if table is not None:
                self._order.move_to_end(id(scan))
                return table
        table = scan.toArrow()
        with self._lock:
            self._copies[scan] = table
            self._order[id(scan)] = (weakref.ref(scan), table.nbytes)
            self._order.move_to_end(id(scan))
            self._trim()
        return table

    def _trim(self) -> None:
        for key, (ref, _) in list(self._order.items()):
            if ref() is None:
                del self._order[key]
        total = sum(size for _, size in self._order.values())
        while total > self.budget and len(self._order) > 1:
            _, (ref, size) = self._order.popitem(last=False)
            scan = ref()
            if scan is not None:
                self._copies.pop(scan, None)
            total -= size

    def clear(self) -> None:
        with self._lock:
            self._copies.clear()
            self._order.clear()


COPIES = ArrowCopies()


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
