"""Benchmark: a graph growing 1% per window; incremental MATCH and WCC against full recompute.

    python bench/streams.py [--edges 1e5] [--windows 4] [--master URL] [--driver-memory 2g]
    python bench/streams.py --edges 1e6        # a 6g driver: the full recompute needs the heap
    python bench/streams.py --only stateful    # DISTINCT and GROUP BY over a growing stream
    python bench/streams.py --engine distributed  # the graph statements on Spark's path

A graph of E random edges over E/10 vertices (a fixed seed) is built by a
windowed job: the vertices and all but ``windows`` percent of the edges arrive
in window 0 along with the first 1% of E, then 1% of E per window, so the
last window holds all E edges.  Each window the job runs

* a 2-hop MATCH, ``(a)-[]->(b)-[]->(c)``, emitting the paths new in this
  window: incrementally (on the driver, ``runtime/streaming/local_match.py``:
  only paths through the window's edges, checked against the previous
  version; on Spark with ``--engine distributed``,
  ``runtime/streaming/incremental_match.py``: both versions cut to the
  neighbourhood of the window's writes) and as the full re-match of both
  versions with ``exceptAll``;
* weakly connected components: ``CALL inc_wcc()`` (state kept between
  windows, the window's edges merged in) and ``CALL wcc()`` recomputed on the
  whole graph (emitting the changed rows);
* ``CALL incremental_kcore(2)`` and ``CALL sssp(0)``, which keep their state
  between windows (re-peeling / relaxing only where the window reaches),
  against the same algorithms with that switched off: recomputed on the
  whole graph each window and compared with the previous window's result.

Before that (``--only stateful`` alone): a stream of 10^6 (key, value) rows
in 20 windows through a windowed DISTINCT, a GROUP BY (count, sum, max) and
a row-wise filter, with the operators' state kept between windows and
computed over every row so far; the seconds of the early and the last
windows show whether a window's cost follows the history.

Both variants run in this script, one job each, on the same files.  Printed:
seconds per window for each statement (window 0, which loads the graph and
matches everything once, is left out), the Spark jobs the incremental
statement ran per window, the rows each emitted, and the full recompute's
time over the incremental one.  Both emit the same rows; the
row counts are printed so a difference shows.  Speed is measured here,
never asserted in tests.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MATCH = "MATCH (a:v)-[:e]->(b:v)-[:e]->(c:v) RETURN a.id, b.id, c.id"


def write_graph(folder: Path, edges: int, windows: int) -> int:
    """Vertex and edge files; returns the rows per growth window."""
    import numpy as np

    rng = np.random.default_rng(7)
    n = max(10, edges // 10)
    np.savetxt(folder / "vertices.txt", np.arange(n), fmt="%d")
    pairs = rng.integers(0, n, size=(edges, 2))
    step = max(1, edges // 100)
    base = edges - step * windows
    np.savetxt(folder / "base.txt", pairs[:base], fmt="%d", delimiter=",")
    np.savetxt(folder / "growth.txt", pairs[base:], fmt="%d", delimiter=",")
    return step


def script(step: int, incremental: bool) -> str:
    wcc = "inc_wcc" if incremental else "wcc"
    return f"""
CREATE TABLE vertices (id bigint) WITH (type='file', geaflow.dsl.file.path='vertices.txt');
CREATE TABLE base (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='base.txt');
CREATE TABLE growth (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='growth.txt',
  geaflow.dsl.window.size = {step});
CREATE GRAPH g (Vertex v (id bigint ID), Edge e (s bigint SOURCE ID, t bigint DESTINATION ID))
  WITH (storeType='memory');
CREATE TABLE paths (a bigint, b bigint, c bigint) WITH (type='file', geaflow.dsl.file.path='paths.txt');
CREATE TABLE components (id bigint, component bigint)
  WITH (type='file', geaflow.dsl.file.path='components.txt');
CREATE TABLE cores (id bigint, core int, degree int, status varchar)
  WITH (type='file', geaflow.dsl.file.path='cores.txt');
CREATE TABLE distances (id bigint, distance bigint)
  WITH (type='file', geaflow.dsl.file.path='distances.txt');
USE GRAPH g;
INSERT INTO g.v SELECT id FROM vertices;
INSERT INTO g.e SELECT s, t FROM base;
INSERT INTO g.e SELECT s, t FROM growth;
INSERT INTO paths {MATCH};
INSERT INTO components CALL {wcc}() YIELD (id, component) RETURN id, component;
INSERT INTO cores CALL incremental_kcore(2, 10) YIELD (id, core, degree, status)
  RETURN id, core, degree, status;
INSERT INTO distances CALL sssp(0) YIELD (id, distance) RETURN id, distance;
"""


@contextlib.contextmanager
def timing(incremental: bool) -> Any:
    """Seconds per (statement kind, window) of the graph statements, and their rows.

    Without ``incremental`` the job recomputes instead: incremental MATCH is
    off, and ``incremental_kcore`` and ``sssp`` are bound as algorithms that
    keep no state between windows."""
    import dataclasses

    import planner.algorithms as algorithms
    import runtime.streaming.job as job
    from planner.graph_nodes import EdgeMatch, GraphAlgorithm
    from planner.logical import walk

    seconds: dict[str, dict[int, float]] = defaultdict(dict)
    jobs: dict[str, dict[int, int]] = defaultdict(dict)
    rows: dict[str, int] = defaultdict(int)
    real_run = job.WindowedJob.run_statement
    real_incremental = job.incremental_result
    real_local = job.local_incremental_result
    real_signatures = dict(algorithms._BY_NAME)

    def run_statement(self: Any, st: Any, window: Any) -> None:
        nodes = walk(st.plan)
        calls = [n.name for n in nodes if isinstance(n, GraphAlgorithm)]
        kind = (
            "match"
            if any(isinstance(n, EdgeMatch) for n in nodes)
            else {"inc_wcc": "wcc"}.get(calls[0], calls[0])
            if calls
            else None
        )
        before = st.written
        first_job = last_job_id(self.ctx.spark)
        start = time.perf_counter()
        real_run(self, st, window)
        if kind is not None:
            seconds[kind][window.number] = time.perf_counter() - start
            jobs[kind][window.number] = last_job_id(self.ctx.spark) - first_job
            rows[kind] += st.written - before

    job.WindowedJob.run_statement = run_statement  # type: ignore[method-assign]
    if not incremental:
        job.incremental_result = lambda *args: None  # type: ignore[assignment]
        job.local_incremental_result = lambda *args: None  # type: ignore[assignment]
        for name in ("incremental_kcore", "sssp"):
            signature = algorithms._BY_NAME[name]
            algorithms._BY_NAME[name] = dataclasses.replace(signature, incremental=False)
    try:
        yield seconds, jobs, rows
    finally:
        job.WindowedJob.run_statement = real_run  # type: ignore[method-assign]
        job.incremental_result = real_incremental
        job.local_incremental_result = real_local
        algorithms._BY_NAME.update(real_signatures)


def last_job_id(spark: Any) -> int:
    """The id of the newest Spark job (ids grow by one per job)."""
    return max(spark.sparkContext.statusTracker().getJobIdsForGroup(None) or [-1])


def run(
    spark: Any, folder: Path, step: int, incremental: bool, engine: str = "auto"
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, int]]:
    from geaflow_sql import Session

    work = folder / ("incremental" if incremental else "full")
    work.mkdir()
    for name in ("vertices.txt", "base.txt", "growth.txt"):
        (work / name).symlink_to(folder / name)
    with timing(incremental) as (seconds, jobs, rows):
        conf = {"geaflow.dsl.query.engine": engine}
        Session(spark=spark, base_dir=str(work), conf=conf).execute(script(step, incremental))
    per_window = {k: [v[r] for r in sorted(v) if r > 0] for k, v in seconds.items()}
    jobs_per_window = {
        k: statistics.mean([v[r] for r in sorted(v) if r > 0] or [0]) for k, v in jobs.items()
    }
    return per_window, jobs_per_window, dict(rows)


def line(
    name: str, incr: list[float], full: list[float], rows: tuple[int, int], jobs: float
) -> str:
    if not incr or not full:
        return f"{name:28s} no timed windows"
    a, b = statistics.mean(incr), statistics.mean(full)
    return (
        f"{name:28s} incremental {a:7.3f} s/window   full {b:7.3f} s/window   "
        f"full/incremental {b / a:6.1f}x   Spark jobs/window {jobs:4.1f}   "
        f"rows {rows[0]} / {rows[1]}"
    )


STATEFUL = """
CREATE TABLE events (k bigint, v bigint) WITH (type='file', geaflow.dsl.file.path='events.txt',
  geaflow.dsl.window.size = {step});
CREATE TABLE keys_out (k bigint) WITH (type='file', geaflow.dsl.file.path='keys.txt');
CREATE TABLE groups_out (k bigint, n bigint, total bigint, top bigint)
  WITH (type='file', geaflow.dsl.file.path='groups.txt');
CREATE TABLE rows_out (k bigint, v bigint) WITH (type='file', geaflow.dsl.file.path='rows.txt');
INSERT INTO keys_out SELECT DISTINCT k FROM events;
INSERT INTO groups_out SELECT k, count(*), sum(v), max(v) FROM events GROUP BY k;
INSERT INTO rows_out SELECT k, v FROM events WHERE v = 0;
"""


def stateful(spark: Any, folder: Path, rows: int, windows: int, keys: int) -> None:
    """A stream of ``rows`` (key, value) rows in ``windows`` windows: the
    seconds a windowed DISTINCT, GROUP BY and a row-wise filter take in the
    first windows and in the last ones, as the history grows, with the
    operators' state kept between windows and computed over every row so far."""
    import numpy as np

    rng = np.random.default_rng(11)
    data = np.stack([rng.integers(0, keys, rows), rng.integers(0, 1000, rows)], axis=1)
    (folder / "events.txt").unlink(missing_ok=True)
    np.savetxt(folder / "events.txt", data, fmt="%d", delimiter=",")
    print(
        f"stateful operators: {rows} rows, {keys} keys, {windows} windows of {rows // windows} rows"
    )
    outputs = []
    for kept in (True, False):
        work = folder / f"stateful-{'kept' if kept else 'recomputed'}"
        work.mkdir()
        (work / "events.txt").symlink_to(folder / "events.txt")
        stateful_run(spark, work, rows, windows, kept)
        outputs.append(
            [sorted((work / f).read_text().splitlines()) for f in ("keys.txt", "groups.txt")]
        )
    print("same rows kept and recomputed:", outputs[0] == outputs[1])


def stateful_run(spark: Any, work: Path, rows: int, windows: int, kept: bool) -> None:
    import runtime.streaming.job as job
    from geaflow_sql import Session
    from planner.logical import Aggregate, walk

    seconds: dict[str, dict[int, float]] = defaultdict(dict)
    spark_jobs: dict[str, dict[int, int]] = defaultdict(dict)
    real_run = job.WindowedJob.run_statement

    def run_statement(self: Any, st: Any, window: Any) -> None:
        aggs = [n for n in walk(st.plan) if isinstance(n, Aggregate)]
        kind = "row-wise filter" if not aggs else "GROUP BY" if aggs[0].calls else "DISTINCT"
        first_job = last_job_id(self.ctx.spark)
        start = time.perf_counter()
        real_run(self, st, window)
        seconds[kind][window.number] = time.perf_counter() - start
        spark_jobs[kind][window.number] = last_job_id(self.ctx.spark) - first_job

    job.WindowedJob.run_statement = run_statement  # type: ignore[method-assign]
    try:
        conf = {"geaflow.dsl.stream.operator.state": str(kept).lower()}
        Session(spark=spark, base_dir=str(work), conf=conf).execute(
            STATEFUL.format(step=max(1, rows // windows))
        )
    finally:
        job.WindowedJob.run_statement = real_run  # type: ignore[method-assign]
    print(f"  state {'kept between windows' if kept else 'computed over every row so far'}:")
    for kind in ("DISTINCT", "GROUP BY", "row-wise filter"):
        per = seconds[kind]
        order = sorted(per)
        early = [per[r] for r in order[1:4]]
        late = [per[r] for r in order[-3:]]
        njobs = statistics.mean(spark_jobs[kind][r] for r in order[1:])
        print(
            f"  {kind:26s} windows 2-4 {statistics.mean(early):7.3f} s/window   "
            f"last 3 {statistics.mean(late):7.3f} s/window   "
            f"last/early {statistics.mean(late) / statistics.mean(early):5.2f}x   "
            f"Spark jobs/window {njobs:4.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--edges", type=float, default=1e5, help="edges at the end (1e6 for the large run)"
    )
    parser.add_argument("--windows", type=int, default=4, help="windows, the first loads the graph")
    parser.add_argument(
        "--stateful-rows", type=float, default=1e6, help="rows of the stateful-operator stream"
    )
    parser.add_argument("--stateful-windows", type=int, default=20)
    parser.add_argument(
        "--only", choices=("graph", "stateful"), help="run one part (default: both)"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--engine",
        choices=("auto", "distributed"),
        default="auto",
        help="geaflow.dsl.query.engine of the graph job (distributed: Spark's incremental path)",
    )
    parser.add_argument(
        "--driver-memory",
        default=None,
        help="Spark driver heap (default 2g, 6g from 5e5 edges: the full recompute needs it)",
    )
    args = parser.parse_args()
    from runtime.spark_adapter import shared_session

    spark = shared_session(
        args.master,
        {
            "spark.sql.shuffle.partitions": "4",
            "spark.driver.memory": args.driver_memory
            or ("6g" if args.edges >= 5e5 or args.stateful_rows > 2e6 else "2g"),
        },
    )
    edges = int(args.edges)
    with tempfile.TemporaryDirectory(prefix="geaflow-bench-streams-") as tmp:
        folder = Path(tmp)
        if args.only != "graph":
            stateful(spark, folder, int(args.stateful_rows), args.stateful_windows, 10_000)
        if args.only == "stateful":
            return
        step = write_graph(folder, edges, args.windows)
        print(
            f"{edges} edges, {max(10, edges // 10)} vertices, +{step} edges a window, "
            f"{args.windows - 1} timed windows"
        )
        incr, incr_jobs, incr_rows = run(spark, folder, step, True, args.engine)
        full, _, full_rows = run(spark, folder, step, False, args.engine)
    names = {
        "match": "2-hop MATCH (new paths)",
        "wcc": "WCC: inc_wcc vs wcc",
        "incremental_kcore": "k-core (k=2)",
        "sssp": "SSSP from vertex 0",
    }
    for kind, name in names.items():
        if kind in incr and kind in full:
            rows = (incr_rows[kind], full_rows[kind])
            print(line(name, incr[kind], full[kind], rows, incr_jobs[kind]))
    print("(Spark jobs/window: of the incremental statement, in the windows timed)")


if __name__ == "__main__":
    main()
