"""Fuzzing the parser and the planner: every input plans, or fails with a
project error that points inside the text.

Inputs are corpus scripts mutated token by token, and statements generated
from a small grammar of SELECT, MATCH, INSERT, CALL and DDL with random
expressions (deep nesting, long lists, huge numbers, odd strings and
characters), some of them mutated too.  Each runs through
``Session.check`` (parse, bind, rules and physical plan, no Spark job) on a
session whose Spark is a stand-in that fails if anything touches it.  An
input passes when it plans, or raises a ``GeaflowError`` whose line and
column are inside the text; anything else (a Python exception, an error
without a location, more than a few seconds on one input, memory growing
without bound) fails.

5,000 inputs run in CI; ``GEAFLOW_SQL_PLAN_FUZZ=N`` runs N (and
``GEAFLOW_SQL_PLAN_FUZZ_SEED`` picks the seed).
"""

from __future__ import annotations

import os
import random
import re
import resource
import time
from typing import Any

import pytest

from geaflow_sql import Session
from geaflow_sql.core.errors import GeaflowError
from tests.test_parse_fuzz import BREAKERS, TOKEN

COUNT = int(os.environ.get("GEAFLOW_SQL_PLAN_FUZZ", "5000"))
SEED = int(os.environ.get("GEAFLOW_SQL_PLAN_FUZZ_SEED", "16"))
# Generous: CI runs two test workers on two cores (a 5,000-term OR plans in
# ~2 s alone, 5 s beside the other worker).
SECONDS_PER_INPUT = 20.0
MAX_RSS_GROWTH_MB = 400


BASE = """
CREATE TABLE t (a int, b varchar, c double, d bigint, ts timestamp)
  WITH (type='file', geaflow.dsl.file.path='t.txt');
CREATE TABLE u (a int, s varchar) WITH (type='file', geaflow.dsl.file.path='u.txt');
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar, age int),
  Vertex software (id bigint ID, name varchar, lang varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double),
  Edge created (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double)
) WITH (storeType='memory');
USE GRAPH g;
"""


class NoSpark:
    """A SparkSession that fails when used: planning must not need Spark."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"planning touched Spark ({name})")


# --------------------------------------------------------------- generation
COLUMNS = ["a", "b", "c", "d", "a", "c", "t.a", "x", "`a`", "ts"]
VERTEX_PROPS = ["id", "name", "age", "lang", "nope"]
FUNCTIONS = ["abs", "upper", "concat", "coalesce", "length", "substr", "round", "nope", "count"]
STRINGS = ["'x'", "''", "'it''s'", "'\\n'", "'日本'", "'" + "y" * 300 + "'", "'\\u0000'"]
NUMBERS = [
    "0",
    "1",
    "-1",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "1" * 30,
    "1" * 5000,
    "1.5",
    "1e308",
    "1e999999",
    ".5",
    "0x1F",
    "1L",
    "2.0D",
]


def expression(rng: random.Random, depth: int, names: list[str]) -> str:
    if depth <= 0 or rng.random() < 0.3:
        kind = rng.random()
        if kind < 0.45:
            return rng.choice(names)
        if kind < 0.7:
            return rng.choice(["0", "1", "2", "10", "3.5"])
        if kind < 0.78:
            return rng.choice(NUMBERS)
        if kind < 0.93:
            return rng.choice(STRINGS)
        return rng.choice(["NULL", "TRUE", "FALSE", "?", ":p"])
    choice = rng.random()
    sub = lambda: expression(rng, depth - 1, names)  # noqa: E731
    if choice < 0.35:
        op = rng.choice(["+", "-", "*", "/", "%", "=", "<>", "<", ">=", "AND", "OR", "||"])
        return f"{sub()} {op} {sub()}"
    if choice < 0.5:
        return f"{rng.choice(FUNCTIONS)}({', '.join(sub() for _ in range(rng.randint(0, 3)))})"
    if choice < 0.6:
        return f"CASE WHEN {sub()} THEN {sub()} ELSE {sub()} END"
    if choice < 0.7:
        return f"CAST({sub()} AS {rng.choice(['int', 'bigint', 'varchar', 'double', 'decimal(10, 2)', 'date', 'nope'])})"
    if choice < 0.78:
        size = rng.choice([1, 2, 5, 50, 2000])
        # A long list of leaves: a long list of subtrees would grow the text
        # by its length at every level.
        short = ["1", "-2", "3.5", "'x'", "NULL", names[0]]
        items = ", ".join(sub() if size <= 5 else rng.choice(short) for _ in range(size))
        return f"{sub()} {rng.choice(['IN', 'NOT IN'])} ({items})"
    if choice < 0.84:
        return f"NOT {sub()}"
    if choice < 0.9:
        return f"({sub()})"
    if choice < 0.95:
        return f"{sub()} IS {rng.choice(['NULL', 'NOT NULL'])}"
    return f"{sub()} BETWEEN {sub()} AND {sub()}"


def deep(rng: random.Random) -> str:
    """Nesting around the parser's depth limit, and long flat chains."""
    n = rng.choice([10, 150, 199, 201, 260, 1000])
    kind = rng.choice(["paren", "call", "not", "or", "plus", "case"])
    if kind == "paren":
        return "(" * n + "a" + ")" * n
    if kind == "call":
        return "abs(" * n + "a" + ")" * n
    if kind == "not":
        return "NOT " * n + "a = 1"
    if kind == "or":
        return " OR ".join(f"a = {i}" for i in range(n * 3))
    if kind == "plus":
        return " + ".join("a" for _ in range(n))
    return "CASE WHEN a = 1 THEN " * n + "1" + " END" * n


def vertex(rng: random.Random, var: str) -> str:
    label = rng.choice(["", ":person", ":software", ":person|software", ":nope"])
    cond = (
        f" WHERE {expression(rng, 2, [f'{var}.{p}' for p in VERTEX_PROPS])}"
        if rng.random() < 0.4
        else ""
    )
    return f"({var}{label}{cond})"


def edge(rng: random.Random, var: str) -> str:
    label = rng.choice(["", ":knows", ":created", ":knows|created", ":nope"])
    body = f"{var}{label}"
    arrow = rng.choice(["-[{}]->", "<-[{}]-", "-[{}]-"])
    hops = rng.choice(["", "", "{1,3}", "{2}", "{0,}", "{5,1}"])
    return arrow.format(body) + hops


def match(rng: random.Random) -> str:
    parts = [vertex(rng, "a")]
    names = ["a"]
    for i in range(rng.randint(0, 3)):
        e, v = f"e{i}", f"v{i}"
        parts.append(edge(rng, e) + vertex(rng, v))
        names += [e, v]
    refs = [f"{n}.{p}" for n in names for p in ("id", "name", "weight", "age")] + names
    ret = ", ".join(expression(rng, 2, refs) for _ in range(rng.randint(1, 3)))
    tail = ""
    if rng.random() < 0.3:
        tail += f" ORDER BY {rng.choice(refs)}"
    if rng.random() < 0.2:
        tail += f" LIMIT {rng.choice(NUMBERS)}"
    return f"MATCH {''.join(parts)} RETURN {ret}{tail}"


def statement(rng: random.Random) -> str:
    names = COLUMNS
    kind = rng.random()
    if kind < 0.3:
        cols = ", ".join(
            expression(rng, rng.randint(1, 4), names) for _ in range(rng.randint(1, 4))
        )
        where = f" WHERE {expression(rng, 3, names)}" if rng.random() < 0.5 else ""
        group = " GROUP BY a" if rng.random() < 0.2 else ""
        src = rng.choice(["t", "t", "t", "t JOIN u ON t.a = u.a", "(SELECT * FROM t)", "nope"])
        return f"SELECT {cols} FROM {src}{where}{group}"
    if kind < 0.55:
        return match(rng)
    if kind < 0.65:
        return f"SELECT a FROM t WHERE {deep(rng)}"
    if kind < 0.72:
        values = ", ".join(
            f"({expression(rng, 1, ['1'])}, {rng.choice(STRINGS)})"
            for _ in range(rng.randint(1, 5))
        )
        return f"INSERT INTO u VALUES {values}"
    if kind < 0.78:
        return f"INSERT INTO g.person {match(rng)}"
    if kind < 0.84:
        algo = rng.choice(["page_rank", "sssp", "wcc", "khop", "nope"])
        args = ", ".join(rng.choice(NUMBERS) for _ in range(rng.randint(0, 3)))
        return f"CALL {algo}({args}) YIELD (vid, value) RETURN vid, value"
    if kind < 0.9:
        count = rng.choice(["1", "2", "0", "-1", "1e999999", "2147483648", "x"])
        return f"CREATE GRAPH h{rng.randint(0, 9)} (Vertex p (id bigint ID)) WITH (storeType='memory', shardCount = {count})"
    if kind < 0.95:
        return (
            f"SELECT a FROM t {' '.join(['UNION ALL SELECT a FROM t'] * rng.choice([1, 50, 300]))}"
        )
    return f"SET {rng.choice(['geaflow.dsl.window.size', 'x', 'a.b'])} = {rng.choice(NUMBERS + STRINGS)}"


def mutate(rng: random.Random, text: str) -> str:
    tokens = TOKEN.findall(text)
    for _ in range(rng.randint(1, 4)):
        if not tokens:
            break
        i = rng.randrange(len(tokens))
        op = rng.choice(["drop", "dup", "swap", "truncate", "inject", "replace"])
        if op == "drop":
            del tokens[i]
        elif op == "dup":
            tokens.insert(i, tokens[i])
        elif op == "swap":
            j = rng.randrange(len(tokens))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == "truncate":
            tokens = tokens[:i]
        elif op == "inject":
            tokens.insert(
                i, "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randint(1, 4)))
            )
        else:
            tokens[i] = rng.choice([*BREAKERS, "\x00", "*", "."])
    return "".join(tokens)


def inputs(corpus_scripts: list[str], count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        r = rng.random()
        if r < 0.35 and corpus_scripts:
            yield mutate(rng, rng.choice(corpus_scripts))
        elif r < 0.8:
            yield statement(rng)
        else:
            yield mutate(rng, statement(rng))


def test_generated_inputs_stay_small():
    sizes = [len(text) for text in inputs([], 500, SEED)]
    assert max(sizes) < 200_000, max(sizes)


# -------------------------------------------------------------------- check
def located_inside(err: GeaflowError, text: str) -> bool:
    if err.line is None or err.column is None:
        return False
    lines = text.split("\n")
    if not 1 <= err.line <= max(1, len(lines)):
        return False
    return 1 <= err.column <= len(lines[err.line - 1]) + 1


@pytest.fixture(scope="module")
def corpus_scripts(corpus) -> list[str]:
    texts = []
    for path in sorted((corpus / "query").glob("*.sql"))[::2]:
        text = path.read_text(encoding="utf-8")
        texts.append(re.sub(r"/\*.*?\*/", "", text, count=1, flags=re.S))
    return texts


def test_every_input_plans_or_fails_with_a_located_project_error(corpus_scripts, tmp_path):
    base = Session(spark=NoSpark(), base_dir=str(tmp_path))
    base.check(BASE)
    outcomes = {"planned": 0, "error": 0}
    failures: list[str] = []
    slow: list[tuple[float, str]] = []
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for text in inputs(corpus_scripts, COUNT, SEED):
        session = Session(spark=NoSpark(), base_dir=str(tmp_path), catalog=base.catalog.copy())
        started = time.perf_counter()
        try:
            session.check(text)
            outcomes["planned"] += 1
        except GeaflowError as err:
            outcomes["error"] += 1
            if not located_inside(err, text):
                failures.append(
                    f"no location inside the text ({err.line}:{err.column}): {err.message[:200]}\n  {text[:300]!r}"
                )
        except Exception as err:  # noqa: BLE001 - every other exception is the finding
            failures.append(f"{type(err).__name__}: {str(err)[:200]}\n  {text[:300]!r}")
        seconds = time.perf_counter() - started
        if seconds > SECONDS_PER_INPUT:
            slow.append((seconds, text[:200]))
        if len(failures) >= 20:
            break
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert not failures, f"{len(failures)} inputs failed:\n" + "\n".join(failures)
    assert not slow, f"inputs over {SECONDS_PER_INPUT} s: {slow[:5]}"
    assert grown_mb < MAX_RSS_GROWTH_MB, f"peak memory grew {grown_mb:.0f} MB"
    assert outcomes["planned"] + outcomes["error"] == COUNT
    # Both outcomes are common: the generator is not just making noise.
    assert outcomes["planned"] > COUNT // 10 and outcomes["error"] > COUNT // 10, outcomes
