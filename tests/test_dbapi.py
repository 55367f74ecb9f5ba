"""geaflow_sql.dbapi against PEP 249, on the shared SparkSession.

Covers every required module global, class, attribute and method; bound
parameters (qmark and named) that come back as data and never change the
statement; type codes; executemany; Arrow fetches; errors with positions;
and two threads whose connections keep their own graph and settings.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geaflow_sql import dbapi

NASTY = [
    "'; DROP TABLE names; --",
    "\\",
    "'",
    "''",
    "*/",
    "/*",
    "${x}",
    "${spark.app.name}",
    "?",
    ":name",
    "\\'; SELECT 1; --",
    '"',
    "`",
    "a;b",
    "-- comment",
    "\n",
    "tab\there",
    "\u00e9\u4e2d\U0001f600",
    "\x00",
    "",
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("dbapi")


@pytest.fixture(scope="module")
def conn(spark, workdir):
    """One connection for the read-only tests (a Session on the shared Spark)."""
    (workdir / "users.txt").write_text(
        "1,jim,15\n2,kate,16\n3,lucy,20\n4,bob,21\n", encoding="utf-8"
    )
    names = ["plain", *NASTY, "plain"]
    pq.write_table(
        pa.table({"id": pa.array(range(len(names)), pa.int64()), "name": names}),
        workdir / "names.parquet",
    )
    c = dbapi.connect(spark=spark, base_dir=str(workdir))
    c.cursor().execute(
        """
        CREATE TABLE users (id bigint, name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='users.txt');
        CREATE TABLE names (id bigint, name varchar)
          WITH (type='file', format='parquet', geaflow.dsl.file.path='names.parquet');
        """
    )
    c.names = names  # type: ignore[attr-defined]
    yield c
    c.close()


@pytest.fixture
def fresh(spark, tmp_path):
    """A connection of its own, for tests that define or write things."""
    c = dbapi.connect(spark=spark, base_dir=str(tmp_path))
    yield c
    c.close()


# --------------------------------------------------------------------------
# PEP 249: module interface
# --------------------------------------------------------------------------


def test_module_globals():
    assert dbapi.apilevel == "2.0"
    assert dbapi.threadsafety == 1
    assert dbapi.paramstyle == "qmark"
    assert callable(dbapi.connect)


def test_exception_hierarchy():
    assert issubclass(dbapi.Warning, Exception)
    assert issubclass(dbapi.Error, Exception)
    assert not issubclass(dbapi.Warning, dbapi.Error)
    assert issubclass(dbapi.InterfaceError, dbapi.Error)
    assert issubclass(dbapi.DatabaseError, dbapi.Error)
    assert not issubclass(dbapi.InterfaceError, dbapi.DatabaseError)
    for name in (
        "DataError",
        "OperationalError",
        "IntegrityError",
        "InternalError",
        "ProgrammingError",
        "NotSupportedError",
    ):
        cls = getattr(dbapi, name)
        assert issubclass(cls, dbapi.DatabaseError), name
        # Optional extension: the same classes reachable from a connection.
        assert getattr(dbapi.Connection, name) is cls


def test_type_objects_and_constructors():
    assert dbapi.Date(2024, 2, 29) == dt.date(2024, 2, 29)
    assert dbapi.Time(1, 2, 3) == dt.time(1, 2, 3)
    assert dbapi.Timestamp(2024, 2, 29, 1, 2, 3) == dt.datetime(2024, 2, 29, 1, 2, 3)
    assert dbapi.DateFromTicks(0) == dt.date.fromtimestamp(0)
    assert dbapi.TimestampFromTicks(86400 * 365) == dt.datetime.fromtimestamp(86400 * 365)
    assert dbapi.TimeFromTicks(3600) == dt.datetime.fromtimestamp(3600).time()
    assert dbapi.Binary("ab") == b"ab"
    assert dbapi.NUMBER == "BIGINT" and dbapi.NUMBER == "DECIMAL" and dbapi.NUMBER != "VARCHAR"
    assert dbapi.STRING == "VARCHAR" and dbapi.STRING != "BIGINT"
    assert dbapi.DATETIME == "DATE" and dbapi.DATETIME == "TIMESTAMP"
    assert dbapi.BINARY == "BINARY" and dbapi.ROWID != "BIGINT"


def test_connection_and_cursor_have_every_required_member(conn):
    for name in ("close", "commit", "rollback", "cursor"):
        assert callable(getattr(conn, name)), name
    cur = conn.cursor()
    for name in (
        "callproc",
        "close",
        "execute",
        "executemany",
        "fetchone",
        "fetchmany",
        "fetchall",
        "nextset",
        "setinputsizes",
        "setoutputsize",
    ):
        assert callable(getattr(cur, name)), name
    assert cur.description is None
    assert cur.rowcount == -1
    assert cur.arraysize == 1
    assert cur.connection is conn
    cur.setinputsizes([10])
    cur.setoutputsize(10)
    with pytest.raises(dbapi.NotSupportedError):
        cur.callproc("pagerank")


# --------------------------------------------------------------------------
# Connections and cursors
# --------------------------------------------------------------------------


def test_context_managers_close(spark, tmp_path):
    with dbapi.connect(spark=spark, base_dir=str(tmp_path)) as c:
        with c.cursor() as cur:
            assert cur.execute("SELECT 1 AS one").fetchall() == [(1,)]
        with pytest.raises(dbapi.ProgrammingError, match="cursor is closed"):
            cur.execute("SELECT 1")
        open_cursor = c.cursor()
    assert c.closed
    with pytest.raises(dbapi.ProgrammingError, match="connection is closed"):
        c.cursor()
    with pytest.raises(dbapi.ProgrammingError, match="closed"):
        open_cursor.execute("SELECT 1")
    with pytest.raises(dbapi.ProgrammingError):
        c.commit()
    c.close()  # closing twice is harmless


def test_commit_is_a_no_op_and_rollback_is_not_supported(fresh):
    fresh.commit()
    assert fresh.autocommit is True
    with pytest.raises(dbapi.NotSupportedError, match="no transactions"):
        fresh.rollback()


def test_description_type_codes(conn):
    cur = conn.cursor()
    cur.execute(
        "SELECT id, name, age, CAST(age AS DOUBLE) AS d, CAST(age AS DECIMAL(10, 2)) AS m, "
        "age > 15 AS b, CAST('2024-02-29' AS DATE) AS day, "
        "CAST('2024-02-29 10:11:12' AS TIMESTAMP) AS ts FROM users WHERE id = 1"
    )
    names = [d[0] for d in cur.description]
    codes = [d[1] for d in cur.description]
    assert names == ["id", "name", "age", "d", "m", "b", "day", "ts"]
    assert codes == [
        "BIGINT",
        "VARCHAR",
        "INTEGER",
        "DOUBLE",
        "DECIMAL",
        "BOOLEAN",
        "DATE",
        "TIMESTAMP",
    ]
    assert [c == dbapi.NUMBER for c in codes] == [
        True,
        False,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert [c == dbapi.STRING for c in codes] == [False, True] + [False] * 6
    assert [c == dbapi.DATETIME for c in codes] == [False] * 6 + [True, True]
    assert all(len(d) == 7 for d in cur.description)
    assert cur.description[4][4:6] == (10, 2)  # precision, scale
    row = cur.fetchone()
    assert row[:6] == (1, "jim", 15, 15.0, decimal.Decimal("15.00"), False)
    assert row[6] == dt.date(2024, 2, 29)
    assert row[7] == dt.datetime(2024, 2, 29, 10, 11, 12)


def test_fetch_methods_and_arraysize(conn):
    cur = conn.cursor()
    cur.execute("SELECT id FROM users ORDER BY id")
    assert cur.rowcount == 4
    assert cur.rownumber == 0
    assert cur.fetchone() == (1,)
    assert cur.fetchmany() == [(2,)]  # arraysize 1
    cur.arraysize = 5
    assert cur.fetchmany() == [(3,), (4,)]
    assert cur.fetchone() is None
    assert cur.fetchmany(3) == []
    assert cur.fetchall() == []
    cur.execute("SELECT id FROM users ORDER BY id DESC")
    assert list(cur) == [(4,), (3,), (2,), (1,)]
    cur.execute("SELECT id FROM users ORDER BY id")
    assert cur.fetchmany(2) == [(1,), (2,)]
    assert cur.fetchall() == [(3,), (4,)]
    with pytest.raises(dbapi.ProgrammingError, match="negative"):
        cur.fetchmany(-1)


def test_statement_without_rows_has_no_result_set(fresh):
    cur = fresh.cursor()
    with pytest.raises(dbapi.ProgrammingError, match="no result set"):
        cur.fetchone()
    cur.execute("CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='t.txt')")
    assert cur.description is None and cur.rowcount == -1
    with pytest.raises(dbapi.ProgrammingError, match="no result set"):
        cur.fetchall()
    assert cur.nextset() is None


def test_script_keeps_the_last_result(fresh, tmp_path):
    (tmp_path / "in.txt").write_text("1\n2\n3\n", encoding="utf-8")
    cur = fresh.cursor()
    cur.execute(
        """
        CREATE TABLE src (a bigint) WITH (type='file', geaflow.dsl.file.path='in.txt');
        CREATE TABLE dst (a bigint) WITH (type='file', geaflow.dsl.file.path='out.txt');
        INSERT INTO dst SELECT a * 10 FROM src WHERE a > ?;
        SELECT count(*) AS n, sum(a) AS total FROM dst;
        """,
        [1],
    )
    assert [d[0] for d in cur.description] == ["n", "total"]
    assert cur.fetchall() == [(2, 50)]
    assert [r.kind for r in cur.results] == ["ddl", "ddl", "insert", "query"]
    cur.execute("INSERT INTO dst SELECT a FROM src")
    assert cur.rowcount == 3 and cur.description is None


def test_show_describe_set_and_explain_are_result_sets(conn):
    cur = conn.cursor()
    cur.execute("SHOW TABLES")
    assert [d[0] for d in cur.description] == ["name", "kind"]
    assert cur.fetchall() == [("names", "table"), ("users", "table")]
    cur.execute("DESCRIBE users")
    assert cur.fetchall() == [("id", "BIGINT"), ("name", "VARCHAR"), ("age", "INTEGER")]
    cur.execute("SHOW FUNCTIONS")
    functions = {name for name, _ in cur.fetchall()}
    assert {"concat", "count"} <= {f.lower() for f in functions}
    cur.execute("EXPLAIN SELECT name FROM users")
    assert [d[0] for d in cur.description] == ["plan"]
    assert "Logical Plan" in cur.fetchone()[0]


def test_executemany_inserts_every_row(fresh):
    cur = fresh.cursor()
    cur.execute(
        "CREATE TABLE people (id bigint, name varchar) "
        "WITH (type='file', geaflow.dsl.file.path='people.txt')"
    )
    rows = [(1, "ann"), (2, "o'neil"), (3, "semi;colon")]
    cur.executemany("INSERT INTO people VALUES (?, ?)", rows)
    assert cur.rowcount == 3
    cur.executemany("INSERT INTO people VALUES (:id, :name)", [{"id": 4, "name": "dee"}])
    assert cur.execute("SELECT id, name FROM people ORDER BY id").fetchall() == [(4, "dee")]
    cur.executemany("INSERT INTO people VALUES (?, ?)", rows)
    assert cur.execute("SELECT id, name FROM people ORDER BY id").fetchall() == rows
    cur.executemany("INSERT INTO people VALUES (?, ?)", [])
    assert cur.rowcount == -1
    with pytest.raises(dbapi.ProgrammingError, match="2 \\? placeholder"):
        cur.executemany("INSERT INTO people VALUES (?, ?)", [(1, "x"), (2,)])


def test_fetch_arrow_table_is_zero_copy(conn):
    cur = conn.cursor()
    cur.execute("SELECT id, name FROM users ORDER BY id")
    table = cur.fetch_arrow_table()
    assert isinstance(table, pa.Table)
    assert table.schema.names == ["id", "name"]
    assert table.column("name").to_pylist() == ["jim", "kate", "lucy", "bob"]
    source = cur.results[-1].query.to_arrow()
    assert (
        table.column("id").chunk(0).buffers()[1].address
        == source.column(0).chunk(0).buffers()[1].address
    )
    assert cur.fetchone() is None
    cur.execute("SELECT id FROM users ORDER BY id")
    assert cur.fetchone() == (1,)
    rest = cur.fetch_arrow_table()
    assert rest.column("id").to_pylist() == [2, 3, 4]
    assert cur.execute("SELECT id FROM users WHERE id > 2 ORDER BY id").fetch_df()[
        "id"
    ].tolist() == [3, 4]


# --------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------


def test_typed_parameters_round_trip(conn):
    cur = conn.cursor()
    values = [
        None,
        True,
        7,
        2**40,
        -1.5,
        "text",
        decimal.Decimal("12.340"),
        dt.date(2024, 2, 29),
        dt.datetime(2024, 2, 29, 10, 11, 12, 123456),
        b"\x00\xffab",
    ]
    cur.execute("SELECT " + ", ".join(f"? AS c{i}" for i in range(len(values))), values)
    row = cur.fetchone()
    assert row[:8] == tuple(values[:8])
    assert row[8] == values[8]  # naive in, naive out
    assert row[9] == values[9]
    assert [d[1] for d in cur.description] == [
        "NULL",
        "BOOLEAN",
        "INTEGER",
        "BIGINT",
        "DOUBLE",
        "VARCHAR",
        "DECIMAL",
        "DATE",
        "TIMESTAMP",
        "BINARY",
    ]
    import numpy as np

    cur.execute("SELECT ? AS a, ? AS b", [np.int64(5), np.float32(0.5)])
    assert cur.fetchone() == (5, 0.5)


def test_naive_timestamps_come_back_as_the_same_wall_clock_in_any_time_zone(spark, tmp_path):
    cur = dbapi.connect(spark=spark, base_dir=str(tmp_path)).cursor()
    moment = dt.datetime(2024, 3, 31, 2, 30, 0, 250000)
    for zone in ("UTC", "Asia/Shanghai", "America/New_York"):
        cur.execute(f"SET geaflow.dsl.time.zone = '{zone}'")
        cur.execute("SELECT ? AS t, CAST('2024-01-02 03:04:05' AS TIMESTAMP) AS u", [moment])
        assert cur.fetchone() == (moment, dt.datetime(2024, 1, 2, 3, 4, 5)), zone
    # An aware value is an instant: it comes back as that instant's wall
    # clock in the session's zone.
    aware = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC)
    cur.execute("SELECT ? AS t", [aware])
    assert cur.fetchone() == (dt.datetime(2024, 1, 1, 7, 0),)  # New York, winter


def test_values_no_column_type_holds_are_data_errors_at_the_placeholder(conn):
    cur = conn.cursor()
    for bad, what in [
        (2**63, "outside BIGINT"),
        (-(2**63) - 1, "outside BIGINT"),
        (10**400, "outside BIGINT"),
        (decimal.Decimal("1E+40"), "needs 41 digits"),
        (decimal.Decimal("NaN"), "finite numbers only"),
        (decimal.Decimal("-Infinity"), "finite numbers only"),
        (decimal.Decimal("0." + "1" * 39), "needs 39 digits"),
    ]:
        with pytest.raises(dbapi.DataError, match=what) as info:
            cur.execute("SELECT 1 AS a,\n  ? AS b", [bad])
        assert (info.value.line, info.value.column) == (2, 3)
        with pytest.raises(dbapi.DataError, match=what):
            cur.execute("SELECT :v AS b", {"v": bad})
    # The edges of the ranges round-trip exactly.
    edges = [2**63 - 1, -(2**63), decimal.Decimal("9" * 38), decimal.Decimal("1E+37")]
    cur.execute("SELECT ?, ?, ?, ?", edges)
    assert cur.fetchone() == tuple(edges)


def test_the_python_api_rejects_the_same_values(session):
    from geaflow_sql.core.errors import DataError

    for bad in (2**64, decimal.Decimal("NaN"), decimal.Decimal("1E+40")):
        with pytest.raises(DataError):
            session.sql("SELECT ? AS b", parameters=[bad])


def test_parameter_mistakes_are_programming_errors_pointing_at_the_text(conn):
    cur = conn.cursor()
    with pytest.raises(dbapi.ProgrammingError) as info:
        cur.execute("SELECT ?, ?", [1])
    assert (info.value.line, info.value.column) == (1, 11)
    assert "SELECT ?, ?\n              ^" in str(info.value)
    with pytest.raises(dbapi.ProgrammingError, match="0 \\? placeholder"):
        cur.execute("SELECT 1", [1])
    with pytest.raises(dbapi.ProgrammingError, match="no values were given"):
        cur.execute("SELECT ?")
    with pytest.raises(dbapi.ProgrammingError, match="no value for parameter :b"):
        cur.execute("SELECT :a, :b", {"a": 1})
    with pytest.raises(dbapi.ProgrammingError, match="mapping"):
        cur.execute("SELECT ?", {"a": 1})
    with pytest.raises(dbapi.ProgrammingError, match="sequence"):
        cur.execute("SELECT :a", [1])
    with pytest.raises(dbapi.ProgrammingError, match="cannot be bound"):
        cur.execute("SELECT ?", [object()])
    with pytest.raises(dbapi.ProgrammingError, match="sequence .* or a mapping"):
        cur.execute("SELECT ?", "x")


# Each example binds several values in one statement: one Spark job checks many values.
VALUES = st.lists(st.sampled_from(NASTY) | st.text(max_size=30), min_size=1, max_size=6)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=VALUES)
def test_parameters_come_back_as_data(conn, values):
    cur = conn.cursor()
    select = ", ".join(f"? AS v{i}, length(?) AS n{i}" for i in range(len(values)))
    cur.execute(f"SELECT {select}", [x for v in values for x in (v, v)])
    assert [d[0] for d in cur.description] == [f"{c}{i}" for i in range(len(values)) for c in "vn"]
    assert cur.fetchall() == [tuple(x for v in values for x in (v, len(v)))]
    named = ", ".join(f":p{i} AS v{i}" for i in range(len(values)))
    cur.execute(f"SELECT {named}", {f"p{i}": v for i, v in enumerate(values)})
    assert cur.fetchall() == [tuple(values)]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=VALUES)
def test_parameters_never_change_the_statement(conn, values):
    cur = conn.cursor()
    expected = [(i,) for i, name in enumerate(conn.names) if name in values]
    marks = ", ".join("?" for _ in values)
    cur.execute(f"SELECT id FROM names WHERE name IN ({marks}) ORDER BY id", values)
    assert cur.fetchall() == expected
    cur.execute("SELECT id FROM names WHERE name = ? ORDER BY id", values[:1])
    assert cur.fetchall() == [(i,) for i, name in enumerate(conn.names) if name == values[0]]
    # Nothing the values said ran: the catalog is unchanged (the data is checked below).
    cur.execute("SHOW TABLES")
    assert cur.fetchall() == [("names", "table"), ("users", "table")]


def test_names_table_is_intact_after_the_parameter_tests(conn):
    cur = conn.cursor()
    cur.execute("SELECT name FROM names ORDER BY id")
    assert [r[0] for r in cur.fetchall()] == conn.names


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_errors_map_to_pep249_classes_with_positions(fresh, tmp_path):
    cur = fresh.cursor()
    with pytest.raises(dbapi.ProgrammingError) as info:
        cur.execute("SELECT 1;\nSELECT a,, FROM t")
    err = info.value
    assert (err.line, err.column) == (2, 10)
    assert str(err).splitlines() == [
        "<sql>:2:10: syntax error: unexpected ','; expected an expression, '*'",
        "    SELECT a,, FROM t",
        "             ^",
    ]
    assert err.geaflow_error is not None
    with pytest.raises(dbapi.ProgrammingError, match="missing") as info:
        cur.execute("SELECT x FROM missing")
    assert info.value.line == 1
    (tmp_path / "bad.txt").write_text("1\nnot a number\n", encoding="utf-8")
    cur.execute("CREATE TABLE bad (a int) WITH (type='file', geaflow.dsl.file.path='bad.txt')")
    with pytest.raises(dbapi.DataError) as info:
        cur.execute("SELECT a FROM bad")
    assert "bad.txt" in str(info.value)
    assert "Traceback" not in str(info.value) and "java." not in str(info.value)
    with pytest.raises(dbapi.ProgrammingError, match="must be a string"):
        cur.execute(42)  # type: ignore[arg-type]
    # The connection is still usable after errors.
    assert cur.execute("SELECT 2 AS two").fetchall() == [(2,)]


def _task_cpu_seconds(spark) -> float:
    """CPU time of the local executor's task threads (the driver's JVM)."""
    jvm = spark.sparkContext._jvm
    threads = jvm.java.lang.management.ManagementFactory.getThreadMXBean()
    nanos = 0
    for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
        if thread.getName().startswith("Executor task launch worker"):
            nanos += max(0, threads.getThreadCpuTime(thread.getId()))
    return nanos / 1e9


def test_cancel_from_another_thread_stops_a_long_query(fresh, tmp_path):
    (tmp_path / "big.txt").write_text("\n".join(str(i) for i in range(3000)), encoding="utf-8")
    cur = fresh.cursor()
    cur.execute("CREATE TABLE big (x bigint) WITH (type='file', geaflow.dsl.file.path='big.txt')")
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            cur.execute("SELECT count(*) FROM big a, big b, big c")
            outcome["rows"] = cur.fetchall()
        except dbapi.Error as err:
            outcome["error"] = err

    spark = fresh.session.spark
    start_cpu = _task_cpu_seconds(spark)
    worker = threading.Thread(target=run)
    worker.start()
    # Cancel once the join's tasks are running (they have used a second of CPU).
    deadline = time.monotonic() + 120
    while _task_cpu_seconds(spark) - start_cpu < 1.0:
        assert worker.is_alive(), outcome
        assert time.monotonic() < deadline, "the join's tasks never started"
        time.sleep(0.2)
    assert fresh.cancel(timeout=60)
    worker.join(60)
    assert not worker.is_alive()
    assert isinstance(outcome.get("error"), dbapi.OperationalError), outcome
    assert "cancelled" in str(outcome["error"])
    # The tasks stop too, not only the wait for them: the text table is read
    # a line at a time and a nested-loop join looks at its kill flag between
    # rows of its streamed side (each brings 3,000 x 3,000 rows here), so
    # within seconds no task is left running.  (When a file was read as one
    # row, the tasks ran on through all 2.7e10 rows before looking again.)
    cancelled = time.monotonic()
    while True:
        before = _task_cpu_seconds(spark)
        time.sleep(1.0)
        if _task_cpu_seconds(spark) - before < 0.1:
            break
        assert time.monotonic() - cancelled < 30, "cancelled tasks are still running"
    assert fresh.cursor().execute("SELECT 3 AS three").fetchall() == [(3,)]


# --------------------------------------------------------------------------
# Graphs and isolation
# --------------------------------------------------------------------------


def _graph_ddl(name: str) -> str:
    """Graph DDL: runs in the catalog, whatever the state of graph queries."""
    return f"""
        CREATE GRAPH {name} (
          VERTEX person (id bigint ID, name varchar),
          EDGE knows (s bigint SOURCE ID, d bigint DESTINATION ID, w double)
        ) WITH (storeType='memory');
        USE GRAPH {name};
    """


def _add_people(cur, graph: str, people: list[tuple[int, str]]) -> None:
    cur.executemany(f"INSERT INTO {graph}.person(id, name) VALUES (?, ?)", people)


def _gql_or_skip(cur, run):
    """``run(cur)``, or a skip naming the reason when the engine has no graph queries yet."""
    try:
        return run(cur)
    except dbapi.NotSupportedError as err:
        pytest.skip(f"graph queries are not supported by the engine yet: {err.message}")


def test_gql_through_the_same_cursor(fresh):
    cur = fresh.cursor()
    cur.execute(_graph_ddl("g"))
    assert fresh.graph == "g"

    def find_bob(c):
        _add_people(c, "g", [(1, "ann"), (2, "bob")])
        return c.execute("MATCH (a:person WHERE a.name = ?) RETURN a.id AS id", ["bob"]).fetchall()

    rows = _gql_or_skip(cur, find_bob)
    assert rows == [(2,)]
    assert [d[:2] for d in cur.description] == [("id", "BIGINT")]


def test_two_threads_with_their_own_connections_do_not_share_state(spark, tmp_path):
    barrier = threading.Barrier(2, timeout=120)
    seen: dict[str, dict[str, object]] = {}
    errors: list[BaseException] = []

    def client(name: str, other: str, window: str, people: list[tuple[int, str]]) -> None:
        try:
            with dbapi.connect(spark=spark, base_dir=str(tmp_path)) as c:
                cur = c.cursor()
                cur.execute(_graph_ddl(name))
                cur.execute(f"SET geaflow.dsl.window.size = {window}")
                try:
                    _add_people(cur, name, people)
                    graph_queries = True
                except dbapi.NotSupportedError:
                    graph_queries = False
                barrier.wait()  # both have defined their graph, data and setting
                mine: dict[str, object] = {"graph": c.graph}
                mine["graphs"] = [r[0] for r in cur.execute("SHOW GRAPHS").fetchall()]
                mine["window"] = cur.execute("SET geaflow.dsl.window.size").fetchall()
                try:
                    cur.execute(f"USE GRAPH {other}")
                    mine["use_other"] = "worked"
                except dbapi.ProgrammingError as err:
                    mine["use_other"] = err.message
                mine["people"] = (
                    cur.execute("MATCH (p:person) RETURN p.name AS name ORDER BY name").fetchall()
                    if graph_queries
                    else None
                )
                barrier.wait()
                seen[name] = mine
        except BaseException as err:  # reported below, in the test's thread
            errors.append(err)
            barrier.abort()

    threads = [
        threading.Thread(target=client, args=("ga", "gb", "10", [(1, "ann"), (2, "amy")])),
        threading.Thread(target=client, args=("gb", "ga", "20", [(1, "bob")])),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors
    assert seen["ga"]["graph"] == "ga" and seen["gb"]["graph"] == "gb"
    assert seen["ga"]["graphs"] == ["ga"] and seen["gb"]["graphs"] == ["gb"]
    assert seen["ga"]["window"] == [("geaflow.dsl.window.size", "10")]
    assert seen["gb"]["window"] == [("geaflow.dsl.window.size", "20")]
    assert "gb" in str(seen["ga"]["use_other"]) and "ga" in str(seen["gb"]["use_other"])
    if seen["ga"]["people"] is not None:
        assert seen["ga"]["people"] == [("amy",), ("ann",)]
        assert seen["gb"]["people"] == [("bob",)]


def test_connect_with_init_script_and_graph(spark, tmp_path):
    (tmp_path / "setup.gql").write_text(
        _graph_ddl("social") + "USE GRAPH social;", encoding="utf-8"
    )
    with dbapi.connect(spark=spark, base_dir=str(tmp_path), init="setup.gql", graph="social") as c:
        assert c.graph == "social"
        assert [r[0] for r in c.execute("SHOW GRAPHS").fetchall()] == ["social"]
    with pytest.raises(dbapi.ProgrammingError, match="nope"):
        dbapi.connect(spark=spark, base_dir=str(tmp_path), graph="nope")
    with pytest.raises(dbapi.OperationalError, match="cannot read init script"):
        dbapi.connect(spark=spark, base_dir=str(tmp_path), init="missing.gql")
    (tmp_path / "broken.gql").write_text("CREATE TABLE;", encoding="utf-8")
    with pytest.raises(dbapi.ProgrammingError) as info:
        dbapi.connect(spark=spark, base_dir=str(tmp_path), init="broken.gql")
    assert str(info.value).startswith("broken.gql:1:13: syntax error")


def test_results_are_json_friendly(conn):
    rows = (
        conn.cursor().execute("SELECT id, name FROM users WHERE id < ? ORDER BY id", [3]).fetchall()
    )
    assert json.loads(json.dumps(rows)) == [[1, "jim"], [2, "kate"]]
