"""Running a whole script and printing each statement's result (``-f``, ``-e``, stdin)."""

from __future__ import annotations

import sys
import time
from typing import Any

from grammar.parser import parse

from .display import format_rows
from .session import Session


def _print_result(result: Any, output: str, quiet: bool) -> None:
    for warning in result.warnings:
        # On stderr, and even when quiet: the rows on stdout stay clean.
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    if result.query is not None:
        q = result.query
        print(format_rows(q.columns, q.collect(), output))
    elif result.text is not None:
        print(result.text)
    elif not quiet and result.message:
        print(result.message)
    if result.profile is not None:
        # geaflow.dsl.profile: where the statement's time went (after its
        # rows were fetched, so the spark phase is whole), on stderr.
        print(f"profile of line {result.line}:\n{result.profile.table()}", file=sys.stderr)


def run_script(
    text: str,
    source: str,
    conf: dict[str, str],
    master: str | None,
    *,
    explain: bool = False,
    check: bool = False,
    output: str = "table",
    quiet: bool = False,
    base_dir: str | None = None,
) -> int:
    # Parse first: a syntax error anywhere stops the script before Spark starts.
    start = time.perf_counter()
    script = parse(text, source)
    parse_seconds = time.perf_counter() - start
    session = Session(master=master, conf=conf, base_dir=base_dir)
    start = time.perf_counter()
    results = session.iter_execute(
        script, source, check_only=check, explain=explain, parse_seconds=parse_seconds
    )
    for result in results:
        _print_result(result, output, quiet)
        if not quiet and result.kind == "insert":
            print(f"({time.perf_counter() - start:.2f}s)")
        start = time.perf_counter()
    return 0
