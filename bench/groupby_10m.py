"""Benchmark: a GROUP BY over a 10-million-row text file table, geaflow-sql against
the same query written by hand with the PySpark DataFrame API.

    python bench/groupby_10m.py [--rows N] [--keys K] [--runs R] [--dir DIR] [--master URL]

Both sides run on one SparkSession (geaflow-sql's settings) and read the same
comma-separated file; geaflow-sql's side is the whole statement (parse, plan,
optimize, run, fetch), the hand-written side is ``spark.read.csv`` with a
schema, ``groupBy().agg()`` and the same fetch.  geaflow-sql is timed with its
scan built afresh (the first statement on a table) and kept from an earlier
statement (``runtime.connectors.scan_cache``), and with the scan kept and
``geaflow.dsl.sum.exact = false`` (Spark's plain double sums, whose last bits
depend on partitioning): the difference is the cost of sums that do not.
Each side runs once to warm up, then ``--runs`` times interleaved; the best
time of each is compared.
Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUERY = "SELECT k, count(*) AS n, sum(v) AS s, avg(v) AS a FROM t GROUP BY k"


def generate(path: Path, rows: int, keys: int) -> None:
    """``id,k,v`` lines: k cycles through ``keys`` values, v has two decimals."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    marker = path.with_suffix(".rows")
    if path.exists() and marker.exists() and marker.read_text() == f"{rows},{keys}":
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(42)
    chunk = 1_000_000
    options = csv.WriteOptions(include_header=False)
    with pa.OSFile(str(path), "wb") as sink:
        writer = None
        for start in range(0, rows, chunk):
            ids = np.arange(start, min(start + chunk, rows), dtype=np.int64)
            table = pa.table(
                {
                    "id": ids,
                    "k": (ids * 7919) % keys,
                    "v": np.round(rng.random(len(ids)) * 100, 2),
                }
            )
            if writer is None:
                writer = csv.CSVWriter(sink, table.schema, write_options=options)
            writer.write_table(table)
        if writer is not None:
            writer.close()
    marker.write_text(f"{rows},{keys}")


def run_geaflow(spark, path: Path, cold: bool = True, exact: bool = True):
    from geaflow_sql import Session
    from runtime.connectors.scan_cache import SCANS

    if cold:
        SCANS.clear()  # build the scan again, as a first statement on the table does

    session = Session(spark=spark, conf={"geaflow.dsl.sum.exact": str(exact).lower()})
    session.execute(
        f"CREATE TABLE t (id bigint, k bigint, v double) "
        f"WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    return session.sql(QUERY).to_arrow()


def run_pyspark(spark, path: Path):
    from pyspark.sql import functions as F

    df = spark.read.csv(str(path), schema="id long, k long, v double")
    out = df.groupBy("k").agg(
        F.count(F.lit(1)).alias("n"), F.sum("v").alias("s"), F.avg("v").alias("a")
    )
    return out.toArrow()


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def same(a, b) -> bool:
    ka = sorted(zip(*[a.column(i).to_pylist() for i in range(a.num_columns)], strict=True))
    kb = sorted(zip(*[b.column(i).to_pylist() for i in range(b.num_columns)], strict=True))
    if len(ka) != len(kb):
        return False
    for x, y in zip(ka, kb, strict=True):
        if x[0] != y[0] or x[1] != y[1] or abs(x[2] - y[2]) > 1e-6 * max(1.0, abs(y[2])):
            return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join("/tmp", "geaflow-sql-bench"))
    ap.add_argument("--master", default="local[*]")
    args = ap.parse_args()

    path = Path(args.dir) / f"groupby_{args.rows}.txt"
    start = time.perf_counter()
    generate(path, args.rows, args.keys)
    size_mb = path.stat().st_size / 1e6
    print(
        f"table: {args.rows:,} rows, {args.keys} keys, {size_mb:.0f} MB ({time.perf_counter() - start:.1f} s to prepare)"
    )

    from runtime.spark_adapter import create_session

    spark = create_session(args.master)
    print(f"spark {spark.version}, master {args.master}, cores {os.cpu_count()}")
    print(f"query: {QUERY}")

    _, g = timed(run_geaflow, spark, path)  # warm-up
    _, p = timed(run_pyspark, spark, path)
    if not same(g, p):
        print("RESULTS DIFFER", file=sys.stderr)
        return 1
    g_times, w_times, x_times, p_times = [], [], [], []
    for _ in range(args.runs):
        g_times.append(timed(run_geaflow, spark, path)[0])
        w_times.append(timed(run_geaflow, spark, path, False)[0])
        x_times.append(timed(run_geaflow, spark, path, False, False)[0])
        p_times.append(timed(run_pyspark, spark, path)[0])
    g_best, w_best, x_best, p_best = min(g_times), min(w_times), min(x_times), min(p_times)
    print(f"geaflow-sql : best {g_best:7.2f} s   runs {' '.join(f'{t:.2f}' for t in g_times)}")
    print(
        f"  scan kept : best {w_best:7.2f} s   runs {' '.join(f'{t:.2f}' for t in w_times)}"
        "   (the table's scan built by an earlier statement)"
    )
    print(
        f"  plain sums: best {x_best:7.2f} s   runs {' '.join(f'{t:.2f}' for t in x_times)}"
        "   (scan kept, geaflow.dsl.sum.exact = false)"
    )
    print(f"pyspark API : best {p_best:7.2f} s   runs {' '.join(f'{t:.2f}' for t in p_times)}")
    print(
        f"ratio geaflow-sql / pyspark = {g_best / p_best:.2f} (scan kept: {w_best / p_best:.2f}; "
        f"plain sums: {x_best / p_best:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
