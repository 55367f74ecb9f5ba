"""Mutated corpus scripts either parse or raise ParseError — never anything else."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import geaflow_sql
from geaflow_sql import ParseError

TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|'(?:[^'\\]|\\.)*'|\S")
# Tokens a mutation puts in place of one: the ones that most often break a
# statement's structure (each fuzz test adds a few of its own).
BREAKERS = ("(", ")", ",", ";", "'", "`", "-[", "]->", "SELECT", "MATCH", "|+|", "{", "}")


def _scripts(corpus):
    texts = []
    for path in sorted((corpus / "query").glob("*.sql"))[::3]:
        text = path.read_text(encoding="utf-8")
        # Drop the licence header: mutations should hit statements.
        text = re.sub(r"/\*.*?\*/", "", text, count=1, flags=re.S)
        texts.append(text)
    return texts


@st.composite
def mutated(draw, scripts):
    text = draw(st.sampled_from(scripts))
    tokens = TOKEN.findall(text)
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            break
        op = draw(st.sampled_from(["drop", "dup", "swap", "truncate", "inject", "replace"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if op == "drop":
            del tokens[i]
        elif op == "dup":
            tokens.insert(i, tokens[i])
        elif op == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == "truncate":
            tokens = tokens[:i]
        elif op == "inject":
            junk = draw(st.text(min_size=1, max_size=4))
            tokens.insert(i, junk)
        else:
            tokens[i] = draw(st.sampled_from([*BREAKERS, "=>", "\x00", "~"]))
    return "".join(tokens)


@pytest.fixture(scope="module")
def scripts(corpus):
    return _scripts(corpus)


def test_mutated_scripts_parse_or_raise_parse_error(scripts):
    seen = {"ok": 0, "error": 0}

    @settings(
        max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(mutated(scripts))
    def check(text):
        try:
            geaflow_sql.parse(text)
            seen["ok"] += 1
        except ParseError as err:
            assert err.line is None or err.line >= 1
            assert err.format()
            seen["error"] += 1

    check()
    assert seen["ok"] + seen["error"] >= 5000
    assert seen["error"] > 0 and seen["ok"] > 0
