"""Shared fixtures: one SparkSession for the whole test run, fresh sessions per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

os.environ.setdefault("PYSPARK_PYTHON", os.environ.get("PYTHON", "python3"))

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def spark():
    from runtime.spark_adapter import SMALL_DATA_CONF, shared_session

    return shared_session("local[2]", SMALL_DATA_CONF)


@pytest.fixture
def session(spark, tmp_path):
    """A geaflow-sql Session with its own catalog, on the shared SparkSession."""
    from geaflow_sql import Session

    return Session(spark=spark, base_dir=str(tmp_path))


@pytest.fixture(scope="module")
def errors(spark, tmp_path_factory):
    """A session over a small declared graph (labels A and B, edge R), for
    graph statements that must fail."""
    from geaflow_sql import Session

    session = Session(spark=spark, base_dir=str(tmp_path_factory.mktemp("errors")))
    session.execute(
        "CREATE GRAPH eg (Vertex A (id bigint ID, p bigint), Vertex B (id bigint ID), "
        "Edge R (src bigint SOURCE ID, dst bigint DESTINATION ID, w bigint)) "
        "WITH (storeType='memory'); USE GRAPH eg"
    )
    return session


@pytest.fixture(scope="session")
def corpus() -> Path:
    from geaflow_sql.conformance import default_corpus_path

    path = default_corpus_path()
    if not (path / "cases.json").exists():
        pytest.skip(f"conformance corpus not found at {path}")
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def newest_job(spark) -> int:
    """The id of the newest Spark job of the shared session (ids grow by one
    per job): a test compares it before and after to count jobs."""
    return max(spark.sparkContext.statusTracker().getJobIdsForGroup(None) or [-1])


@contextmanager
def jobs_per_window(spark) -> Iterator[list[int]]:
    """Inside: the Spark jobs each window of a windowed job runs, appended to
    the list given as each window ends."""
    import runtime.streaming.job as job

    counts: list[int] = []
    real = job.WindowedJob.run_round

    def counted(self, r):
        before = newest_job(spark)
        real(self, r)
        counts.append(newest_job(spark) - before)

    job.WindowedJob.run_round = counted
    try:
        yield counts
    finally:
        job.WindowedJob.run_round = real


SPLIT = "---"  # the line a windowed test's file sink writes between windows


def windows_of(path: Path) -> list[list[str]]:
    """A windowed sink's output, window by window (lines split at ``SPLIT``)."""
    chunks: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if line == SPLIT:
            chunks.append([])
        else:
            chunks[-1].append(line)
    if chunks and not chunks[-1]:
        chunks.pop()
    return chunks


# Test files that take minutes, heaviest first (per-file totals of a full
# run's ``--junitxml`` times, 2026-11-27).  With ``--dist loadfile --no-loadscope-reorder`` xdist hands out whole
# files in collection order, so starting the long ones first keeps a worker
# from running the last long file alone while the other one idles.
HEAVY_FIRST = (
    "test_incremental_match.py",
    "test_corpus_elsewhere.py",
    "test_local_engine.py",
    "test_stream_operators.py",
    "test_rules_off_graph.py",
    "test_kafka.py",
    "test_kuzu_beyond.py",
    "test_scale_out.py",
    "test_store_kills.py",
    "test_plan_fuzz.py",
    "test_sql_differential.py",
    "test_kuzu_differential.py",
    "test_conformance_graphs.py",
    "test_conformance.py",
    "test_algorithms_engines.py",
    "test_hostile_input.py",
    "test_cheapest_paths.py",
    "test_failover.py",
    "test_cli.py",
    "test_small_heap.py",
    "test_jvm_archive.py",
    "test_window_progress.py",
    "test_shell.py",
    "test_parse_fuzz.py",
    "test_graph_stores.py",
    "test_quantified_paths.py",
    "test_rules_off_sql.py",
    "test_checkpoint_interval.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    # A stable sort: tests keep their order inside each file.
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
