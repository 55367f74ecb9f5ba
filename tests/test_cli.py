"""``geaflow-sql -f``: runs scripts, prints results, reports errors with positions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .jvm_env import checkout_env


def run_cli(args, cwd, timeout=300):
    env = checkout_env()
    return subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "users.txt").write_text("1,jim,15\n2,kate,16\n3,same,20\n4,lucy,21\n", encoding="utf-8")
    return d


def test_file_table_insert_and_select(workdir):
    (workdir / "script.gql").write_text(
        """
        CREATE TABLE users (id bigint, name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='users.txt');
        CREATE TABLE older (name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='out/older.txt');
        INSERT INTO older SELECT name, age FROM users WHERE age > 15 ORDER BY age DESC;
        SELECT name, age * 2 AS twice FROM older ORDER BY name;
        """,
        encoding="utf-8",
    )
    proc = run_cli(["-f", "script.gql"], workdir)
    assert proc.returncode == 0, proc.stderr
    assert (workdir / "out" / "older.txt").read_text().splitlines() == [
        "lucy,21",
        "same,20",
        "kate,16",
    ]
    lines = proc.stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if "| name" in ln)
    body = [ln for ln in lines[header + 2 :] if ln.startswith("| ")]
    assert [[c.strip() for c in ln.strip("|").split("|")] for ln in body] == [
        ["kate", "32"],
        ["lucy", "42"],
        ["same", "40"],
    ]
    assert "(3 rows)" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_syntax_error_in_line_3_is_reported_as_line_3(workdir):
    (workdir / "bad.gql").write_text(
        "CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='x.txt');\n"
        "SELECT a FROM t;\n"
        "SELECT a,, FROM t;\n",
        encoding="utf-8",
    )
    proc = run_cli(["-f", "bad.gql"], workdir)
    assert proc.returncode == 1
    first = proc.stderr.splitlines()[0]
    assert first.startswith("bad.gql:3:10: syntax error: unexpected ','")
    assert proc.stderr.splitlines()[1].strip() == "SELECT a,, FROM t;"
    assert proc.stderr.splitlines()[2].index("^") == proc.stderr.splitlines()[1].index(",,") + 1
    assert "Traceback" not in proc.stderr


def test_unknown_table_stops_at_that_statement(workdir):
    (workdir / "unknown.gql").write_text(
        "CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='users.txt');\n"
        "SELECT * FROM nope;\nSELECT a FROM t;\n",
        encoding="utf-8",
    )
    proc = run_cli(["-f", "unknown.gql", "-q"], workdir)
    assert proc.returncode == 1
    assert proc.stderr.startswith("unknown.gql:2:15: error: unknown table 'nope'")
    assert "| a" not in proc.stdout  # nothing after the failing statement ran


def test_a_bad_row_met_while_fetching_a_query_names_the_query(workdir):
    # A SELECT's rows are read after the statement ran: the bad row Spark
    # meets then is still the statement's error, at its line and column.
    # With GEAFLOW_SQL_DEBUG=1 the same message follows the traceback of
    # what it stands for (Spark's exception).
    (workdir / "bad_row.txt").write_text("1,a\nx,b\n", encoding="utf-8")
    (workdir / "debug.gql").write_text(
        "CREATE TABLE t (id bigint, name varchar)"
        " WITH (type='file', geaflow.dsl.file.path='bad_row.txt');\n"
        "SELECT id FROM t;\n",
        encoding="utf-8",
    )
    where = "debug.gql:2:1: data error: in file:"
    why = "bad_row.txt line 2: cannot read a row of t (id BIGINT, name VARCHAR) from x,b"
    plain = run_cli(["-f", "debug.gql", "-q"], workdir)
    assert plain.returncode == 1
    assert plain.stderr.startswith(where) and why in plain.stderr
    assert "Traceback" not in plain.stderr
    env = checkout_env(GEAFLOW_SQL_DEBUG="1")
    debug = subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", "-f", "debug.gql", "-q"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert debug.returncode == 1
    err = debug.stderr
    assert err.index("Traceback") < err.index("GEAFLOW_BAD_ROW") < err.index(where)
    assert why in err


def test_check_plans_without_running(workdir):
    proc = run_cli(
        [
            "-e",
            "CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='missing.txt'); SELECT a + 1 FROM t",
            "--check",
        ],
        workdir,
    )
    assert proc.returncode == 0, proc.stderr
    assert "planned (not run)" in proc.stdout


def test_explain_and_conf_and_csv_output(workdir):
    proc = run_cli(
        [
            "-e",
            "CREATE TABLE u (id bigint, name varchar, age int) WITH (type='file', "
            "geaflow.dsl.file.path='users.txt'); SELECT name FROM u WHERE id = 2",
            "--output",
            "csv",
            "--conf",
            "geaflow.dsl.optimizer.disabled.rules=push_filter_into_scan",
        ],
        workdir,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-2:] == ["name", "kate"]
    proc = run_cli(
        [
            "-e",
            "CREATE TABLE u (id bigint) WITH (type='file', geaflow.dsl.file.path='users.txt'); SELECT id FROM u",
            "--explain",
        ],
        workdir,
    )
    assert proc.returncode == 0, proc.stderr
    assert "== PipelineGraph ==" in proc.stdout and "== Spark Plan ==" in proc.stdout


def test_bad_arguments_exit_2(workdir):
    proc = run_cli(["-f", "does-not-exist.gql"], workdir)
    assert proc.returncode == 2
    assert "cannot read does-not-exist.gql" in proc.stderr
