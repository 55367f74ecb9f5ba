"""What the interactive shell knows about the language: keywords, highlighting,
when an input is a complete statement, and completion from the live catalog.

Kept apart from the terminal code so each piece is a plain function or class
that tests can call without a terminal.  The keyword list is read from the
grammar's own keyword terminals, so highlighting and completion follow the
grammar as it grows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

TYPE_NAMES = (
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "LONG", "FLOAT", "DOUBLE",
    "DECIMAL", "VARCHAR", "STRING", "CHAR", "BINARY", "VARBINARY", "DATE", "TIMESTAMP",
    "ARRAY", "MAP",
)  # fmt: skip

#: Backslash commands, with the argument each takes and what it does (for \help and completion).
COMMANDS: dict[str, tuple[str, str]] = {
    "\\help": ("", "show this help"),
    "\\timing": ("[on|off]", "show how long each statement took (on by default)"),
    "\\output": ("table|csv|json", "how query results print"),
    "\\pager": ("[on|off]", "page results longer than the screen (with $PAGER or less)"),
    "\\maxrows": ("N", "print at most N rows of a result (default 1000)"),
    "\\i": ("FILE", "run the statements in FILE"),
    "\\q": ("", "quit (Ctrl-D works too)"),
}
COMMAND_ALIASES = {"\\h": "\\help", "\\?": "\\help", "\\quit": "\\q", "\\include": "\\i"}

_KEYWORD_TERMINAL = re.compile(r'^[A-Z_]+(?:\.\d+)?\s*:\s*"([A-Za-z_]+)"i\s*$', re.M)


@functools.cache
def keywords() -> tuple[str, ...]:
    """The grammar's keywords (upper case), from its ``NAME: "name"i`` terminals."""
    import grammar

    root = Path(grammar.__file__).resolve().parent
    found: set[str] = set()
    for lark in sorted(root.glob("*.lark")):
        found.update(
            m.group(1).upper() for m in _KEYWORD_TERMINAL.finditer(lark.read_text("utf-8"))
        )
    # DESC is spelled with a terminal name of its own (DESC_KW) but is the same kind of word.
    return tuple(sorted(found | {"DESC"}))


# --------------------------------------------------------------------------
# Highlighting
# --------------------------------------------------------------------------


class GeaflowLexer(RegexLexer):
    """Pygments lexer for GeaFlow's SQL + GQL, plus the shell's backslash commands."""

    name = "GeaFlow DSL"
    aliases = ["geaflow", "gql"]
    filenames = ["*.gql"]
    flags = re.IGNORECASE | re.MULTILINE

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"--[^\n]*", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            # Strings may be unterminated while the user is still typing them.
            (r"'(?:[^'\\]|\\.|'')*'?", String.Single),
            (r'"(?:[^"\\]|\\.|"")*"?', String.Double),
            (r"`(?:[^`]|``)*`?", Name.Quoted),
            (r"^\s*\\[A-Za-z?]+", Keyword.Pseudo),
            (r"\?", Name.Variable),
            # ``(a:person)`` and ``[e:knows]``: a variable, then a label.
            (r"(:)([A-Za-z_][\w$]*)", bygroups(Punctuation, Name.Label)),
            (
                r"[0-9]+\.[0-9]*(?:e[+-]?[0-9]+)?|\.[0-9]+(?:e[+-]?[0-9]+)?|[0-9]+e[+-]?[0-9]+",
                Number.Float,
            ),
            (r"[0-9]+l?\b", Number.Integer),
            (words(TYPE_NAMES, prefix=r"\b", suffix=r"\b"), Keyword.Type),
            (words(keywords(), prefix=r"\b", suffix=r"\b"), Keyword),
            (r"[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*(?=\s*\()", Name.Function),
            (r"~?[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*", Name),
            (r"->|<-|\|\||<>|!=|<=|>=|=>|\|\+\||[-+*/%<>=|]", Operator),
            (r"[(),;.\[\]{}]", Punctuation),
            (r".", Text),
        ],
        "comment": [
            (r"[^*]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"\*", Comment.Multiline),
        ],
    }


# --------------------------------------------------------------------------
# Is the input complete?
# --------------------------------------------------------------------------


def _significant(text: str) -> Iterator[tuple[int, str]]:
    """(index, char) of every character outside strings, quoted names and comments.

    A string, quoted name or comment still open at the end yields a final
    ``(index, "")`` so callers can tell the input is unfinished.
    """
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and ch != "`":
                    j += 2
                    continue
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                yield i, ""
                return
            i = j + 1
            continue
        if text.startswith("--", i):
            end = text.find("\n", i)
            if end < 0:
                return
            i = end + 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                yield i, ""
                return
            i = end + 2
            continue
        yield i, ch
        i += 1


def is_complete(text: str) -> bool:
    """Should Enter run ``text``?  Yes for a command, an empty line, ``exit``,
    or statements whose last significant character is a ``;``."""
    stripped = text.strip()
    if not stripped or stripped.startswith("\\") or stripped.lower() in ("exit", "quit"):
        return True
    last = ""
    for _, ch in _significant(text):
        if ch == "":
            return False
        if not ch.isspace():
            last = ch
    return last == ";"


def has_statement(text: str) -> bool:
    """Does ``text`` hold anything but separators and comments?"""
    return any(ch not in ";" and not ch.isspace() for _, ch in _significant(text))


# --------------------------------------------------------------------------
# Completion
# --------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9_$\u0080-\uffff]*$")
_SET_KEY = re.compile(r"(?:^|;)\s*SET\s+([\w.]*)$", re.IGNORECASE)
# ``(a:``, ``(:``, ``[e:``, ``-[:`` just before the label being typed.
# After the ``:`` of a vertex or edge pattern, or after an operator of its
# label expression (``|``, ``&``, ``!``, ``(``).
_LABEL_SPEC = re.compile(r"([(\[])\s*(?:[A-Za-z_][\w$]*)?\s*:(?:[\w$\s%()|&!]*[|&!(])?\s*$")


class CatalogCompleter(Completer):
    """Completes keywords, tables, views, graphs, labels, properties, columns,
    functions and algorithms, reading the session's catalog each time so new
    definitions are offered at once.

    ``session`` is a ``Session`` (only its ``catalog`` is read);
    ``functions`` and ``algorithms`` return names.
    """

    def __init__(
        self,
        session: Any,
        functions: Callable[[], Iterable[str]],
        algorithms: Callable[[], Iterable[str]],
        config_keys: Callable[[], Iterable[str]] = lambda: (),
    ) -> None:
        self.session = session
        self._functions = functions
        self._algorithms = algorithms
        self._config_keys = config_keys
        self._paths = PathCompleter(expanduser=True)

    # What the catalog holds ---------------------------------------------
    @property
    def catalog(self) -> Any:
        return self.session.catalog

    def _graphs(self) -> list[Any]:
        cat = self.catalog
        graphs = [cat.graph((n,)) for n in cat.graph_names()]
        current = cat.current_graph
        # The current graph first: its labels are the likely ones.
        return sorted((g for g in graphs if g is not None), key=lambda g: g.name != current)

    def _columns(self, name: str | None = None) -> list[tuple[str, str]]:
        cat = self.catalog
        out: list[tuple[str, str]] = []
        for table_name in cat.table_names():
            if name is not None and table_name.lower() != name.lower():
                continue
            table = cat.table((table_name,))
            out += [(c.name, f"{table_name} column") for c in table.columns]
        for view_name in cat.view_names():
            if name is not None and view_name.lower() != name.lower():
                continue
            view = cat.view((view_name,))
            out += [(c, f"{view_name} column") for c in view.columns]
        return out

    def _labels(self, kind: str | None) -> list[tuple[str, str]]:
        out = []
        for g in self._graphs():
            if kind in (None, "vertex"):
                out += [(v.label, f"vertex of {g.name}") for v in g.vertices]
            if kind in (None, "edge"):
                out += [(e.label, f"edge of {g.name}") for e in g.edges]
        return out

    def _properties(self, label: str | None) -> list[tuple[str, str]]:
        out = []
        for g in self._graphs():
            for item in (*g.vertices, *g.edges):
                if label is None or item.label.lower() == label.lower():
                    out += [(f.name, f"{item.label} property") for f in item.fields]
        return out

    # Completion -----------------------------------------------------------
    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        before = document.text_before_cursor
        word = _WORD.search(before).group(0)  # type: ignore[union-attr]
        head = before[: len(before) - len(word)]
        stripped = head.lstrip()
        if stripped.startswith("\\"):
            yield from self._command_completions(document, stripped, word)
            return
        setting = _SET_KEY.search(before)
        if setting:  # keys have dots, so the whole dotted key is the word
            typed = setting.group(1)
            for key in self._config_keys():
                if key.lower().startswith(typed.lower()):
                    yield Completion(key, -len(typed), display_meta="setting")
            return
        candidates = self._candidates(head, document.text)
        seen: set[str] = set()
        lowered = word.lower()
        for text, meta in candidates:
            if text.lower().startswith(lowered) and text not in seen:
                seen.add(text)
                yield Completion(_match_case(text, word, meta), -len(word), display_meta=meta)

    def _candidates(self, head: str, full_text: str) -> list[tuple[str, str]]:
        if head.endswith("."):
            qualifier = _WORD.search(head[:-1]).group(0)  # type: ignore[union-attr]
            columns = self._columns(qualifier)
            if columns:
                return columns
            graph = self.catalog.graph((qualifier,)) if qualifier else None
            if graph is not None:  # INSERT INTO g.person
                return [(v.label, "vertex") for v in graph.vertices] + [
                    (e.label, "edge") for e in graph.edges
                ]
            label = _label_of_variable(full_text, qualifier)
            props = self._properties(label)
            return props or self._properties(None) or self._columns()
        label_spec = _LABEL_SPEC.search(head)
        if label_spec:
            return self._labels("vertex" if label_spec.group(1) == "(" else "edge")
        prev = _previous_words(head)
        last = prev[-1] if prev else ""
        cat = self.catalog
        tables = [(n, "table") for n in cat.table_names()] + [(n, "view") for n in cat.view_names()]
        graphs = [(n, "graph") for n in cat.graph_names()]
        if last in ("FROM", "JOIN", "INTO", "TABLE", "OVERWRITE") or (
            last == "," and "FROM" in prev and "WHERE" not in prev
        ):
            return tables + graphs if last == "INTO" else tables
        if last in ("DESCRIBE", "DESC"):
            return (
                tables + graphs + [("GRAPH", "keyword"), ("TABLE", "keyword"), ("VIEW", "keyword")]
            )
        if last == "GRAPH":
            return graphs
        if last == "CALL":
            return [(a, "algorithm") for a in self._algorithms()]
        names = [(f, "function") for f in self._functions()]
        kws = [(k, "keyword") for k in (*keywords(), *TYPE_NAMES)]
        return tables + graphs + self._columns() + self._properties(None) + names + kws

    def _command_completions(
        self, document: Document, stripped: str, word: str
    ) -> Iterator[Completion]:
        if stripped == "\\":  # the command name itself
            for cmd, (_arg, helptext) in COMMANDS.items():
                if cmd[1:].startswith(word):
                    yield Completion(cmd[1:], -len(word), display=cmd, display_meta=helptext)
            return
        name = stripped.split()[0]
        cmd = COMMAND_ALIASES.get(name, name)
        if cmd == "\\i":
            typed = document.text_before_cursor.lstrip()[len(name) :].lstrip()
            yield from self._paths.get_completions(Document(typed), CompleteEvent())
            return
        options = {
            "\\output": ("table", "csv", "json"),
            "\\timing": ("on", "off"),
            "\\pager": ("on", "off"),
        }.get(cmd, ())
        for opt in options:
            if opt.startswith(word.lower()):
                yield Completion(opt, -len(word))


def _match_case(text: str, typed: str, meta: str) -> str:
    """Keywords follow the case the user types in; names keep their own."""
    if meta == "keyword" and typed and typed == typed.lower():
        return text.lower()
    return text


def _previous_words(head: str) -> list[str]:
    """Upper-cased words and commas before the cursor, outside strings and comments."""
    kept = "".join(ch for _, ch in _significant(head))
    tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|,|;|\(|\)", kept)
    return [t.upper() for t in tokens[-12:]] if tokens else []


def _label_of_variable(text: str, variable: str) -> str | None:
    """The label written for ``variable`` in a pattern: ``(a:person)`` -> person."""
    if not variable:
        return None
    m = re.search(r"[(\[]\s*" + re.escape(variable) + r"\s*:\s*([A-Za-z_][\w$]*)", text)
    return m.group(1) if m else None


__all__ = [
    "COMMANDS",
    "COMMAND_ALIASES",
    "CatalogCompleter",
    "GeaflowLexer",
    "has_statement",
    "is_complete",
    "keywords",
]
