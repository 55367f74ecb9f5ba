"""The ExecutionGraph is what runs: EXPLAIN's groups are the cycles the scheduler runs.

Each statement runs with the scheduler's trace on (``geaflow.dsl.trace.cycles``)
and its trace is compared with the groups EXPLAIN prints for it: the same
group ids, and each cycle running the rounds its group's mode says (a batch
statement one round, a windowed job a round per window with each statement's
group once per window, an iteration a round per superstep).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write

TRACE = {"geaflow.dsl.trace.cycles": "true"}


def explained_groups(session: Any, statement: str) -> dict[int, str]:
    """group id -> mode, from EXPLAIN's "ExecutionGroups and cycles" section."""
    text = session.explain(statement)
    section = text.split("== ExecutionGroups and cycles ==")[1].split("== Spark Plan ==")[0]
    return {int(g): mode for g, mode in re.findall(r"group (\d+) mode=(\w+)", section)}


def rounds(trace: list[tuple[int, str, int]]) -> dict[int, list[int]]:
    """cycle id -> the number of rounds of each of its runs (a run: launch .. finish)."""
    out: dict[int, list[int]] = {}
    for cycle, event, _ in trace:
        if event == "launch":
            out.setdefault(cycle, []).append(0)
        elif event == "execute":
            out[cycle][-1] += 1
    return out


@pytest.fixture
def graph_session(spark, tmp_path: Path) -> Any:
    from geaflow_sql import Session

    write(tmp_path / "person.txt", "1,a\n2,b\n3,c\n4,d\n5,e\n")
    write(tmp_path / "knows.txt", "1,2\n2,3\n3,4\n4,5\n")
    s = Session(spark=spark, base_dir=str(tmp_path), conf=TRACE)
    s.execute(
        """
        CREATE TABLE person (id bigint, name varchar)
          WITH (type='file', geaflow.dsl.file.path='person.txt');
        CREATE TABLE knows (s bigint, t bigint)
          WITH (type='file', geaflow.dsl.file.path='knows.txt');
        CREATE GRAPH g (Vertex person (id bigint ID, name varchar),
                        Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID));
        INSERT INTO g.person SELECT * FROM person;
        INSERT INTO g.knows SELECT * FROM knows;
        USE GRAPH g;
        """
    )
    return s


def test_a_batch_statement_is_its_root_group_run_once(graph_session: Any) -> None:
    query = "SELECT name, count(*) FROM person GROUP BY name"
    groups = explained_groups(graph_session, query)
    (result,) = graph_session.execute(query)
    runs = rounds(result.extra["cycles"])
    assert groups == {0: "once"}
    assert runs == {0: [1]}


def test_an_iteration_runs_as_its_own_group_a_round_per_hop(graph_session: Any) -> None:
    # (on Spark: the local engine walks a variable-length edge in one query)
    graph_session.execute("SET geaflow.dsl.query.engine = distributed")
    query = "MATCH (a:person WHERE a.id = 1)-[:knows]->{1,3}(b) RETURN a.id, b.id"
    groups = explained_groups(graph_session, query)
    (result,) = graph_session.execute(query)
    runs = rounds(result.extra["cycles"])
    assert groups == {0: "once", 1: "per_iteration"}
    assert set(runs) == set(groups)
    assert runs[0] == [1]
    assert runs[1] == [3]  # hops 1, 2 and 3: the bound
    assert sorted(result.query.collect()) == [(1, 2), (1, 3), (1, 4)]


def test_a_distributed_algorithm_runs_a_round_per_superstep(graph_session: Any) -> None:
    graph_session.execute("SET geaflow.dsl.algorithm.engine = 'distributed'")
    query = "CALL wcc() YIELD (id, component) RETURN id, component"
    groups = explained_groups(graph_session, query)
    (result,) = graph_session.execute(query)
    runs = rounds(result.extra["cycles"])
    assert groups == {0: "once", 1: "per_iteration"}
    assert set(runs) == set(groups)
    assert runs[0] == [1]
    # Supersteps until the labels stop changing (checked where lineage is
    # cut, every 5 rounds), within wcc's 20 iterations.
    assert len(runs[1]) == 1 and 1 < runs[1][0] <= 20
    assert {c for _, c in result.query.collect()} == {"1"}


def test_a_windowed_job_runs_a_round_per_window(spark, tmp_path: Path) -> None:
    from geaflow_sql import Session

    write(tmp_path / "events.txt", "".join(f"{i},{i * 10}\n" for i in range(7)))
    s = Session(spark=spark, base_dir=str(tmp_path), conf=TRACE)
    s.execute(
        """
        CREATE TABLE events (id bigint, v bigint)
          WITH (type='file', geaflow.dsl.file.path='events.txt', geaflow.dsl.window.size = 3);
        CREATE TABLE totals (n bigint, s bigint)
          WITH (type='file', geaflow.dsl.file.path='totals.txt');
        CREATE TABLE copy (id bigint, v bigint)
          WITH (type='file', geaflow.dsl.file.path='copy.txt');
        """
    )
    first = "INSERT INTO totals SELECT count(*), sum(v) FROM events"
    second = "INSERT INTO copy SELECT id, v FROM events WHERE v > 10"
    # One statement alone: the job's root group per window, the statement's once in each.
    assert explained_groups(s, first) == {0: "per_window", 1: "once"}
    (alone,) = s.execute(first + ";")
    assert rounds(alone.extra["cycles"]) == {0: [3], 1: [1, 1, 1]}
    # Two statements: one job, each statement's group once per window, in order.
    results = s.execute(first + ";" + second + ";")
    trace = results[0].extra["cycles"]
    assert trace == results[1].extra["cycles"]
    assert rounds(trace) == {0: [3], 1: [1, 1, 1], 2: [1, 1, 1]}
    launches = [cycle for cycle, event, _ in trace if event == "launch" and cycle != 0]
    assert launches == [1, 2] * 3
    assert Counter(e for c, e, _ in trace if c == 0)["round_done"] == 3
    # Totals are per window (running values of the groups a window touched).
    lines = (tmp_path / "totals.txt").read_text().split()
    assert lines == ["3,30", "6,150", "7,210"]
