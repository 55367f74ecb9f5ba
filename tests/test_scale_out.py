"""The same scripts on a standalone Spark cluster and over Spark Connect.

A real standalone master with two workers (one core, 1 GiB each) and a real
Spark Connect server run on 127.0.0.1 (``tests/spark_servers.py``).
``geaflow-sql`` runs as its own process against each, in a folder that holds
the user's function modules: the executors run in the workers' own folders,
so those modules reach them only if geaflow-sql sends them.  A JDBC table
(H2, a file database several processes can open) is written and read by
the executors, and so is an in-memory H2 database, which lives in one JVM
(on the cluster, the driver's, which serves it to the executors).  A SparkSession the user built, without any JDBC jar, gets
the driver jar from the table.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .jvm_env import checkout_env
from .spark_servers import (
    connect_server,
    python_json,
    run_ok,
    server_env,
    standalone_cluster,
)

H2_JAR = "/usr/share/java/h2.jar"
needs_h2 = pytest.mark.skipif(
    not os.path.exists(H2_JAR),
    reason="the H2 JDBC driver is not installed (apt-get install libh2-java)",
)

UDF_PACKAGE = {
    "shouting/__init__.py": "from .words import Shout\n",
    "shouting/words.py": textwrap.dedent(
        """
        from geaflow_sql.udf import ScalarFunction


        class Shout(ScalarFunction):
            def eval(self, s):
                return None if s is None else s.upper() + "!"
        """
    ),
    "doubling.py": textwrap.dedent(
        """
        from geaflow_sql.udf import ScalarFunction


        class Twice(ScalarFunction):
            return_type = "BIGINT"

            def eval(self, n):
                return None if n is None else 2 * n
        """
    ),
}


def job_text(folder: Path) -> str:
    url = f"jdbc:h2:file:{folder / 'h2db'};AUTO_SERVER=TRUE"
    return textwrap.dedent(
        f"""
        SET geaflow.dsl.query.engine = distributed;
        CREATE FUNCTION shout AS 'shouting.Shout';
        CREATE FUNCTION twice AS 'doubling.Twice';
        CREATE TABLE people (id bigint, name varchar) WITH (type='jdbc',
          geaflow.dsl.jdbc.driver='org.h2.Driver', geaflow.dsl.jdbc.url='{url}',
          geaflow.dsl.jdbc.table.name='people');
        INSERT INTO people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
        SELECT id, twice(id) AS doubled, shout(name) AS loud FROM people ORDER BY id;
        CREATE TABLE kept (id bigint, name varchar) WITH (type='jdbc',
          geaflow.dsl.jdbc.driver='org.h2.Driver',
          geaflow.dsl.jdbc.url='jdbc:h2:mem:scale_out;DB_CLOSE_DELAY=-1',
          geaflow.dsl.jdbc.table.name='kept');
        INSERT INTO kept SELECT id, name FROM people WHERE id > 1;
        SELECT count(*) AS kept, max(name) AS last FROM kept;
        CREATE GRAPH g (Vertex person (id bigint ID, name varchar),
                        Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID))
          WITH (storeType='memory');
        USE GRAPH g;
        INSERT INTO g.person SELECT id, name FROM people;
        INSERT INTO g.knows VALUES (1, 2), (2, 3), (3, 1);
        MATCH (a:person)-[:knows]->(b:person)-[:knows]->(c:person)
          RETURN a.id AS a, shout(c.name) AS c ORDER BY a;
        """
    )


# Both queries' rows, one JSON object a row.
EXPECTED = [
    {"id": 1, "doubled": 2, "loud": "ANN!"},
    {"id": 2, "doubled": 4, "loud": "BOB!"},
    {"id": 3, "doubled": 6, "loud": "CY!"},
    {"kept": 2, "last": "cy"},
    {"a": 1, "c": "CY!"},
    {"a": 2, "c": "ANN!"},
    {"a": 3, "c": "BOB!"},
]


def write_job(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in UDF_PACKAGE.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    (folder / "job.gql").write_text(job_text(folder))


def run_cli(folder: Path, *spark_args: str) -> list[dict]:
    """``geaflow-sql -f job.gql --output json`` in ``folder`` (the launcher, so
    nothing but geaflow-sql puts the folder on the Python path)."""
    env = server_env()
    env.pop("PYTHONPATH")  # the installed package, as a user runs it
    launcher = shutil.which("geaflow-sql") or str(Path(sys.executable).parent / "geaflow-sql")
    out = run_ok(
        [launcher, "-f", "job.gql", "-q", "--output", "json", *spark_args], folder, 600, env
    )
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url


@needs_h2
def test_a_script_with_user_functions_and_jdbc_runs_on_a_standalone_cluster(cluster, tmp_path):
    write_job(tmp_path)
    assert run_cli(tmp_path, "--master", cluster) == EXPECTED


@needs_h2
def test_a_users_own_session_on_the_cluster_gets_the_jdbc_driver_from_the_table(cluster, tmp_path):
    """No spark.jars: the driver jar the table names (or the machine has for
    the driver class) is added to the session and reaches the executors; a
    driver class no jar holds is a clear error saying how to add one."""
    url = f"jdbc:h2:file:{tmp_path / 'h2db'};AUTO_SERVER=TRUE"
    script = textwrap.dedent(
        f"""
        import json
        from pyspark.sql import SparkSession
        from geaflow_sql import Session

        spark = (SparkSession.builder.master({cluster!r}).config("spark.ui.enabled", "false")
                 .config("spark.executor.memory", "512m").getOrCreate())
        assert "h2" not in spark.conf.get("spark.jars", "")
        s = Session(spark=spark)
        s.execute(\"\"\"
          SET geaflow.dsl.query.engine = distributed;
          CREATE TABLE t (id bigint, name varchar) WITH (type='jdbc',
            geaflow.dsl.jdbc.driver='org.h2.Driver', geaflow.dsl.jdbc.url='{url}',
            geaflow.dsl.jdbc.driver.jar='{H2_JAR}', geaflow.dsl.jdbc.table.name='t');
          INSERT INTO t VALUES (1, 'ann'), (2, 'bob');
          CREATE TABLE bad (id bigint) WITH (type='jdbc',
            geaflow.dsl.jdbc.driver='com.example.NoSuchDriver',
            geaflow.dsl.jdbc.url='jdbc:nosuch:x', geaflow.dsl.jdbc.table.name='x');
        \"\"\")
        rows = sorted(tuple(r) for r in s.sql("SELECT id, name FROM t").collect())
        try:
            s.sql("SELECT * FROM bad").collect()
            error = None
        except Exception as err:
            error = str(err)
        print(json.dumps({{"rows": rows, "error": error}}))
        """
    )
    out = python_json(script, tmp_path, 600)
    assert out["rows"] == [[1, "ann"], [2, "bob"]]
    assert "com.example.NoSuchDriver" in out["error"]
    assert "geaflow.dsl.jdbc.driver.jar" in out["error"]


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    with connect_server(tmp_path_factory.mktemp("connect")) as url:
        yield url


@needs_h2
def test_the_same_script_runs_over_spark_connect(remote, tmp_path):
    write_job(tmp_path)
    assert run_cli(tmp_path, "--remote", remote) == EXPECTED


def test_a_structured_stream_runs_over_spark_connect(remote, tmp_path):
    """A ``type='spark'`` streaming table over Spark Connect: each file is a
    micro-batch, logged by a function that runs on the server (``BatchLog``),
    and a window; a running GROUP BY carries its totals across windows."""
    from tests.conftest import windows_of
    from tests.test_spark_streaming import expected_touched, land, script

    rng = random.Random(11)
    files = [[(rng.choice("abc"), rng.randrange(100)) for _ in range(3)] for _ in range(3)]
    landing = tmp_path / "landing"
    for k, rows in enumerate(files):
        land(landing, k, rows)
    (tmp_path / "job.gql").write_text(script(landing))
    env = server_env()
    run_ok(
        [sys.executable, "-m", "geaflow_sql.cli", "-f", "job.gql", "-q", "--remote", remote],
        tmp_path,
        600,
        env,
    )
    raw = windows_of(tmp_path / "raw.txt")
    assert [sorted(w) for w in raw] == [sorted(f"{key},{v}" for key, v in rows) for rows in files]
    assert [sorted(w) for w in windows_of(tmp_path / "per_key.txt")] == expected_touched(files)


def test_progress_over_spark_connect(remote, tmp_path):
    """The shell's progress bar reads task counts; over Spark Connect they
    come from the server's execution progress reports."""
    script = textwrap.dedent(
        f"""
        import json, threading, time
        from geaflow_sql import Session
        from runtime.spark_adapter import job_progress

        s = Session(remote={remote!r})
        spark = s.spark

        def slow(batches):
            for b in batches:
                time.sleep(1.5)
                yield b

        seen = []
        job = threading.Thread(
            target=lambda: spark.range(0, 6, 1, 6).mapInPandas(slow, "id long").collect()
        )
        job.start()
        while job.is_alive():
            got = job_progress(spark)
            if got is not None:
                seen.append(got)
            time.sleep(0.1)
        print(json.dumps({{"seen": seen, "after": job_progress(spark)}}))
        """
    )
    out = python_json(script, tmp_path, 300)
    assert out["seen"], "no progress was reported while the job ran"
    assert all(0 <= done <= total for done, total in out["seen"])
    assert max(total for _, total in out["seen"]) >= 6
    assert out["after"] is None


def test_the_console_serves_over_spark_connect(remote, tmp_path):
    """``geaflow-sql serve --remote``: a graph script, a MATCH's rows, SHOW
    GRAPH, EXPLAIN, a located error and the catalog, as on local Spark."""
    from tests.console_server import Server
    from tests.test_console_page import MATCH, SCRIPT

    server = Server(tmp_path, "127.0.0.1", remote=remote)
    try:
        status, answer = server.run(SCRIPT)
        assert status == 200, answer
        status, answer = server.run(MATCH)
        assert status == 200 and answer["columns"] == ["a", "e", "b"], answer
        assert answer["total"] == 8
        assert all(row[0]["~label"] == "person" for row in answer["rows"])
        status, answer = server.run("SHOW GRAPH social SAMPLE 2")
        assert status == 200, answer
        assert [r[0]["~id"] for r in answer["rows"] if r[0]] == [10, 11]  # city < person
        status, answer = server.call("/api/explain", {"statement": MATCH})
        assert status == 200 and "== PipelineGraph ==" in answer["text"], answer
        assert answer["dot"].startswith("digraph")
        status, answer = server.run("SELECT 1;\nSELECT x FROM nowhere_table")
        assert status == 400 and (answer["line"], answer["column"]) == (2, 15), answer
        status, answer = server.call("/api/catalog")
        assert status == 200 and [g["name"] for g in answer["graphs"]] == ["social"]
    finally:
        server.stop()


def test_master_and_remote_are_one_choice(tmp_path):
    from geaflow_sql import Session
    from geaflow_sql.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not both"):
        Session(master="local[1]", remote="sc://127.0.0.1:15002")
    with pytest.raises(ConfigError, match=r"sc://host:port"):
        Session(remote="spark://127.0.0.1:7077")
    proc = subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", "-e", "SELECT 1", "--remote", "http://x"],
        cwd=tmp_path,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "sc://host:port" in proc.stderr and "Traceback" not in proc.stderr


def test_an_in_memory_database_keeps_its_url_where_tasks_share_the_drivers_jvm(spark):
    """On local Spark every task runs in the driver's JVM, which holds the
    database: nothing is served (on the cluster, the job script above reads
    back what its executors wrote through the driver's server)."""
    from runtime.spark_adapter import shared_memory_database

    for url in ("jdbc:h2:mem:kept;DB_CLOSE_DELAY=-1", "jdbc:h2:mem:;X=1", "jdbc:h2:file:/tmp/x"):
        assert shared_memory_database(spark, url) == url
