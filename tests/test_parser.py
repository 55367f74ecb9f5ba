"""The grammar: every corpus script parses, spans are kept, errors point at the text."""

from __future__ import annotations

import dataclasses

import pytest

import geaflow_sql
from geaflow_sql import ParseError
from grammar import syntax as s


def corpus_scripts(corpus):
    return sorted(
        list((corpus / "query").glob("*.sql")) + list((corpus / "sql2graph").glob("*.sql"))
    )


def test_every_corpus_script_parses(corpus):
    scripts = corpus_scripts(corpus)
    assert len(scripts) > 200
    failures = []
    for path in scripts:
        try:
            script = geaflow_sql.parse(path.read_text(encoding="utf-8"), str(path))
        except ParseError as err:
            failures.append(err.format())
            continue
        assert script.statements, path
    assert not failures, "\n".join(failures[:5])


def _walk(node):
    yield node
    if dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                if isinstance(item, tuple):
                    for sub in item:
                        if isinstance(sub, s.Node):
                            yield from _walk(sub)
                elif isinstance(item, s.Node):
                    yield from _walk(item)


def test_every_node_has_a_span(corpus):
    for path in corpus_scripts(corpus)[:60]:
        text = path.read_text(encoding="utf-8")
        script = geaflow_sql.parse(text)
        for st in script.statements:
            for node in _walk(st):
                assert node.span.line > 0, (path.name, node)
                assert 0 <= node.span.start < node.span.end <= len(text), (path.name, node)


def _expression(rng, depth: int = 0) -> str:
    if depth > 4 or rng.random() < 0.3:
        return rng.choice(["a", "t.b", "1", "2.5e3", "'x'", "NULL", "TRUE", "?", "-c", "NOT d"])
    left, right = _expression(rng, depth + 1), _expression(rng, depth + 1)
    return rng.choice(
        [
            f"{left} + {right} * {left}",
            f"({left} OR {right}) AND NOT {right}",
            f"{left} BETWEEN {right} AND {left}",
            f"CASE WHEN {left} > {right} THEN {left} ELSE -({right}) END",
            f"f({left}, {right}) || {left}",
            f"{left} IS NOT NULL = {right} IN ({left}, {right})",
            f"CAST({left} AS double) % {right}",
        ]
    )


def test_nodes_and_errors_are_placed_as_larks_own_placing_does(corpus, monkeypatch):
    # parser() hands a ?rule's one child up without Lark placing it again
    # (grammar.loader._PassSingleChild): each node's span and each error's
    # position must be those Lark's own placing gives, on corpus scripts, on
    # the same cut anywhere (errors), and on deep generated expressions.
    import random

    import grammar.parser as grammar_parser
    from grammar.loader import lark_parser, parser

    callbacks = parser()._callbacks  # noqa: SLF001 - the fast path is in place
    assert any(type(cb).__name__ == "_PassSingleChild" for cb in callbacks.values())
    rng = random.Random(3)
    texts = [p.read_text(encoding="utf-8") for p in corpus_scripts(corpus)[::3]]
    texts += [t[: rng.randrange(len(t) + 1)] for t in texts]
    texts += [
        f"SELECT {_expression(rng)} AS v\nFROM t\nWHERE {_expression(rng)};" for _ in range(150)
    ]

    def outcome(text: str) -> object:
        try:
            root = geaflow_sql.parse(text)
        except ParseError as err:
            return ("error", err.line, err.column, err.message)
        return repr(root), [(type(n).__name__, n.span) for n in s.descendants(root)]

    fast = [outcome(t) for t in texts]
    assert sum(isinstance(o, tuple) and o[0] == "error" for o in fast) > 20
    plain = lark_parser()
    monkeypatch.setattr(grammar_parser, "parser", lambda: plain)
    assert [outcome(t) for t in texts] == fast


def test_statement_spans_cover_their_text():
    text = "SET a = 1;\nSELECT x\n  FROM t;\n"
    script = geaflow_sql.parse(text)
    assert [script.statement_text(st) for st in script.statements] == [
        "SET a = 1",
        "SELECT x\n  FROM t",
    ]
    assert script.statements[1].span.line == 2


def test_keywords_are_case_insensitive_and_names_may_be_keywords():
    script = geaflow_sql.parse(
        "select Id, `select`, source, label FROM source WhErE type = 'x' order BY id DESC limit 2"
    )
    sel = script.statements[0].query
    assert isinstance(sel, s.Select)
    assert [i.expr.name for i in sel.items] == ["Id", "select", "source", "label"]
    assert sel.limit.value == 2 and sel.order_by[0].descending


def test_strings_decode_java_escapes():
    script = geaflow_sql.parse("SELECT 'a\\tb', 'it''s', \"dq\", '\\u0041'")
    values = [i.expr.value for i in script.statements[0].query.items]
    assert values == ["a\tb", "it's", "dq", "A"]


def test_graph_statements_parse_into_their_parts():
    script = geaflow_sql.parse(
        """
        CREATE GRAPH g (
          Vertex person (id bigint ID, name varchar),
          Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, ts bigint TIMESTAMP)
        ) WITH (storeType='memory');
        CREATE GRAPH g2 (
          Vertex person USING t_person WITH ID(id),
          Edge knows USING t_knows WITH ID(s, d), TIMESTAMP(ts)
        );
        MATCH (a:person WHERE a.id = 1)-[e:knows]->{1,3}(b) <-[:knows]- (c), (c)-(d)
        LET a.w = a.id * 2
        RETURN a.id, COUNT((b)->(x) => x.id) AS n ORDER BY n DESC LIMIT 3;
        CALL sssp(1) YIELD (vid, distance) RETURN vid, distance;
        """
    )
    g, g2, match, call = script.statements
    assert g.vertices[0].columns[0].role == "ID"
    assert g.edges[0].columns[2].role == "TIMESTAMP"
    assert g2.edges[0].timestamp_column == "ts" and g2.vertices[0].id_column == "id"
    clauses = match.query.clauses
    path = clauses[0].patterns[0].paths[0]
    edge = path.elements[1]
    assert (edge.direction, edge.labels, edge.min_hops, edge.max_hops) == ("OUT", ("knows",), 1, 3)
    assert path.elements[3].direction == "IN"
    assert isinstance(clauses[1], s.LetClause)
    assert isinstance(clauses[2].items[1].expr, s.PathFunction)
    assert isinstance(call.query.clauses[0], s.CallClause)


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("SELECT a FROM t WHERE", 1, 22, "an expression"),
        ("SELECT a\nFROM t\nWHERE x = = 1", 3, 11, "an expression"),
        ("CREATE TABLE t (a int) WITH (type=)", 1, 35, None),
        ("SELECT a FROM t GROUP x", 1, 23, "BY"),
        ("MATCH (a:)->(b) RETURN a", 1, 10, "a name"),
    ],
)
def test_errors_name_line_column_and_what_was_expected(text, line, column, expected):
    with pytest.raises(ParseError) as info:
        geaflow_sql.parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column)
    rendered = err.format()
    caret_line = rendered.splitlines()[-1]
    assert caret_line.index("^") - 4 == column - 1
    if expected:
        assert expected in err.message


def test_unterminated_string_is_reported_where_it_starts():
    with pytest.raises(ParseError) as info:
        geaflow_sql.parse("SELECT 1;\nSELECT 'abc FROM t")
    assert (info.value.line, info.value.column) == (2, 8)
    assert "unterminated" in info.value.message


def test_threads_parsing_at_once_each_get_their_own_syntax():
    """The parser folds its tree into the syntax of the thread's own builder
    (grammar.builder.building), parameters numbered per script."""
    import threading

    scripts = [
        ";\n".join(f"SELECT ?, {k} + ? FROM t{k} WHERE a IN (?, {i})" for i in range(40))
        for k in range(4)
    ]
    expected = [geaflow_sql.parse(text) for text in scripts]
    barrier = threading.Barrier(len(scripts), timeout=60)
    got: dict[int, list[object]] = {}

    def work(k: int) -> None:
        barrier.wait()
        got[k] = [geaflow_sql.parse(scripts[k]) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(scripts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for k, results in got.items():
        assert all(r.statements == expected[k].statements for r in results)
    assert sorted(got) == list(range(len(scripts)))
    numbers = [
        n.index for n in s.descendants(expected[2].statements[1]) if isinstance(n, s.Parameter)
    ]
    assert sorted(numbers) == [3, 4, 5]  # numbered through the script
