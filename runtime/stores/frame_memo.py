"""DataFrames built from other objects, kept while those are what is read.

Building a DataFrame costs py4j round trips and an analysis by Spark per
operation, which on small graphs costs more than running the query.  So the
session's graph stores keep here each label's frame, one object while the
label's parts (or the kept scan of its USING table) do not change, and a
MATCH keeps the vertex and edge values (one struct per row) it builds of
the same label frames as the same type for the next statement.  An entry
holds the objects it was built from, so their identity is never reused
while the entry lives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class FrameMemo:
    """A bounded map from (input objects, what was built of them) to the frame built."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[tuple[Any, ...], Any]] = OrderedDict()

    def get(self, inputs: tuple[Any, ...], what: Hashable, build: Callable[[], Any]) -> Any:
        """The frame ``build`` makes of ``inputs`` (``what`` says what it
        makes): built once while the same input objects are read."""
        key = (tuple(id(df) for df in inputs), what)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and all(a is b for a, b in zip(entry[0], inputs, strict=True)):
                self._entries.move_to_end(key)
                return entry[1]
        built = build()
        with self._lock:
            self._entries[key] = (inputs, built)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return built
