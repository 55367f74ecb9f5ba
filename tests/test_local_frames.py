"""Rows made on the driver reach Spark as a local relation, not as a Python
RDD whose every job runs a Python worker (``runtime.held.local_frame``): the
constant rows of a VALUES, the frame of a label nobody wrote to, the values
of a pattern element whose labels matched none, a stream's text lines."""

from __future__ import annotations

import random

from pyspark.sql import types as ST

from tests.spark_plans import frame_leaves, plan_leaves

TYPES = {
    "tinyint": (ST.ByteType(), lambda r: r.randint(-128, 127)),
    "smallint": (ST.ShortType(), lambda r: r.randint(-(2**15), 2**15 - 1)),
    "int": (ST.IntegerType(), lambda r: r.randint(-(2**31), 2**31 - 1)),
    "bigint": (ST.LongType(), lambda r: r.randint(-(2**63), 2**63 - 1)),
    "double": (ST.DoubleType(), lambda r: r.choice([0.0, -0.0, 1e-300, 2.5, r.uniform(-1e9, 1e9)])),
    "boolean": (ST.BooleanType(), lambda r: r.random() < 0.5),
    "varchar": (
        ST.StringType(),
        lambda r: "".join(r.choice("ab,é\\'\n") for _ in range(r.randint(0, 4))),
    ),
}


def test_generated_rows_are_the_rows_pysparks_list_gives_as_a_local_relation(spark):
    from runtime.held import local_frame

    rng = random.Random(17)
    for _ in range(12):
        names = rng.sample(sorted(TYPES), rng.randint(1, len(TYPES)))
        schema = ST.StructType([ST.StructField(f"c{i}", TYPES[n][0]) for i, n in enumerate(names)])
        rows = [
            tuple(None if rng.random() < 0.2 else TYPES[n][1](rng) for n in names)
            for _ in range(rng.randint(0, 6))
        ]
        ours = local_frame(spark, rows, schema)
        assert ours.schema == schema
        assert frame_leaves(ours) == {"LocalRelation"}, frame_leaves(ours)
        assert ours.collect() == spark.createDataFrame(rows, schema).collect(), (names, rows)


def test_values_and_unwritten_labels_run_on_spark_over_local_relations(session):
    session.execute("SET geaflow.dsl.query.engine = distributed")
    (result,) = session.execute(
        "SELECT x, y FROM (VALUES (1, 'a'), (2, NULL), (3, 'c')) AS t(x, y) WHERE x > 1"
    )
    assert sorted(result.collect(), key=lambda r: r[0]) == [(2, None), (3, "c")]
    assert plan_leaves(result) == {"LocalRelation"}, plan_leaves(result)
    session.execute(
        "CREATE GRAPH lf (Vertex p (id bigint ID, n varchar), Vertex q (id bigint ID), "
        "Edge e (src bigint SOURCE ID, dst bigint DESTINATION ID)) WITH (storeType='memory');"
        "USE GRAPH lf;"
        "INSERT INTO lf.p VALUES (1, 'one'), (2, 'two');"
        "INSERT INTO lf.e VALUES (1, 2)"
    )
    # (q was never written: its frame is the empty local relation)
    (result,) = session.execute("MATCH (a:p)-[r:e]->(b:p|q) RETURN a.id AS a, b.id AS b")
    assert result.extra["engine"].startswith("distributed"), result.extra
    assert result.collect() == [(1, 2)]
    assert "LogicalRDD" not in plan_leaves(result), plan_leaves(result)


def test_a_streams_lines_are_parsed_from_a_local_relation_as_a_files_are(session, tmp_path):
    from runtime.connectors.file import lines_frame, parse_windows

    path = tmp_path / "t.txt"
    lines = ["1,a,0.5", "2,,-1.25", "3,c\u00e9,1e3", "4,d,"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session.execute(
        f"CREATE TABLE t (id bigint, s varchar, w double) "
        f"WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    ctx = session.runtime_context(start_spark=True)
    table = ctx.catalog.table(("t",))
    assert table is not None
    options = dict(table.options)
    streamed = lines_frame(ctx, table, options, "stream", lines)
    assert "LogicalRDD" not in frame_leaves(streamed), frame_leaves(streamed)
    session.execute("SET geaflow.dsl.query.engine = distributed")
    (from_file,) = session.execute("SELECT id, s, w FROM t")
    assert sorted(streamed.collect()) == sorted(from_file.collect())
    # several windows in one job: each window's rows, numbered within it
    _, tables = parse_windows(ctx, table, options, "stream", [lines[:2], [], lines[2:]])
    assert [t.num_rows for t in tables] == [2, 0, 2]
    assert tables[2].column(0).to_pylist() == [3, 4]
