"""The per-statement profile (``SET geaflow.dsl.profile = true``): where a
statement's time went, phase by phase, with its py4j round trips."""

from __future__ import annotations

import time

from runtime.profile import PHASES, Profile, phase, recording
from tests.conftest import write
from tests.test_cli import run_cli


def test_phases_nest_without_counting_twice(monkeypatch):
    import types

    from runtime import profile as profile_module

    clock = [0.0]
    monkeypatch.setattr(
        profile_module, "time", types.SimpleNamespace(perf_counter=lambda: clock[0])
    )
    profile = Profile()
    with recording(profile), phase("build"):
        clock[0] += 1.0
        with phase("spark"):
            clock[0] += 10.0
        clock[0] += 100.0
    assert profile.seconds["build"] == 101.0
    assert profile.seconds["spark"] == 10.0
    assert profile.total == 111.0
    # No profile recorded: phases cost nothing and record nothing.
    with phase("build"):
        clock[0] += 5.0
    assert profile.total == 111.0


def test_a_profiled_query_reports_each_phase_and_its_py4j_calls(session, tmp_path):
    write(tmp_path / "t.txt", "".join(f"{i},n{i}\n" for i in range(10)))
    session.execute(
        "CREATE TABLE t (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='t.txt')"
    )
    plain = session.sql("SELECT id FROM t WHERE id > 3")
    assert plain.profile is None  # off by default

    query = "SELECT name, count(*) FROM t WHERE id > 3 GROUP BY name"
    session.execute("SET geaflow.dsl.profile = true; SET geaflow.dsl.query.engine = distributed")
    started = time.perf_counter()
    (result,) = session.execute(query)
    profile = result.profile
    assert profile is not None and result.query is not None
    assert profile.seconds["spark"] == 0.0  # the rows are not fetched yet
    rows = sorted(result.collect())
    assert len(rows) == 6
    elapsed = time.perf_counter() - started
    for name in PHASES:
        if name != "local":
            assert profile.seconds[name] > 0, name
    assert profile.seconds["local"] == 0.0
    assert profile.calls["build"] > 0 and profile.calls["spark"] > 0
    assert profile.calls["parse"] == 0  # the parser never talks to Spark
    assert profile.total <= elapsed
    table = profile.table().splitlines()
    assert [line.split()[0] for line in table] == ["phase", *PHASES, "total"]

    # The same query on the local engine: its time is the local phase's,
    # and fetching its rows costs no Spark job.
    session.execute("SET geaflow.dsl.query.engine = auto")
    (local,) = session.execute(query)
    assert local.extra["engine"] == "local"
    assert sorted(local.collect()) == rows
    assert local.profile is not None
    assert local.profile.seconds["local"] > 0
    assert local.profile.seconds["build"] == 0.0 and local.profile.seconds["spark"] == 0.0


def test_a_profiled_insert_counts_its_write_as_spark_time(session, tmp_path):
    write(tmp_path / "t.txt", "1,a\n2,b\n")
    session.execute(
        "CREATE TABLE t (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='t.txt');"
        "CREATE TABLE o (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='o.txt');"
        "SET geaflow.dsl.profile = true"
    )
    # On the local engine the query and the write are its phase ...
    (result,) = session.execute("INSERT INTO o SELECT id, name FROM t")
    assert result.rows_written == 2 and result.extra["engine"] == "local"
    assert result.profile is not None and result.profile.seconds["local"] > 0
    # ... on Spark the write is Spark's.
    session.execute("SET geaflow.dsl.query.engine = distributed")
    (result,) = session.execute("INSERT INTO o SELECT id, name FROM t")
    assert result.rows_written == 2
    assert result.profile is not None
    assert result.profile.seconds["spark"] > 0 and result.profile.calls["spark"] > 0


def test_the_cli_prints_the_profile_on_stderr(tmp_path):
    write(tmp_path / "t.txt", "1,a\n2,b\n")
    script = (
        "CREATE TABLE t (id bigint, name varchar) WITH (type='file', "
        "geaflow.dsl.file.path='t.txt');\n"
        "SET geaflow.dsl.profile = true;\n"
        "SELECT id FROM t ORDER BY id;\n"
    )
    (tmp_path / "q.gql").write_text(script, encoding="utf-8")
    out = run_cli(["-f", "q.gql", "--output", "csv"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "phase" not in out.stdout
    assert "profile of line 3:" in out.stderr
    # A query over a small file runs on the local engine: its time is there.
    rows = [line.split() for line in out.stderr.splitlines() if line.split()[:1] == ["local"]]
    assert len(rows) == 1 and float(rows[0][1]) > 0
