"""DataFrames built from other DataFrames, kept while those are what is read.

A MATCH builds each hop's vertex and edge values (one struct per row) from
the rows of the labels it reads.  Building a DataFrame costs py4j round trips
and an analysis by Spark per operation, which on small graphs costs more
than running the query, so the values are kept for the next statement that
reads the same label frames as the same type.  A label's frame stays the
same object while its rows do not change (the stores keep their frames), and
an entry holds the frames it was built from, so a frame's identity is never
reused while the entry lives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class FrameMemo:
    """A bounded map from (input frames, what was built of them) to the frame built."""

    def __init__(self, size: int = 128) -> None:
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

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
