"""``geaflow.batch.number.per.checkpoint``: a windowed job checkpoints every N windows.

The job checkpoints after windows N-1, 2N-1, ... and after its last window.
A job that fails between two checkpoints restarts from the last one: it
redoes the windows after it, and its sinks, graph and algorithm state end as
in a run that never failed (every row exactly once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geaflow_sql.core.errors import ConfigError
from tests.conftest import newest_job, write

EDGES = [(1, 2), (3, 4), (2, 3), (5, 6), (6, 7), (4, 5), (8, 9), (7, 8), (9, 1), (2, 6), (10, 1)]

SCRIPT = """
SET geaflow.dsl.checkpoint.dir = 'ck';
SET geaflow.batch.number.per.checkpoint = {every};
CREATE TABLE es (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='e.txt',
  geaflow.dsl.window.size = 2);
CREATE GRAPH g (Vertex node (id bigint ID), Edge link (s bigint SOURCE ID, t bigint DESTINATION ID))
  WITH (storeType='memory');
CREATE TABLE copied (s bigint, t bigint) WITH (type='file', geaflow.dsl.file.path='out/copied.txt');
CREATE TABLE comps (id bigint, component bigint)
  WITH (type='file', geaflow.dsl.file.path='out/comps.txt');
USE GRAPH g;
INSERT INTO g.node SELECT s FROM es;
INSERT INTO g.node SELECT t FROM es;
INSERT INTO g.link SELECT s, t FROM es;
INSERT INTO copied SELECT s, t FROM es;
INSERT INTO comps CALL inc_wcc() YIELD (id, component) RETURN id, component;
"""

OUTPUTS = ("copied.txt", "comps.txt")


def job_folder(root: Path, every: int) -> Path:
    write(root / "e.txt", "".join(f"{s},{t}\n" for s, t in EDGES))
    write(root / "job.gql", SCRIPT.format(every=every))
    return root


def run(spark, folder: Path, conf: dict[str, object] | None = None) -> None:
    from geaflow_sql import Session

    session = Session(spark=spark, base_dir=str(folder), conf=conf or {})
    session.execute((folder / "job.gql").read_text())


def outputs(folder: Path) -> dict[str, list[str]]:
    return {name: sorted((folder / "out" / name).read_text().splitlines()) for name in OUTPUTS}


@pytest.fixture(scope="module")
def uninterrupted(spark, tmp_path_factory) -> dict[str, list[str]]:
    folder = job_folder(tmp_path_factory.mktemp("clean"), 1)
    run(spark, folder)
    return outputs(folder)


def fail_in_window(monkeypatch, window: int) -> None:
    """Make the job's round of ``window`` fail as a lost machine would."""
    import runtime.streaming.job as job

    real_round = job.WindowedJob.run_round

    def failing_round(self, r):
        if r == window:
            raise RuntimeError(f"the machine went away in window {window}")
        return real_round(self, r)

    monkeypatch.setattr(job.WindowedJob, "run_round", failing_round)


def test_checkpoints_every_n_windows_and_after_the_last(
    spark, tmp_path, monkeypatch, uninterrupted
):
    from runtime.streaming.checkpoint import JobCheckpoint

    committed: list[int] = []
    real = JobCheckpoint.commit

    def commit(self, state):
        committed.append(-2 if state.get("finished") else int(state["window"]))
        return real(self, state)

    monkeypatch.setattr(JobCheckpoint, "commit", commit)
    folder = job_folder(tmp_path, 4)
    run(spark, folder)
    # 6 windows of 2 edges: after window 3 (the fourth), after the last (5), then "finished".
    assert committed == [3, 5, -2]
    assert outputs(folder) == uninterrupted


def test_a_failure_between_checkpoints_redoes_the_windows_after_the_last_one(
    spark, tmp_path, monkeypatch, uninterrupted
):
    folder = job_folder(tmp_path, 3)
    fail_in_window(monkeypatch, 4)
    with pytest.raises(Exception, match="window 4"):
        run(spark, folder)
    state = json.loads((folder / "ck" / "state.json").read_text())
    assert state["window"] == 2 and not state["finished"]
    # Window 3 reached the sinks after that checkpoint: the restart takes it back.
    assert len((folder / "out" / "copied.txt").read_text().splitlines()) == 8

    monkeypatch.undo()
    run(spark, folder)
    assert outputs(folder) == uninterrupted


def test_the_interval_must_be_positive(spark, tmp_path):
    folder = job_folder(tmp_path, 0)
    with pytest.raises(ConfigError, match="batch.number.per.checkpoint must be a positive"):
        run(spark, folder)


@pytest.mark.parametrize("held", [True, False], ids=["held", "not-held"])
def test_graph_writes_held_on_the_driver_are_checkpointed_from_there(
    spark, tmp_path, monkeypatch, uninterrupted, held
):
    """A window's graph writes whose rows the memory store holds on the driver
    go into the checkpoint as Parquet written there (no Spark job); writes it
    does not hold are written by Spark.  Either way a restart reads them back,
    on the driver when they are small (Spark's files too), so the windows after
    a restart run on the driver as the ones before it did."""
    import runtime.streaming.job as job
    from tests.conftest import jobs_per_window

    folder = job_folder(tmp_path, 1)
    jobs_in_commits: list[int] = []
    real_commit = job.WindowedJob.commit

    def commit(self, r, last):
        before = newest_job(spark)
        real_commit(self, r, last)
        jobs_in_commits.append(newest_job(spark) - before)

    monkeypatch.setattr(job.WindowedJob, "commit", commit)
    fail_in_window(monkeypatch, 3)
    with pytest.raises(Exception, match="window 3"):
        # (Given to the session, not SET in the script: a restart of another
        # script would start afresh.)
        run(spark, folder, {} if held else {"geaflow.dsl.store.local.max.bytes": 0})
    assert len(jobs_in_commits) == 3
    if held:
        assert jobs_in_commits == [0, 0, 0]
    else:
        # Three graph writes a window, each a Spark job.
        assert all(n >= 3 for n in jobs_in_commits)
    parts = sorted((folder / "ck" / "graphs").rglob("*.parquet"))
    assert parts and all(p.name == "part-00000.parquet" for p in parts) == held

    monkeypatch.undo()
    # The restart holds rows again (and reads back the parts Spark wrote).
    with jobs_per_window(spark) as counts:
        run(spark, folder)
    assert counts == [0, 0, 0]  # windows 3, 4 and 5
    assert outputs(folder) == uninterrupted
