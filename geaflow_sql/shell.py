"""The interactive shell: ``geaflow-sql`` with no ``-f`` or ``-e``.

Input is multi-line and runs when a statement ends with ``;``; history is kept
in ``~/.geaflow_sql_history`` (or ``$GEAFLOW_SQL_HISTORY``).  Keywords, names
and literals are highlighted; Tab completes keywords and what the catalog holds
right now.  Spark starts in the background while the first statement is typed.

Statements run in a worker thread so the terminal stays responsive: the
main thread draws a progress bar from Spark's task counts, and Ctrl-C cancels
the statement's Spark jobs (``Session.cancel``) and returns to the prompt.
Errors print with their line, column and a caret, never as a traceback.
"""

from __future__ import annotations

import os
import queue
import shutil
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from runtime.results import python_values

from .core.config import PROFILE
from .core.errors import CancelledError, ConfigError, ExecutionError, GeaflowError
from .display import describe_window
from .terminal import (
    Progress,
    help_text,
    history,
    is_tty,
    key_bindings,
    page,
    sigint_sets,
    style,
    switch,
)

PROMPT = "geaflow> "
INPUT_SOURCE = "<input>"


@dataclass
class ShellSettings:
    """What the backslash commands change."""

    output: str = "table"  # table | csv | json
    timing: bool = True
    pager: bool = True
    max_rows: int = 1000


class Shell:
    """One interactive session: a geaflow-sql Session plus a prompt_toolkit prompt.

    ``stdout`` is where results go (tests pass a buffer); the prompt itself
    always talks to the terminal.
    """

    def __init__(
        self,
        master: str | None = None,
        conf: dict[str, Any] | None = None,
        output: str = "table",
        *,
        stdout: TextIO | None = None,
    ) -> None:
        from runtime.spark_adapter import default_master

        from .session import Session

        # Statements are profiled so \timing can show where the time went.
        self.session = Session(master=master, conf={PROFILE.name: "true", **(conf or {})})
        self.master = master or default_master()
        self.settings = ShellSettings(output=output)
        self.out = stdout or sys.stdout
        self._spark_state = "not started"
        self._spark_thread: threading.Thread | None = None

    # ------------------------------------------------------------------ Spark
    def start_spark(self) -> None:
        """Start Spark in the background so typing the first statement hides the wait."""

        def start() -> None:
            try:
                _ = self.session.spark
                self._spark_state = "ready"
            except BaseException:  # reported when a statement needs Spark
                self._spark_state = "failed to start"

        self._spark_state = "starting"
        self._spark_thread = threading.Thread(target=start, name="spark-start", daemon=True)
        self._spark_thread.start()

    def _wait_for_spark(self, cancel: threading.Event) -> None:
        thread = self._spark_thread
        while thread is not None and thread.is_alive() and not cancel.is_set():
            thread.join(0.2)

    # -------------------------------------------------------------- the loop
    def _spark_now(self) -> tuple[str, Any]:
        """How Spark is doing, and the SparkSession once it is ready (for the progress line)."""
        state = self._spark_state
        return state, self.session.spark if state == "ready" else None

    def run(self) -> int:
        """Read, run and print until Ctrl-D or ``\\q``; returns the exit status."""
        from prompt_toolkit import PromptSession
        from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
        from prompt_toolkit.lexers import PygmentsLexer

        from . import __version__
        from .shell_syntax import GeaflowLexer

        self.start_spark()
        prompt: PromptSession[str] = PromptSession(
            history=history(),
            lexer=PygmentsLexer(GeaflowLexer),
            completer=self._completer(),
            complete_while_typing=False,
            auto_suggest=AutoSuggestFromHistory(),
            multiline=True,
            key_bindings=key_bindings(),
            prompt_continuation=self._continuation,
            bottom_toolbar=self._toolbar,
            style=style(),
            refresh_interval=0.5,
            include_default_pygments_style=False,
        )
        self._say(
            f"geaflow-sql {__version__}: SQL and GQL on Spark ({self.master}, starting in the background).\n"
            "End statements with ';'.  \\help for help, Tab completes, Ctrl-C cancels, Ctrl-D quits."
        )
        while True:
            try:
                text = prompt.prompt(self._prompt)
            except KeyboardInterrupt:
                continue  # drop the line being typed, like psql
            except EOFError:
                break
            try:
                if not self.handle(text):
                    break
            except KeyboardInterrupt:
                self._say("interrupted")
            except Exception as err:  # a bug of ours: report it and keep the shell
                self._print_internal(err)
        self._say("bye")
        return 0

    def handle(self, text: str) -> bool:
        """Run one input: a backslash command or statements.  False means quit."""
        from .shell_syntax import has_statement

        stripped = text.strip()
        if stripped.lower() in ("exit", "quit", "exit;", "quit;"):
            return False
        if stripped.startswith("\\"):
            return self.command(stripped)
        if has_statement(text):
            self.run_statements(text, INPUT_SOURCE)
        return True

    # -------------------------------------------------------------- commands
    def command(self, line: str) -> bool:
        """A backslash command; False means quit."""
        from .shell_syntax import COMMAND_ALIASES, COMMANDS

        name, _, arg = line.partition(" ")
        name = COMMAND_ALIASES.get(name, name)
        arg = arg.strip()
        if name == "\\q":
            return False
        if name == "\\help":
            self._say(help_text(COMMANDS))
        elif name == "\\timing":
            self.settings.timing = switch(arg, self.settings.timing)
            self._say(f"timing is {'on' if self.settings.timing else 'off'}")
        elif name == "\\pager":
            self.settings.pager = switch(arg, self.settings.pager)
            self._say(f"pager is {'on' if self.settings.pager else 'off'}")
        elif name == "\\output":
            if arg in ("table", "csv", "json"):
                self.settings.output = arg
                self._say(f"output is {arg}")
            elif not arg:
                self._say(f"output is {self.settings.output}")
            else:
                self._error_line(f"\\output takes table, csv or json, not {arg!r}")
        elif name == "\\maxrows":
            if arg.isdigit() and int(arg) > 0:
                self.settings.max_rows = int(arg)
                self._say(f"printing at most {arg} rows")
            else:
                self._error_line(f"\\maxrows takes a positive number, not {arg!r}")
        elif name == "\\i":
            self.include(arg)
        else:
            self._error_line(f"unknown command {name}; \\help lists the commands")
        return True

    def include(self, path: str) -> None:
        """``\\i FILE``: run a script file; its errors name the file, line and column."""
        if not path:
            self._error_line("\\i needs a file name")
            return
        target = Path(os.path.expanduser(path))
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as err:
            self._error_line(f"cannot read {path}: {err.strerror}")
            return
        self.run_statements(text, path)

    # ------------------------------------------------------------ statements
    def run_statements(self, text: str, source: str) -> None:
        """Run a script in a worker thread, printing each result as it is done."""
        try:
            script = self.session.parse(text, source)
        except GeaflowError as err:  # nothing runs when any statement is malformed
            self._print_error(err, text, source)
            return
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancel = threading.Event()
        # A windowed job's windows as they finish.
        self.session.windows.listener = lambda report: events.put(("window", report))
        worker = threading.Thread(
            target=self._work, args=(script, source, events, cancel), name="statement", daemon=True
        )
        started = time.monotonic()
        worker.start()
        try:
            self._pump(events, cancel, started, text, source)
            worker.join()
        finally:
            self.session.windows.listener = None

    def _work(
        self,
        script: Any,
        source: str,
        events: queue.Queue[tuple[str, Any]],
        cancel: threading.Event,
    ) -> None:
        """The worker thread: run each statement and fetch its rows, reporting through ``events``."""
        try:
            if not _needs_spark(script):  # catalog work runs while Spark is still starting
                self._run_each(script, source, events, cancel)
                return
            self._wait_for_spark(cancel)
            if cancel.is_set():
                raise CancelledError("the statement was cancelled")
            with self.session.cancellable():  # starts Spark again if the first start failed
                self._spark_state = "ready"
                self._run_each(script, source, events, cancel)
        except GeaflowError as err:
            events.put(("error", err))
        except Exception as err:  # a bug of ours, or Spark failing in a way we do not know
            events.put(("internal", err))
        finally:
            events.put(("done", None))

    def _run_each(
        self,
        script: Any,
        source: str,
        events: queue.Queue[tuple[str, Any]],
        cancel: threading.Event,
    ) -> None:
        statements = iter(script.statements)
        start = time.perf_counter()
        for result in self.session.iter_execute(script, source):
            node = next(statements)
            table = None
            if result.query is not None:
                try:
                    table = result.query.to_arrow()
                except GeaflowError as err:
                    err.at(node.span)
                    raise
            events.put(("result", (result, table, time.perf_counter() - start)))
            if cancel.is_set():
                raise CancelledError("the statement was cancelled")
            start = time.perf_counter()

    def _pump(
        self,
        events: queue.Queue[tuple[str, Any]],
        cancel: threading.Event,
        started: float,
        text: str,
        source: str,
    ) -> None:
        """The UI thread while a statement runs: print results, draw progress, cancel on Ctrl-C."""
        progress = Progress(self.out, self._spark_now, started)
        last_cancel = 0.0
        stopping = False
        interrupted = threading.Event()
        with sigint_sets(interrupted):
            while True:
                try:
                    if interrupted.is_set():
                        interrupted.clear()
                        progress.clear()
                        if (
                            not stopping
                            and not cancel.is_set()
                            and self.session.stop_after_window()
                        ):
                            # A windowed job: end it after this window, its
                            # checkpoint intact; a second Ctrl-C cancels.
                            stopping = True
                            self._say("stopping after this window… (Ctrl-C again cancels it)")
                            continue
                        if not cancel.is_set():
                            cancel.set()
                            self._say("cancelling…")
                        self.session.cancel()
                        last_cancel = time.monotonic()
                    try:
                        kind, payload = events.get(timeout=0.1)
                    except queue.Empty:
                        if cancel.is_set():
                            # Spark cancels only running jobs: repeat until the statement stops.
                            if time.monotonic() - last_cancel > 0.5:
                                self.session.cancel()
                                last_cancel = time.monotonic()
                        else:
                            progress.draw()
                        continue
                    progress.clear()
                    if kind == "done":
                        return
                    if kind == "window":
                        self._say(describe_window(payload))
                    elif kind == "result":
                        self._print_result(*payload)
                    elif kind == "error":
                        if isinstance(payload, CancelledError) or (
                            cancel.is_set() and isinstance(payload, ExecutionError)
                        ):
                            self._error_line(f"cancelled after {time.monotonic() - started:.1f} s")
                        else:
                            self._print_error(payload, text, source)
                    elif kind == "internal":
                        self._print_internal(payload)
                except KeyboardInterrupt:  # SIGINT outside the main thread's handler
                    interrupted.set()

    # -------------------------------------------------------------- printing
    def _print_result(self, result: Any, table: Any, seconds: float) -> None:
        from .display import format_rows

        mode = self.settings.output
        width = shutil.get_terminal_size().columns
        if table is not None:
            shown = table.slice(0, self.settings.max_rows)
            zone = result.query.time_zone if result.query is not None else None
            rows = (
                list(zip(*[python_values(c, zone) for c in shown.columns], strict=True))
                if shown.num_columns
                else []
            )
            text = format_rows(
                result.query.columns, rows, mode, max_width=width if mode == "table" else None
            )
            if table.num_rows > shown.num_rows:
                if mode == "table":
                    text = text.rsplit("\n", 1)[0]
                text += (
                    f"\n(first {shown.num_rows} of {table.num_rows} rows; \\maxrows N shows more)"
                )
            self._emit(text)
        elif result.extra.get("rows") is not None and mode != "table":
            self._emit(format_rows(list(result.extra["columns"]), result.extra["rows"], mode))
        elif result.text is not None:
            self._emit(result.text)
        elif result.message:
            self._say(result.message)
        for warning in result.warnings:
            self._styled(f"warning: {warning}", "ansiyellow")
        if self.settings.timing:
            self._dim(f"Time: {seconds:.3f} s{_split(result.profile)}")

    def _emit(self, text: str) -> None:
        """Print, through a pager when the text is taller than the terminal."""
        size = shutil.get_terminal_size()
        tall = text.count("\n") + 1 > size.lines - 2
        if self.settings.pager and tall and is_tty(self.out) and page(text):
            return
        self._say(text)

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _styled(self, text: str, style: str) -> None:
        if is_tty(self.out) and not os.environ.get("NO_COLOR"):
            from prompt_toolkit import print_formatted_text
            from prompt_toolkit.formatted_text import FormattedText

            print_formatted_text(FormattedText([(style, text)]), file=self.out)
            self.out.flush()
        else:
            self._say(text)

    def _dim(self, text: str) -> None:
        self._styled(text, "ansibrightblack")

    def _error_line(self, text: str) -> None:
        self._styled(text, "ansired")

    def _print_error(self, err: GeaflowError, text: str, source: str) -> None:
        self._error_line(format_error(err, text, source))

    def _print_internal(self, err: BaseException) -> None:
        if os.environ.get("GEAFLOW_SQL_DEBUG"):
            self._say("".join(traceback.format_exception(err)))
        self._error_line(
            f"internal error: {type(err).__name__}: {err} (a bug in geaflow-sql; "
            "set GEAFLOW_SQL_DEBUG=1 for details)"
        )

    # ------------------------------------------------------ prompt pieces
    def _prompt(self) -> Any:
        graph = self.session.catalog.current_graph
        return [("class:prompt", f"geaflow ({graph})> " if graph else PROMPT)]

    def _continuation(self, width: int, line_number: int, wrap_count: int) -> Any:
        return [("class:continuation", "...> ".rjust(width))]

    def _toolbar(self) -> Any:
        graph = self.session.catalog.current_graph or "none"
        state = self._spark_state
        return [
            ("class:bottom-toolbar", f" Spark {state} ({self.master})"),
            ("class:bottom-toolbar", f" │ graph: {graph} │ output: {self.settings.output}"),
            ("class:bottom-toolbar", " │ Tab completes · ; runs · Ctrl-D quits "),
        ]

    def _completer(self) -> Any:
        return session_completer(self.session)


def session_completer(session: Any) -> Any:
    """The shell's completer over ``session``'s live catalog: built-in and
    user functions (those of graph values too), algorithms, settings."""
    from .shell_syntax import CatalogCompleter

    def functions() -> list[str]:
        from planner.functions.registry import all_builtin_names

        names = all_builtin_names()
        return sorted(
            {*names["scalar"], *names["aggregate"], *names["table"], *names["graph"]}
            | set(session.catalog.function_names())
        )

    def algorithms() -> list[str]:
        from planner.algorithms import algorithm_names

        return algorithm_names()

    def config_keys() -> list[str]:
        from .core.config import KNOWN_KEYS

        return sorted(KNOWN_KEYS)

    return CatalogCompleter(session, functions, algorithms, config_keys)


def _needs_spark(script: Any) -> bool:
    """Does any statement need Spark?  Definitions, USE, SET, SHOW and DESCRIBE only
    touch the catalog (graphs excepted: creating one makes its store)."""
    from grammar import syntax as s

    catalog_only = (
        s.CreateTable,
        s.CreateView,
        s.CreateFunction,
        s.UseGraph,
        s.UseInstance,
        s.SetOption,
        s.Show,
        s.Describe,
    )
    return not all(
        isinstance(st, catalog_only) or (isinstance(st, s.Drop) and st.kind.upper() != "GRAPH")
        for st in script.statements
    )


def format_error(err: GeaflowError, text: str, source: str) -> str:
    """An error as the shell shows it: position, message, the line and a caret.

    Typed input says ``line L, column C``; a file run with ``\\i`` uses the
    compiler style ``file:L:C`` so editors can jump to it.
    """
    err.with_context(text=text, source=source)
    if source != INPUT_SOURCE:
        return err.format()
    if err.line is None:
        return f"{err.kind}: {err.message}"
    head = f"{err.kind} at line {err.line}, column {err.column}: {err.message}"
    line = err.source_line()
    return head if line is None else f"{head}\n    {line}\n    {err.caret()}"


def _run_piped(master: str | None, conf: dict[str, Any], output: str) -> int:
    """Input that is not a terminal (``geaflow-sql < script.gql``): run it as a script."""
    from .scripts import run_script

    text = sys.stdin.read()
    try:
        return run_script(text, "<stdin>", conf, master, output=output)
    except GeaflowError as err:
        err.with_context(text=text, source="<stdin>")
        print(err.format(), file=sys.stderr)
        return 1


def run_shell(
    master: str | None = None, conf: dict[str, Any] | None = None, output: str = "table"
) -> int:
    """Entry point from the CLI: the shell on a terminal, a script run otherwise."""
    conf = dict(conf or {})
    if not sys.stdin.isatty():
        return _run_piped(master, conf, output)
    try:
        shell = Shell(master, conf, output)
    except ConfigError as err:
        print(err.format(), file=sys.stderr)
        return 2
    return shell.run()


def _split(profile: Any) -> str:
    """`` (parse 1, bind 2, ..., spark 90 ms; 120 py4j calls)`` from a statement's profile."""
    if profile is None:
        return ""
    parts = ", ".join(f"{p} {seconds * 1000:.0f}" for p, seconds in profile.seconds.items())
    return f" ({parts} ms; {sum(profile.calls.values())} py4j calls)"
