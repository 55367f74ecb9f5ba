"""Exactly-once failover: a windowed job killed with SIGKILL and restarted.

The job runs as a real ``geaflow-sql`` process with a checkpoint folder.  The
test kills it at several windows (chosen at random, at least five times),
restarts it with the same folder each time, and finally compares the sinks
with those of an uninterrupted run: every row exactly once.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_process import start_cli

WINDOWS = 10

SCRIPT = """
CREATE TABLE people (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='people.txt');
CREATE TABLE edges (s bigint, t bigint, w double)
  WITH (type='file', geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = 2);
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double)
) WITH (storeType='memory');
CREATE TABLE pairs (a bigint, b bigint, w double)
  WITH (type='file', geaflow.dsl.file.path='out/pairs.txt');
CREATE TABLE degrees (s bigint, n bigint, total double)
  WITH (type='file', geaflow.dsl.file.path='out/degrees.txt');
USE GRAPH g;
INSERT INTO g.person SELECT id, name FROM people;
INSERT INTO g.knows SELECT s, t, w FROM edges;
INSERT INTO pairs MATCH (a:person)-[e:knows]->(b:person) WHERE a.id < b.id RETURN a.id, b.id, e.w;
INSERT INTO degrees SELECT s, count(*), sum(w) FROM edges GROUP BY s;
"""


def make_inputs(folder: Path) -> None:
    rng = random.Random(7)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "people.txt").write_text("".join(f"{i},p{i}\n" for i in range(20)), encoding="utf-8")
    edges = [
        (rng.randrange(20), rng.randrange(20), rng.randrange(1, 9) / 4) for _ in range(2 * WINDOWS)
    ]
    (folder / "edges.txt").write_text(
        "".join(f"{s},{t},{w}\n" for s, t, w in edges), encoding="utf-8"
    )
    (folder / "job.gql").write_text(SCRIPT, encoding="utf-8")


def start(folder: Path, checkpoint: Path) -> subprocess.Popen[str]:
    return start_cli(folder, {"geaflow.dsl.checkpoint.dir": str(checkpoint)})


def committed_window(checkpoint: Path) -> int:
    try:
        state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return int(state.get("window", -1)) if not state.get("finished") else WINDOWS


def sorted_lines(path: Path) -> list[str]:
    return sorted(path.read_text(encoding="utf-8").splitlines()) if path.exists() else []


def test_killed_job_resumes_and_writes_every_row_exactly_once(session, tmp_path):
    # The uninterrupted run (in this process, on the shared Spark).
    clean = tmp_path / "clean"
    make_inputs(clean)
    from geaflow_sql import Session

    Session(spark=session.spark, base_dir=str(clean)).execute((clean / "job.gql").read_text())
    expected_pairs = sorted_lines(clean / "out" / "pairs.txt")
    expected_degrees = sorted_lines(clean / "out" / "degrees.txt")
    assert expected_pairs and expected_degrees

    work = tmp_path / "killed"
    make_inputs(work)
    checkpoint = tmp_path / "checkpoint"
    rng = random.Random(2026)
    targets = sorted(rng.sample(range(1, WINDOWS - 2), 5))
    kills = 0
    per_window = 0.0
    resumed_from: list[int] = []
    for target in targets:
        before = committed_window(checkpoint)
        resumed_from.append(before)
        proc = start(work, checkpoint)
        deadline = time.monotonic() + 240
        first_seen: dict[int, float] = {}  # window committed -> when the test saw it
        while (window := committed_window(checkpoint)) < target and proc.poll() is None:
            first_seen.setdefault(window, time.monotonic())
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.01)
        first_seen.setdefault(committed_window(checkpoint), time.monotonic())
        # Land somewhere inside the next window's work: a random part of the
        # time a window took in this process (a fixed span of the clock let a
        # fast machine finish the job's last windows before the kill).
        # (A process that committed one window so far: the last process's time.)
        made = sorted((w, t) for w, t in first_seen.items() if w > before)
        if len(made) > 1:
            per_window = (made[-1][1] - made[0][1]) / (made[-1][0] - made[0][0])
        time.sleep(rng.uniform(0.0, per_window))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
        # Every restart resumes after the last window it committed.
        assert committed_window(checkpoint) >= before
    final = start(work, checkpoint)
    out, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    assert kills >= 5
    assert resumed_from == sorted(resumed_from) and resumed_from[-1] > resumed_from[0]
    assert sorted_lines(work / "out" / "pairs.txt") == expected_pairs
    assert sorted_lines(work / "out" / "degrees.txt") == expected_degrees


def test_a_job_stopped_after_its_last_window_but_not_marked_finished_ends_on_restart(
    session, tmp_path, monkeypatch
):
    # What a kill leaves between the checkpoint of the last window and the
    # mark that the job finished: the restart has no window left to read,
    # runs its statements once more over nothing new (the graph read back
    # from the checkpoint), adds no row, and finishes.
    from geaflow_sql import Session
    from runtime.streaming.checkpoint import JobCheckpoint

    def run(folder: Path, checkpoint: Path) -> None:
        conf = {"geaflow.dsl.checkpoint.dir": str(checkpoint)}
        script = (folder / "job.gql").read_text()
        Session(spark=session.spark, base_dir=str(folder), conf=conf).execute(script)

    clean = tmp_path / "clean"
    make_inputs(clean)
    run(clean, tmp_path / "clean_checkpoint")
    work = tmp_path / "work"
    make_inputs(work)
    checkpoint = tmp_path / "checkpoint"
    real_commit = JobCheckpoint.commit

    def killed_before_finishing(self, state):
        if state.get("finished"):
            raise RuntimeError("killed before the job was marked finished")
        return real_commit(self, state)

    monkeypatch.setattr(JobCheckpoint, "commit", killed_before_finishing)
    with pytest.raises(Exception, match="killed before the job was marked finished"):
        run(work, checkpoint)
    assert committed_window(checkpoint) == WINDOWS - 1
    monkeypatch.undo()
    run(work, checkpoint)
    assert committed_window(checkpoint) == WINDOWS  # finished
    for name in ("pairs.txt", "degrees.txt"):
        assert sorted_lines(work / "out" / name) == sorted_lines(clean / "out" / name)
