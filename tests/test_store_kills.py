"""Writers of persistent graphs killed with SIGKILL at random points.

Every durable graph write must be all or nothing: an INSERT that writes
several labels is one version, and a windowed job's window that writes
several labels of several graphs is one change.  Each test runs real
``geaflow-sql`` processes, kills them (some at random moments, some exactly
between two labels of one change, found by watching the Parquet parts land),
and after every kill reads the graphs from a new session: what it sees must
be made of whole statements or whole windows.  Writers are slowed by the
store's fault-injection pause after each part, so the kills have room to land
inside a change.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from tests.cli_process import start_cli

GRAPH = """
CREATE GRAPH {name} (
  Vertex person (id bigint ID, name varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
) WITH (storeType='rocksdb');
"""

PER_STATEMENT = 4
STATEMENTS = 8


def start(
    folder: Path, root: Path, script: str, conf: dict[str, str], pause: str
) -> subprocess.Popen[str]:
    (folder / "job.gql").write_text(script, encoding="utf-8")
    conf = {"geaflow.file.persistent.root": str(root), **conf}
    return start_cli(folder, conf, {"GEAFLOW_SQL_STORE_PAUSE_AFTER_PART": pause})


def parts(root: Path, graph: str, kind: str) -> list[int]:
    """Write numbers of the finished Parquet parts of one label, in order."""
    folder = root / "default" / graph / "parts" / kind
    if not folder.is_dir():
        return []
    return sorted(int(p.name.split("-")[0]) for p in folder.iterdir() if (p / "_SUCCESS").exists())


def mid_statement(root: Path) -> bool:
    """Has the last statement written its person part and not yet its knows part?"""
    persons = parts(root, "g", "v-person")
    return bool(persons) and persons[-1] + 1 not in parts(root, "g", "e-knows")


def read_graph(
    spark, folder: Path, root: Path, name: str
) -> tuple[list[int], list[tuple[int, int]]]:
    from geaflow_sql import Session

    s = Session(spark=spark, base_dir=str(folder), conf={"geaflow.file.persistent.root": str(root)})
    s.execute(GRAPH.format(name=name))
    s.execute(f"USE GRAPH {name}")
    ids = sorted(r[0] for r in s.sql("MATCH (a:person) RETURN a.id").collect())
    edges = sorted(
        (r[0], r[1]) for r in s.sql("MATCH (a:person)-[e:knows]->(b) RETURN e.src, e.dst").collect()
    )
    return ids, edges


def statement_rows(run: int, k: int) -> list[tuple[int, int]]:
    """The (person id, knows dst) rows of statement ``k`` of run ``run``."""
    base = run * 1000 + k * 10
    return [(base + j, base + (j + 1) % PER_STATEMENT) for j in range(PER_STATEMENT)]


def batch_script(run: int) -> str:
    out = [GRAPH.format(name="g")]
    for k in range(STATEMENTS):
        values = ", ".join(f"({i}, 'r{run}', {i}, {d})" for i, d in statement_rows(run, k))
        out.append(f"INSERT INTO g(person.id, person.name, knows.src, knows.dst) VALUES {values};")
    return "\n".join(out)


def test_a_killed_multi_label_insert_leaves_whole_statements(spark, tmp_path):
    root = tmp_path / "warehouse"
    rng = random.Random(16)
    committed: dict[int, int] = {}
    between = 0
    for run in range(5):
        proc = start(tmp_path, root, batch_script(run), {}, "0.4")
        # Half the kills wait for the moment between the two labels of a
        # statement after the run's first (so each of those runs has committed
        # one); the others land anywhere once writing has begun.
        targeted = run % 2 == 0
        known = len(parts(root, "g", "v-person"))
        wanted = known + (2 if targeted else 1)
        deadline = time.monotonic() + 240
        while proc.poll() is None:
            assert time.monotonic() < deadline, "the writer made no progress"
            if len(parts(root, "g", "v-person")) >= wanted and (
                not targeted or mid_statement(root)
            ):
                break
            time.sleep(0.02)
        if not targeted:
            time.sleep(rng.uniform(0.0, 3.0))
        assert proc.poll() is None, "the writer finished before it was killed"
        between += mid_statement(root)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

        ids, edges = read_graph(spark, tmp_path, root, "g")
        # Whatever each run committed is its first statements, each whole.
        for r in range(run + 1):
            mine = [i for i in ids if i // 1000 == r]
            n = len(mine) // PER_STATEMENT
            rows = [row for k in range(n) for row in statement_rows(r, k)]
            assert mine == [i for i, _ in rows], f"run {r}: persons of half a statement"
            assert [e for e in edges if e[0] // 1000 == r] == rows, (
                f"run {r}: vertices without edges"
            )
            committed[r] = n
    assert between >= 3, "too few kills landed between two labels of one INSERT"
    assert all(committed[r] >= 1 for r in range(0, 5, 2)), committed


WINDOWED = """
CREATE TABLE src (id bigint, name varchar)
  WITH (type='file', geaflow.dsl.file.path='src.txt', geaflow.dsl.window.size = 2);
{ga}
{gb}
INSERT INTO ga(person.id, person.name, knows.src, knows.dst) SELECT id, name, id, id FROM src;
INSERT INTO gb.person SELECT id, name FROM src;
INSERT INTO gb.knows SELECT id, id FROM src;
"""
WINDOWS = 8


def committed_window(checkpoint: Path) -> int:
    try:
        state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return WINDOWS if state.get("finished") else int(state.get("window", -1))


def test_a_killed_windowed_job_leaves_whole_windows_over_two_graphs(spark, tmp_path):
    root = tmp_path / "warehouse"
    checkpoint = tmp_path / "checkpoint"
    (tmp_path / "src.txt").write_text(
        "".join(f"{i},n{i}\n" for i in range(2 * WINDOWS)), encoding="utf-8"
    )
    script = WINDOWED.format(ga=GRAPH.format(name="ga"), gb=GRAPH.format(name="gb"))
    extra = {"geaflow.dsl.checkpoint.dir": str(checkpoint)}
    rng = random.Random(18)
    kills = 0
    for target in sorted(rng.sample(range(0, WINDOWS - 2), 5)):
        proc = start(tmp_path, root, script, extra, "0.15")
        deadline = time.monotonic() + 240
        while committed_window(checkpoint) < target and proc.poll() is None:
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 1.5))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
        seen = []
        for name in ("ga", "gb"):
            ids, edges = read_graph(spark, tmp_path, root, name)
            # Whole windows (two rows each), every vertex with its edge, once.
            assert ids == list(range(len(ids))) and len(ids) % 2 == 0, (name, ids)
            assert edges == [(i, i) for i in ids], (name, edges)
            seen.append(ids)
        assert seen[0] == seen[1], "one graph has a window the other has not"
    final = start(tmp_path, root, script, extra, "0")
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    assert kills >= 4  # with the 5 above and the one below: at least 10 a run
    for name in ("ga", "gb"):
        ids, edges = read_graph(spark, tmp_path, root, name)
        assert ids == list(range(2 * WINDOWS))
        assert edges == [(i, i) for i in ids], "a redone window wrote its edges twice"


def test_a_window_killed_between_its_two_graphs_is_finished_by_the_next_reader(spark, tmp_path):
    root = tmp_path / "warehouse"
    (tmp_path / "src.txt").write_text("0,a\n1,b\n", encoding="utf-8")
    script = WINDOWED.format(ga=GRAPH.format(name="ga"), gb=GRAPH.format(name="gb"))
    env_pause = "GEAFLOW_SQL_STORE_PAUSE_BETWEEN_GRAPHS"
    os.environ[env_pause] = "120"
    try:
        proc = start(tmp_path, root, script, {}, "0")
    finally:
        del os.environ[env_pause]
    records = root / ".txn"
    deadline = time.monotonic() + 240
    # The commit record is written, the first graph's manifest replaced, and
    # the writer is held before the second.
    while not (records.is_dir() and any(records.glob("*.json"))):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the window never committed"
        time.sleep(0.02)
    manifests = [root / "default" / name / "manifest.json" for name in ("ga", "gb")]
    while not any(m.exists() for m in manifests):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the first graph was never published"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert sum(m.exists() for m in manifests) == 1
    # A reader of either graph finishes the change: both hold the window.
    for name in ("gb", "ga"):
        ids, edges = read_graph(spark, tmp_path, root, name)
        assert ids == [0, 1] and edges == [(0, 0), (1, 1)], name
    assert not any(records.glob("*.json"))


def test_a_cancelled_windowed_job_leaves_whole_windows(spark, tmp_path, monkeypatch):
    import threading

    from geaflow_sql import dbapi

    root = tmp_path / "warehouse"
    (tmp_path / "src.txt").write_text(
        "".join(f"{i},n{i}\n" for i in range(2 * WINDOWS)), encoding="utf-8"
    )
    # Slow windows: the store waits after each part, so the cancel lands
    # while a window is half written.
    monkeypatch.setenv("GEAFLOW_SQL_STORE_PAUSE_AFTER_PART", "0.3")
    conf = {
        "geaflow.file.persistent.root": str(root),
        # (With a checkpoint the job runs window by window: without one,
        # inserts that no statement reads back are one round, read once.)
        "geaflow.dsl.checkpoint.dir": str(tmp_path / "checkpoint"),
    }
    conn = dbapi.connect(spark=spark, base_dir=str(tmp_path), conf=conf)
    script = WINDOWED.format(ga=GRAPH.format(name="ga"), gb=GRAPH.format(name="gb"))
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            conn.cursor().execute(script)
        except dbapi.Error as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    manifest = root / "default" / "gb" / "manifest.json"
    deadline = time.monotonic() + 120
    while not manifest.exists():  # the first window is published
        assert worker.is_alive() and time.monotonic() < deadline, outcome
        time.sleep(0.05)
    time.sleep(0.4)
    assert conn.cancel(timeout=60)
    worker.join(60)
    assert isinstance(outcome.get("error"), dbapi.OperationalError), outcome
    monkeypatch.delenv("GEAFLOW_SQL_STORE_PAUSE_AFTER_PART")
    seen = []
    for name in ("ga", "gb"):
        ids, edges = read_graph(spark, tmp_path, root, name)
        assert ids == list(range(len(ids))) and len(ids) % 2 == 0 and ids, (name, ids)
        assert len(ids) < 2 * WINDOWS, "the job was not stopped"
        assert edges == [(i, i) for i in ids], (name, edges)
        seen.append(ids)
    assert seen[0] == seen[1]
