"""A windowed job at the command line: a line per window, and Ctrl-C
stopping it after the window it is running with its checkpoint intact."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import threading
import time
from pathlib import Path

from tests.cli_process import start_cli

WINDOWS = 10
JOB = """
CREATE TABLE src (id bigint, name varchar)
  WITH (type='file', geaflow.dsl.file.path='src.txt', geaflow.dsl.window.size = 3);
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID)
) WITH (storeType='rocksdb');
CREATE TABLE out (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='out.txt');
CREATE TABLE pairs (a bigint, b bigint) WITH (type='file', geaflow.dsl.file.path='pairs.txt');
USE GRAPH g;
INSERT INTO g.person SELECT id, name FROM src;
INSERT INTO g.knows SELECT id, id % 5 FROM src;
INSERT INTO out SELECT id, name FROM src WHERE id % 2 = 0;
INSERT INTO pairs MATCH (a:person)-[:knows]->(b:person) RETURN a.id, b.id;
"""


def make_job(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "src.txt").write_text(
        "".join(f"{i},n{i}\n" for i in range(3 * WINDOWS)), encoding="utf-8"
    )
    (folder / "job.gql").write_text(JOB, encoding="utf-8")


def lines_of(stream) -> queue.Queue[str]:
    got: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            got.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return got


def committed(checkpoint: Path) -> dict:
    return json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))


def sorted_lines(path: Path) -> list[str]:
    return sorted(path.read_text(encoding="utf-8").splitlines())


def test_ctrl_c_stops_a_windowed_job_after_its_window_and_a_rerun_goes_on(spark, tmp_path):
    from geaflow_sql import Session

    clean = tmp_path / "clean"
    make_job(clean)
    conf = {"geaflow.file.persistent.root": str(clean / "warehouse")}
    Session(spark=spark, base_dir=str(clean), conf=conf).execute(JOB)

    work = tmp_path / "work"
    make_job(work)
    checkpoint = tmp_path / "checkpoint"
    conf = {
        "geaflow.dsl.checkpoint.dir": str(checkpoint),
        "geaflow.file.persistent.root": str(work / "warehouse"),
    }
    # Each graph part written waits a little, so the windows are slow enough
    # to press Ctrl-C during one.
    pause = {"GEAFLOW_SQL_STORE_PAUSE_AFTER_PART": "0.4"}
    proc = start_cli(work, conf, pause, quiet=False)
    err = lines_of(proc.stderr)
    seen: list[str] = []
    deadline = time.monotonic() + 180
    while not any(line.startswith("window 2:") for line in seen):
        assert proc.poll() is None and time.monotonic() < deadline, seen
        with contextlib.suppress(queue.Empty):
            seen.append(err.get(timeout=1))
    proc.send_signal(signal.SIGINT)
    proc.wait(120)
    while True:
        try:
            seen.append(err.get(timeout=1))
        except queue.Empty:
            break
    assert proc.returncode == 0, seen
    progress = [line for line in seen if line.startswith("window ")]
    # A line per window: its number, the rows it read, the rows it wrote.
    for k, line in enumerate(progress, start=1):
        assert line.startswith(f"window {k}: 3 rows in, "), line
        assert line.endswith("checkpointed"), line
    # 3 persons, 3 edges, 2 even ids (0 and 2) and 3 new paths.
    assert progress[0].startswith("window 1: 3 rows in, 11 rows out"), progress[0]
    assert any("stopping after this window" in line for line in seen), seen
    stopped = [line for line in seen if "stopped after window" in line]
    assert stopped and f"stopped after window {len(progress)};" in stopped[0], seen
    assert 2 <= len(progress) < WINDOWS
    state = committed(checkpoint)
    assert state["window"] == len(progress) - 1 and not state["finished"]

    # Run again: it goes on from the next window and ends with what an
    # uninterrupted run wrote.
    again = start_cli(work, conf)
    _, stderr = again.communicate(timeout=600)
    assert again.returncode == 0, stderr
    assert committed(checkpoint)["finished"]
    for name in ("out.txt", "pairs.txt"):
        assert sorted_lines(work / name) == sorted_lines(clean / name), name
