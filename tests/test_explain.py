"""EXPLAIN shows every level: logical plans before/after rules, pipeline, groups, Spark."""

from __future__ import annotations

from tests.conftest import write


def test_explain_shows_all_plan_levels(session, tmp_path):
    write(tmp_path / "u.txt", "1,a,10\n2,b,20\n")
    session.execute(
        "CREATE TABLE u (id bigint, name varchar, age int) WITH (type='file', geaflow.dsl.file.path='u.txt')"
    )
    text = session.explain("SELECT name, count(*) AS n FROM u WHERE age > 1 + 2 GROUP BY name")
    sections = [
        "== Logical Plan (before rules) ==",
        "== Rules applied ==",
        "== Logical Plan (after rules) ==",
        "== PipelineGraph ==",
        "== ExecutionGroups and cycles ==",
        "== Spark Plan ==",
    ]
    positions = [text.index(sec) for sec in sections]
    assert positions == sorted(positions)
    before = text[positions[0] : positions[1]]
    after = text[positions[2] : positions[3]]
    assert "Filter(age$2 > (1 + 2))" in before
    assert "filters=[age$1 > 3]" in after and "columns=[name, age]" in after
    assert "constant_folding" in text and "push_filter_into_scan" in text
    assert "SOURCE" in text and "SINK" in text and "KEY[0]" in text
    assert "cycle 0: 1 round (batch)" in text
    assert "HashAggregate" in text


def test_explain_statement_and_session_method_agree(session, tmp_path):
    write(tmp_path / "u.txt", "1\n")
    session.execute("CREATE TABLE u (id bigint) WITH (type='file', geaflow.dsl.file.path='u.txt')")
    via_sql = session.execute("EXPLAIN SELECT id FROM u")[0].text
    via_api = session.explain("SELECT id FROM u")
    assert via_sql.split("== Spark Plan ==")[0] == via_api.split("== Spark Plan ==")[0]
