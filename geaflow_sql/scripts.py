"""Running a whole script and printing each statement's result (``-f``, ``-e``, stdin)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

from grammar.parser import parse
from runtime.streaming.progress import WindowReport

from .display import describe_window, format_rows
from .plan_pictures import svg_of
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
    picture: str | None = None,
) -> int:
    """Run (or, with ``explain``, explain) a script, printing each result.
    ``picture`` (``dot`` or ``svg``, with ``explain``): print each plan as a
    picture (``planner.explain_dot``) and nothing else."""
    # Parse first: a syntax error anywhere stops the script before Spark starts.
    start = time.perf_counter()
    script = parse(text, source)
    parse_seconds = time.perf_counter() - start
    session = Session(master=master, conf=conf, base_dir=base_dir)
    watch = WindowWatch(session, quiet)
    start = time.perf_counter()
    try:
        results = session.iter_execute(
            script, source, check_only=check, explain=explain, parse_seconds=parse_seconds
        )
        for result in results:
            if picture is not None:
                if result.kind == "explain" and "dot" in result.extra:
                    print(_drawn(result.extra["dot"], picture), end="")
                continue
            _print_result(result, output, quiet)
            if not quiet and result.kind == "insert":
                print(f"({time.perf_counter() - start:.2f}s)")
            start = time.perf_counter()
    finally:
        watch.restore()
    watch.finished()
    return 0


def _drawn(dot: str, picture: str) -> str:
    """A plan's DOT text as ``picture``: itself, or SVG drawn by Graphviz."""
    return dot if picture == "dot" else svg_of(dot)


class WindowWatch:
    """A windowed job seen from the command line: a line per window on
    stderr (unless quiet), and Ctrl-C stopping the job after its current
    window; a second Ctrl-C cancels that window too (nothing it wrote stays)."""

    def __init__(self, session: Session, quiet: bool) -> None:
        self.session = session
        self.quiet = quiet
        self.last: WindowReport | None = None
        self.asked = False
        self.previous: Any = None
        self.installed = False
        session.windows.listener = self._report
        session.windows.on_start = self._install

    def _report(self, report: WindowReport) -> None:
        self.last = report
        if not self.quiet:
            print(describe_window(report), file=sys.stderr, flush=True)

    def _install(self) -> None:
        # Spark installs its own handler when it starts: take over from it
        # while the job runs, and hand the second Ctrl-C on to it.
        if threading.current_thread() is not threading.main_thread():
            return
        current = signal.getsignal(signal.SIGINT)
        if current is not self._on_sigint:
            self.previous = current
            signal.signal(signal.SIGINT, self._on_sigint)
            self.installed = True

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if not self.asked and self.session.stop_after_window():
            self.asked = True
            # (os.write: a print could land inside another print.)
            os.write(2, b"geaflow-sql: stopping after this window (Ctrl-C again cancels it)\n")
            return
        previous = self.previous
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    def restore(self) -> None:
        self.session.windows.listener = None
        self.session.windows.on_start = None
        if self.installed:
            signal.signal(
                signal.SIGINT,
                self.previous if self.previous is not None else signal.default_int_handler,
            )
            self.installed = False

    def finished(self) -> None:
        if self.asked and self.last is not None:
            where = (
                "; run it again with the same checkpoint to go on" if self.last.checkpointed else ""
            )
            print(
                f"geaflow-sql: stopped after window {self.last.window + 1}{where}",
                file=sys.stderr,
                flush=True,
            )
