"""What each SQL operator emits per window of a stream, against a model of
GeaFlow's stream operators (runtime/streaming/emissions.py has the rules and
the GeaFlow classes they come from).

Generated tables (NULL keys, repeated rows) are read 1 row, 2 rows or all
rows (-1) per window; every query of the job writes a file sink whose split
line closes each window, and each window's lines are compared with the
model's rows for that window:

* row-wise operators and UNION ALL: the window's rows;
* DISTINCT, GROUP BY without aggregates, UNION: rows not seen in any earlier
  window (NULLs equal);
* GROUP BY with aggregates: the groups the window touched, values over all
  rows so far;
* ORDER BY ... LIMIT: each window sorted and cut on its own;
* joins: the joined rows new in this window (a stream with a fixed table:
  the window's rows joined with the table).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import SPLIT, windows_of, write

# Keys are numbers: a text field reads NULL as `null` only for non-string types.
KEYS = [1, 2, 3, None]


def sorted_windows(path: Path, count: int) -> list[list[str]]:
    """``count`` windows of the sink's output, each sorted."""
    chunks = [sorted(c) for c in windows_of(path)][:count]
    return chunks + [[] for _ in range(count - len(chunks))]


def text(v: object) -> str:
    return "null" if v is None else str(v)


def line(*values: object) -> str:
    return ",".join(text(v) for v in values)


def split(rows: list, size: int, count: int) -> list[list]:
    parts = [rows] if size == -1 else [rows[i : i + size] for i in range(0, len(rows), size)]
    return parts + [[] for _ in range(count - len(parts))]


class Model:
    """GeaFlow's per-window emissions, computed in Python."""

    def __init__(self, src: list, src2: list, size: int) -> None:
        count = 1 if size == -1 else max(-(-len(src) // size), -(-len(src2) // size))
        self.count = count
        self.w1 = split(src, size, count)
        self.w2 = split(src2, size, count)

    def per_window(self, f) -> list[list[str]]:
        return [sorted(f(i)) for i in range(self.count)]

    def first_seen(self, rows_of) -> list[list[str]]:
        seen: set = set()
        out = []
        for i in range(self.count):
            new = sorted(set(rows_of(i)) - seen)
            seen |= set(new)
            out.append(new)
        return out

    def so_far(self, windows: list[list], i: int) -> list:
        return [r for w in windows[: i + 1] for r in w]

    def touched(self, i: int) -> list[str]:
        keys = {k for k, _ in self.w1[i]}
        rows = self.so_far(self.w1, i)
        return [
            line(k, sum(v for kk, v in rows if kk == k), sum(1 for kk, _ in rows if kk == k))
            for k in keys
        ]

    def joined(self, left: list, right: list) -> Counter:
        return Counter(
            line(k, v, w) for k, v in left for k2, w in right if k is not None and k == k2
        )

    def stream_join(self, i: int) -> list[str]:
        now = self.joined(self.so_far(self.w1, i), self.so_far(self.w2, i))
        before = (
            self.joined(self.so_far(self.w1, i - 1), self.so_far(self.w2, i - 1))
            if i
            else Counter()
        )
        return list((now - before).elements())


DIM = [(1, "alpha"), (2, "beta"), (4, "delta")]


def generated(seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    src = [(rng.choice(KEYS), rng.randint(0, 4)) for _ in range(9)]
    src2 = [(rng.choice(KEYS), rng.randint(10, 14)) for _ in range(7)]
    return src, src2


QUERIES = {
    # name: (sink columns, query)
    "distinct": ("k bigint, v int", "SELECT DISTINCT k, v FROM src"),
    "group_keys": ("k bigint", "SELECT k FROM src GROUP BY k"),
    "aggregate": (
        "k bigint, s bigint, n bigint",
        "SELECT k, sum(v), count(*) FROM src GROUP BY k",
    ),
    "union": ("k bigint", "SELECT k FROM src UNION SELECT k FROM src2"),
    "union_all": ("k bigint", "SELECT k FROM src UNION ALL SELECT k FROM src2"),
    "top": (
        "k bigint, v int",
        "SELECT k, v FROM src WHERE k IS NOT NULL ORDER BY v DESC, k LIMIT 2",
    ),
    "lookup": ("k bigint, name varchar", "SELECT s.k, d.name FROM src s JOIN dim d ON s.k = d.k"),
    "stream_join": (
        "k bigint, v int, w int",
        "SELECT s.k, s.v, t.w FROM src s JOIN src2 t ON s.k = t.k",
    ),
    "fixed_left": (
        "k bigint, name varchar, v int",
        "SELECT d.k, d.name, s.v FROM dim d LEFT JOIN src s ON d.k = s.k",
    ),
}


def expected(model: Model, name: str) -> list[list[str]]:
    w1, w2 = model.w1, model.w2
    if name == "distinct":
        return model.first_seen(lambda i: [line(k, v) for k, v in w1[i]])
    if name in ("group_keys",):
        return model.first_seen(lambda i: [line(k) for k, _ in w1[i]])
    if name == "aggregate":
        return model.per_window(model.touched)
    if name == "union":
        return model.first_seen(lambda i: [line(k) for k, _ in w1[i] + w2[i]])
    if name == "union_all":
        return model.per_window(lambda i: [line(k) for k, _ in w1[i] + w2[i]])
    if name == "top":

        def top(i: int) -> list[str]:
            ranked = sorted((r for r in w1[i] if r[0] is not None), key=lambda r: (-r[1], r[0]))
            return [line(k, v) for k, v in ranked[:2]]

        return model.per_window(top)
    if name == "lookup":
        names = dict(DIM)
        return model.per_window(lambda i: [line(k, names[k]) for k, _ in w1[i] if k in names])
    if name == "stream_join":
        return model.per_window(model.stream_join)
    assert name == "fixed_left"

    def left(rows: list) -> Counter:
        out: Counter = Counter()
        for k, name_ in DIM:
            matches = [v for kk, v in rows if kk == k]
            for v in matches or [None]:
                out[line(k, name_, v)] += 1
        return out

    def new_rows(i: int) -> list[str]:
        before = left(model.so_far(w1, i - 1)) if i else Counter()
        return list((left(model.so_far(w1, i)) - before).elements())

    return model.per_window(new_rows)


@pytest.mark.parametrize("size", [1, 2, -1])
@pytest.mark.parametrize("seed", [1, 2])
def test_each_operator_emits_per_window_as_geaflow_does(session, tmp_path, size, seed):
    src, src2 = generated(seed)
    write(tmp_path / "src.txt", "".join(line(k, v) + "\n" for k, v in src))
    write(tmp_path / "src2.txt", "".join(line(k, w) + "\n" for k, w in src2))
    write(tmp_path / "dim.txt", "".join(line(k, n) + "\n" for k, n in DIM))
    script = [
        f"CREATE TABLE src (k bigint, v int) WITH (type='file', "
        f"geaflow.dsl.file.path='src.txt', geaflow.dsl.window.size = {size});",
        f"CREATE TABLE src2 (k bigint, w int) WITH (type='file', "
        f"geaflow.dsl.file.path='src2.txt', geaflow.dsl.window.size = {size});",
        "CREATE TABLE dim (k bigint, name varchar) WITH (type='file', "
        "geaflow.dsl.file.path='dim.txt', geaflow.dsl.window.size = -1);",
    ]
    for name, (columns, query) in QUERIES.items():
        script.append(
            f"CREATE TABLE out_{name} ({columns}) WITH (type='file', "
            f"geaflow.dsl.file.path='out_{name}.txt', "
            f"geaflow.dsl.table.sink.split.line='{SPLIT}');"
            f"INSERT INTO out_{name} {query};"
        )
    session.execute("\n".join(script))
    model = Model(src, src2, size)
    for name in QUERIES:
        got = sorted_windows(tmp_path / f"out_{name}.txt", model.count)
        assert got == expected(model, name), (name, src, src2)


# Statements whose DISTINCT or GROUP BY keeps its state between windows
# (runtime/streaming/kept_state.py), and some that must not (over a join,
# an aggregate of an aggregate, a float sum, AVG).
KEPT = {
    "distinct_pairs": ("k bigint, v int", "SELECT DISTINCT k, v FROM src WHERE v <> 3"),
    "distinct_expr": ("k bigint", "SELECT DISTINCT k + v FROM src"),
    "groups": (
        "k bigint, n bigint, c bigint, s bigint, lo int, hi int",
        "SELECT k, count(*), count(v), sum(v), min(v), max(v) FROM src GROUP BY k",
    ),
    "two_keys": (
        "k bigint, b boolean, n bigint, s bigint",
        "SELECT k, v > 1, count(*), sum(v * 2) FROM src WHERE k IS NULL OR k <> 2 GROUP BY k, v > 1",
    ),
    "union_keys": ("k bigint", "SELECT k FROM src UNION SELECT k FROM src2"),
    "union_groups": (
        "k bigint, n bigint, hi int",
        "SELECT k, count(*), max(v) FROM (SELECT k, v FROM src UNION ALL SELECT k, w FROM src2) GROUP BY k",
    ),
    "float_sum": ("k bigint, s double", "SELECT k, sum(v / 4.0) FROM src GROUP BY k"),
    "average": ("k bigint, a double", "SELECT k, avg(v) FROM src GROUP BY k"),
    "over_join": (
        "k bigint, n bigint",
        "SELECT s.k, count(*) FROM src s JOIN src2 t ON s.k = t.k GROUP BY s.k",
    ),
    "nested": (
        "n bigint, m bigint",
        "SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM src GROUP BY k) GROUP BY n",
    ),
}


def windowed_job(queries: dict, size: int) -> str:
    """Tables src and src2 read ``size`` rows a window, and each query of
    ``queries`` written to its own windowed file sink."""
    script = [
        f"CREATE TABLE src (k bigint, v int) WITH (type='file', "
        f"geaflow.dsl.file.path='src.txt', geaflow.dsl.window.size = {size});",
        f"CREATE TABLE src2 (k bigint, w int) WITH (type='file', "
        f"geaflow.dsl.file.path='src2.txt', geaflow.dsl.window.size = {size});",
    ]
    for name, (columns, query) in queries.items():
        script.append(
            f"CREATE TABLE out_{name} ({columns}) WITH (type='file', "
            f"geaflow.dsl.file.path='out_{name}.txt', "
            f"geaflow.dsl.table.sink.split.line='{SPLIT}');"
            f"INSERT INTO out_{name} {query};"
        )
    return "\n".join(script)


def run_windowed(
    spark, folder, src: list, src2: list, queries: dict, size: int, kept: bool, engine: str
) -> dict[str, list]:
    """Run ``windowed_job(queries, size)`` over the rows ``src`` and ``src2``
    in ``folder``, with the state kept or not, on ``engine``: each query's
    windows, each sorted."""
    from geaflow_sql import Session

    write(folder / "src.txt", "".join(line(k, v) + "\n" for k, v in src))
    write(folder / "src2.txt", "".join(line(k, w) + "\n" for k, w in src2))
    session = Session(
        spark=spark,
        base_dir=str(folder),
        conf={
            "geaflow.dsl.stream.operator.state": str(kept).lower(),
            "geaflow.dsl.query.engine": engine,
        },
    )
    session.execute(windowed_job(queries, size))
    return {name: [sorted(w) for w in windows_of(folder / f"out_{name}.txt")] for name in queries}


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_operators_keeping_state_emit_what_recomputing_emits(spark, tmp_path, seed):
    """Generated streams (NULL keys, repeats, empty windows of one side):
    every window's output is the same with the state kept between windows
    and computed over every row so far."""

    rng = random.Random(seed)
    size = rng.choice([1, 2, 3])
    src = [(rng.choice(KEYS), rng.randint(0, 4)) for _ in range(rng.randint(6, 14))]
    src2 = [(rng.choice(KEYS), rng.randint(0, 9)) for _ in range(rng.randint(2, 8))]
    outputs = {}
    # On Spark, with the state kept and without; and on the driver where the
    # local engine runs a window (its GROUP BYs recompute over every row).
    for kept, engine in ((True, "distributed"), (False, "distributed"), (True, "auto")):
        outputs[kept, engine] = run_windowed(
            spark, tmp_path / f"{kept}-{engine}", src, src2, KEPT, size, kept, engine
        )
    for name in KEPT:
        spark_kept = outputs[True, "distributed"][name]
        assert spark_kept == outputs[False, "distributed"][name], (name, size, src, src2)
        assert spark_kept == outputs[True, "auto"][name], (name, size, src, src2)
    # The aggregate's last window, against the rows themselves.
    totals = {}
    for k, v in src:
        n, s = totals.get(k, (0, 0))
        totals[k] = (n + 1, s + v)
    last = {}
    for w in outputs[True, "distributed"]["groups"]:
        for row in w:
            last[row.split(",")[0]] = row
    assert {k: (int(r.split(",")[1]), int(r.split(",")[3])) for k, r in last.items()} == {
        text(k): t for k, t in totals.items()
    }


def test_which_operators_keep_their_state(session):
    """The rule: an input of row-wise operators, and mergeable aggregates."""
    from planner.logical import Aggregate, Union, walk
    from runtime.env import Env
    from runtime.reads import Reads, WindowRound
    from runtime.streaming.kept_state import keeps_state

    session.execute(
        "CREATE TABLE src (k bigint, v int) WITH (type='file', geaflow.dsl.file.path='src.txt');"
        "CREATE TABLE src2 (k bigint, w int) WITH (type='file', geaflow.dsl.file.path='src2.txt');"
    )
    expect = {
        "distinct_pairs": True,
        "distinct_expr": True,
        "groups": True,
        "two_keys": True,
        "union_keys": True,
        "union_groups": True,
        "float_sum": False,
        "average": False,
        "over_join": False,
        "nested": False,
    }
    from runtime.context import RuntimeContext

    ctx = RuntimeContext(
        spark=None, config=session.config, catalog=session.catalog, stores=session.stores
    )
    env = Env(ctx, Reads(window=WindowRound(0, {})))
    from tests.golden_plans import plan_of

    for name, (_, query) in KEPT.items():
        plan = plan_of(query, session.catalog)
        top = [
            n
            for n in walk(plan)
            if (isinstance(n, Aggregate) and not n.internal) or (isinstance(n, Union) and not n.all)
        ][0]
        assert keeps_state(env, top) is expect[name], name


# GROUP BYs of a stream the local engine runs on the driver, window by
# window: the groups a window touched, over every row so far; DISTINCTs and
# UNIONs: the rows no earlier window had; joins of two streams: the joined
# rows new in the window (emissions.py).
WINDOW_GROUPS = {
    "ints": (
        "k bigint, s bigint, n bigint, lo int, hi int",
        "SELECT k, sum(v), count(*), min(v), max(v) FROM src GROUP BY k",
    ),
    "doubles": (
        "k bigint, s double, a double",
        "SELECT k, sum(v * 0.3), avg(v * 0.1 + 1e16) FROM src GROUP BY k",
    ),
    "whole": ("n bigint, s bigint", "SELECT count(*), sum(v) FROM src"),
    "two_keys": (
        "k bigint, b boolean, n bigint",
        "SELECT k, v > 1, count(v) FROM src WHERE v <> 0 GROUP BY k, v > 1",
    ),
    "having": (
        "k bigint, n bigint",
        "SELECT k, count(*) FROM src GROUP BY k HAVING count(*) > 1",
    ),
    "both_streams": (
        "k bigint, n bigint, hi int",
        "SELECT k, count(*), max(v) FROM (SELECT k, v FROM src UNION ALL SELECT k, w FROM src2) "
        "GROUP BY k",
    ),
    "nested": (
        "n bigint, m bigint",
        "SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM src GROUP BY k) GROUP BY n",
    ),
    "distinct_pairs": ("k bigint, v int", "SELECT DISTINCT k, v FROM src WHERE v <> 3"),
    "distinct_expr": ("k bigint", "SELECT DISTINCT k + v FROM src"),
    "keys_only": ("k bigint", "SELECT k FROM src GROUP BY k"),
    "union_keys": ("k bigint", "SELECT k FROM src UNION SELECT k FROM src2"),
    "union_of_distinct": (
        "k bigint",
        "SELECT k FROM (SELECT DISTINCT k, v FROM src) UNION SELECT w FROM src2",
    ),
    "count_distinct": ("n bigint", "SELECT count(*) FROM (SELECT DISTINCT k FROM src)"),
    "stream_join": (
        "k bigint, v int, w int",
        "SELECT s.k, s.v, t.w FROM src s JOIN src2 t ON s.k = t.k",
    ),
    "left_stream_join": (
        "k bigint, v int, w int",
        "SELECT s.k, s.v, t.w FROM src s LEFT JOIN src2 t ON s.k = t.k AND t.w > 2",
    ),
    "joined_groups": (
        "k bigint, n bigint",
        "SELECT s.k, count(*) FROM src s JOIN src2 t ON s.k = t.k GROUP BY s.k",
    ),
}


@pytest.mark.parametrize("seed", [6, 7])
def test_a_streams_stateful_operators_run_on_the_driver_as_on_spark(spark, tmp_path, seed):
    """Generated streams held on the driver: every window of these GROUP BYs,
    DISTINCTs, UNIONs and joins runs with no Spark job, and writes what Spark writes (values compared as
    text, so doubles to the last bit)."""
    from contextlib import nullcontext

    from geaflow_sql import Session
    from tests.conftest import jobs_per_window

    rng = random.Random(seed)
    size = rng.choice([1, 2, 3])
    src = [(rng.choice(KEYS), rng.randint(0, 4)) for _ in range(rng.randint(5, 10))]
    src2 = [(rng.choice(KEYS), rng.randint(0, 9)) for _ in range(rng.randint(1, 6))]
    script = windowed_job(WINDOW_GROUPS, size)
    jobs_per_round: list[int] = []
    outputs = {}
    for engine in ("auto", "distributed"):
        folder = tmp_path / engine
        write(folder / "src.txt", "".join(line(k, v) + "\n" for k, v in src))
        write(folder / "src2.txt", "".join(line(k, w) + "\n" for k, w in src2))
        session = Session(
            spark=spark, base_dir=str(folder), conf={"geaflow.dsl.query.engine": engine}
        )
        with jobs_per_window(spark) if engine == "auto" else nullcontext([]) as counts:
            session.execute(script)
        jobs_per_round += counts
        outputs[engine] = {
            name: [sorted(w) for w in windows_of(folder / f"out_{name}.txt")]
            for name in WINDOW_GROUPS
        }
    for name in WINDOW_GROUPS:
        assert outputs["auto"][name] == outputs["distributed"][name], (name, size, src, src2)
    rounds = -(-max(len(src), len(src2)) // size)
    assert jobs_per_round == [0] * rounds
    # The last window's totals, against the rows themselves.
    last: dict[str, str] = {}
    for window in outputs["auto"]["ints"]:
        for row in window:
            last[row.split(",")[0]] = row
    assert {k: r.split(",")[1:3] for k, r in last.items()} == {
        text(k): [str(sum(v for kk, v in src if kk == k)), str(sum(1 for kk, _ in src if kk == k))]
        for k in {k for k, _ in src}
    }


def test_kept_state_merged_on_the_driver_is_written_from_there(spark, tmp_path):
    """On Spark with the state kept: a window of a GROUP BY, DISTINCT or UNION
    whose state is merged on the driver runs one Spark job (for its own rows);
    the rows it emits, made on the driver, reach the file sink without a
    second job (``collect_lines``); and it writes what the computation over
    every row so far writes."""
    from tests.conftest import jobs_per_window

    kept = {
        name: KEPT[name]
        for name in ("distinct_pairs", "distinct_expr", "groups", "two_keys", "union_keys")
    }
    rng = random.Random(11)
    src = [(rng.choice(KEYS), rng.randint(0, 4)) for _ in range(6)]
    src2 = [(rng.choice(KEYS), rng.randint(0, 9)) for _ in range(6)]
    outputs, counts = {}, {}
    for state in (True, False):
        with jobs_per_window(spark) as counts[state]:
            outputs[state] = run_windowed(
                spark, tmp_path / str(state), src, src2, kept, 2, state, "distributed"
            )
    assert outputs[True] == outputs[False]
    assert counts[True] == [len(kept)] * 3, counts
