"""Notebook magics: ``%load_ext geaflow_sql.ipython``, then ``%%gql`` and ``%gql``.

    %%gql
    CREATE TABLE users (id bigint, name varchar, age int)
      WITH (type='file', geaflow.dsl.file.path='users.txt');
    SELECT name, age FROM users WHERE age > :min_age

The cell's last query comes back as a pandas DataFrame (so the notebook shows
it); ``%gql SELECT ...`` does the same for one line and can be assigned,
``df = %gql SELECT ...``.  ``:name`` placeholders are bound from the notebook's
variables as typed values, never pasted into the text.  Options before the
statements: ``-o NAME`` also stores the result in variable NAME, ``--arrow``
returns a pyarrow Table, ``-q`` prints nothing for DDL.

All cells of a kernel share one Session (one catalog): on the SparkSession
already active in the kernel if there is one, else a local Spark.
``set_session(session)`` makes the magics use a Session of your own.
"""

from __future__ import annotations

import threading
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from .core.errors import GeaflowError

_lock = threading.Lock()
_session: Any = None


def get_session() -> Any:
    """The kernel's Session, started on first use (on the active SparkSession if any)."""
    global _session
    with _lock:
        if _session is None:
            from pyspark.sql import SparkSession

            from .session import Session

            active = SparkSession.getActiveSession()
            _session = Session(spark=active) if active is not None else Session()
        return _session


def set_session(session: Any) -> None:
    """Make every ``%gql``/``%%gql`` of this kernel run on ``session``."""
    global _session
    with _lock:
        _session = session


@magics_class
class GeaflowMagics(Magics):
    """``%gql`` (one line) and ``%%gql`` (a cell of statements)."""

    @line_cell_magic
    def gql(self, line: str, cell: str | None = None) -> Any:
        options, rest = _options(line)
        text = cell if cell is not None else rest
        if cell is not None and rest.strip():
            raise UsageError(f"%%gql takes options on its first line, not {rest.strip()!r}")
        if not text.strip():
            raise UsageError("%gql needs a statement, e.g. %gql SELECT 1")
        return self._run(text, options)

    def _run(self, text: str, options: dict[str, Any]) -> Any:
        session = get_session()
        source = "<cell>"
        try:
            script = session.parse(text, source)
            parameters = self._parameters(script, text, source)
            last = None
            table = None
            with session.cancellable():
                try:
                    for result in session.iter_execute(script, source, parameters=parameters):
                        last = result
                        if result.query is None and not options["quiet"]:
                            _print_statement(result)
                    if last is not None and last.query is not None:
                        try:
                            table = last.query.to_arrow()
                        except GeaflowError as err:
                            err.at(script.statements[-1].span)
                            raise
                except KeyboardInterrupt:  # "interrupt kernel": stop the Spark jobs too
                    session.cancel()
                    raise
        except GeaflowError as err:
            err.with_context(text=text, source=source)
            # IPython prints a UsageError (exactly that class) as its message alone,
            # without a traceback, and stops a "run all" at this cell.
            raise UsageError(err.format()) from None
        value = _value(last, table, options["arrow"])
        if options["out"] is not None:
            self._namespace()[options["out"]] = value
        return value

    def _parameters(self, script: Any, text: str, source: str) -> dict[str, Any] | None:
        """``:name`` placeholders take the notebook variable of that name."""
        from .dbapi.params import iter_parameters

        found = list(iter_parameters(script.statements))
        if not found:
            return None
        values: dict[str, Any] = {}
        namespace = self._namespace()
        for p in found:
            if p.name is None:
                raise GeaflowError(
                    "use :name placeholders in notebooks; they take the variable of that name",
                    span=p.span,
                    text=text,
                    source=source,
                )
            if p.name not in namespace:
                raise GeaflowError(
                    f"no notebook variable {p.name!r} for :{p.name}",
                    span=p.span,
                    text=text,
                    source=source,
                )
            values[p.name] = namespace[p.name]
        return values

    def _namespace(self) -> dict[str, Any]:
        """The notebook's variables."""
        assert self.shell is not None, "the magics are registered on a shell"
        return self.shell.user_ns  # type: ignore[no-any-return]


def _options(line: str) -> tuple[dict[str, Any], str]:
    """Leading ``-o NAME``, ``--arrow``, ``-q``; the rest of the line is the statement."""
    options: dict[str, Any] = {"out": None, "arrow": False, "quiet": False}
    rest = line.lstrip()
    while rest.startswith("-"):
        word, _, after = rest.partition(" ")
        if word in ("-o", "--out"):
            name, _, after = after.lstrip().partition(" ")
            if not name.isidentifier():
                raise UsageError(f"{word} needs a variable name, not {name!r}")
            options["out"] = name
        elif word.startswith("--out="):
            options["out"] = word.split("=", 1)[1]
        elif word == "--arrow":
            options["arrow"] = True
        elif word in ("-q", "--quiet"):
            options["quiet"] = True
        else:
            raise UsageError(f"unknown %gql option {word}; options are -o NAME, --arrow, -q")
        rest = after.lstrip()
    return options, rest


def _print_statement(result: Any) -> None:
    if result.text is not None and not result.extra.get("rows"):
        print(result.text)
    elif result.message:
        print(result.message)


def _value(result: Any, table: Any, arrow: bool) -> Any:
    """The cell's value: the last query's rows, or SHOW/DESCRIBE rows, as a DataFrame."""
    import pyarrow as pa

    if result is None:
        return None
    if table is None and result.extra.get("rows") is not None:
        columns = list(result.extra["columns"])
        rows = result.extra["rows"]
        table = pa.table(
            {c: pa.array([r[i] for r in rows], pa.string()) for i, c in enumerate(columns)}
        )
    if table is None:
        return None  # DDL, SET, EXPLAIN: already printed
    return table if arrow else table.to_pandas()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext geaflow_sql.ipython``."""
    ipython.register_magics(GeaflowMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to tear down: the Session stays for a later ``%load_ext``."""
