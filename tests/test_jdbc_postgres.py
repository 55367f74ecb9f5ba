"""``type='jdbc'`` tables against a real PostgreSQL server this test starts.

The server is a throw-away cluster: ``initdb`` into a temporary folder and
``postgres`` on a free port, with the binaries of the Debian ``postgresql``
package (``.ci/run`` installs it and the JDBC driver).  Tests are skipped, with
the reason, when the binaries or the driver are missing, or when the shared
SparkSession started before the driver jar was installed (Spark only reads
``spark.jars`` at start-up).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from geaflow_sql.core.errors import GeaflowError

DRIVER_JAR = "/usr/share/java/postgresql.jar"


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: use the package's postgres account.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


class Postgres:
    def __init__(self, bin_dir: Path, root: Path) -> None:
        self.bin = bin_dir
        self.data = root / "data"
        self.sockets = root / "sockets"
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self.sockets.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.data.parent, "postgres")
            shutil.chown(self.sockets, "postgres")
        subprocess.run(
            _as_server_user(
                [
                    str(self.bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "geaflow",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                ]
            ),
            check=True,
            capture_output=True,
        )
        self.proc = subprocess.Popen(
            _as_server_user(
                [
                    str(self.bin / "postgres"),
                    "-D",
                    str(self.data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.sockets),
                    "-c",
                    "listen_addresses=127.0.0.1",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.psql("SELECT 1")
                return
            except subprocess.CalledProcessError:
                time.sleep(0.5)
        raise RuntimeError("PostgreSQL did not start in 60 s")

    def psql(self, sql: str) -> str:
        out = subprocess.run(
            [
                str(self.bin / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "geaflow",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def postgres(spark) -> Iterator[Postgres]:
    bin_dir = _pg_bin()
    if bin_dir is None or not (bin_dir / "postgres").exists():
        pytest.skip("PostgreSQL server binaries not found (apt-get install postgresql)")
    if not os.path.exists(DRIVER_JAR):
        pytest.skip(
            f"PostgreSQL JDBC driver {DRIVER_JAR} not found (apt-get install libpostgresql-jdbc-java)"
        )
    if DRIVER_JAR not in (spark.conf.get("spark.jars", "") or ""):
        pytest.skip("the shared SparkSession started before the PostgreSQL JDBC jar was installed")
    root = Path(tempfile.mkdtemp(prefix="geaflow-pg-"))
    server = Postgres(bin_dir, root)
    try:
        server.start()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as err:
        server.stop()
        pytest.skip(f"could not start PostgreSQL: {err}")
    server.psql(
        "CREATE TABLE people (id bigint PRIMARY KEY, name varchar(20), age int, score double precision,"
        " born date, seen timestamp);"
        "INSERT INTO people VALUES (1, 'jim', 20, 1.5, '2000-01-02', '2020-01-01 10:00:00'),"
        " (2, 'kate', 31, null, null, null), (3, 'lucy', 45, 3.25, '1980-05-06', '2021-06-07 08:09:10'),"
        " (4, 'bob', 18, 0.5, '2005-12-31', null);"
        "CREATE TABLE copies (id bigint, name varchar(20), age int);"
    )
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


def _table(name: str, server: Postgres, table: str, columns: str, extra: str = "") -> str:
    return (
        f"CREATE TABLE {name} ({columns}) WITH (type='jdbc', "
        f"geaflow.dsl.jdbc.url='{server.url}', geaflow.dsl.jdbc.driver='org.postgresql.Driver', "
        f"geaflow.dsl.jdbc.username='geaflow', geaflow.dsl.jdbc.password='', "
        f"geaflow.dsl.jdbc.table.name='{table}'{extra});"
    )


PEOPLE = "id bigint, name varchar, age int, score double, born date, seen timestamp"


def test_read_a_table_with_its_types(session, postgres):
    session.execute(_table("people", postgres, "people", PEOPLE))
    rows = session.sql(
        "SELECT id, name, age, score, born FROM people WHERE age > 19 ORDER BY id"
    ).collect()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (1, "jim", 20, 1.5),
        (2, "kate", 31, None),
        (3, "lucy", 45, 3.25),
    ]
    assert str(rows[0][4]) == "2000-01-02"


def test_partitioned_read_returns_every_row_once(session, postgres):
    session.execute(
        _table(
            "people_p",
            postgres,
            "people",
            PEOPLE,
            ", geaflow.dsl.jdbc.partition.num='3', geaflow.dsl.jdbc.partition.column='id', "
            "geaflow.dsl.jdbc.partition.lowerbound='1', geaflow.dsl.jdbc.partition.upperbound='4'",
        )
    )
    assert sorted(r[0] for r in session.sql("SELECT id FROM people_p").collect()) == [1, 2, 3, 4]


def test_join_a_database_table_with_values(session, postgres):
    session.execute(_table("people", postgres, "people", PEOPLE))
    rows = session.sql(
        "SELECT p.name, t.tag FROM people p JOIN (VALUES (1, 'a'), (3, 'c')) AS t(id, tag) "
        "ON p.id = t.id ORDER BY p.name"
    ).collect()
    assert rows == [("jim", "a"), ("lucy", "c")]


def test_insert_into_a_database_table(session, postgres):
    session.execute(
        _table("people", postgres, "people", PEOPLE)
        + _table("copies", postgres, "copies", "id bigint, name varchar, age int")
        + "INSERT INTO copies SELECT id, upper(name), age + 1 FROM people WHERE id <= 2;"
    )
    assert postgres.psql("SELECT id, name, age FROM copies ORDER BY id") == "1|JIM|21\n2|KATE|32"


def test_a_missing_table_is_reported(session, postgres):
    session.execute(_table("ghost", postgres, "no_such_table", "id bigint"))
    with pytest.raises(GeaflowError) as info:
        session.sql("SELECT id FROM ghost").collect()
    message = info.value.message
    assert "cannot read jdbc table 'ghost'" in message
    assert 'relation "no_such_table" does not exist' in message


def test_columns_are_taken_by_position_as_in_geaflow(session, postgres):
    """GeaFlow's JDBC source reads ``SELECT *`` and takes a row's column i as
    the table's column i: names need not match, extra columns are not read."""
    session.execute(_table("renamed", postgres, "people", "pid bigint, who varchar, years int"))
    rows = session.sql("SELECT pid, who, years FROM renamed ORDER BY pid").collect()
    assert rows == [(1, "jim", 20), (2, "kate", 31), (3, "lucy", 45), (4, "bob", 18)]
    # a projection reads the right column, not the first ones
    assert session.sql("SELECT years FROM renamed WHERE pid = 3").collect() == [(45,)]
    session.execute(_table("wide", postgres, "copies", "a bigint, b varchar, c int, d int"))
    with pytest.raises(GeaflowError) as info:
        session.sql("SELECT a FROM wide").collect()
    assert "declares 4 columns but copies has 3" in info.value.message
    assert "by position" in info.value.message
