"""Windowed jobs: per-window output of SQL and graph queries, socket sources.

A file table with ``geaflow.dsl.window.size = n`` is read n rows per window;
the sink's split line marks the end of each window's output, so tests read
what each window emitted.
"""

from __future__ import annotations

import socket
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import SPLIT, windows_of, write


def sink(name: str, columns: str, path: str) -> str:
    return (
        f"CREATE TABLE {name} ({columns}) WITH (type='file', geaflow.dsl.file.path='{path}', "
        f"geaflow.dsl.table.sink.split.line='{SPLIT}');"
    )


def test_rows_flow_through_in_windows(session, tmp_path):
    write(tmp_path / "src.txt", "".join(f"{i},{i * 10}\n" for i in range(1, 8)))
    session.execute(
        "CREATE TABLE src (id bigint, v int) WITH (type='file', geaflow.dsl.file.path='src.txt', "
        "geaflow.dsl.window.size = 3);"
        + sink("out", "id bigint, v int", "out.txt")
        + "INSERT INTO out SELECT id, v FROM src WHERE id <> 5;"
    )
    assert windows_of(tmp_path / "out.txt") == [
        ["1,10", "2,20", "3,30"],
        ["4,40", "6,60"],
        ["7,70"],
    ]


def test_aggregates_emit_touched_groups_with_running_values(session, tmp_path):
    write(tmp_path / "src.txt", "a,1\nb,5\na,2\nc,7\nb,1\n")
    session.execute(
        "CREATE TABLE src (k varchar, v int) WITH (type='file', geaflow.dsl.file.path='src.txt', "
        "geaflow.dsl.window.size = 2);"
        + sink("per_key", "k varchar, total bigint, n bigint", "per_key.txt")
        + sink("overall", "m int, n bigint", "overall.txt")
        + "INSERT INTO per_key SELECT k, sum(v), count(*) FROM src GROUP BY k;"
        + "INSERT INTO overall SELECT max(v), count(*) FROM src;"
    )
    per_key = [sorted(w) for w in windows_of(tmp_path / "per_key.txt")]
    # Window 1 touches a and b; window 2 touches a and c; window 3 touches b.
    assert per_key == [["a,1,1", "b,5,1"], ["a,3,2", "c,7,1"], ["b,6,2"]]
    assert windows_of(tmp_path / "overall.txt") == [["5,2"], ["7,4"], ["7,5"]]


GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double)
) WITH (storeType='memory');
"""

EDGES = [(1, 2), (2, 3), (3, 1), (2, 4), (4, 5), (5, 2), (1, 4), (3, 5), (5, 1)]


def test_match_on_a_growing_graph_equals_a_full_rematch_after_every_window(
    session, spark, tmp_path
):
    write(tmp_path / "people.txt", "".join(f"{i},p{i}\n" for i in range(1, 6)))
    write(tmp_path / "edges.txt", "".join(f"{s},{t},0.5\n" for s, t in EDGES))
    query = (
        "MATCH (a:person)-[:knows]->(b)-[:knows]->(c) WHERE a.id <> c.id RETURN a.id, b.id, c.id"
    )
    session.execute(
        "CREATE TABLE people (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='people.txt');"
        "CREATE TABLE edges (s bigint, t bigint, w double) WITH (type='file', "
        "geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = 2);"
        + GRAPH
        + sink("paths", "a bigint, b bigint, c bigint", "paths.txt")
        + "USE GRAPH g;"
        "INSERT INTO g.person SELECT id, name FROM people;"
        "INSERT INTO g.knows SELECT s, t, w FROM edges;"
        f"INSERT INTO paths {query};"
    )
    windows = windows_of(tmp_path / "paths.txt")
    assert len(windows) == 5
    from geaflow_sql import Session

    emitted: Counter[str] = Counter()
    for i, chunk in enumerate(windows):
        emitted.update(chunk)
        # The same query, run as a batch on the graph after window i.
        prefix = tmp_path / f"prefix{i}.txt"
        write(prefix, "".join(f"{s},{t},0.5\n" for s, t in EDGES[: 2 * (i + 1)]))
        batch = Session(spark=spark, base_dir=str(tmp_path))
        batch.execute(
            f"CREATE TABLE e (s bigint, t bigint, w double) WITH (type='file', geaflow.dsl.file.path='{prefix.name}');"
            "CREATE TABLE people (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='people.txt');"
            + GRAPH
            + "USE GRAPH g; INSERT INTO g.person SELECT id, name FROM people;"
            "INSERT INTO g.knows SELECT s, t, w FROM e;"
        )
        full = Counter(",".join(str(v) for v in row) for row in batch.sql(query).collect())
        assert emitted == full, f"after window {i}"


class LineServer:
    """A real TCP server that sends lines to the first client, then closes."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            for line in self.lines:
                conn.sendall((line + "\n").encode())
        self.sock.close()


def test_socket_source_streams_rows_in_windows(session, tmp_path):
    server = LineServer([f"{k},{v}" for k, v in [("x", 1), ("y", 2), ("x", 3), ("z", 4), ("x", 5)]])
    session.execute(
        f"CREATE TABLE live (k varchar, v int) WITH (type='socket', geaflow.dsl.socket.host='127.0.0.1', "
        f"geaflow.dsl.socket.port={server.port}, geaflow.dsl.window.size = 2);"
        + sink("counts", "k varchar, total bigint", "counts.txt")
        + "INSERT INTO counts SELECT k, sum(v) FROM live GROUP BY k;"
    )
    per_window = [sorted(w) for w in windows_of(tmp_path / "counts.txt")]
    assert per_window == [["x,1", "y,2"], ["x,4", "z,4"], ["x,9"]]
    server.thread.join(5)


STREAM_JOB = """
CREATE TABLE live (k bigint, v int) WITH (type='socket', geaflow.dsl.socket.host='127.0.0.1',
  geaflow.dsl.socket.port={port}, geaflow.dsl.window.size = 3);
CREATE GRAPH g (Vertex n (id bigint ID), Edge e (s bigint SOURCE ID, t bigint DESTINATION ID))
  WITH (storeType='memory');
USE GRAPH g;
{sinks}
INSERT INTO keys SELECT k FROM live UNION SELECT v FROM live WHERE v > 2;
INSERT INTO pairs SELECT DISTINCT k, v % 2 FROM live;
INSERT INTO sums SELECT k, count(*), sum(v) FROM live GROUP BY k;
INSERT INTO g.n SELECT k FROM live UNION SELECT v FROM live;
INSERT INTO g.e SELECT k, v FROM live;
INSERT INTO paths MATCH (a:n)-[:e]->(b:n)-[:e]->(c:n) RETURN a.id, b.id, c.id;
"""

STREAM_SINKS = {
    "keys": "k bigint",
    "pairs": "k bigint, odd int",
    "sums": "k bigint, n bigint, s bigint",
    "paths": "a bigint, b bigint, c bigint",
}


@pytest.mark.parametrize("seed", [0, 1])
def test_a_sockets_windows_run_on_the_driver_after_one_parse_as_on_spark(spark, tmp_path, seed):
    """A stream's lines are parsed once a window (one Spark job) and held on
    the driver: its UNIONs and DISTINCTs (the rows no earlier window had),
    GROUP BYs, graph writes and MATCH then run there, and every window
    writes what the same job writes on Spark."""
    import random
    from contextlib import nullcontext

    from geaflow_sql import Session
    from tests.conftest import jobs_per_window

    rng = random.Random(seed)
    lines = [f"{rng.randrange(6)},{rng.randrange(6)}" for _ in range(rng.randint(7, 14))]
    if seed:
        lines.insert(4, "")  # a blank line is no row
    jobs_per_round: list[int] = []
    outputs = {}
    for engine in ("auto", "distributed"):
        folder = tmp_path / engine
        folder.mkdir()
        server = LineServer(lines)
        sinks = "".join(sink(name, cols, f"{name}.txt") for name, cols in STREAM_SINKS.items())
        session = Session(
            spark=spark, base_dir=str(folder), conf={"geaflow.dsl.query.engine": engine}
        )
        with jobs_per_window(spark) if engine == "auto" else nullcontext([]) as counts:
            session.execute(STREAM_JOB.format(port=server.port, sinks=sinks))
        jobs_per_round += counts
        server.thread.join(5)
        outputs[engine] = {
            name: [sorted(w) for w in windows_of(folder / f"{name}.txt")] for name in STREAM_SINKS
        }
    assert outputs["auto"] == outputs["distributed"], lines
    assert len(jobs_per_round) == len(outputs["auto"]["sums"]) >= 3
    assert jobs_per_round == [1] * len(jobs_per_round)
    # Each key once, in the first window that has it.
    seen: list[str] = [k for w in outputs["auto"]["keys"] for k in w]
    rows = [ln.split(",") for ln in lines if ln]
    assert sorted(seen) == sorted({r[0] for r in rows} | {r[1] for r in rows if int(r[1]) > 2})


def test_a_bad_line_of_a_stream_fails_its_window_naming_the_line(session, tmp_path):
    from geaflow_sql import GeaflowError

    server = LineServer(["1,2", "3,4", "5,x", "7,8"])
    script = (
        "CREATE TABLE live (k bigint, v int) WITH (type='socket', "
        f"geaflow.dsl.socket.host='127.0.0.1', geaflow.dsl.socket.port={server.port}, "
        "geaflow.dsl.window.size = 2);\n"
        + sink("out", "k bigint", "out.txt")
        + "\nINSERT INTO out SELECT DISTINCT k FROM live;"
    )
    with pytest.raises(GeaflowError) as info:
        session.execute(script)
    message = str(info.value)
    assert "line 1" in message and "5,x" in message and "live" in message, message
    assert info.value.line == 3, message  # the INSERT's line in the script
    # The window before the bad line was written whole.
    assert [sorted(w) for w in windows_of(tmp_path / "out.txt")][:1] == [["1", "3"]]
    server.thread.join(5)


def test_a_window_size_on_the_job_applies_to_tables_without_their_own(session, tmp_path):
    write(tmp_path / "src.txt", "1\n2\n3\n4\n")
    write(tmp_path / "all.txt", "10\n")
    session.execute(
        "SET geaflow.dsl.window.size = 2;"
        "CREATE TABLE src (v int) WITH (type='file', geaflow.dsl.file.path='src.txt');"
        "CREATE TABLE once (v int) WITH (type='file', geaflow.dsl.file.path='all.txt', geaflow.dsl.window.size = -1);"
        + sink("out", "v int", "out.txt")
        + "INSERT INTO out SELECT v FROM src UNION ALL SELECT v FROM once;"
    )
    # A -1 table delivers everything in the first window and nothing after.
    assert [sorted(w) for w in windows_of(tmp_path / "out.txt")] == [["1", "10", "2"], ["3", "4"]]


@pytest.mark.parametrize("bad", ["'many'", "'1.5'"])
def test_a_bad_window_size_is_a_clear_error(session, tmp_path, bad):
    from geaflow_sql import GeaflowError

    write(tmp_path / "src.txt", "1\n")
    with pytest.raises(GeaflowError) as info:
        session.execute(
            f"CREATE TABLE src (v int) WITH (type='file', geaflow.dsl.file.path='src.txt', "
            f"geaflow.dsl.window.size = {bad});"
            + sink("out", "v int", "out.txt")
            + "INSERT INTO out SELECT v FROM src;"
        )
    assert "geaflow.dsl.window.size" in str(info.value)


LOAD = """
CREATE TABLE v_src (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='v.txt');
CREATE TABLE e_src (s bigint, d bigint, w double) WITH (type='file', geaflow.dsl.file.path='e.txt');
CREATE TABLE copy_out (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='copy.txt');
CREATE GRAPH g (
  VERTEX person (id bigint ID, name varchar),
  EDGE knows (s bigint SOURCE ID, d bigint DESTINATION ID, w double)
) WITH (storeType='memory');
INSERT INTO g.person SELECT id, upper(name) FROM v_src WHERE id < 100;
INSERT INTO g.knows SELECT s, d, w * 2 FROM e_src;
INSERT INTO copy_out SELECT id, name FROM v_src;
"""


def _load(spark, folder: Path, extra: str = "") -> tuple[list, int, str]:
    from geaflow_sql import Session

    s = Session(spark=spark, base_dir=str(folder))
    s.execute("SET geaflow.dsl.window.size = 1;" + extra + LOAD)
    rows = s.sql(
        "USE GRAPH g; MATCH (a:person)-[e:knows]->(b:person) RETURN a.id, a.name, e.w, b.id, b.name"
    ).collect()
    graph = s.catalog.graph(("g",))
    versions = s.stores.store(None, graph).version_number()  # the store exists: no context needed
    return sorted(rows), versions, (folder / "copy.txt").read_text(encoding="utf-8")


def test_windows_no_statement_can_tell_apart_run_as_one_round(spark, tmp_path):
    """Loading a graph with window.size = 1 is one round, with the same graph and output."""
    for d in ("fused", "windowed"):
        write(tmp_path / d / "v.txt", "1,ann\n2,bob\n3,cid\n2,bea\n500,zed\n")
        write(tmp_path / d / "e.txt", "1,2,0.5\n2,3,1.5\n1,2,0.25\n3,1,2.0\n")
    fused = _load(spark, tmp_path / "fused")
    # A job checkpoint asks for a durable point after every window: no fusion.
    windowed = _load(spark, tmp_path / "windowed", "SET geaflow.dsl.checkpoint.dir = 'ckpt';")
    assert fused[0] == windowed[0]
    # Vertex 2 was written twice; the later row (file order) wins in both runs.
    assert {(r[0], r[1]) for r in fused[0]} >= {(2, "BEA")}
    assert "BOB" not in {r[1] for r in fused[0]} | {r[4] for r in fused[0]}
    assert len(fused[0]) == 4  # every edge insert is kept
    assert fused[2] == windowed[2] == "1,ann\n2,bob\n3,cid\n2,bea\n500,zed\n"
    # One write per insert statement, against one per window per statement.
    assert fused[1] < windowed[1]


@pytest.mark.parametrize("files", [1, 3])
def test_a_job_read_as_one_window_keeps_file_and_line_order_on_spark(spark, tmp_path, files):
    """A job whose windows are fused reads a one-file text table through its
    kept scan (nothing numbered: Spark keeps one file's splits in offset
    order), and numbers the rows of a folder of files; either way its sink
    gets the rows in file-name then line order, also from tiny splits."""
    from geaflow_sql import Session
    from runtime.connectors.file import FileConnector

    folder = tmp_path / "src"
    folder.mkdir()
    expected = []
    for name, n in (("a.txt", 37), ("b.txt", 120), ("c.txt", 5))[:files]:
        rows = [f"{name[0]}{k:03d},{k}" for k in range(n)]
        write(folder / name, "\n".join(rows[:10]) + "\n\n" + "\r\n".join(rows[10:]) + "\n")
        expected += rows
    path = "src" if files > 1 else "src/a.txt"
    numbered = []
    real = FileConnector.numbered_rows

    def counted(self, ctx, req):
        numbered.append(req.table.name)
        return real(self, ctx, req)

    session = Session(
        spark=spark, base_dir=str(tmp_path), conf={"geaflow.dsl.query.engine": "distributed"}
    )
    spark.conf.set("spark.sql.files.maxPartitionBytes", "97")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    FileConnector.numbered_rows = counted  # type: ignore[method-assign]
    try:
        session.execute(
            "CREATE TABLE src (k varchar, v int) WITH (type='file', "
            f"geaflow.dsl.file.path='{path}', geaflow.dsl.window.size = 1);"
            "CREATE TABLE out (k varchar, v int) WITH (type='file', "
            "geaflow.dsl.file.path='out.txt');"
            "INSERT INTO out SELECT k, v FROM src;"
        )
    finally:
        FileConnector.numbered_rows = real  # type: ignore[method-assign]
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    assert (tmp_path / "out.txt").read_text().splitlines() == expected
    assert numbered == ([] if files == 1 else ["src"])


def test_windows_follow_file_and_line_order_when_files_are_read_in_many_splits(session, tmp_path):
    # Lines are read by Spark's splitting reader; tiny splits scatter each
    # file over several tasks (packed by size, not by name), and the windows
    # must still take the rows in file-name then line order.
    folder = tmp_path / "src"
    folder.mkdir()
    expected = []
    for name, n in (("a.txt", 37), ("b.txt", 120), ("c.txt", 5)):
        rows = [f"{name[0]}{k:03d},{k}" for k in range(n)]
        write(folder / name, "\n".join(rows[:10]) + "\n\n" + "\r\n".join(rows[10:]) + "\n")
        expected += rows
    spark = session.spark
    spark.conf.set("spark.sql.files.maxPartitionBytes", "97")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    try:
        session.execute(
            "CREATE TABLE src (k varchar, v int) WITH (type='file', "
            "geaflow.dsl.file.path='src', geaflow.dsl.window.size = 25);"
            + sink("out", "k varchar, v int", "out.txt")
            + "INSERT INTO out SELECT k, v FROM src;"
        )
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    windows = windows_of(tmp_path / "out.txt")
    assert [len(w) for w in windows] == [25] * 6 + [12]
    assert [line for w in windows for line in w] == expected
