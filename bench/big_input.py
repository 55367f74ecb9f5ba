"""Benchmark: parse and plan cost of big and deeply nested input (no Spark).

    python bench/big_input.py          # parse and plan, no Spark
    python bench/big_input.py --run    # also run a 62,000-row INSERT ... VALUES in local Spark

Each line: the input, its size, the wall time to parse (and to plan, where
planning is the point), and the peak memory the interpreter traced while
parsing, as bytes per character of text.  The aims (issue 16): memory a small
multiple of the text, time linear in its size, 10,000 statements parsed in a
few seconds.  Timings are printed, never asserted.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from geaflow_sql.core.catalog import Catalog  # noqa: E402
from geaflow_sql.core.config import Config  # noqa: E402
from grammar.parser import parse  # noqa: E402
from planner.binder import BindContext, StatementBinder  # noqa: E402
from planner.optimizer import optimize  # noqa: E402

TABLE = (
    "CREATE TABLE t (a bigint, b varchar, c double) WITH (type='file', geaflow.dsl.file.path='/x')"
)


def catalog() -> Catalog:
    cat = Catalog()
    bound = StatementBinder(BindContext(cat, Config({}))).bind(parse(TABLE).statements[0])
    cat.add_table(bound.record)  # type: ignore[attr-defined]
    return cat


def measure(name: str, text: str, plan: bool) -> None:
    gc.collect()
    start = time.perf_counter()
    script = parse(text)
    parsed = time.perf_counter() - start
    # memory in a second parse: tracing slows every allocation down
    tracemalloc.start()
    parse(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    line = f"{name:<34} {len(text) / 1e6:6.2f} MB  parse {parsed:6.2f} s  {peak / len(text):6.1f} B/char"
    if plan:
        cat = catalog()
        start = time.perf_counter()
        for st in script.statements:
            bound = StatementBinder(BindContext(cat, Config({}), text)).bind(st)
            root = getattr(bound, "root", None)
            if root is not None:
                optimize(root, Config({}))
        line += f"  plan {time.perf_counter() - start:6.2f} s"
    print(line, flush=True)


CASES: list[tuple[str, Callable[[int], str], list[int], bool]] = [
    (
        "string literal of {n} chars",
        lambda n: f"SELECT '{'a' * n}' FROM t",
        [10**6, 4 * 10**6],
        False,
    ),
    ("quoted name of {n} chars", lambda n: f"SELECT `{'a' * n}` FROM t", [10**6, 4 * 10**6], False),
    (
        "{n} statements",
        lambda n: ";\n".join(f"SELECT a FROM t WHERE a = {i}" for i in range(n)),
        [1000, 10000],
        False,
    ),
    (
        "IN list of {n} items",
        lambda n: "SELECT a FROM t WHERE a IN (" + ", ".join(map(str, range(n))) + ")",
        [8000, 20000],
        True,
    ),
    (
        "OR chain of {n} terms",
        lambda n: "SELECT a FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(n)),
        [1000, 5000],
        True,
    ),
    (
        "INSERT VALUES of {n} rows",
        lambda n: "INSERT INTO t VALUES " + ", ".join(f"({i}, 'n{i}', {i}.5)" for i in range(n)),
        [6000, 60000],
        False,
    ),
]


def run_values_insert(rows: int = 62_000) -> None:
    """The issue's case end to end: INSERT ... VALUES of ``rows`` rows into a
    text table, from the script text to the rows written (best of 3)."""
    import tempfile

    from geaflow_sql import Session

    with tempfile.TemporaryDirectory() as folder:
        session = Session(master="local[2]", base_dir=folder)
        values = ", ".join(f"({i}, 'n{i}', {i}.5)" for i in range(rows))
        best = float("inf")
        for k in range(3):
            script = (
                f"CREATE TABLE t{k} (a bigint, b varchar, c double) WITH (type='file', "
                f"geaflow.dsl.file.path='t{k}.txt');\nINSERT INTO t{k} VALUES {values};"
            )
            start = time.perf_counter()
            session.execute(script)
            best = min(best, time.perf_counter() - start)
            written = Path(folder, f"t{k}.txt").read_text(encoding="utf-8").count("\n")
            assert written == rows, written
        print(f"INSERT VALUES of {rows:,} rows, run   {len(script) / 1e6:6.2f} MB  {best:6.2f} s")


def main() -> None:
    parse("SELECT 1")  # the grammar tables, once
    for name, make, sizes, plan in CASES:
        for n in sizes:
            measure(name.format(n=f"{n:,}"), make(n), plan)
    if "--run" in sys.argv[1:]:
        run_values_insert()


if __name__ == "__main__":
    main()
