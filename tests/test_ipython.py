"""``%load_ext geaflow_sql.ipython`` in a real IPython InteractiveShell."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

IPython = pytest.importorskip("IPython", reason="IPython is not installed (pip install ipython)")


@pytest.fixture
def ip(session, tmp_path):
    """A real IPython shell with the extension loaded, on the test's Session."""
    from IPython.core.interactiveshell import InteractiveShell

    import geaflow_sql.ipython as ext

    (tmp_path / "users.txt").write_text("1,jim,15\n2,kate,16\n3,o'hara,20\n", encoding="utf-8")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "geaflow_sql.ipython")
    ext.set_session(session)
    yield shell
    ext.set_session(None)


def run(ip, source: str):
    result = ip.run_cell(source, store_history=False)
    return result


def test_cell_magic_returns_a_dataframe(ip, capsys):
    result = run(
        ip,
        "%%gql\n"
        "CREATE TABLE users (id bigint, name varchar, age int)\n"
        "  WITH (type='file', geaflow.dsl.file.path='users.txt');\n"
        "SELECT name, age FROM users WHERE age > 15 ORDER BY age\n",
    )
    assert result.success, result.error_in_exec
    df = result.result
    assert isinstance(df, pd.DataFrame)
    assert df.to_dict("records") == [{"name": "kate", "age": 16}, {"name": "o'hara", "age": 20}]
    assert "table users created" in capsys.readouterr().out


def test_line_magic_options_and_variables(ip):
    run(
        ip,
        "%%gql -q\nCREATE TABLE users (id bigint, name varchar, age int) WITH (type='file', geaflow.dsl.file.path='users.txt')",
    )
    # A line magic can be assigned; :name takes the notebook variable, bound as data.
    result = run(ip, 'who = "o\'hara"\ndf = %gql SELECT id FROM users WHERE name = :who\ndf')
    assert result.success, result.error_in_exec
    assert ip.user_ns["df"]["id"].tolist() == [3]
    result = run(ip, "%%gql -o counted --arrow\nSELECT count(*) AS n FROM users")
    assert isinstance(result.result, pa.Table)
    assert ip.user_ns["counted"].column("n").to_pylist() == [3]
    shown = run(ip, "%gql SHOW TABLES").result
    assert shown.to_dict("records") == [{"name": "users", "kind": "table"}]


def test_the_kernel_shares_one_session(ip):
    run(ip, "%gql CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='t.txt')")
    result = run(ip, "%gql DESCRIBE t")
    assert result.result.to_dict("records") == [{"column": "a", "type": "INTEGER"}]


def test_errors_show_position_and_caret_without_traceback(ip, capsys):
    result = run(ip, "%%gql\nSELECT 1;\nSELECT a,, FROM t")
    assert not result.success
    message = str(result.error_in_exec)
    assert message.splitlines() == [
        "<cell>:2:10: syntax error: unexpected ','; expected an expression, '*'",
        "    SELECT a,, FROM t",
        "             ^",
    ]
    printed = capsys.readouterr()
    assert "Traceback" not in printed.out + printed.err
    missing = run(ip, "%gql SELECT :nobody_defined_this")
    assert "no notebook variable 'nobody_defined_this'" in str(missing.error_in_exec)
    unknown = run(ip, "%gql SELECT x FROM missing_table")
    assert "missing_table" in str(unknown.error_in_exec)
    bad_option = run(ip, "%gql --frobnicate SELECT 1")
    assert "unknown %gql option --frobnicate" in str(bad_option.error_in_exec)
