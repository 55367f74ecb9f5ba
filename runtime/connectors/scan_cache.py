"""Scan DataFrames kept between statements while their files do not change.

Building a file table's scan costs the driver tens of milliseconds of Spark
analysis (the text format's parse and checks are one projection and one
filter over Spark's line reader); a dashboard or a notebook runs the same
tables again and again.  A built scan is a plan, not data: Spark reads the
files again each time it runs, so it stays right while the set of files, their
sizes and modification times (which Spark's file index fixed when the scan was
built), the read options and the session settings that analysis depends on
are the same.  Those make the key; any change builds a new scan.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

# Spark settings that analysis bakes into a scan's expressions (casts, time zones).
_ANALYSIS_CONF = ("spark.sql.session.timeZone", "spark.sql.ansi.enabled")
# Built scans kept per SparkSession, least recently used dropped first.
CAPACITY = 64


class ScanCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._by_session: weakref.WeakKeyDictionary[Any, OrderedDict[Hashable, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._sizes: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def get(
        self, spark: Any, key: Hashable, build: Callable[[], Any], size: int | None = None
    ) -> Any:
        """The scan kept under ``key`` for ``spark``, or ``build()`` kept there.

        ``size`` is how many bytes its files hold (``size_of`` answers it)."""
        full = (key, tuple(spark.conf.get(k, None) for k in _ANALYSIS_CONF))
        with self._lock:
            scans = self._by_session.setdefault(spark, OrderedDict())
            if full in scans:
                scans.move_to_end(full)
                return scans[full]
        df = build()
        with self._lock:
            scans[full] = df
            if size is not None:
                self._sizes[df] = size
            while len(scans) > self.capacity:
                scans.popitem(last=False)
        return df

    def holds(self, spark: Any, df: Any) -> bool:
        """Is ``df`` a scan kept here (the same object while its files stay)?"""
        with self._lock:
            scans = self._by_session.get(spark)
            return scans is not None and any(kept is df for kept in scans.values())

    def size_of(self, spark: Any, df: Any) -> int | None:
        """The bytes of a kept scan's files; None for a scan not kept here."""
        if not self.holds(spark, df):
            return None
        with self._lock:
            return self._sizes.get(df)

    def clear(self) -> None:
        with self._lock:
            self._by_session.clear()


SCANS = ScanCache()
