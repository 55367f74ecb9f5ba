"""DataFrames made from Arrow rows on the driver, and those rows.

Some results are computed on the driver (an incremental algorithm's window,
an algorithm kernel) and handed on as a DataFrame made from their Arrow
rows.  Kept beside the frame, the rows let a consumer that can work on the
driver (``runtime.local``; a table the driver writes) skip Spark altogether.
"""

from __future__ import annotations

import weakref
from typing import Any

_ROWS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def from_rows(spark: Any, rows: Any, schema: Any) -> Any:
    """A DataFrame of ``rows`` (an Arrow table) with the Spark ``schema``,
    remembered as made from them."""
    df = spark.createDataFrame(rows, schema)
    _ROWS[df] = rows
    return df


def hold(df: Any, rows: Any) -> Any:
    """Remember ``rows`` as ``df``'s (rows that are exactly its rows)."""
    _ROWS[df] = rows
    return df


def rows_of(df: Any) -> Any | None:
    """The Arrow rows ``df`` was made from, if it was."""
    return _ROWS.get(df)
