"""Benchmark: 2-hop and 3-hop MATCH on a generated social graph, geaflow-sql
against the same queries written by hand as PySpark DataFrame joins.

    python bench/match.py [--persons N] [--edges M] [--runs R] [--dir DIR] [--master URL]

The graph: ``person(id, age)`` vertices and ``knows(src, dst, weight)`` edges
(default 200,000 persons and 1,000,000 edges, uniform random ends), written
once as Parquet and declared to geaflow-sql as a graph ``USING`` those tables
(memory store: every MATCH reads the files, as the hand-written side does).

Queries (a count, so fetching rows costs nothing on either side)::

    2-hop  MATCH (a:person WHERE a.age > 60)-[e:knows WHERE e.weight > 0.5]->(b:person)
                 -[f:knows]->(c:person WHERE c.age < 20)
           RETURN count(*)
    3-hop  ... the same, then -[g:knows WHERE g.weight < 0.2]->(d:person WHERE d.age > 50)

The hand-written side computes the same answer with DataFrame joins: filter
the vertices, join edges on their ends, and join every vertex a path reaches
(a MATCH only reaches stored vertices, so ``b`` is joined although it has no
condition).  geaflow-sql runs each query on both engines: the default
(``auto``), which runs these on the local engine (``runtime.local``: DuckDB
over Arrow copies of the files' scans, kept while the files do not change),
and ``geaflow.dsl.query.engine = distributed`` (Spark, as the hand-written
side).  The local engine's first run, which copies the tables out of Spark,
is printed apart ("cold").  Each side runs once to warm up, then ``--runs``
times interleaved; the best times are compared.  Timings are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HOP2 = (
    "MATCH (a:person WHERE a.age > 60)-[e:knows WHERE e.weight > 0.5]->(b:person)"
    "-[f:knows]->(c:person WHERE c.age < 20)"
)
HOP3 = HOP2 + "-[g:knows WHERE g.weight < 0.2]->(d:person WHERE d.age > 50)"
QUERIES = {"2-hop": HOP2 + " RETURN count(*) AS n", "3-hop": HOP3 + " RETURN count(*) AS n"}


def generate(folder: Path, persons: int, edges: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    marker = folder / "params"
    if marker.exists() and marker.read_text() == f"{persons},{edges}":
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    ids = np.arange(persons, dtype=np.int64)
    pq.write_table(
        pa.table({"id": ids, "age": rng.integers(0, 90, persons, dtype=np.int32)}),
        folder / "person.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "src": rng.integers(0, persons, edges, dtype=np.int64),
                "dst": rng.integers(0, persons, edges, dtype=np.int64),
                "weight": np.round(rng.random(edges), 3),
            }
        ),
        folder / "knows.parquet",
        row_group_size=250_000,
    )
    marker.write_text(f"{persons},{edges}")


def session_for(spark, folder: Path):
    from geaflow_sql import Session

    session = Session(spark=spark)
    session.execute(
        f"""
        CREATE TABLE person_t (id bigint, age int)
          WITH (type='file', format='parquet', geaflow.dsl.file.path='{folder / "person.parquet"}');
        CREATE TABLE knows_t (src bigint, dst bigint, weight double)
          WITH (type='file', format='parquet', geaflow.dsl.file.path='{folder / "knows.parquet"}');
        CREATE GRAPH social (
          Vertex person USING person_t WITH ID(id),
          Edge knows USING knows_t WITH ID(src, dst)
        ) WITH (storeType='memory');
        USE GRAPH social;
        """
    )
    return session


def run_geaflow(session, name: str, engine: str = "auto") -> int:
    session.execute(f"SET geaflow.dsl.query.engine = {engine}")
    return int(session.sql(QUERIES[name]).collect()[0][0])


def run_cold(session, name: str) -> int:
    """The local engine as a first statement on the tables: scans built, copied to Arrow."""
    from runtime.connectors.scan_cache import SCANS

    SCANS.clear()
    return run_geaflow(session, name)


def run_pyspark(spark, folder: Path, name: str) -> int:
    return int(pyspark_paths(spark, folder, name).count())


def pyspark_paths(spark, folder: Path, name: str):
    """The hand-written side: the query's paths as DataFrame joins."""
    from pyspark.sql import functions as F

    person = spark.read.parquet(str(folder / "person.parquet"))
    knows = spark.read.parquet(str(folder / "knows.parquet"))
    a = person.where(F.col("age") > 60).select(F.col("id").alias("a"))
    b = person.select(F.col("id").alias("b"))
    c = person.where(F.col("age") < 20).select(F.col("id").alias("c"))
    e = knows.where(F.col("weight") > 0.5).select(F.col("src").alias("a"), F.col("dst").alias("b"))
    f = knows.select(F.col("src").alias("b"), F.col("dst").alias("c"))
    paths = a.join(e, "a").join(b, "b").join(f, "b").join(c, "c")
    if name == "3-hop":
        g = knows.where(F.col("weight") < 0.2).select(
            F.col("src").alias("c"), F.col("dst").alias("d")
        )
        d = person.where(F.col("age") > 50).select(F.col("id").alias("d"))
        paths = paths.join(g, "c").join(d, "d")
    return paths


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--persons", type=int, default=200_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join("/tmp", "geaflow-sql-bench", "match"))
    ap.add_argument("--master", default="local[*]")
    ap.add_argument(
        "--explain",
        action="store_true",
        help="print geaflow-sql's plans and the hand-written side's Spark plan, and stop",
    )
    args = ap.parse_args()

    folder = Path(args.dir) / f"{args.persons}_{args.edges}"
    start = time.perf_counter()
    generate(folder, args.persons, args.edges)
    print(
        f"graph: {args.persons:,} persons, {args.edges:,} knows edges "
        f"({time.perf_counter() - start:.1f} s to prepare)"
    )

    from runtime.spark_adapter import create_session

    spark = create_session(args.master)
    print(f"spark {spark.version}, master {args.master}, cores {os.cpu_count()}")
    session = session_for(spark, folder)
    if args.explain:
        for name, query in QUERIES.items():
            print(f"== {name}\n{session.explain(query)}")
            print(f"== {name}, written by hand: Spark's physical plan of its count")
            pyspark_paths(spark, folder, name).groupBy().count().explain()
        return 0

    status = 0
    sides = {
        "geaflow-sql (local)": lambda name: run_geaflow(session, name),
        "  cold (first run)": lambda name: run_cold(session, name),
        "geaflow-sql (distr.)": lambda name: run_geaflow(session, name, "distributed"),
        "pyspark API": lambda name: run_pyspark(spark, folder, name),
    }
    for name, query in QUERIES.items():
        print(f"\n{name}: {query}")
        answers = {side: timed(fn, name)[1] for side, fn in sides.items()}  # warm-up
        if len(set(answers.values())) != 1:
            print(f"RESULTS DIFFER: {answers}", file=sys.stderr)
            status = 1
            continue
        times: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.runs):
            for side, fn in sides.items():
                times[side].append(timed(fn, name)[0])
        best = {side: min(t) for side, t in times.items()}
        hand = best["pyspark API"]
        print(f"  paths       : {next(iter(answers.values())):,}")
        for side, t in times.items():
            print(
                f"  {side:<21}: best {best[side]:7.2f} s   runs {' '.join(f'{x:.2f}' for x in t)}"
                f"   / pyspark {best[side] / hand:.2f}"
            )
    return status


if __name__ == "__main__":
    sys.exit(main())
