"""One Session shared by threads: each user's own graph and settings, one catalog.

Threads meet at barriers so that the interleavings that used to go wrong
happen every time, not by luck: every thread runs ``USE GRAPH`` (or ``SET``)
before any of them runs its query.  A DB-API connection opened on a shared
Session gets a scope of it (``Session.scope``): the same definitions and
graph data, its own current graph, instance and settings.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from geaflow_sql import dbapi
from geaflow_sql.core.catalog import Catalog, TableInfo

THREADS = 6

GRAPHS = """
CREATE GRAPH g{n} (
  Vertex person (id bigint ID, name varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
) WITH (storeType='memory');
INSERT INTO g{n}.person VALUES ({n}, 'only-in-g{n}');
"""


def run_threads(work) -> list:
    # A thread that fails before the barrier breaks it for the others (a
    # BrokenBarrierError after the timeout), never a hang.
    barrier = threading.Barrier(THREADS, timeout=120)
    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(lambda i: work(i, barrier), range(THREADS)))


def test_use_graph_is_per_connection_on_a_shared_session(session):
    session.execute(GRAPHS.format(n=0) + GRAPHS.format(n=1))
    conns = [dbapi.connect(session=session) for _ in range(THREADS)]

    def work(i: int, barrier: threading.Barrier) -> list[str]:
        cur = conns[i].cursor()
        cur.execute(f"USE GRAPH g{i % 2}")
        barrier.wait()  # every thread has switched graphs before any query
        cur.execute("MATCH (a:person) RETURN a.name")
        return [r[0] for r in cur.fetchall()]

    for _ in range(2):
        answers = run_threads(work)
        assert answers == [[f"only-in-g{i % 2}"] for i in range(THREADS)]
    assert [c.graph for c in conns] == [f"g{i % 2}" for i in range(THREADS)]
    # The shared session's own current graph is untouched.
    assert session.catalog.current_graph is None


def test_set_is_per_connection_and_definitions_are_shared(session):
    conns = [dbapi.connect(session=session) for _ in range(THREADS)]

    def work(i: int, barrier: threading.Barrier) -> tuple[str, list[str]]:
        cur = conns[i].cursor()
        cur.execute(f"SET my.thread.key = 'value-{i}'")
        cur.execute(f"CREATE TABLE t{i} (a int) WITH (type='file', geaflow.dsl.file.path='t{i}')")
        barrier.wait()
        cur.execute("SET my.thread.key")
        value = cur.fetchall()[0][-1]
        cur.execute("SHOW TABLES")
        return value, sorted(r[0] for r in cur.fetchall())

    results = run_threads(work)
    tables = sorted(f"t{i}" for i in range(THREADS))
    assert results == [(f"value-{i}", tables) for i in range(THREADS)]
    assert session.config.get_str("my.thread.key") is None
    assert sorted(session.catalog.table_names()) == tables


def test_the_catalog_can_be_read_while_another_thread_changes_it():
    # Without the Spark work in between, the race is tight: readers list and
    # resolve names in a loop while writers add and drop thousands.
    catalog = Catalog()
    errors: list[BaseException] = []
    done = threading.Event()

    def write(i: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        try:
            for k in range(3000):
                name = f"w{i}_{k}"
                catalog.add_table(TableInfo(name, ()))
                if k % 3 == 0:
                    catalog.drop("TABLE", (name,))
        finally:
            done.set()

    def read(i: int, barrier: threading.Barrier) -> int:
        barrier.wait()
        n = 0
        try:
            while not done.is_set() or n < 50:
                n += len(catalog.table_names())
                n += sum(1 for _ in catalog.tables.values())
        except BaseException as err:  # noqa: BLE001 - the test reports any
            errors.append(err)
        return n

    def work(i: int, barrier: threading.Barrier) -> object:
        return write(i, barrier) if i % 2 else read(i, barrier)

    run_threads(work)
    assert not errors, errors[0]
    writers = THREADS // 2
    assert len(catalog.table_names()) == writers * 2000


def test_only_one_of_two_threads_creating_a_name_succeeds():
    catalog = Catalog()

    def work(i: int, barrier: threading.Barrier) -> bool:
        barrier.wait()
        try:
            return catalog.add_table(TableInfo("same", ()))
        except Exception:  # noqa: BLE001 - "already exists"
            return False

    for _ in range(20):
        catalog.drop("TABLE", ("same",))
        assert sum(run_threads(work)) == 1


def test_threads_inserting_into_one_persistent_graph_each_write_whole_statements(spark, tmp_path):
    from geaflow_sql import Session

    shared = Session(
        spark=spark,
        base_dir=str(tmp_path),
        conf={"geaflow.file.persistent.root": str(tmp_path / "warehouse")},
    )
    shared.execute(
        """CREATE GRAPH pg (
             Vertex person (id bigint ID, name varchar),
             Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
           ) WITH (storeType='rocksdb')"""
    )
    per_thread = 3

    def work(i: int, barrier: threading.Barrier) -> None:
        s = shared.scope()
        barrier.wait()
        for k in range(per_thread):
            base = i * 100 + k * 10
            rows = ", ".join(f"({base + j}, 't{i}', {base + j}, {base})" for j in range(3))
            s.execute(f"INSERT INTO pg(person.id, person.name, knows.src, knows.dst) VALUES {rows}")

    run_threads(work)
    reader = shared.scope()
    reader.execute("USE GRAPH pg")
    ids = sorted(r[0] for r in reader.sql("MATCH (a:person) RETURN a.id").collect())
    edges = sorted(
        tuple(r) for r in reader.sql("MATCH (a)-[e:knows]->(b) RETURN e.src, e.dst").collect()
    )
    expected = sorted(
        i * 100 + k * 10 + j for i in range(THREADS) for k in range(per_thread) for j in range(3)
    )
    assert ids == expected
    assert edges == sorted((v, v - v % 10) for v in expected)
    # One version per statement, whichever thread wrote it.
    import json

    manifest = json.loads((tmp_path / "warehouse" / "default" / "pg" / "manifest.json").read_text())
    assert len(manifest["labels"]["v:person"]) == THREADS * per_thread
    assert len(manifest["labels"]["e:knows"]) == THREADS * per_thread
