"""The shell's terminal: prompt, history, keys and colours, the progress line,
paging long output, and Ctrl-C while a statement runs."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from runtime.spark_adapter import job_progress

HISTORY_ENV = "GEAFLOW_SQL_HISTORY"
DEFAULT_HISTORY = "~/.geaflow_sql_history"


class Progress:
    """One status line while a statement runs: a bar of Spark tasks done, and the time."""

    def __init__(
        self, out: Any, spark_state: Callable[[], tuple[str, Any]], started: float
    ) -> None:
        """``spark_state()``: the shell's Spark ("starting", "ready", ...) and
        the SparkSession once it is ready."""
        self.out = out
        self.spark_state = spark_state
        self.started = started
        self.shown = False
        self.enabled = is_tty(out)
        encoding = (getattr(out, "encoding", None) or "").lower()
        self.fill, self.empty = ("█", "░") if "utf" in encoding else ("#", "-")

    def draw(self) -> None:
        elapsed = time.monotonic() - self.started
        if not self.enabled or elapsed < 0.5:
            return
        state, spark = self.spark_state()
        progress = job_progress(spark) if spark is not None else None
        width = max(20, shutil.get_terminal_size().columns - 1)
        if state == "starting":
            status = f"starting Spark… {elapsed:.1f} s"
        elif progress and progress[1] > 0:
            done, total = progress
            bar_width = 30
            filled = bar_width * done // total
            status = f"[{self.fill * filled}{self.empty * (bar_width - filled)}] {done}/{total} tasks  {elapsed:.1f} s"
        else:
            status = f"running… {elapsed:.1f} s"
        status = (status + "  (Ctrl-C cancels)")[:width]
        # Marked shown before writing: a Ctrl-C that lands inside the write
        # must still have the line cleared before the next message.
        self.shown = True
        self.out.write("\r\x1b[2K" + status)
        self.out.flush()

    def clear(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[2K")
            self.out.flush()
            self.shown = False


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def switch(arg: str, current: bool) -> bool:
    """``on``/``off`` sets; no argument toggles."""
    if arg.lower() in ("on", "true", "1"):
        return True
    if arg.lower() in ("off", "false", "0"):
        return False
    return not current


def history() -> Any:
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    path = Path(os.path.expanduser(os.environ.get(HISTORY_ENV) or DEFAULT_HISTORY))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()  # a read-only home: keep history for this session only


def key_bindings() -> Any:
    """Enter runs a complete statement and starts a new line otherwise."""
    from prompt_toolkit.filters import has_completions
    from prompt_toolkit.key_binding import KeyBindings

    from .shell_syntax import is_complete

    kb = KeyBindings()

    @kb.add("enter", filter=~has_completions)
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        if is_complete(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("enter", filter=has_completions)
    def _enter_completion(event: Any) -> None:
        buf = event.current_buffer
        state = buf.complete_state
        if state is not None and state.current_completion is not None:
            buf.apply_completion(state.current_completion)
        else:
            buf.cancel_completion()

    return kb


def style() -> Any:
    from prompt_toolkit.styles import Style

    return Style.from_dict(
        {
            "prompt": "ansigreen bold",
            "continuation": "ansibrightblack",
            "bottom-toolbar": "noreverse bg:ansibrightblack fg:ansiwhite",
            "pygments.keyword": "ansiblue bold",
            "pygments.keyword.type": "ansicyan",
            "pygments.keyword.pseudo": "ansimagenta bold",
            "pygments.literal.string": "ansigreen",
            "pygments.literal.number": "ansicyan",
            "pygments.comment": "ansibrightblack italic",
            "pygments.name.function": "ansimagenta",
            "pygments.name.label": "ansiyellow",
            "pygments.name.variable": "ansiyellow bold",
            "pygments.name.quoted": "ansibrightgreen",
            "pygments.operator": "ansibrightblue",
        }
    )


def help_text(commands: dict[str, tuple[str, str]]) -> str:
    lines = [
        "Statements end with ';' and may span lines.  Besides SQL and GQL queries:",
        "  SHOW TABLES | SHOW GRAPHS | SHOW FUNCTIONS",
        "  DESCRIBE name            columns of a table or view, labels and fields of a graph",
        "  EXPLAIN statement        every plan level of a statement",
        "  SET key = value          job configuration (SET alone lists it)",
        "  USE GRAPH name           the graph MATCH reads",
        "",
        "Commands:",
    ]
    for cmd, (arg, text) in commands.items():
        lines.append(f"  {(cmd + ' ' + arg).strip():<24} {text}")
    lines += [
        "",
        "Keys: Tab completes names from the catalog, Up/Down walk the history,",
        "Ctrl-C cancels the running statement (or clears the input), Ctrl-D quits.",
    ]
    return "\n".join(lines)


def page(text: str) -> bool:
    """Show ``text`` in $GEAFLOW_SQL_PAGER, $PAGER or ``less``; False if there is none."""
    command = os.environ.get("GEAFLOW_SQL_PAGER") or os.environ.get("PAGER") or "less -FRSX"
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if not argv or shutil.which(argv[0]) is None:
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRSX")
    with ignoring_sigint():  # the pager handles Ctrl-C itself
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write((text + "\n").encode("utf-8", "replace"))
                proc.stdin.close()
            proc.wait()
        except OSError:
            return False
    return True


@contextlib.contextmanager
def sigint_sets(flag: threading.Event) -> Iterator[None]:
    """While a statement runs, Ctrl-C sets ``flag`` instead of raising KeyboardInterrupt.

    A KeyboardInterrupt raised in the middle of a py4j call (the progress bar asks
    Spark for task counts ten times a second) breaks that call's connection and makes
    py4j log a traceback to the terminal; a flag read by the UI loop interrupts nothing.
    """
    with on_sigint(lambda _signum, _frame: flag.set()), no_control_echo():
        yield


@contextlib.contextmanager
def no_control_echo() -> Iterator[None]:
    """Keep the terminal from echoing ``^C`` into the middle of the shell's own output."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] = saved[3] & ~termios.ECHOCTL
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (OSError, ValueError, termios.error):  # stdin is not a terminal
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


@contextlib.contextmanager
def ignoring_sigint() -> Iterator[None]:
    with on_sigint(signal.SIG_IGN):
        yield


@contextlib.contextmanager
def on_sigint(handler: Any) -> Iterator[None]:
    """SIGINT goes to ``handler`` for a while (only the main thread may set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
