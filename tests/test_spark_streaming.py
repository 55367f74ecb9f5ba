"""Spark Structured Streaming sources: micro-batches through ``foreachBatch`` as windows.

Files land in a folder; a ``type='spark'`` table with
``geaflow.dsl.spark.streaming = true`` and ``maxFilesPerTrigger = 1`` makes one
window per file.  The sinks' split lines show what each window emitted, and
a second run on the same checkpoint folder after more files arrived continues
where the first stopped, without repeating a row.
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
from pathlib import Path

from tests.conftest import write
from tests.test_streams import sink, windows_of


def land(folder: Path, k: int, rows: list[tuple[str, int]]) -> None:
    path = write(folder / f"part-{k:03d}.csv", "".join(f"{key},{v}\n" for key, v in rows))
    # Spark's file stream takes files in modification-time order: space them out.
    stamp = 1_700_000_000 + 10 * k
    os.utime(path, (stamp, stamp))


def script(folder: Path) -> str:
    return (
        "CREATE TABLE clicks (k varchar, v int) WITH (type='spark', format='csv', "
        f"path='{folder}', maxFilesPerTrigger='1', geaflow.dsl.spark.streaming = true);"
        + sink("raw", "k varchar, v int", "raw.txt")
        + sink("per_key", "k varchar, total bigint", "per_key.txt")
        + "INSERT INTO raw SELECT k, v FROM clicks;"
        + "INSERT INTO per_key SELECT k, sum(v) FROM clicks GROUP BY k;"
    )


def expected_touched(files: list[list[tuple[str, int]]]) -> list[list[str]]:
    """Per window: the keys it touched, with totals over everything so far."""
    totals: dict[str, int] = defaultdict(int)
    out = []
    for rows in files:
        for key, v in rows:
            totals[key] += v
        out.append(sorted(f"{key},{totals[key]}" for key in {key for key, _ in rows}))
    return out


def test_each_micro_batch_is_a_window(session, tmp_path):
    rng = random.Random(3)
    files = [
        [(rng.choice("abcde"), rng.randrange(100)) for _ in range(rng.randrange(1, 6))]
        for _ in range(4)
    ]
    landing = tmp_path / "landing"
    for k, rows in enumerate(files):
        land(landing, k, rows)
    session.execute(script(landing))
    raw = windows_of(tmp_path / "raw.txt")
    assert [sorted(w) for w in raw] == [sorted(f"{key},{v}" for key, v in rows) for rows in files]
    per_key = [sorted(w) for w in windows_of(tmp_path / "per_key.txt")]
    assert per_key == expected_touched(files)


def test_a_restarted_stream_continues_after_its_last_window(spark, tmp_path):
    from geaflow_sql import Session

    rng = random.Random(5)
    files = [[(rng.choice("xyz"), rng.randrange(50)) for _ in range(3)] for _ in range(5)]
    landing = tmp_path / "landing"
    conf = {"geaflow.dsl.checkpoint.dir": str(tmp_path / "ckpt")}
    for k in range(3):
        land(landing, k, files[k])
    Session(spark=spark, base_dir=str(tmp_path), conf=conf).execute(script(landing))
    assert len(windows_of(tmp_path / "raw.txt")) == 3
    for k in range(3):  # processed files are archived away: only the checkpoint knows them
        (landing / f"part-{k:03d}.csv").unlink()
    for k in range(3, 5):  # more files arrive while the job is down
        land(landing, k, files[k])
    Session(spark=spark, base_dir=str(tmp_path), conf=conf).execute(script(landing))
    raw = windows_of(tmp_path / "raw.txt")
    assert [sorted(w) for w in raw] == [sorted(f"{key},{v}" for key, v in rows) for rows in files]
    # Running totals continue across the restart: state came back from the checkpoint.
    assert [sorted(w) for w in windows_of(tmp_path / "per_key.txt")] == expected_touched(files)


def test_a_streaming_table_without_a_format_is_a_clear_error(session, tmp_path):
    import pytest

    from geaflow_sql.core.errors import GeaflowError

    with pytest.raises(GeaflowError, match="format"):
        session.execute(
            f"CREATE TABLE s (k varchar) WITH (type='spark', path='{tmp_path}', geaflow.dsl.spark.streaming = true);"
            + sink("o", "k varchar", "o.txt")
            + "INSERT INTO o SELECT k FROM s;"
        )
