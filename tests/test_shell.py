"""The interactive shell, driven in a real terminal (tmux), plus its pieces.

The tmux test types into ``python -m geaflow_sql.cli`` the way a person would
and reads the screen back: multi-line input, Tab completion of a table and a
label, an error with its caret, Ctrl-C during a long query, a query after it,
a multi-line MATCH, ``\\i``, and Ctrl-D.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from pygments.token import Comment, Keyword, Name, String

from geaflow_sql.shell_syntax import (
    CatalogCompleter,
    GeaflowLexer,
    has_statement,
    is_complete,
    keywords,
)

from .jvm_env import quick_jit

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------
# Pieces: input completeness, highlighting, completion
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1\nFROM t;", True),
        ("SELECT ';'", False),
        ("SELECT 'it''s';", True),
        ("SELECT 'a\\';", False),  # the quote is escaped: the string is still open
        ("SELECT 1 -- ;", False),
        ("SELECT 1; -- done", True),
        ("SELECT 1 /* ; */", False),
        ("SELECT 1; /* open", False),
        ("SELECT `a;b`", False),
        ("\\timing", True),
        ("", True),
        ("exit", True),
    ],
)
def test_enter_runs_only_complete_input(text, complete):
    assert is_complete(text) is complete


def test_has_statement_ignores_separators_and_comments():
    assert not has_statement(" ;; -- nothing\n/* here */ ;")
    assert has_statement("-- a\nSELECT 1")


@pytest.mark.parametrize(
    ("script", "needs"),
    [
        (
            "CREATE TABLE t (a int) WITH (type='file'); SHOW TABLES; DESCRIBE t; SET k = 1; DROP TABLE t",
            False,
        ),
        ("CREATE VIEW v AS SELECT 1; USE GRAPH g", False),
        ("CREATE TABLE t (a int); SELECT 1", True),
        ("CREATE GRAPH g (VERTEX v (id bigint ID))", True),
        ("DROP GRAPH g", True),
        ("EXPLAIN SELECT 1", True),
    ],
)
def test_catalog_statements_do_not_wait_for_spark(script, needs):
    from geaflow_sql import parse
    from geaflow_sql.shell import _needs_spark

    assert _needs_spark(parse(script)) is needs


def test_keywords_come_from_the_grammar():
    kws = keywords()
    assert {"SELECT", "MATCH", "RETURN", "CREATE", "GRAPH", "VERTEX", "EDGE", "YIELD"} <= set(kws)
    assert all(k == k.upper() for k in kws)


def test_lexer_highlights_sql_and_gql():
    tokens = [(t, v) for t, v in GeaflowLexer().get_tokens(
        "MATCH (a:person)-[e:knows]->(b) WHERE a.name = 'x;y' RETURN count(a) -- c\n"
    ) if v.strip()]  # fmt: skip
    kinds = dict((v, t) for t, v in tokens)
    assert kinds["MATCH"] is Keyword and kinds["RETURN"] is Keyword and kinds["WHERE"] is Keyword
    assert kinds["person"] is Name.Label and kinds["knows"] is Name.Label
    assert kinds["'x;y'"] in String
    assert kinds["count"] is Name.Function
    assert kinds["-- c"] in Comment


def _complete(completer, text):
    doc = Document(text, len(text))
    return [(c.text, c.display_meta_text) for c in completer.get_completions(doc, CompleteEvent())]


def test_completion_reads_the_live_catalog(session):
    session.execute(
        """
        CREATE TABLE users (id bigint, name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='users.txt');
        CREATE GRAPH social (
          VERTEX person (id bigint ID, name varchar, age int),
          EDGE knows (s bigint SOURCE ID, d bigint DESTINATION ID, since int)
        ) WITH (storeType='memory');
        """
    )
    completer = CatalogCompleter(
        session,
        lambda: ["concat", "count", "upper"],
        lambda: ["page_rank", "sssp"],
        lambda: ["geaflow.dsl.window.size"],
    )
    assert _complete(completer, "SELECT * FROM us") == [("users", "table")]
    assert _complete(completer, "select * from users u join us")[0][0] == "users"
    assert [t for t, _ in _complete(completer, "SELECT users.")] == ["id", "name", "age"]
    assert _complete(completer, "MATCH (a:per") == [("person", "vertex of social")]
    assert _complete(completer, "MATCH (a:person)-[e:") == [("knows", "edge of social")]
    assert [t for t, _ in _complete(completer, "MATCH (a:person) RETURN a.")] == [
        "id",
        "name",
        "age",
    ]
    assert [t for t, _ in _complete(completer, "MATCH (a:person)-[e:knows]->(b) RETURN e.si")] == [
        "since"
    ]
    assert _complete(completer, "USE GRAPH so") == [("social", "graph")]
    assert _complete(completer, "MATCH (a) CALL pa") == [("page_rank", "algorithm")]
    assert ("count", "function") in _complete(completer, "SELECT cou")
    assert ("select", "keyword") in _complete(completer, "sel")  # keywords follow the typed case
    assert ("SELECT", "keyword") in _complete(completer, "SEL")
    assert _complete(completer, "SET geaflow.dsl.win") == [("geaflow.dsl.window.size", "setting")]
    assert [t for t, _ in _complete(completer, "\\out")] == ["output"]
    assert [t for t, _ in _complete(completer, "\\output j")] == ["json"]
    # A name defined now is offered at once.
    session.execute("CREATE VIEW young AS SELECT name FROM users WHERE age < 18")
    assert ("young", "view") in _complete(completer, "SELECT * FROM yo")


def test_completion_offers_the_gql_beyond_geaflow(session):
    """Path modes, search prefixes, OPTIONAL MATCH and time travel are
    keywords the completer offers; labels inside a label expression; the
    functions of paths and graph elements as the shell lists them."""
    from geaflow_sql.shell import session_completer

    session.execute(
        """
        CREATE GRAPH social (
          VERTEX person (id bigint ID, name varchar),
          VERTEX software (id bigint ID, lang varchar),
          EDGE knows (s bigint SOURCE ID, d bigint DESTINATION ID),
          EDGE uses (s bigint SOURCE ID, d bigint DESTINATION ID)
        ) WITH (storeType='memory');
        """
    )
    completer = session_completer(session)
    for typed, word in (
        ("MATCH p = ANY SHORT", "SHORTEST"),
        ("MATCH ACYC", "ACYCLIC"),
        ("MATCH TRA", "TRAIL"),
        ("MATCH (a) OPTIO", "OPTIONAL"),
        ("SHOW VERS", "VERSIONS"),
        ("VACU", "VACUUM"),
    ):
        assert (word, "keyword") in _complete(completer, typed), typed
    assert _complete(completer, "MATCH (x:person|soft") == [("software", "vertex of social")]
    assert _complete(completer, "MATCH (x:!per") == [("person", "vertex of social")]
    assert _complete(completer, "MATCH (x)-[e:knows|us") == [("uses", "edge of social")]
    offered = _complete(completer, "MATCH p = (a)-[e]->{1,3}(b) RETURN path_l")
    assert ("path_length", "function") in offered, offered
    for name in ("nodes", "edges", "srcid", "label"):
        assert (name, "function") in _complete(completer, f"RETURN {name[:3]}"), name


# --------------------------------------------------------------------------
# The shell in a real terminal
# --------------------------------------------------------------------------

TMUX = shutil.which("tmux")
SPARK_START = 240  # seconds: Spark start-up is slow on a busy two-core machine


class Terminal:
    """A tmux pane on a private tmux server, running one command."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.socket = f"geaflow-test-{os.getpid()}-{time.monotonic_ns()}"
        self.name = "shell"
        shell_cmd = " ".join(
            [
                "cd",
                _q(str(cwd)),
                "&&",
                "exec",
                "env",
                *(f"{k}={_q(v)}" for k, v in env.items()),
                *map(_q, command),
            ]
        )
        self._tmux("new-session", "-d", "-s", self.name, "-x", "110", "-y", "45", shell_cmd)

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None
        return subprocess.run(
            [TMUX, "-L", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def type(self, text: str) -> None:
        """Type text literally (tmux would read a trailing ';' as its own separator)."""
        for i, part in enumerate(text.split(";")):
            if i:
                self._tmux("send-keys", "-t", self.name, "-H", "3b")
            if part:
                self._tmux("send-keys", "-t", self.name, "-l", part)

    def press(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        """Everything the pane shows, including what scrolled off (wrapped lines joined)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.name).stdout

    def alive(self) -> bool:
        return self._tmux("has-session", "-t", self.name).returncode == 0

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> str:
        """The screen once ``pattern`` (a regex) appears past character ``after``."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if re.search(pattern, text[after:], re.M):
                return text
            if not self.alive():
                break
            time.sleep(0.3)
        raise AssertionError(f"{pattern!r} did not appear within {timeout} s; the screen:\n{text}")

    def prompt_mark(self, timeout: float) -> int:
        """Wait for an empty prompt; return where its line starts in ``screen()``.

        What the next input prints appears after this offset, and nothing
        before it changes any more (unlike the blank lines and the toolbar below).
        """
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            lines = text.rstrip("\n").split("\n")
            i = len(lines) - 1
            while i >= 0 and (not lines[i].strip() or lines[i].startswith(" Spark")):
                i -= 1
            if i >= 0 and re.fullmatch(r"geaflow( \([^)]*\))?>", lines[i].rstrip()):
                return sum(len(ln) + 1 for ln in lines[:i])
            time.sleep(0.3)
        raise AssertionError(f"no prompt within {timeout} s; the screen:\n{text}")

    def close(self) -> None:
        self._tmux("kill-server")


def _q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)")
def test_shell_in_a_real_terminal(tmp_path):
    (tmp_path / "users.txt").write_text("1,jim,15\n2,kate,16\n3,lucy,20\n", encoding="utf-8")
    (tmp_path / "big.txt").write_text(
        "\n".join(str(i) for i in range(3000)) + "\n", encoding="utf-8"
    )
    (tmp_path / "graph.gql").write_text(
        """
        CREATE GRAPH social (
          VERTEX person (id bigint ID, name varchar),
          EDGE knows (s bigint SOURCE ID, d bigint DESTINATION ID)
        ) WITH (storeType='memory');
        USE GRAPH social;
        INSERT INTO social.person(id, name) VALUES (1, 'ann'), (2, 'bob');
        INSERT INTO social.knows VALUES (1, 2);
        """,
        encoding="utf-8",
    )
    (tmp_path / "bad.gql").write_text("SELECT 1;\nSELECT name FROM nowhere;\n", encoding="utf-8")
    (tmp_path / "stream.txt").write_text(
        "".join(f"{i},{i % 7}\n" for i in range(60)), encoding="utf-8"
    )
    (tmp_path / "stream.gql").write_text(
        f"""
        SET geaflow.dsl.checkpoint.dir = '{tmp_path / "checkpoint"}';
        SET geaflow.file.persistent.root = '{tmp_path / "warehouse"}';
        CREATE TABLE ticks (id bigint, k bigint)
          WITH (type='file', geaflow.dsl.file.path='stream.txt', geaflow.dsl.window.size = 4);
        CREATE GRAPH pulse (VERTEX tick (id bigint ID, k bigint)) WITH (storeType='rocksdb');
        CREATE TABLE seen (id bigint) WITH (type='file', geaflow.dsl.file.path='seen.txt');
        INSERT INTO pulse.tick SELECT id, k FROM ticks;
        INSERT INTO seen SELECT id FROM ticks WHERE k = 0;
        """,
        encoding="utf-8",
    )
    history = tmp_path / "history"
    env = quick_jit(
        {
            "PYTHONPATH": str(ROOT),
            "GEAFLOW_SQL_HISTORY": str(history),
            "TERM": "xterm-256color",
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "LANG": "C.UTF-8",
            "JAVA_HOME": os.environ.get("JAVA_HOME", ""),
            # Each graph part written waits: a windowed job's windows take a while.
            "GEAFLOW_SQL_STORE_PAUSE_AFTER_PART": "0.5",
        }
    )
    term = Terminal(
        [
            sys.executable,
            "-m",
            "geaflow_sql.cli",
            "--master",
            "local[2]",
            "--conf",
            "spark.sql.shuffle.partitions=2",
        ],
        env,
        tmp_path,
    )
    try:
        term.prompt_mark(120)

        # Multi-line input: Enter before the ';' continues the statement.
        term.type("CREATE TABLE users (id bigint, name varchar, age int)")
        term.press("Enter")
        term.wait_for(r"^\s*\.\.\.> ", 10)
        term.type("  WITH (type='file', geaflow.dsl.file.path='users.txt');")
        term.press("Enter")
        term.wait_for(r"^table users created", SPARK_START)

        # Tab completes a table name from the live catalog.
        mark = term.prompt_mark(30)
        term.type("SELECT name, age")
        term.press("Enter")
        term.type("FROM us")
        term.press("Tab")
        term.wait_for(r"FROM users\s*$", 10, mark)
        term.type(" WHERE age > 15 ORDER BY name;")
        term.press("Enter")
        screen = term.wait_for(r"^\(2 rows\)", 120, mark)
        assert re.search(r"^\| kate\s+\|\s+16 \|$", screen, re.M), screen
        assert re.search(r"^\| lucy\s+\|\s+20 \|$", screen, re.M), screen
        # \timing shows where the time went (the statement's profile).
        timing = r"^Time: \d+\.\d{3} s \(parse \d+, bind \d+, optimize \d+, build \d+, local \d+, spark \d+ ms; \d+ py4j calls\)$"
        assert re.search(timing, screen[mark:], re.M), screen

        # An error shows line, column and a caret, and the shell keeps going.
        mark = term.prompt_mark(30)
        term.type("SELECT name,, age FROM users;")
        term.press("Enter")
        screen = term.wait_for(r"^syntax error at line 1, column 13: unexpected ','", 30, mark)
        lines = screen[mark:].splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith("syntax error at line 1"))
        assert lines[at + 1].strip() == "SELECT name,, age FROM users;"
        assert lines[at + 2].index("^") == lines[at + 1].index(",,") + 1
        assert "Traceback" not in screen

        # Ctrl-C during a long query cancels it and keeps the shell.
        term.type(
            "CREATE TABLE big (x bigint) WITH (type='file', geaflow.dsl.file.path='big.txt');"
        )
        term.press("Enter")
        term.wait_for(r"^table big created", 30)
        mark = term.prompt_mark(30)
        term.type("SELECT count(*) AS n FROM big a, big b, big c WHERE a.x + b.x + c.x = -1;")
        term.press("Enter")
        term.wait_for(r"tasks .*\(Ctrl-C cancels\)", 120, mark)  # the progress bar
        time.sleep(1.0)
        started = time.monotonic()
        # Twice, the second while the first is being handled: neither may surface as a
        # KeyboardInterrupt inside a py4j call (py4j logs that as a traceback).
        term.press("C-c")
        time.sleep(0.05)
        term.press("C-c")
        screen = term.wait_for(r"^cancelled after \d+\.\d s", 90, mark)
        assert time.monotonic() - started < 90
        assert "Traceback" not in screen

        # ... and the next query works.
        mark = term.prompt_mark(30)
        term.type("SELECT count(*) AS n FROM users;")
        term.press("Enter")
        screen = term.wait_for(r"^\(1 row\)", 120, mark)
        assert re.search(r"^\| 3 \|$", screen[mark:], re.M), screen[mark:]

        # A windowed job prints a line per window; Ctrl-C stops it after
        # the window it is running, and the prompt comes back.
        mark = term.prompt_mark(30)
        term.type("\\i stream.gql")
        term.press("Enter")
        term.wait_for(r"^window 2: 4 rows in, \d+ rows out, [\d.]+ s, checkpointed$", 120, mark)
        term.press("C-c")
        term.wait_for(r"^stopping after this window", 30, mark)
        after = term.prompt_mark(120)
        windows = re.findall(r"^window (\d+): ", term.screen()[mark:after], re.M)
        assert 2 <= len(windows) < 15 and windows == [str(k) for k in range(1, len(windows) + 1)]
        seen = (tmp_path / "seen.txt").read_text(encoding="utf-8").split()
        # What the windows that ran wrote, and nothing of the others.
        assert seen == [str(i) for i in range(0, 4 * len(windows), 7)], (windows, seen)
        assert "Traceback" not in term.screen()[mark:]

        # \i runs a file; its errors name the file, line and column.
        mark = term.prompt_mark(30)
        term.type("\\i bad.gql")
        term.press("Enter")
        screen = term.wait_for(r"^bad\.gql:2:18: error: .*nowhere", 60, mark)
        assert "Traceback" not in screen[mark:]
        mark = term.prompt_mark(30)
        term.type("\\i graph.gql")
        term.press("Enter")
        term.wait_for(r"^using graph social", 120, mark)

        # A multi-line MATCH, with a label completed by Tab.
        mark = term.prompt_mark(120)
        assert term.screen()[mark:].startswith("geaflow (social)>")
        term.type("MATCH (a:per")
        term.press("Tab")
        term.wait_for(r"MATCH \(a:person\s*$", 10, mark)
        term.type(")-[e:knows]->(b:person)")
        term.press("Enter")
        term.type("RETURN a.name AS src, b.name AS dst;")
        term.press("Enter")
        screen = term.wait_for(r"^\(1 row\)|^unsupported", 120, mark)
        match_supported = not re.search(r"^unsupported", screen[mark:], re.M)
        if match_supported:
            assert re.search(r"^\| ann\s+\| bob\s+\|$", screen[mark:], re.M), screen[mark:]

        # Ctrl-D at the next prompt leaves; the history file kept the statements.
        term.prompt_mark(120)
        term.press("C-d")
        deadline = time.monotonic() + 60
        while term.alive() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not term.alive()
        saved = history.read_text(encoding="utf-8")
        assert "+SELECT name, age\n+FROM users WHERE age > 15 ORDER BY name;" in saved
        assert "+\\i graph.gql" in saved
    finally:
        term.close()
    if not match_supported:
        pytest.skip("MATCH is not supported by the engine yet; the rest of the shell test passed")
