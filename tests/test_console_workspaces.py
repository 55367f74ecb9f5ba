"""The console's workspaces (geaflow_sql/console/workspaces.py), in threads.

A new workspace's Session is made and its init script run outside the
server's lock: while one tab's workspace opens, the others answer; a
second request for the one opening waits for it (one Session made, not
two); an init script that fails leaves no workspace behind and is told
to every request for it (run once for the requests waiting together);
closing the console while one opens keeps none; a cancel that comes before
its init script starts a job stops the script; a request waits a bounded
time for a workspace another opens.
"""

from __future__ import annotations

import threading
import time

import pytest

from geaflow_sql import Session
from geaflow_sql.console.workspaces import ConsoleError, Workspaces

INIT = "CREATE TABLE people (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='p.txt')"


def test_a_workspace_opening_holds_up_no_other(spark, tmp_path):
    gate = threading.Event()
    made: list[Session] = []

    def new_session() -> Session:
        if len(made) == 1:  # the second workspace: held until the gate opens
            assert gate.wait(60)
        made.append(Session(spark=spark, base_dir=str(tmp_path)))
        return made[-1]

    spaces = Workspaces(new_session, (INIT, "init.gql"))
    first = spaces.workspace("a")
    assert [t["name"] for t in spaces.catalog("a")["tables"]] == ["people"]

    opened: list[object] = []
    slow = [threading.Thread(target=lambda: opened.append(spaces.workspace("b"))) for _ in "xy"]
    for t in slow:
        t.start()
    time.sleep(0.5)
    assert not opened  # both wait: one makes the Session, the other for it
    # Meanwhile workspace a answers.
    started = time.monotonic()
    assert spaces.run("a", "SELECT 1 + 1 AS two", 10)["rows"] == [[2]]
    assert spaces.catalog("a")["tables"]
    assert spaces.progress("b") == {"running": False, "done": 0, "total": 0}
    assert time.monotonic() - started < 30 and not opened
    gate.set()
    for t in slow:
        t.join(60)
    assert len(opened) == 2 and opened[0] is opened[1] is not first
    assert len(made) == 2
    assert [t["name"] for t in spaces.catalog("b")["tables"]] == ["people"]
    spaces.close()


def test_an_init_script_that_fails_opens_no_workspace(spark, tmp_path):
    made: list[Session] = []

    def new_session() -> Session:
        made.append(Session(spark=spark, base_dir=str(tmp_path)))
        return made[-1]

    spaces = Workspaces(new_session, ("SELECT * FROM nowhere", "init.gql"))
    for _ in range(2):  # told again to the next request, not a half-open workspace
        with pytest.raises(ConsoleError) as refused:
            spaces.workspace("a")
        body = refused.value.body
        assert refused.value.status == 500 and (body["line"], body["column"]) == (1, 15)
        assert body["error"].startswith("the workspace's init script failed: ")
        assert "nowhere" in body["error"]
    assert len(made) == 2
    assert spaces.progress("a")["running"] is False
    assert spaces.cancel("a") is False


def held_sessions(spark, tmp_path, gate: threading.Event, made: list[Session]):
    """A new_session that makes each Session once ``gate`` is open."""

    def new_session() -> Session:
        assert gate.wait(60)
        made.append(Session(spark=spark, base_dir=str(tmp_path)))
        return made[-1]

    return new_session


def in_threads(call, n: int) -> tuple[list[threading.Thread], list[object]]:
    """``n`` threads calling ``call``; what each returned or raised."""
    out: list[object] = []

    def one() -> None:
        try:
            out.append(call())
        except Exception as err:  # (the answer under test)
            out.append(err)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    return threads, out


def test_a_failing_init_is_told_to_the_requests_waiting_for_it_and_run_once(spark, tmp_path):
    gate, made = threading.Event(), []
    spaces = Workspaces(
        held_sessions(spark, tmp_path, gate, made), ("SELECT * FROM nowhere", "init.gql")
    )
    threads, out = in_threads(lambda: spaces.workspace("a"), 3)
    time.sleep(0.5)
    gate.set()
    for t in threads:
        t.join(60)
    assert len(out) == 3 and all(isinstance(e, ConsoleError) for e in out), out
    assert all("nowhere" in e.body["error"] for e in out)  # type: ignore[attr-defined]
    assert len({id(e) for e in out}) == 3  # (each request its own error to raise)
    assert len(made) == 1  # the init script ran once for the three requests


def test_closing_while_a_workspace_opens_keeps_none(spark, tmp_path):
    gate, made = threading.Event(), []
    spaces = Workspaces(held_sessions(spark, tmp_path, gate, made), (INIT, "init.gql"))
    threads, out = in_threads(lambda: spaces.workspace("a"), 2)
    time.sleep(0.5)
    spaces.close()
    gate.set()
    for t in threads:
        t.join(60)
    assert [getattr(e, "status", e) for e in out] == [503, 503]
    assert len(made) == 1 and made[0]._closed  # opened, then closed, not kept
    with pytest.raises(ConsoleError) as refused:
        spaces.workspace("b")
    assert refused.value.status == 503


WRITES = (
    "CREATE TABLE marks (n int) WITH (type='file', geaflow.dsl.file.path='marks.txt');\n"
    "INSERT INTO marks SELECT 1"
)


def test_a_cancel_before_the_init_script_starts_stops_it(spark, tmp_path):
    """Cancelled while its Session is being made (no Spark job to cancel
    yet), the init script does not run; the next request opens it anew."""
    gate, made = threading.Event(), []
    spaces = Workspaces(held_sessions(spark, tmp_path, gate, made), (WRITES, "init.gql"))
    threads, out = in_threads(lambda: spaces.workspace("a"), 1)
    time.sleep(0.5)
    assert spaces.cancel("a") is True
    gate.set()
    threads[0].join(60)
    assert [getattr(e, "status", e) for e in out] == [500]
    assert out[0].body["error"] == "the workspace's init script was cancelled"  # type: ignore[attr-defined]
    assert not (tmp_path / "marks.txt").exists()  # the INSERT never ran
    assert made[0]._closed
    spaces.workspace("a")
    assert (tmp_path / "marks.txt").read_text().split() == ["1"]
    assert spaces.cancel("a") is False  # (open, and running nothing)
    spaces.close()


def test_a_request_waits_a_bounded_time_for_a_workspace_opening(spark, tmp_path):
    gate, made = threading.Event(), []
    spaces = Workspaces(
        held_sessions(spark, tmp_path, gate, made), (INIT, "init.gql"), open_wait=0.5
    )
    threads, out = in_threads(lambda: spaces.workspace("a"), 1)
    time.sleep(0.2)
    started = time.monotonic()
    with pytest.raises(ConsoleError) as refused:
        spaces.workspace("a")
    assert 0.4 < time.monotonic() - started < 30
    assert refused.value.status == 503 and "still opening" in refused.value.body["error"]
    gate.set()
    threads[0].join(60)
    assert out and out[0] is spaces.workspace("a")  # opened once, by the first request
    assert len(made) == 1
    spaces.close()
