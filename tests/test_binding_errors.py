"""A script that parses but makes no sense fails with the line, column and caret
of the offending text: unknown table, unknown column, wrong argument count,
type mismatch, and the aggregate / GROUP BY mistakes."""

from __future__ import annotations

import pytest

from geaflow_sql.core.errors import CatalogError, TypeMismatchError, ValidationError

SCHEMA = (
    "CREATE TABLE users (id bigint, name varchar, age int)\n"
    "  WITH (type='file', geaflow.dsl.file.path='users.txt');\n"
)


def caret_under(err, text: str) -> str:
    """The text the error's caret underlines."""
    line = err.source_line()
    caret = err.caret()
    assert line is not None and caret is not None
    start = caret.index("^")
    return (
        line[start : start + caret.count("^")] if text is None else line[start : start + len(text)]
    )


@pytest.mark.parametrize(
    "query, kind, line, column, underlined, message",
    [
        # unknown table: points at the name in FROM
        ("SELECT id\nFROM userz", CatalogError, 4, 6, "userz", "unknown table 'userz'"),
        # unknown column: points at the column, lists what exists
        (
            "SELECT id,\n       nmae FROM users",
            ValidationError,
            4,
            8,
            "nmae",
            "unknown column 'nmae'",
        ),
        # qualified unknown column
        ("SELECT u.nope FROM users u", ValidationError, 3, 8, "u.nope", "unknown column 'nope'"),
        # wrong number of arguments
        (
            "SELECT substr(name)\nFROM users",
            ValidationError,
            3,
            8,
            "substr(name)",
            "substr() takes 2 to 3 arguments, got 1",
        ),
        (
            "SELECT id FROM users\nWHERE date_diff(name) > 1",
            ValidationError,
            4,
            7,
            "date_diff(name)",
            "date_diff() takes 2 arguments",
        ),
        (
            "SELECT count(id, name, age) > 1, sum(age, id) FROM users",
            ValidationError,
            3,
            34,
            "sum(age, id)",
            "sum() takes 1 argument, got 2",
        ),
        # type mismatch
        (
            "SELECT id FROM users\nWHERE id > true",
            TypeMismatchError,
            4,
            7,
            "id > true",
            "cannot compare BIGINT with BOOLEAN",
        ),
        (
            "SELECT id FROM users WHERE age + true > 1",
            TypeMismatchError,
            3,
            28,
            "age + true",
            "cannot apply + to INTEGER and BOOLEAN",
        ),
        (
            "SELECT id FROM users WHERE age",
            TypeMismatchError,
            3,
            28,
            "age",
            "condition must be BOOLEAN, not INTEGER",
        ),
        (
            "SELECT sum(name = 'a') FROM users",
            ValidationError,
            3,
            8,
            "sum(name = 'a')",
            "needs a numeric argument",
        ),
        # unknown function
        (
            "SELECT frobnicate(id) FROM users",
            ValidationError,
            3,
            8,
            "frobnicate(id)",
            "unknown function frobnicate()",
        ),
        # grouping mistakes
        (
            "SELECT name, count(*) FROM users\nGROUP BY age",
            ValidationError,
            3,
            8,
            "name",
            "name must appear in GROUP BY",
        ),
        (
            "SELECT id FROM users WHERE count(*) > 1",
            ValidationError,
            3,
            28,
            "count(*) > 1",
            "aggregate functions are not allowed in WHERE",
        ),
    ],
)
def test_binding_errors_point_at_the_text(session, query, kind, line, column, underlined, message):
    script = SCHEMA + query
    with pytest.raises(kind) as info:
        session.execute(script, "q.sql")
    err = info.value
    assert message in err.message
    assert (err.line, err.column) == (line, column), err.format()
    assert err.source_line() == script.splitlines()[line - 1]
    assert caret_under(err, underlined) == underlined
    first = err.format().splitlines()[0]
    assert first.startswith(f"q.sql:{line}:{column}: ")


def test_nothing_runs_after_a_failing_statement(session, tmp_path):
    out = tmp_path / "out.txt"
    script = (
        SCHEMA
        + f"CREATE TABLE sink (a bigint) WITH (type='file', geaflow.dsl.file.path='{out}');\n"
        + "INSERT INTO sink SELECT nope FROM users;\n"
        + "INSERT INTO sink VALUES (1);\n"
    )
    with pytest.raises(ValidationError) as info:
        session.execute(script)
    assert info.value.line == 4
    assert not out.exists()
