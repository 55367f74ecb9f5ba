"""Arrow copies of small kept scans, read once on the driver.

A kept scan (``runtime.connectors.scan_cache``) is one DataFrame object while
its files stay the same, so its rows, fetched once, stay right with it: the
copy is kept under the scan object (weakly: it goes when the scan does), and
the least recently used copies go first when they hold more than ``BUDGET``
bytes together.  The local engine reads a small table from its copy; on
Spark, a graph label defined USING a small table is matched over a frame made
from the copy (``runtime.stores.memory.table_frame``), so a MATCH that reads
the label once per hop does not parse its files once per hop.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

from .scan_cache import SCANS

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


def small_copy(spark: Any, scan: Any, limit: int) -> Any | None:
    """A kept scan's rows as Arrow when its files hold at most ``limit``
    bytes (fetched by one Spark job the first time); else None, also for a
    scan that is not kept (files not on this machine, bad rows skipped)."""
    size = SCANS.size_of(spark, scan)
    if size is None or size > limit:
        return None
    return COPIES.get(scan)
