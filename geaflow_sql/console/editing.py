"""What the console's editor asks of the server: colours and completions.

Both come from the interactive shell's own code, so the page and the shell
agree: the shell's Pygments lexer (``shell_syntax.GeaflowLexer``) cuts the
text into coloured spans, and its completer over the workspace's live
catalog (``shell.session_completer``) proposes words at the cursor.
"""

from __future__ import annotations

from typing import Any

# Pygments token type -> the page's CSS class (the first that applies).
_CLASSES = (
    ("Token.Comment", "comment"),
    ("Token.Literal.String", "string"),
    ("Token.Literal.Number", "number"),
    ("Token.Keyword.Type", "type"),
    ("Token.Keyword", "keyword"),
    ("Token.Name.Function", "function"),
    ("Token.Name.Label", "label"),
    ("Token.Name.Variable", "parameter"),
    ("Token.Operator", "operator"),
)


def highlight(text: str) -> list[list[Any]]:
    """``[start, end, class]`` of each coloured span of ``text`` (offsets in
    characters; plain text and names are left out)."""
    from ..shell_syntax import GeaflowLexer

    spans: list[list[Any]] = []
    for start, token, value in GeaflowLexer(stripnl=False, ensurenl=False).get_tokens_unprocessed(
        text
    ):
        name = str(token)
        css = next((c for prefix, c in _CLASSES if name.startswith(prefix)), None)
        if css is not None and value:
            spans.append([start, start + len(value), css])
    return spans


def completions(session: Any, text: str, cursor: int) -> list[dict[str, Any]]:
    """The shell's completions at ``cursor`` of ``text`` in ``session``: each
    the word to put in, how many characters before the cursor it replaces,
    and what it is (a table, a label, a function...)."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from ..shell import session_completer

    cursor = max(0, min(cursor, len(text)))
    found = session_completer(session).get_completions(
        Document(text, cursor), CompleteEvent(completion_requested=True)
    )
    out = []
    for c in found:
        out.append({"text": c.text, "replace": -c.start_position, "meta": c.display_meta_text})
        if len(out) >= 200:
            break
    return out
