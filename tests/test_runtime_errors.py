"""Failures inside Spark reach the user with the message of what failed.

Spark runs subqueries and broadcasts in their own threads and rethrows their
failures wrapped in "Exception thrown in awaitResult:", which says nothing;
the error a user sees carries the innermost cause too.
"""

from __future__ import annotations

import pytest


def test_a_failure_inside_a_subquery_names_its_cause(spark):
    from runtime.errors import translate

    query = (
        "SELECT id, (SELECT max(raise_error(concat('inner failure ', CAST(x.id AS STRING)))) "
        "FROM range(3) x) FROM range(2)"
    )
    with pytest.raises(Exception) as caught:
        spark.sql(query).collect()
    message = str(translate(caught.value))
    assert "inner failure" in message
    assert "\n" not in message and "\tat " not in message  # one line, no Java stack


def test_a_local_spark_gets_a_heap_sized_to_the_machine(spark):
    from runtime.spark_adapter import default_driver_memory

    chosen = default_driver_memory()
    assert chosen in {"1g", "2g", "3g", "4g"}
    assert spark.sparkContext.getConf().get("spark.driver.memory") == chosen
    heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
    assert heap >= int(chosen[:-1]) * (1 << 30) * 0.9


@pytest.mark.parametrize(
    "text,kind,words",
    [
        (
            "Job aborted due to stage failure: ... java.lang.OutOfMemoryError: Java heap space",
            "ExecutionError",
            "ran out of memory",
        ),
        (
            "Job 12 cancelled because SparkContext was shut down",
            "ExecutionError",
            "Spark stopped",
        ),
        ("Job 12 cancelled part of cancelled job group 7", "CancelledError", "cancelled"),
    ],
)
def test_a_spark_that_stopped_is_not_reported_as_a_cancel(text, kind, words):
    """A job Spark abandoned because its JVM ran out of heap is an execution
    error naming memory; only a job somebody cancelled is a cancel."""
    from runtime.errors import translate

    err = translate(RuntimeError(text))
    assert type(err).__name__ == kind
    assert words in str(err)


# --------------------------------------------------------------------------
# Errors and messages a user can act on (issue 16, item 7)
# --------------------------------------------------------------------------

WINDOWED = """CREATE TABLE src (id bigint, name varchar)
  WITH (type='file', geaflow.dsl.file.path='{src}', geaflow.dsl.window.size = 2);
CREATE TABLE good (id bigint) WITH (type='file', geaflow.dsl.file.path='{out}/good');
CREATE TABLE bad (id bigint) WITH (type='file', geaflow.dsl.file.path='{out}/bad');
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
) WITH (storeType='{store}');
INSERT INTO good SELECT id FROM src;
INSERT INTO g(person.id, person.name, knows.src, knows.dst) SELECT id, name, id, id + 1 FROM src;
INSERT INTO bad SELECT boom(id) FROM src;
"""


def test_an_error_inside_a_windowed_script_names_its_statement(spark, tmp_path):
    import sys

    from geaflow_sql import Session
    from geaflow_sql.core.errors import GeaflowError

    (tmp_path / "src.txt").write_text("".join(f"{i},n{i}\n" for i in range(5)))
    module = tmp_path / "boom_udf.py"
    module.write_text("class Boom:\n    def eval(self, x):\n        raise ValueError(f'no {x}')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        s = Session(spark=spark, base_dir=str(tmp_path))
        script = "CREATE FUNCTION boom AS 'boom_udf.Boom';\n" + WINDOWED.format(
            src=tmp_path / "src.txt", out=tmp_path / "out", store="memory"
        )
        with pytest.raises(GeaflowError) as info:
            s.execute(script)
    finally:
        sys.path.remove(str(tmp_path))
    line = next(i for i, t in enumerate(script.splitlines(), 1) if "boom(id)" in t)
    assert (info.value.line, info.value.column) == (line, 1)
    assert "INSERT INTO bad" in info.value.format()


@pytest.mark.parametrize("store", ["memory", "rocksdb"])
def test_a_windowed_graph_insert_counts_its_rows(spark, tmp_path, store):
    from geaflow_sql import Session

    (tmp_path / "src.txt").write_text("".join(f"{i},n{i}\n" for i in range(5)))
    s = Session(
        spark=spark,
        base_dir=str(tmp_path),
        conf={"geaflow.file.persistent.root": str(tmp_path / "warehouse")},
    )
    script = WINDOWED.format(src=tmp_path / "src.txt", out=tmp_path / "out", store=store)
    results = s.execute(script.rsplit("INSERT INTO bad", 1)[0])
    inserts = [r for r in results if r.kind == "insert"]
    # 5 rows over 3 windows: 5 into the table, 5 persons and 5 edges into g.
    assert [r.rows_written for r in inserts] == [5, 10]
    assert inserts[1].message == "inserted 10 rows into g over windows"
    # A batch graph INSERT counts too.
    (batch,) = s.execute("INSERT INTO g.person VALUES (7, 'x'), (8, 'y')")
    assert batch.rows_written == 2 and batch.message == "inserted 2 rows into g"


def test_a_java_class_name_is_named_as_such(session):
    from geaflow_sql.core.errors import CatalogError

    with pytest.raises(CatalogError) as info:
        session.execute("CREATE FUNCTION f AS 'com.example.udf.MyUpper'")
    message = info.value.message
    assert "no class MyUpper in com.example.udf" in message and "Python" in message
    assert "No module named" not in message


def test_writing_into_a_persistent_graph_from_an_earlier_run_warns_once(spark, tmp_path):
    from geaflow_sql import Session

    graph = """CREATE GRAPH pg (
      Vertex person (id bigint ID, name varchar),
      Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
    ) WITH (storeType='rocksdb');"""
    load = "INSERT INTO pg(person.id, person.name, knows.src, knows.dst) VALUES (1,'a',1,2), (2,'b',2,1);"
    conf = {"geaflow.file.persistent.root": str(tmp_path / "warehouse")}

    def run() -> list:
        s = Session(spark=spark, base_dir=str(tmp_path), conf=conf)
        return [r for r in s.execute(graph + load + load) if r.kind == "insert"]

    first = run()
    assert [r.warnings for r in first] == [[], []]  # its own writes are no news
    import json

    manifest = tmp_path / "warehouse" / "default" / "pg" / "manifest.json"
    version = json.loads(manifest.read_text())["version"]
    again = run()
    (warning,) = again[0].warnings
    assert f"already held version {version} from before" in warning
    assert "knows 4, person 4 rows" in warning and "warehouse" in warning
    assert again[1].warnings == []  # once per session
