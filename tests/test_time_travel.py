"""Graph time travel: ``USE GRAPH g VERSION n`` and ``SHOW VERSIONS OF GRAPH g``.

A persistent graph keeps every published version's manifest; a session
pinned to a version reads it (MATCH, label scans, CALL) while other
sessions write newer versions, and ``USE GRAPH g`` goes back to the
current one.  A version never kept, or a graph kept in memory, is a
located error.
"""

from __future__ import annotations

import pytest

GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double)
) WITH (storeType='rocksdb');
USE GRAPH g;
"""

COUNT = "MATCH (a:person)-[e:knows]->(b:person) RETURN count(*) AS n"


def _one(session, text: str):
    (value,) = session.sql(text).collect()[0]
    return value


def _session(spark, base):
    from geaflow_sql import Session

    return Session(spark=spark, base_dir=str(base))


def test_a_pinned_session_reads_its_version_while_another_writes(spark, tmp_path):
    writer = _session(spark, tmp_path)
    writer.execute(GRAPH)
    writer.execute("INSERT INTO g.person VALUES (1, 'a'), (2, 'b'), (3, 'c')")  # version 1
    writer.execute("INSERT INTO g.knows VALUES (1, 2, 0.5)")  # version 2
    writer.execute("INSERT INTO g.knows VALUES (2, 3, 1.5), (1, 3, 2.5)")  # version 3

    (shown,) = writer.execute("SHOW VERSIONS OF GRAPH g")
    rows = shown.extra["rows"]
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert [r[2] for r in rows] == ["3", "1", "2"]  # rows each version added
    assert [r[3] for r in rows] == ["False", "False", "True"]
    assert all(len(r[1]) == 19 for r in rows)  # 'YYYY-MM-DD HH:MM:SS'

    reader = _session(spark, tmp_path)
    reader.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    (used,) = reader.execute("USE GRAPH g VERSION 2")
    assert "version 2" in used.message
    assert _one(reader, COUNT) == 1
    assert _one(reader, "SELECT count(*) FROM knows") == 1
    # The writer goes on; the pinned reader still sees version 2.
    writer.execute("INSERT INTO g.knows VALUES (3, 1, 3.5)")  # version 4
    assert _one(writer, COUNT) == 4
    assert _one(reader, COUNT) == 1
    assert _one(reader, "MATCH (a:person WHERE a.id = 1)-[e]->(b) RETURN max(e.w)") == 0.5
    components = (
        "SELECT count(DISTINCT component) FROM "
        "(CALL wcc() YIELD (id, component) RETURN id, component)"
    )
    assert _one(reader, components) == 2  # {1, 2} and {3}
    assert _one(writer, components) == 1
    # On Spark as on the local engine.
    reader.execute("SET geaflow.dsl.query.engine = distributed")
    assert _one(reader, COUNT) == 1
    assert _one(reader, components) == 2
    reader.execute("SET geaflow.dsl.query.engine = auto")
    plan = reader.explain(COUNT)
    assert "graph g read at version 2" in plan.split("== Versions ==")[1], plan
    assert "== Versions ==" not in writer.explain(COUNT)
    reader.execute("USE GRAPH g VERSION 1")
    assert _one(reader, COUNT) == 0
    assert _one(reader, "MATCH (a:person) RETURN count(*)") == 3
    # Back to the current version.
    reader.execute("USE GRAPH g")
    assert _one(reader, COUNT) == 4


def test_versions_that_are_not_kept_are_located_errors(spark, tmp_path):
    from geaflow_sql.core.errors import GeaflowError

    session = _session(spark, tmp_path)
    session.execute(GRAPH)
    session.execute("INSERT INTO g.person VALUES (1, 'a')")
    with pytest.raises(GeaflowError) as info:
        session.execute("SELECT 1;\nUSE GRAPH g VERSION 7")
    message = str(info.value)
    assert "no version 7" in message and "it keeps version 1)" in message, message
    assert "line 2, column 1" in message, message
    session.execute("CREATE GRAPH m (Vertex v (id bigint ID)) WITH (storeType='memory')")
    with pytest.raises(GeaflowError) as info:
        session.execute("USE GRAPH g VERSION 0")
    assert "count from 1" in str(info.value)
    for text in ("USE GRAPH m VERSION 1", "SHOW VERSIONS OF GRAPH m", "VACUUM GRAPH m RETAIN 1"):
        with pytest.raises(GeaflowError) as info:
            session.execute(text)
        assert "kept in memory" in str(info.value) and "line 1" in str(info.value)
    with pytest.raises(GeaflowError) as info:
        session.execute("SHOW VERSIONS OF GRAPH nope")
    assert "unknown graph" in str(info.value)
    # The failed USE left the session where it was: the current version.
    session.execute("USE GRAPH g")
    assert _one(session, "MATCH (a:person) RETURN count(*)") == 1


def test_vacuum_keeps_the_newest_versions_and_those_a_session_reads(spark, tmp_path):
    import json
    import socket
    import subprocess

    from geaflow_sql.core.errors import GeaflowError

    writer = _session(spark, tmp_path)
    writer.execute(GRAPH)
    for k in range(1, 6):  # versions 1..5
        writer.execute(f"INSERT INTO g.person VALUES ({k}, 'p{k}')")
    reader = _session(spark, tmp_path)
    reader.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    reader.execute("USE GRAPH g VERSION 2")
    # A lease left by a process that is gone holds nothing.
    graph = writer.catalog.graph(("g",))
    folder = writer.stores.store(writer.runtime_context(), graph).path
    dead = subprocess.Popen(["true"])
    dead.wait()
    (folder / "leases" / "gone.json").write_text(
        json.dumps({"version": 1, "pid": dead.pid, "host": socket.gethostname()})
    )

    (done,) = writer.execute("VACUUM GRAPH g RETAIN 2")
    assert "removed 2 versions" in done.message, done.message
    assert "keeps versions 2, 4 to 5" in done.message and "a session reads it" in done.message
    assert not (folder / "leases" / "gone.json").exists()
    (shown,) = writer.execute("SHOW VERSIONS OF GRAPH g")
    assert [r[0] for r in shown.extra["rows"]] == ["2", "4", "5"]
    # The pinned reader goes on reading version 2; the current version is whole.
    assert _one(reader, "MATCH (a:person) RETURN count(*)") == 2
    assert _one(writer, "MATCH (a:person) RETURN count(*)") == 5

    late = _session(spark, tmp_path)
    late.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    with pytest.raises(GeaflowError) as info:
        late.execute("USE GRAPH g VERSION 3")
    message = str(info.value)
    assert "no longer keeps version 3" in message and "line 1, column 1" in message, message
    # Once the reader lets go (USE GRAPH g, or closing), VACUUM may remove version 2.
    reader.close()
    (done,) = writer.execute("VACUUM GRAPH g RETAIN 1")
    assert "keeps version 5" in done.message, done.message
    with pytest.raises(GeaflowError):
        late.execute("USE GRAPH g VERSION 2")
    with pytest.raises(GeaflowError) as info:
        writer.execute("VACUUM GRAPH g RETAIN 0")
    assert "at least 1" in str(info.value)


def test_reads_of_a_pinned_version_hold_while_another_session_writes_and_vacuums(spark, tmp_path):
    """A writer in another thread publishes versions and vacuums after each
    one while a pinned session reads its version and an unpinned one the
    current: the pinned reads never change, the current ones never go
    backwards, and the pinned version outlives every VACUUM."""
    import threading

    writer = _session(spark, tmp_path)
    writer.execute(GRAPH)
    writer.execute("INSERT INTO g.person VALUES (1, 'a'), (2, 'b'), (3, 'c')")  # version 1
    writer.execute("INSERT INTO g.knows VALUES (1, 2, 0.5)")  # version 2
    pinned = _session(spark, tmp_path)
    pinned.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    pinned.execute("USE GRAPH g VERSION 2")
    current = _session(spark, tmp_path)
    current.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    failures: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for k in range(3, 7):  # versions 3..6, each then vacuumed to the newest one
                writer.execute(f"INSERT INTO g.knows VALUES ({k % 3 + 1}, {k % 2 + 1}, {k}.0)")
                writer.execute("VACUUM GRAPH g RETAIN 1")
        except BaseException as err:  # (reported by the main thread)
            failures.append(err)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen_pinned, seen_current = [], []
    while not done.is_set() or len(seen_pinned) < 2:
        seen_pinned.append(_one(pinned, COUNT))
        seen_current.append(_one(current, COUNT))
    thread.join()
    # (a read after the last write: the loop's last may have run before it)
    seen_current.append(_one(current, COUNT))
    assert not failures, failures
    assert set(seen_pinned) == {1}, seen_pinned
    assert seen_current == sorted(seen_current) and seen_current[-1] == 5, seen_current
    (shown,) = writer.execute("SHOW VERSIONS OF GRAPH g")
    assert [r[0] for r in shown.extra["rows"]] == ["2", "6"]
    assert _one(pinned, COUNT) == 1


def test_a_pin_waits_for_a_vacuum_that_holds_the_graph(spark, tmp_path):
    """USE GRAPH g VERSION n checks the version and takes its lease under the
    graph's lock, the lock VACUUM holds while it removes versions: a pin that
    meets a VACUUM under way waits for it, then finds the version gone (a
    clear error) rather than pinning a version that is being removed."""
    import os
    import threading

    from geaflow_sql.core.errors import GeaflowError
    from runtime.stores.commits import locked

    writer = _session(spark, tmp_path)
    writer.execute(GRAPH)
    for k in range(1, 4):  # versions 1..3
        writer.execute(f"INSERT INTO g.person VALUES ({k}, 'p{k}')")
    folder = writer.stores.store(writer.runtime_context(), writer.catalog.graph(("g",))).path
    reader = _session(spark, tmp_path)
    reader.execute(GRAPH.replace("CREATE GRAPH g", "CREATE GRAPH IF NOT EXISTS g"))
    outcome: list[BaseException | str] = []
    with locked([folder]):  # (what VACUUM holds)
        thread = threading.Thread(
            target=lambda: outcome.append(_try(reader, "USE GRAPH g VERSION 1"))
        )
        thread.start()
        thread.join(timeout=2.0)
        assert thread.is_alive() and not outcome  # waiting for the lock
        os.unlink(folder / "versions" / "1.json")  # (what VACUUM removes)
    thread.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], GeaflowError), outcome
    assert "no longer keeps version 1" in str(outcome[0])
    assert not list((folder / "leases").glob("*.json"))  # no lease left behind
    # Version 2 was not touched: it pins, and its lease is there for VACUUM to see.
    reader.execute("USE GRAPH g VERSION 2")
    assert len(list((folder / "leases").glob("*.json"))) == 1
    (done,) = writer.execute("VACUUM GRAPH g RETAIN 1")
    assert "keeps versions 2 to 3" in done.message, done.message


def _try(session, text: str) -> BaseException | str:
    try:
        (result,) = session.execute(text)
    except BaseException as err:  # (the outcome is what the test checks)
        return err
    return str(result.message)
