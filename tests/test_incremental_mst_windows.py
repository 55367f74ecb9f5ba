"""``IncMST`` in windowed jobs: each window emits only its new rows.

A random graph streams in windows (edges often before their vertices, an id
that never becomes a vertex, self-loops, parallel edges, a vertex with more
than 50 OUT edges spread over several windows, repeated weights with 0.0 and
-0.0 among them).  After every window the rows emitted so far must be the
batch result on the graph as it then is, restated by the literal simulation
of GeaFlow's vertex program (``simulate_inc_mst``), and no row may come twice.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path
from typing import Any

import pytest

from geaflow_sql.core.errors import ExecutionError
from tests.conftest import write
from tests.test_incremental_algorithms import NEVER, SPLIT, window_count, windows_of
from tests.test_incremental_mst_kcore import Edge, java_bits, simulate_inc_mst

WEIGHTS = [0.1, 0.5, 0.5, 1.0, 0.0, -0.0, 2.5]
CALL = "CALL IncMST() YIELD (srcId, targetId, weight) RETURN srcId, targetId, weight"
SIZES = (3, 16)  # vertices, edges per window


def weighted_stream(seed: int, n: int = 12, m: int = 50) -> tuple[list[int], list[Edge]]:
    """Vertex ids in arrival order and edges in arrival order.

    The last vertex is a hub with over 60 OUT edges, 60 of them to other
    vertices with weights of their own (so the cut after 50 shows); it
    arrives in the last vertex window, after most of its edges.
    """
    rng = random.Random(seed)
    vertices = rng.sample(range(1, 60), n)
    hub = vertices[-1]
    targets = [*vertices, NEVER]
    edges: list[Edge] = []
    for _ in range(m):
        src = rng.choice([*vertices, NEVER])
        dst = src if rng.random() < 0.1 else rng.choice(targets)
        edges.append((src, dst, rng.choice(WEIGHTS)))
    edges += rng.sample(edges, m // 5)  # parallel edges
    others = [v for v in vertices if v != hub]
    edges += [(hub, rng.choice(others), round(0.01 * (i + 1), 2)) for i in range(60)]
    rng.shuffle(edges)
    return vertices, edges


def run_mst_job(
    session: Any,
    tmp_path: Path,
    stream: tuple[list[int], list[Edge]],
    sizes: tuple[int, int],
    settings: str = "",
    store: str = "memory",
) -> list[list[str]]:
    vertices, edges = stream
    v_window, e_window = sizes
    write(tmp_path / "v.txt", "".join(f"{v}\n" for v in vertices))
    write(
        tmp_path / "e.txt",
        "".join(f"{s},{t},{'' if w is None else repr(w)}\n" for s, t, w in edges),
    )
    session.execute(
        settings + "CREATE GRAPH g (Vertex node (id bigint ID), "
        "Edge link (s bigint SOURCE ID, t bigint DESTINATION ID, w double)) "
        f"WITH (storeType='{store}');"
        "CREATE TABLE vs (id bigint) WITH (type='file', geaflow.dsl.file.path='v.txt', "
        f"geaflow.dsl.window.size = {v_window});"
        "CREATE TABLE es (s bigint, t bigint, w double) WITH (type='file', "
        f"geaflow.dsl.file.path='e.txt', geaflow.dsl.window.size = {e_window});"
        "CREATE TABLE out (src bigint, dst bigint, weight double) WITH (type='file', "
        f"geaflow.dsl.file.path='out.txt', geaflow.dsl.table.sink.split.line='{SPLIT}');"
        "USE GRAPH g;"
        "INSERT INTO g.node SELECT id FROM vs;"
        "INSERT INTO g.link SELECT s, t, w FROM es;"
        f"INSERT INTO out {CALL};"
    )
    return windows_of(tmp_path / "out.txt")


def parse(line: str) -> tuple[int, int, int]:
    src, dst, weight = line.split(",")
    return int(src), int(dst), java_bits(float(weight))


def expected_after(stream: tuple[list[int], list[Edge]], window: int) -> set[Any]:
    vertices, edges = stream
    v_window, e_window = SIZES
    return simulate_inc_mst(vertices[: v_window * (window + 1)], edges[: e_window * (window + 1)])


@pytest.mark.parametrize(
    ("seed", "store", "checkpointed"),
    [(2, "memory", True), (3, "rocksdb", False)],
)
def test_windows_emit_the_new_rows_of_the_batch_result(
    session, tmp_path, seed, store, checkpointed
):
    stream = weighted_stream(seed)
    settings = "SET geaflow.dsl.checkpoint.dir = 'checkpoint';" if checkpointed else ""
    windows = run_mst_job(session, tmp_path, stream, SIZES, settings=settings, store=store)
    assert len(windows) == window_count(*stream, *SIZES)
    emitted: set[Any] = set()
    for i, chunk in enumerate(windows):
        rows = [parse(line) for line in chunk]
        assert len(rows) == len(set(rows)), f"window {i} repeats a row"
        assert not emitted & set(rows), f"window {i} emits an earlier row again"
        emitted |= set(rows)
        assert emitted == expected_after(stream, i), f"window {i}"
    hub = stream[0][-1]
    assert 40 < sum(1 for v, _, _ in emitted if v == hub) <= 50
    assert any(chunk for chunk in windows[1:]), "later windows add rows"
    if checkpointed:
        assert checkpointed_rows(tmp_path / "checkpoint") == emitted


def checkpointed_rows(folder: Path) -> set[Any]:
    """The rows the last checkpoint's ``IncMST`` state lists (it must unpickle)."""
    from runtime.algorithms.library.inc_mst_windows import ProposalBook

    last = max(folder.glob("algorithms-*.pkl"))
    with open(last, "rb") as fh:
        states = pickle.load(fh)
    (book,) = [s["mst"] for s in states.values() if isinstance(s.get("mst"), ProposalBook)]
    return {(v, v, bits) for v, listed in book.rows.items() for bits in listed}


def test_one_window_gives_the_batch_rows(session, spark, tmp_path):
    from geaflow_sql import Session

    stream = weighted_stream(4)
    windows = run_mst_job(session, tmp_path, stream, (1000, 1000))
    batch = Session(spark=spark, base_dir=str(tmp_path))
    batch.execute(
        "CREATE GRAPH g (Vertex node (id bigint ID), "
        "Edge link (s bigint SOURCE ID, t bigint DESTINATION ID, w double)) "
        "WITH (storeType='memory');"
        "CREATE TABLE vs (id bigint) WITH (type='file', geaflow.dsl.file.path='v.txt');"
        "CREATE TABLE es (s bigint, t bigint, w double) WITH (type='file', "
        "geaflow.dsl.file.path='e.txt');"
        "USE GRAPH g; INSERT INTO g.node SELECT id FROM vs; INSERT INTO g.link SELECT s, t, w FROM es;"
    )
    rows = [(r[0], r[1], java_bits(r[2])) for r in batch.sql(CALL).collect()]
    assert len(windows) == 1
    assert sorted(parse(line) for line in windows[0]) == sorted(rows)
    assert set(rows) == simulate_inc_mst(*stream)


def test_no_rows_below_three_supersteps(session, tmp_path):
    stream = weighted_stream(5)
    settings = "SET geaflow.dsl.max.traversal = 2;"
    windows = run_mst_job(session, tmp_path, stream, SIZES, settings=settings)
    assert len(windows) == window_count(*stream, *SIZES)
    assert all(chunk == [] for chunk in windows)


def test_a_null_weight_fails_only_once_its_proposal_is_accepted(spark, tmp_path):
    from geaflow_sql import Session

    def job(folder: str, vertices: list[int], sizes: tuple[int, int]) -> list[list[str]]:
        session = Session(spark=spark, base_dir=str(tmp_path / folder))
        return run_mst_job(session, tmp_path / folder, (vertices, edges), sizes)

    # 1 -> 2 has no weight; it waits for vertex 2, which never arrives here.
    edges: list[Any] = [(1, 2, None), (1, 3, 0.5)]
    assert job("a", [1, 3], (1, 1)) == [[], ["1,1,0.5"]]
    # Here vertex 2 arrives in the second window and the proposal is accepted.
    with pytest.raises(ExecutionError, match="null"):
        job("b", [1, 3, 2], (2, 2))
