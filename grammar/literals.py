"""Decoding literal text: quoted strings and quoted identifiers."""

from __future__ import annotations

_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "\\": "\\",
    "'": "'",
    '"': '"',
}


def unescape_string(body: str, quote: str) -> str:
    """Decode the inside of a quoted string the way GeaFlow (Java) does.

    Backslash escapes follow Java's ``unescapeJava``: ``\\n``, ``\\t``, octal
    ``\\0``, ``\\uXXXX``; a backslash before any other character is dropped.
    A doubled quote stands for one quote, as in SQL.
    """
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch == "\\" and i + 1 < n:
            nxt = body[i + 1]
            if nxt in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "u":
                j = i + 2
                while j < n and body[j] == "u":
                    j += 1
                digits = body[j : j + 4]
                if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(chr(int(digits, 16)))
                    i = j + 4
                    continue
                out.append("u")
                i += 2
                continue
            if nxt in "01234567":
                j = i + 1
                limit = 4 if nxt in "0123" else 3
                while j < n and j < i + limit and body[j] in "01234567":
                    j += 1
                out.append(chr(int(body[i + 1 : j], 8)))
                i = j
                continue
            # Unknown escape: Java drops the backslash.
            out.append(nxt)
            i += 2
            continue
        if ch == quote and i + 1 < n and body[i + 1] == quote:
            out.append(quote)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def decode_string_token(text: str) -> str:
    quote = text[0]
    return unescape_string(text[1:-1], quote)


def decode_identifier(text: str) -> str:
    if len(text) >= 2 and text[0] == "`" and text[-1] == "`":
        return text[1:-1].replace("``", "`")
    return text
