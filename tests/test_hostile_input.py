"""Hostile statements: long, deeply nested, huge numbers.  Each plans, or is a
project error with the line and column of the construct, never a crash.

Chains of AND, OR, ``||`` and UNION of any length plan (they are built as
balanced trees), a run of NOTs folds, ``+ - * / %`` keep their written order,
and what is nested past ``grammar.depth.MAX_DEPTH`` is a ParseError with the
line and column of the place it goes past, never a RecursionError.  Planner
only (no Spark): parse, bind and every rule.
"""

from __future__ import annotations

import math

import pytest

from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import GeaflowError, ParseError
from grammar import syntax as s
from grammar.depth import MAX_DEPTH
from grammar.parser import parse
from planner.optimizer import optimize
from tests.golden_plans import catalog, plan_of


@pytest.fixture(scope="module")
def cat():
    return catalog()


def depth(node: s.Node) -> int:
    deepest = 0
    stack: list[tuple[object, int]] = [(node, 0)]
    while stack:
        item, d = stack.pop()
        if isinstance(item, s.Node):
            d += 1
            deepest = max(deepest, d)
            stack.extend((getattr(item, n), d) for n in item.__dataclass_fields__)
        elif isinstance(item, tuple):
            stack.extend((x, d) for x in item)
    return deepest


def query_of(text: str) -> s.Query:
    statement = parse(text).statements[0]
    assert isinstance(statement, s.QueryStatement)
    return statement.query


def where_of(text: str) -> s.Expr:
    select = query_of(text)
    assert isinstance(select, s.Select)
    assert select.where is not None
    return select.where


def leaves(e: s.Expr, op: str) -> list[s.Expr]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, s.Binary) and x.op == op:
            stack += [x.right, x.left]
        else:
            out.append(x)
    return out


@pytest.mark.parametrize("op", ["OR", "AND"])
def test_a_chain_of_thousands_of_terms_plans(cat, op):
    n = 5000
    text = f"SELECT id FROM users WHERE {f' {op} '.join(f'age <> {i}' for i in range(n))}"
    where = where_of(text)
    # every term, in order, in a tree about log2(n) deep
    terms = leaves(where, op)
    assert [t.right.value for t in terms] == list(range(n))  # type: ignore[attr-defined]
    assert depth(where) <= math.ceil(math.log2(n)) + 3
    optimize(plan_of(text, cat), Config({}))


def test_concat_chains_are_balanced_and_keep_their_order():
    where = where_of(
        "SELECT id FROM users WHERE " + " || ".join(f"'{i}'" for i in range(600)) + " = ''"
    )
    chain = where.left  # type: ignore[attr-defined]
    assert [x.value for x in leaves(chain, "||")] == [str(i) for i in range(600)]
    assert depth(chain) <= 12


def test_arithmetic_keeps_the_order_written():
    e = where_of("SELECT id FROM users WHERE 10 - 2 - 3 * 4 / 2 % 5 = age").left  # type: ignore[attr-defined]
    # (10 - 2) - (((3 * 4) / 2) % 5)
    assert isinstance(e, s.Binary) and e.op == "-"
    assert isinstance(e.left, s.Binary) and e.left.op == "-"
    assert (e.left.left.value, e.left.right.value) == (10, 2)  # type: ignore[attr-defined]
    mod = e.right
    assert isinstance(mod, s.Binary) and mod.op == "%"
    assert isinstance(mod.left, s.Binary) and mod.left.op == "/"
    assert isinstance(mod.left.left, s.Binary) and mod.left.left.op == "*"


@pytest.mark.parametrize("count,left", [(480, 2), (481, 1), (1, 1), (2, 2)])
def test_a_run_of_not_folds_to_one_or_two(cat, count, left):
    text = "SELECT id FROM users WHERE " + "NOT " * count + "age > 1"
    where = where_of(text)
    nots = 0
    while isinstance(where, s.Unary) and where.op == "NOT":
        nots, where = nots + 1, where.operand
    assert nots == left
    optimize(plan_of(text, cat), Config({}))


def test_a_union_of_hundreds_of_selects_plans(cat):
    text = " UNION ALL ".join(f"SELECT {i} AS x FROM users" for i in range(600))
    q = query_of(text)
    assert depth(q) <= 20
    optimize(plan_of(text, cat), Config({}))


def test_mixed_unions_apply_left_to_right():
    q = query_of("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION SELECT 4 UNION SELECT 5")
    # (1 ALL 2 ALL 3) UNION (4 UNION 5): the distinct applies to all five
    assert isinstance(q, s.SetOperation) and not q.all
    left = q.left
    assert isinstance(left, s.SetOperation) and left.all
    q = query_of("SELECT 1 UNION SELECT 2 UNION ALL SELECT 3")
    # (1 UNION 2) UNION ALL 3: 3 is not made distinct with the others
    assert isinstance(q, s.SetOperation) and q.all
    assert isinstance(q.left, s.SetOperation) and not q.left.all


def test_order_by_after_a_union_orders_the_union():
    q = query_of("SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3 ORDER BY x LIMIT 2")
    assert isinstance(q, s.OrderedQuery) and q.limit is not None
    assert isinstance(q.query, s.SetOperation)
    last = q.query.right
    assert isinstance(last, s.Select) and not last.order_by and last.limit is None


def test_parameters_are_numbered_in_the_order_written():
    q = parse("SELECT ? + ?, f(?, (? || ?)) FROM t WHERE a = ? OR b = ? OR c = ?").statements[0]
    found = sorted((n.span.start, n.index) for n in s.descendants(q) if isinstance(n, s.Parameter))
    assert [index for _, index in found] == list(range(8))


def test_nesting_past_the_limit_names_the_place(cat):
    terms = MAX_DEPTH + 50
    text = "SELECT id\nFROM users\nWHERE " + " + ".join("age" for _ in range(terms)) + " > 1"
    with pytest.raises(ParseError) as info:
        parse(text)
    err = info.value
    assert "nested more than" in err.message
    assert err.line == 3 and err.column > 6
    calls = "SELECT " + "abs(" * (MAX_DEPTH + 5) + "1" + ")" * (MAX_DEPTH + 5)
    with pytest.raises(ParseError) as info:
        parse("SET a = 1;\n" + calls)
    assert info.value.line == 2 and info.value.column > 1


def test_nesting_below_the_limit_plans(cat):
    n = MAX_DEPTH - 50
    text = "SELECT " + "abs(" * n + "age" + ")" * n + " AS x FROM users"
    optimize(plan_of(text, cat), Config({}))


def test_integer_literals_out_of_range_are_errors_at_the_literal(cat):
    with pytest.raises(ParseError) as info:
        parse("SELECT\n  1 + " + "9" * 5000)
    assert (info.value.line, info.value.column) == (2, 7)
    with pytest.raises(GeaflowError) as info2:
        plan_of("SELECT id FROM users WHERE age = 9223372036854775808", cat)
    assert "out of the range of BIGINT" in info2.value.message
    assert info2.value.span is not None and info2.value.span.column == 34
    plan_of("SELECT id FROM users WHERE age <> -9223372036854775808", cat)


@pytest.mark.parametrize(
    "text,column",
    [
        ("SELECT 1e999999", 8),
        ("SELECT 2.5e400 + 1", 8),
        ("CREATE TABLE t (a int) WITH (type='file', x = 1e999999)", 47),
        ("CREATE TABLE t (a int) WITH (type='file', x = -" + "9" * 5000 + ")", 47),
    ],
)
def test_numbers_out_of_range_are_errors_at_the_number(text, column):
    with pytest.raises(ParseError) as info:
        parse(text)
    assert "out of" in info.value.message and info.value.column == column


def test_limits_and_shard_counts_out_of_range_are_errors(cat):
    with pytest.raises(GeaflowError) as info:
        plan_of("SELECT id FROM users\nLIMIT 99999999999999999999", cat)
    assert "out of range" in info.value.message and info.value.span.line == 2
    from planner.binder import BindContext, StatementBinder

    for value in ("1e999999", "99999999999999999999999", "0", "'many'"):
        text = (
            "SELECT 1;\nCREATE GRAPH g9 (Vertex v (id bigint ID)) "
            f"WITH (storeType='memory', shardCount = {value})"
        )
        with pytest.raises(GeaflowError) as info:
            statement = parse(text).statements[1]
            StatementBinder(BindContext(cat, Config({}), text)).bind(statement)
        assert info.value.span.line == 2
        assert "shardCount" in info.value.message or "out of range" in info.value.message


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "SELECT '" + "a" * n + "' FROM t",
        lambda n: "SELECT 'it''s" + "a\\'" * (n // 3) + "' FROM t",
        lambda n: 'SELECT "' + "b" * n + '" FROM t',
        lambda n: "SELECT `" + "c" * n + "` FROM t",
        lambda n: "SELECT 1 /* " + "d" * n + " */ FROM t",
    ],
)
def test_long_quoted_text_parses_in_memory_a_small_multiple_of_it(make):
    """The quoted terminals are runs of a character class, not an alternation
    per character (which took ~450 bytes of regex state per character)."""
    text = make(2_000_000)
    peak = _parse_peak(text)
    assert peak < 20 * len(text), f"{peak / len(text):.0f} bytes per character"


def _parse_peak(text: str) -> int:
    """Peak bytes the interpreter allocates while parsing ``text``."""
    import tracemalloc

    parse("SELECT 1")  # the grammar tables are built outside the measurement
    tracemalloc.start()
    try:
        parse(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "make",
    [
        lambda n: ";\n".join(f"SELECT a FROM t WHERE a = {i}" for i in range(n // 30)),
        lambda n: "SELECT a FROM t WHERE a IN (" + ", ".join(map(str, range(n // 6))) + ")",
        lambda n: "SELECT a FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(n // 10)),
    ],
    ids=["statements", "in-list", "or-chain"],
)
def test_token_dense_text_parses_without_holding_a_parse_tree_of_it(make):
    """Each parse tree node is folded into syntax when its parent is made
    (grammar.builder.FoldingTree), so the peak is the syntax tree, not Lark's
    tree of the whole text beside it (250-350 bytes a character before)."""
    text = make(100_000)
    peak = _parse_peak(text)
    assert peak < 140 * len(text), f"{peak / len(text):.0f} bytes per character"


def test_an_in_list_of_twenty_thousand_items_plans_and_folds(cat):
    """Folding an IN list replaces its items one by one (each CAST of an int
    literal becomes a BIGINT literal); that is linear now (replace_node)."""
    from sqlglot import exp

    from planner.logical import TableScan, walk

    items = ", ".join(str(i) for i in range(20_000))
    after = optimize(plan_of(f"SELECT id FROM users WHERE id IN ({items})", cat), Config({})).after
    scan = next(n for n in walk(after) if isinstance(n, TableScan))
    cond = next(f for f in scan.filters if isinstance(f, exp.In))
    values = cond.expressions
    assert values[7].sql() == "7L"  # folded: a BIGINT literal, not CAST(7 AS BIGINT)
    assert len(values) == 20_000
    assert [v.parent is cond and v.index == k for k, v in enumerate(values)] == [True] * 20_000


def test_replace_node_keeps_the_tree_consistent():
    from sqlglot import exp

    from planner.expressions import replace_node

    tree = exp.In(this=exp.column("a"), expressions=[exp.Literal.number(i) for i in range(5)])
    before = hash(tree)
    middle = tree.expressions[2]
    replace_node(middle, exp.Literal.number(99))
    assert [e.sql() for e in tree.expressions] == ["0", "1", "99", "3", "4"]
    assert all(e.parent is tree and e.index == k for k, e in enumerate(tree.expressions))
    assert middle.parent is None
    assert hash(tree) != before  # the cached hash was dropped
    replace_node(tree.this, exp.column("b"))  # a single child goes through sqlglot's own set
    assert tree.sql() == "b IN (0, 1, 99, 3, 4)"


# --------------------------------------------------------------------------
# VALUES rows of constants: one token each, the same nodes as expressions
# --------------------------------------------------------------------------


def _constant(rng, bad: list[int]) -> str:
    kind = rng.randrange(9)
    if kind == 2 and bad[0]:
        kind = 0
    if kind == 2:
        bad[0] += 1  # one out-of-range constant a statement: one error to find
    minus = rng.choice(["", "", "-", "- ", "-\n "])
    if kind == 0:
        return minus + str(rng.randrange(10 ** rng.randrange(1, 19)))
    if kind == 1:
        return minus + rng.choice(["1L", "0l", "007", "1e5", "2.5E-3", ".5", "3.", "1.5e+10"])
    if kind == 2:
        return minus + rng.choice(["1" * 21, "1e999999"])  # out of range: errors
    if kind == 3:
        return "'" + rng.choice(["", "x", "it''s", "back\\\\slash", "tab\\t", "日本", "a,b)"]) + "'"
    if kind == 4:
        return '"' + rng.choice(["", "dq", 'say ""hi""', "x'y"]) + '"'
    if kind == 5:
        return rng.choice(["TRUE", "false", "Null", "nULL"])
    return rng.choice(["1", "'s'", "NULL", "2.5"])


def _row(rng, bad: list[int]) -> str:
    space = lambda: rng.choice(["", " ", "  ", "\n  ", "\t"])  # noqa: E731
    items = [_constant(rng, bad) for _ in range(rng.randint(1, 6))]
    return "(" + space() + (space() + "," + space()).join(items) + space() + ")"


def _parsed(text: str):
    try:
        return parse(text).statements[0].query.rows
    except ParseError as err:
        return {"error": err.message, "at": (err.line, err.column)}


def test_constant_rows_read_as_one_token_give_the_nodes_the_expression_rules_give():
    import random

    rng = random.Random(16)
    checked = 0
    for _ in range(1500):
        bad = [0]
        row = _row(rng, bad)
        head = (
            "INSERT INTO t"
            + rng.choice([" ", "\n", "\n\n  "])
            + "VALUES"
            + rng.choice([" ", "\n "])
        )
        fast = _parsed(head + row)
        # The same constants at the same places, forced through the
        # expression grammar by one more item at the end that is not a constant.
        slow = _parsed(head + row[:-1] + ", (0))")
        if isinstance(slow, dict) or isinstance(fast, dict):
            assert fast == slow, row
        else:
            assert list(fast) == [r[:-1] for r in slow], row
        checked += 1
    assert checked == 1500


def test_constants_of_many_rows_point_at_their_text():
    import random

    rng = random.Random(7)
    for _ in range(200):
        bad = [1]  # no out-of-range constants: every statement parses
        text = "INSERT INTO t VALUES\n" + ",\n ".join(
            _row(rng, bad) for _ in range(rng.randint(2, 6))
        )
        (st,) = parse(text).statements
        for row in st.query.rows:
            for lit in row:
                sp = lit.span
                assert (
                    "".join(text[sp.start : sp.end].split()).upper()
                    == "".join(lit.text.split()).upper()
                )
                line = text.count("\n", 0, sp.start) + 1
                column = sp.start - (text.rfind("\n", 0, sp.start) + 1) + 1
                assert (sp.line, sp.column) == (line, column)


def test_rows_with_anything_but_constants_take_the_expression_grammar():
    (st,) = parse("INSERT INTO t VALUES (1, a), (-x, 2), (1 /* c */, 2), (?, 'x')").statements
    kinds = [[type(e).__name__ for e in row] for row in st.query.rows]
    assert kinds == [
        ["Literal", "Column"],
        ["Unary", "Literal"],
        ["Literal", "Literal"],
        ["Parameter", "Literal"],
    ]


def test_twenty_thousand_constant_rows_parse():
    # (bench/big_input.py measures how fast.)
    rows = ", ".join(f"({i}, 'name{i}', {i}.5, NULL)" for i in range(20_000))
    (st,) = parse(f"INSERT INTO t VALUES {rows}").statements
    assert len(st.query.rows) == 20_000
    assert [e.value for e in st.query.rows[-1]] == [19_999, "name19999", "19999.5", None]


def test_an_error_after_values_asks_for_a_row_in_words_a_user_knows():
    with pytest.raises(ParseError) as info:
        parse("INSERT INTO t VALUES x")
    assert info.value.message == "unexpected 'x'; expected '('"
