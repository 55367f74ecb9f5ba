"""Built-in scalar functions: GeaFlow name -> arity, result type, Spark form.

The table is split by family (``numeric``, ``strings``, ``dates``,
``conditions``); each row is a ``scalar(...)`` call.  Most rows name the Spark
function of the same meaning; builders handle the places where GeaFlow (Java)
and Spark differ, and each such difference has a test in
``tests/test_functions_semantics.py``.
"""

from __future__ import annotations

from . import conditions, dates, numeric, strings  # noqa: F401 - importing registers the rows
