"""Persistent graph stores across processes, and a writer killed mid-write.

A graph whose store type is not ``memory`` (``rocksdb``, ``paimon``, ...) lives
under ``geaflow.file.persistent.root``: one ``geaflow-sql`` process writes it,
this test process reads it.  A writer is held (by the store's fault-injection
pause) after writing its Parquet part and before publishing the manifest,
killed with SIGKILL there, and the graph must still read as its last version.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_process import start_cli
from tests.conftest import newest_job

GRAPH = """
CREATE GRAPH social (
  Vertex person (id bigint ID, name varchar, age int),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double)
) WITH ({with_clause});
USE GRAPH social;
"""

WRITE = """
INSERT INTO social.person VALUES (1, 'ann', 30), (2, 'bob', 25), (3, 'cat', 41);
INSERT INTO social.knows VALUES (1, 2, 0.5), (2, 3, 0.25);
"""


def run_cli(
    folder: Path, script: str, root: Path, env_extra: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    (folder / "job.gql").write_text(script, encoding="utf-8")
    return start_cli(folder, {"geaflow.file.persistent.root": str(root)}, env_extra)


def reader(spark, folder: Path, root: Path, with_clause: str):
    from geaflow_sql import Session

    s = Session(spark=spark, base_dir=str(folder), conf={"geaflow.file.persistent.root": str(root)})
    s.execute(GRAPH.format(with_clause=with_clause))
    return s


def people(s) -> list[tuple]:
    return sorted(tuple(r) for r in s.sql("MATCH (a:person) RETURN a.id, a.name, a.age").collect())


def manifest(root: Path) -> dict:
    return json.loads((root / "default" / "social" / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("store", ["rocksdb", "paimon"])
def test_a_graph_written_by_one_process_is_read_by_another(spark, tmp_path, store):
    root = tmp_path / "warehouse"
    with_clause = f"storeType='{store}', shardCount=2"
    writer = run_cli(tmp_path, GRAPH.format(with_clause=with_clause) + WRITE, root)
    _, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert manifest(root)["version"] == 2  # one version per INSERT

    s = reader(spark, tmp_path, root, with_clause)
    assert people(s) == [(1, "ann", 30), (2, "bob", 25), (3, "cat", 41)]
    hops = s.sql("MATCH (a:person)-[e:knows]->(b:person) RETURN a.name, b.name, e.weight").collect()
    assert sorted(tuple(r) for r in hops) == [("ann", "bob", 0.5), ("bob", "cat", 0.25)]
    # A vertex id is unique per label: a later insert replaces the earlier row.
    s.execute("INSERT INTO social.person VALUES (2, 'bobby', 26)")
    assert people(s) == [(1, "ann", 30), (2, "bobby", 26), (3, "cat", 41)]
    # Edges keep every insert.
    s.execute("INSERT INTO social.knows VALUES (1, 2, 0.5)")
    assert len(s.sql("MATCH (a)-[e:knows]->(b) RETURN a.id, b.id").collect()) == 3


def test_a_writer_killed_before_its_commit_leaves_the_last_version(spark, tmp_path):
    root = tmp_path / "warehouse"
    with_clause = "storeType='rocksdb'"
    first = run_cli(tmp_path, GRAPH.format(with_clause=with_clause) + WRITE, root)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    before = manifest(root)

    # The second writer finishes its Parquet part, then waits before publishing.
    parts = root / "default" / "social" / "parts" / "v-person"
    known = set(parts.iterdir())
    second = run_cli(
        tmp_path,
        GRAPH.format(with_clause=with_clause) + "INSERT INTO social.person VALUES (4, 'dan', 35);",
        root,
        {"GEAFLOW_SQL_STORE_PAUSE_BEFORE_COMMIT": "120"},
    )
    deadline = time.monotonic() + 240
    while not any((p / "_SUCCESS").exists() for p in set(parts.iterdir()) - known):
        assert second.poll() is None, second.communicate()[1]
        assert time.monotonic() < deadline, "the writer never wrote its part"
        time.sleep(0.1)
    second.send_signal(signal.SIGKILL)
    second.wait(30)

    # The orphan part is on disk, but no manifest names it: the last version reads.
    orphans = set(parts.iterdir()) - known
    assert len(orphans) == 1
    assert manifest(root) == before
    s = reader(spark, tmp_path, root, with_clause)
    assert people(s) == [(1, "ann", 30), (2, "bob", 25), (3, "cat", 41)]

    # The graph stays writable, and the orphan never joins a later version.
    s.execute("INSERT INTO social.person VALUES (5, 'eve', 22)")
    assert people(s) == [(1, "ann", 30), (2, "bob", 25), (3, "cat", 41), (5, "eve", 22)]
    after = manifest(root)
    assert after["version"] == before["version"] + 1
    named = {p for ps in after["labels"].values() for p in ps}
    assert not any(str(o.relative_to(root / "default" / "social")) in named for o in orphans)


def test_the_job_default_store_type_applies_where_a_graph_names_none(spark, tmp_path):
    from geaflow_sql import Session

    root = tmp_path / "warehouse"
    conf = {"geaflow.file.persistent.root": str(root), "geaflow.dsl.graph.store.type": "paimon"}
    s = Session(spark=spark, base_dir=str(tmp_path), conf=conf)
    s.execute(GRAPH.format(with_clause="shardCount=1") + WRITE)
    assert manifest(root)["version"] == 2
    # A later job with the same default reads it back.
    again = Session(spark=spark, base_dir=str(tmp_path), conf=conf)
    again.execute(GRAPH.format(with_clause="shardCount=1"))
    assert people(again) == [(1, "ann", 30), (2, "bob", 25), (3, "cat", 41)]
    # An explicit storeType wins over the default.
    mem = Session(spark=spark, base_dir=str(tmp_path), conf=conf)
    mem.execute(GRAPH.format(with_clause="storeType='memory'"))
    assert people(mem) == []


def test_insert_then_match_in_one_windowed_script_on_a_persistent_graph(spark, tmp_path):
    from geaflow_sql import Session

    data = tmp_path / "person.txt"
    data.write_text("1,ann,30\n2,bob,25\n3,cat,41\n4,dan,35\n", encoding="utf-8")
    out = tmp_path / "out"
    s = Session(
        spark=spark,
        base_dir=str(tmp_path),
        conf={"geaflow.file.persistent.root": str(tmp_path / "warehouse")},
    )
    s.execute(
        "SET geaflow.dsl.window.size = 3;"
        + GRAPH.format(with_clause="storeType='paimon'")
        + f"""
        CREATE TABLE src (id bigint, name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='{data}');
        CREATE TABLE result (id bigint, name varchar, age int)
          WITH (type='file', geaflow.dsl.file.path='{out}');
        INSERT INTO social.person SELECT * FROM src;
        INSERT INTO result MATCH (a:person) RETURN a.id, a.name, a.age;
        """
    )
    from geaflow_sql.conformance.runner import read_output

    # Each window's MATCH on the dynamic graph starts from what that window
    # wrote (GeaFlow's per-window traversal): persons 1-3, then person 4.
    assert sorted(read_output(out).split()) == ["1,ann,30", "2,bob,25", "3,cat,41", "4,dan,35"]
    assert manifest(tmp_path / "warehouse")["version"] == 2  # one version per window


def test_a_using_table_read_as_it_stands_only_while_its_ids_are_unique(session, tmp_path):
    """A vertex label USING a table keeps each id's last row (GeaFlow's rule);
    while the table's kept scan is known to hold each id once, MATCH reads it
    with no shuffle to pick those rows (runtime.stores.memory.ids_known_unique),
    and a file that changes is checked again."""
    import os

    from runtime.stores import memory

    people = tmp_path / "p.txt"
    people.write_text("1,ann\n2,bob\n3,cy\n", encoding="utf-8")
    (tmp_path / "k.txt").write_text("1,2\n2,3\n", encoding="utf-8")
    session.execute(
        "CREATE TABLE p (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='p.txt');"
        "CREATE TABLE k (s bigint, d bigint) WITH (type='file', geaflow.dsl.file.path='k.txt');"
        "CREATE GRAPH g (Vertex person USING p WITH ID(id), Edge knows USING k WITH ID(s, d))"
        " WITH (storeType='memory'); USE GRAPH g;"
    )
    query = "MATCH (a:person)-[e:knows]->(b:person) RETURN a.name, b.name ORDER BY a.name"
    assert session.sql(query).collect() == [("ann", "bob"), ("bob", "cy")]
    plan = session.sql(query).dataframe._jdf.queryExecution().executedPlan().toString()
    assert "Window" not in plan  # the ids are unique: no pick of each id's last row
    assert any(True in v.values() for v in memory._UNIQUE_IDS.values())

    # The same id twice: the later row wins, as GeaFlow's USING tables do.
    people.write_text("1,ann\n2,bob\n3,cy\n2,bea\n", encoding="utf-8")
    stat = people.stat()
    os.utime(people, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert session.sql(query).collect() == [("ann", "bea"), ("bea", "cy")]
    plan = session.sql(query).dataframe._jdf.queryExecution().executedPlan().toString()
    assert "Window" in plan


def test_a_part_read_again_names_its_schema_and_runs_no_job(spark, tmp_path):
    """Persistent parts never change once written: after Spark has read a
    part once, later reads give its schema (no job reads a footer), with the
    same rows; parts written with different column types are read apart."""
    import pyarrow as pa

    from runtime.stores.arrow_parts import write_part_file
    from runtime.stores.persistent import PartSchemas

    def rows(read) -> list[tuple]:
        return sorted(tuple(r) for df, _ in read for r in df.collect())

    folders = []
    for i in range(3):
        folder = tmp_path / f"p{i}"
        write_part_file(folder, pa.table({"id": [i, i + 10], "name": [f"n{i}", None]}))
        folders.append(str(folder))
    schemas = PartSchemas()
    first = rows(schemas.read(spark, folders[:2]))
    before = newest_job(spark)
    again = schemas.read(spark, folders[:2])
    assert newest_job(spark) == before  # no footer read
    assert len(again) == 1 and rows(again) == first
    both = schemas.read(spark, folders)  # one part new: read once to learn it
    assert len(both) == 1 and rows(both) == sorted([*first, (2, "n2"), (12, None)])
    odd = tmp_path / "odd"
    write_part_file(odd, pa.table({"id": pa.array([7], pa.int32()), "name": ["x"]}))
    mixed = schemas.read(spark, [folders[0], str(odd)])
    assert len(mixed) == 2
    assert sorted(r[0] for r in rows(mixed)) == [0, 7, 10]


@pytest.mark.parametrize("engine", ["local", "distributed"])
def test_a_label_whose_parts_differ_in_column_types_reads_as_declared(spark, tmp_path, engine):
    """A part written with INT32 ids beside INT64 ones (by another writer)
    reads as the label's declared columns, on either engine."""
    import pyarrow as pa

    from geaflow_sql import Session
    from runtime.stores.arrow_parts import write_part_file

    graph = """CREATE GRAPH g (Vertex v (id bigint ID, name varchar),
  Edge e (s bigint SOURCE ID, t bigint DESTINATION ID)) WITH (storeType='rocksdb');"""
    conf = {"geaflow.file.persistent.root": str(tmp_path / "store")}
    Session(spark=spark, base_dir=str(tmp_path), conf=conf).execute(
        graph + "INSERT INTO g.v VALUES (1, 'a'), (2, 'b');"
    )
    manifest_path = next((tmp_path / "store").rglob("manifest.json"))
    manifest = json.loads(manifest_path.read_text())
    version = manifest["version"] + 1
    part = f"parts/v-v/{version:08d}-odd"
    rows = {"id": pa.array([3, 1], pa.int32()), "name": ["c", "a2"]}
    rows |= {"__w": pa.array([version] * 2), "__r": pa.array([0, 1])}
    write_part_file(manifest_path.parent / part, pa.table(rows))
    manifest["labels"]["v:v"].append(part)
    manifest["version"] = version
    manifest_path.write_text(json.dumps(manifest))
    reader = Session(spark=spark, base_dir=str(tmp_path), conf=conf)
    reader.execute(graph + f"USE GRAPH g; SET geaflow.dsl.query.engine = {engine};")
    got = reader.sql("MATCH (x:v) RETURN x.id AS id, x.name AS name")
    assert sorted(tuple(r) for r in got.collect()) == [(1, "a2"), (2, "b"), (3, "c")]


def test_parts_written_from_the_driver_with_one_arrow_schema_are_known_after_one_read(
    spark, tmp_path
):
    """Parts this process wrote with the same Arrow schema are one Parquet
    schema to Spark: after one of them is read, a new one is read without a
    footer job, with its rows."""
    import pyarrow as pa

    from runtime.stores.arrow_parts import write_part_file
    from runtime.stores.persistent import PartSchemas

    schemas = PartSchemas()
    folders = []
    for i in range(3):
        rows = pa.table({"id": [i], "name": [f"n{i}"]})
        folder = tmp_path / f"p{i}"
        write_part_file(folder, rows)
        schemas.wrote(str(folder), rows.schema)
        folders.append(str(folder))
    schemas.read(spark, folders[:1])
    before = newest_job(spark)
    fresh = schemas.read(spark, folders[1:])
    assert newest_job(spark) == before
    assert sorted(tuple(r) for df, _ in fresh for r in df.collect()) == [(1, "n1"), (2, "n2")]
    odd = tmp_path / "odd"
    rows = pa.table({"id": pa.array([7], pa.int32()), "name": ["x"]})
    write_part_file(odd, rows)
    schemas.wrote(str(odd), rows.schema)  # another Arrow schema: read once to learn
    mixed = schemas.read(spark, [folders[0], str(odd)])
    assert sorted(r[0] for df, _ in mixed for r in df.collect()) == [0, 7]


def test_rows_parsed_from_driver_lines_are_held_and_a_known_large_estimate_is_not_fetched(
    spark, tmp_path
):
    # A stream's window (Kafka, socket) is lines made into rows on the
    # driver, then parsed and filtered: Spark knows nothing of their size
    # (Long.MaxValue, scaled down by the projections), so a bounded fetch
    # finds them small and the store holds them (an incremental MATCH over
    # them runs on the driver).  A file whose estimate is known to be over
    # the limit is left to Spark, with no job to fetch it.
    from runtime.stores.arrow_parts import collect_small

    lines = spark.createDataFrame(
        [("topic", k, f"{k},{k + 1}") for k in range(50)], "file string, line_no int, line string"
    )
    parsed = lines.selectExpr(
        "CAST(split(line, ',')[0] AS bigint) AS s", "CAST(split(line, ',')[1] AS bigint) AS t"
    )
    rows = collect_small(parsed.where("s % 2 = 0"), 1 << 20)
    assert rows is not None and sorted(rows.column("s").to_pylist()) == list(range(0, 50, 2))
    big = tmp_path / "big.csv"
    big.write_text("".join(f"{i},{i}\n" for i in range(2000)), encoding="utf-8")
    frame = spark.read.csv(str(big), schema="s bigint, t bigint")
    before = newest_job(spark)
    assert collect_small(frame, 1000) is None
    assert newest_job(spark) == before
    assert collect_small(frame, 1 << 20) is not None
