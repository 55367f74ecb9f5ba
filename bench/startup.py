"""Benchmark: what a fresh ``geaflow-sql -f`` process costs, with and without
the driver JVM's class archive (``runtime/jvm_archive.py``).

    python bench/startup.py [--runs N]

Each run is a new process running a two-statement script over a two-row
text file (``geaflow-sql -f job.gql -q --master local[1]``): Python's
imports, the JVM's start, a first query.  Runs alternate between the
archive on and off (``GEAFLOW_SQL_JVM_ARCHIVE``); the archive is built first
if it is missing (not timed).  Both sides must print the same rows; the
medians are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCRIPT = """
CREATE TABLE t (id bigint, name varchar) WITH (type = 'file', geaflow.dsl.file.path = 't.txt');
SELECT name, id FROM t ORDER BY id;
"""


def run(folder: Path, archive: bool) -> tuple[float, str]:
    env = dict(os.environ, GEAFLOW_SQL_JVM_ARCHIVE="on" if archive else "off")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", "-f", "job.gql", "-q", "--master", "local[1]"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    from runtime import jvm_archive
    from runtime.spark_adapter import check_java

    path = jvm_archive.archive_path(check_java())
    if path is None:
        print("no cache directory of our own: the archive cannot be kept")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t.txt").write_text("1,a\n2,b\n")
        (folder / "job.gql").write_text(SCRIPT)
        if not os.path.exists(path):
            print("building the archive ...", flush=True)
            run(folder, archive=True)  # starts the build
            while not os.path.exists(path):
                if os.path.exists(path + ".failed"):
                    print(Path(path + ".failed").read_text())
                    return 1
                time.sleep(2)
        times: dict[bool, list[float]] = {True: [], False: []}
        printed: dict[bool, set[str]] = {True: set(), False: set()}
        for _ in range(args.runs):
            for archive in (True, False):
                took, out = run(folder, archive)
                times[archive].append(took)
                printed[archive].add(out)
        if printed[True] != printed[False] or len(printed[True]) != 1:
            print("the two sides printed different rows")
            return 1
        on, off = statistics.median(times[True]), statistics.median(times[False])
        print(f"geaflow-sql -f, a new process ({args.runs} runs each, medians)")
        print(f"  with the class archive     {on:6.2f} s")
        print(f"  without                    {off:6.2f} s")
        print(f"  ratio                      {on / off:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
