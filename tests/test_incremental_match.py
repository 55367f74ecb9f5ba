"""Incremental MATCH on a graph a windowed job writes (runtime/streaming/incremental_match.py).

Each window a statement in graph-delta mode emits the rows that are new in
this version of the graph.  The incremental path re-matches only the paths
rooted where the window's writes can be reached; these tests check that it
emits exactly what the full re-match does — window by window — for
multi-hop patterns, both directions, label alternatives, vertex and edge
filters, a cycle, and vertices written again with new properties; that the
shapes it does not handle (a variable-length edge here) fall back to the full
re-match with the same answers; and that with GeaFlow's
``geaflow.dsl.graph.enable.incr.traversal`` the output is GeaFlow's: every path
rooted near the window's changes, so the union of the windows, as a set,
equals the full result after every window (GeaFlow's own IncrMatchTest
checks the same).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.test_streams import sink, windows_of

GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar, age int),
  Vertex city (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double),
  Edge lives (s bigint SOURCE ID, t bigint DESTINATION ID, w double)
) WITH (storeType='memory');
"""

QUERIES = {
    # Two hops, a condition across the path.
    "two_hop": (
        "a bigint, w double, b bigint, c bigint",
        "MATCH (a:person)-[e:knows]->(b:person)-[:knows]->(c) WHERE a.id <> c.id RETURN a.id, e.w, b.id, c.id",
    ),
    # Against the direction, either direction, label alternatives, filters on
    # a vertex and an edge, a vertex property in the result.
    "mixed": (
        "a bigint, age int, b bigint, w double, c bigint",
        "MATCH (a:person WHERE a.age > 20)<-[:knows|lives]-(b)-[e2:knows WHERE e2.w > 0.3]-(c:person|city) "
        "RETURN a.id, a.age, b.id, e2.w, c.id",
    ),
    # Three hops ending at a filtered vertex.
    "three_hop": (
        "a bigint, b bigint, c bigint, d bigint",
        "MATCH (a)-[:knows]->(b)-[:knows]->(c)-[:knows]->(d:person WHERE d.age >= 20) RETURN a.id, b.id, c.id, d.id",
    ),
    # A cycle back to the first vertex.
    "cycle": (
        "a bigint, b bigint",
        "MATCH (a:person)-[:knows]->(b)-[:knows]->(a) RETURN a.id, b.id",
    ),
    # Every variable named: MATCH adds no DISTINCT.
    "named": (
        "a bigint, w1 double, b bigint, w2 double, c bigint",
        "MATCH (a:person)-[e1:knows]->(b)-[e2:knows]->(c) RETURN a.id, e1.w, b.id, e2.w, c.id",
    ),
    # Variable length: not incremental, the full re-match runs instead.
    "loop": ("a bigint, b bigint", "MATCH (a:person)-[:knows]->{1,2}(b) RETURN a.id, b.id"),
}
WINDOWS = 4

# People arrive 3 a window.  Person 3 is written with age 10 (failing
# `age > 20` and `age >= 20`) and written again with age 40 in window 1, with
# its first edges, so no row named it before; person 6 has an edge before it
# exists (window 0) and arrives in window 2.  (A rewritten vertex that rows
# already named yields those rows again, with its new properties, in the
# full re-match's window difference too: the test below covers that case.)
PEOPLE = [
    "1,p1,25",
    "2,p2,30",
    "3,p3,10",
    "4,p4,50",
    "5,p5,22",
    "3,p3,40",
    "6,p6,35",
    "7,p7,5",
    "8,p8,60",
]
CITIES = ["100,c100", "101,c101"]
EDGES = [
    "1,2,knows,0.5",
    "2,100,lives,0.4",
    "1,6,knows,0.9",
    "3,1,knows,0.7",
    "2,3,knows,0.2",
    "4,2,knows,0.6",
    "2,1,knows,0.8",
    "6,4,knows,0.35",
    "5,101,lives,0.1",
    "3,4,knows,0.9",
    "4,3,knows,0.5",
    "1,2,knows,0.5",
]
# Person 1, named by rows already, written again in window 3: passing its
# filters with a new age, then person 2 failing `age > 20`.
PEOPLE_REWRITTEN = PEOPLE + ["1,p1,26", "2,p2,15", "9,p9,70"]


def script(
    people_window: int = 3, edges_window: int = 3, names: tuple[str, ...] = tuple(QUERIES)
) -> str:
    out = (
        "CREATE TABLE people (id bigint, name varchar, age int) WITH (type='file', "
        f"geaflow.dsl.file.path='people.txt', geaflow.dsl.window.size = {people_window});"
        "CREATE TABLE cities (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='cities.txt');"
        "CREATE TABLE edges (s bigint, t bigint, type varchar, w double) WITH (type='file', "
        f"geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = {edges_window});"
        + GRAPH
        + "USE GRAPH g;"
        "INSERT INTO g.person SELECT id, name, age FROM people;"
        "INSERT INTO g.city SELECT id, name FROM cities;"
        "INSERT INTO g.knows SELECT s, t, w FROM edges WHERE type = 'knows';"
        "INSERT INTO g.lives SELECT s, t, w FROM edges WHERE type = 'lives';"
    )
    for name in names:
        out += sink(f"out_{name}", QUERIES[name][0], f"{name}.txt")
    for name in names:
        out += f"INSERT INTO out_{name} {QUERIES[name][1]};"
    return out


def run_job(
    spark: Any,
    folder: Path,
    people: list[str],
    conf: dict[str, Any] | None = None,
    names: tuple[str, ...] = tuple(QUERIES),
) -> dict[str, list[list[str]]]:
    from geaflow_sql import Session

    write(folder / "people.txt", "".join(p + "\n" for p in people))
    write(folder / "cities.txt", "".join(c + "\n" for c in CITIES))
    write(folder / "edges.txt", "".join(e + "\n" for e in EDGES))
    Session(spark=spark, base_dir=str(folder), conf=conf).execute(script(names=names))
    return {name: windows_of(folder / f"{name}.txt") for name in names}


def full_rematch(
    spark: Any, folder: Path, people: list[str], edges: list[str]
) -> dict[str, Counter[str]]:
    """Every query as a batch on the graph holding these rows."""
    from geaflow_sql import Session

    write(folder / "people.txt", "".join(p + "\n" for p in people))
    write(folder / "cities.txt", "".join(c + "\n" for c in CITIES))
    write(folder / "edges.txt", "".join(e + "\n" for e in edges))
    batch = Session(spark=spark, base_dir=str(folder))
    batch.execute(
        "CREATE TABLE people (id bigint, name varchar, age int) WITH (type='file', geaflow.dsl.file.path='people.txt');"
        "CREATE TABLE cities (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='cities.txt');"
        "CREATE TABLE edges (s bigint, t bigint, type varchar, w double) WITH (type='file', "
        "geaflow.dsl.file.path='edges.txt');" + GRAPH + "USE GRAPH g;"
        "INSERT INTO g.person SELECT id, name, age FROM people;"
        "INSERT INTO g.city SELECT id, name FROM cities;"
        "INSERT INTO g.knows SELECT s, t, w FROM edges WHERE type = 'knows';"
        "INSERT INTO g.lives SELECT s, t, w FROM edges WHERE type = 'lives';"
    )
    return {
        name: Counter(",".join(str(v) for v in row) for row in batch.sql(query).collect())
        for name, (_, query) in QUERIES.items()
    }


@pytest.fixture(scope="module")
def full_by_window(spark, tmp_path_factory) -> list[dict[str, Counter[str]]]:
    """The full re-match of every query on each window's version (shared: two
    tests compare against the same versions)."""
    folder = tmp_path_factory.mktemp("full")
    return [
        full_rematch(spark, folder / f"batch{i}", PEOPLE[: 3 * (i + 1)], EDGES[: 3 * (i + 1)])
        for i in range(WINDOWS)
    ]


@pytest.fixture
def spy(monkeypatch):
    """Per query: which path answered each window: ``local`` (local_match.py,
    on the driver), ``spark`` (incremental_match.py) or None (full re-match;
    for a statement emitting its whole result, None: on Spark).  A
    graph-delta statement's first window (its whole result) is listed apart,
    under ``<query>@first``."""
    import runtime.streaming.job as job
    from planner.logical import TableSink, walk

    answered: dict[str, list[str | None]] = {name: [] for name in QUERIES}
    current: list[str] = ["", ""]
    real_run = job.WindowedJob.run_statement
    real_local, real_spark = job.local_incremental_result, job.incremental_result
    real_whole = job.local_whole_result

    def run_statement(self, st, window):
        sinks = [n for n in walk(st.plan) if isinstance(n, TableSink)]
        current[0] = sinks[0].table.name.lower().removeprefix("out_") if sinks else ""
        current[1] = st.mode
        return real_run(self, st, window)

    def local_result(env, top, before, now):
        out = real_local(env, top, before, now)
        if out is not None:
            answered.setdefault(current[0], []).append("local")
        return out

    def spark_result(env, top, before, now):
        out = real_spark(env, top, before, now)
        answered.setdefault(current[0], []).append(None if out is None else "spark")
        return out

    monkeypatch.setattr(job.WindowedJob, "run_statement", run_statement)

    def whole_result(env, top, now):
        out = real_whole(env, top, now)
        key = current[0] if current[1] == job.FULL else f"{current[0]}@first"
        answered.setdefault(key, []).append("local" if out is not None else None)
        return out

    monkeypatch.setattr(job, "local_incremental_result", local_result)
    monkeypatch.setattr(job, "local_whole_result", whole_result)
    monkeypatch.setattr(job, "incremental_result", spark_result)
    return answered


# The driver path where the store holds the graph on the driver (the default),
# and Spark's (geaflow.dsl.query.engine = distributed, or a graph too large).
ENGINES = {"local": {}, "spark": {"geaflow.dsl.query.engine": "distributed"}}


@pytest.mark.parametrize("path", list(ENGINES))
def test_incremental_match_equals_a_full_rematch_after_every_window(
    spark, tmp_path, spy, full_by_window, path
):
    windows = run_job(spark, tmp_path / "job", PEOPLE, ENGINES[path])
    for name in ("two_hop", "mixed", "three_hop", "cycle"):
        assert spy[name] and all(a == path for a in spy[name]), f"{name} ran incrementally"
    # The delta rule does not take a variable-length edge: Spark's path
    # re-matches fully; the driver's compares both versions' rows itself.
    if path == "spark":
        assert spy["loop"] and not any(spy["loop"]), "the variable-length pattern fell back"
    else:
        assert spy["loop"] and all(a == "local" for a in spy["loop"]), spy["loop"]
    # Every variable named (no DISTINCT): incremental in every window, those
    # that wrote vertices too.
    assert spy["named"] == [path] * (WINDOWS - 1)
    emitted = {name: Counter[str]() for name in QUERIES}
    for i, full in enumerate(full_by_window):
        for name in QUERIES:
            if i < len(windows[name]):
                emitted[name].update(windows[name][i])
            assert emitted[name] == full[name], f"{name} after window {i}"
    assert emitted["mixed"] and emitted["three_hop"] and emitted["cycle"]


@pytest.mark.parametrize("path", list(ENGINES))
def test_a_vertex_written_again_emits_what_the_full_rematch_emits(
    spark, tmp_path, monkeypatch, path
):
    import runtime.streaming.job as job

    # The queries that read a rewritten vertex's properties (filters, a
    # returned age) or keep every path (no DISTINCT).
    names = ("mixed", "named")
    conf = ENGINES[path]
    incremental = run_job(spark, tmp_path / "incremental", PEOPLE_REWRITTEN, conf, names=names)
    monkeypatch.setattr(job, "local_incremental_result", lambda *args: None)
    monkeypatch.setattr(job, "incremental_result", lambda *args: None)
    full = run_job(spark, tmp_path / "full", PEOPLE_REWRITTEN, conf, names=names)
    for name in names:
        assert [Counter(w) for w in incremental[name]] == [Counter(w) for w in full[name]], name


# Only the first vertex is kept: rows are people with a 2-hop path onward.
# Person 1 has one (1->2->3) before window 1 writes 4->5, which gives it
# another (1->4->5): its row is not new, though the older path reaches
# vertex 3, three hops from the write (the neighbourhood a DISTINCT needs is
# twice the pattern's hops).
FAR_QUERY = "MATCH (a:person)-[:knows]->()-[:knows]->() RETURN a.id"
FAR_EDGES = ["1,2", "2,3", "1,4", "4,5", "5,6", "6,7"]


@pytest.mark.parametrize("path", list(ENGINES))
def test_a_row_a_path_far_from_the_change_gave_before_is_not_new(
    spark, tmp_path, spy, monkeypatch, path
):
    import runtime.streaming.job as job
    from geaflow_sql import Session

    text = (
        "CREATE TABLE people (id bigint, name varchar, age int) WITH (type='file', "
        "geaflow.dsl.file.path='people.txt');"
        "CREATE TABLE cities (id bigint, name varchar) WITH (type='file', "
        "geaflow.dsl.file.path='cities.txt');"
        "CREATE TABLE edges (s bigint, t bigint) WITH (type='file', "
        "geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = 3);" + GRAPH + "USE GRAPH g;"
        "INSERT INTO g.person SELECT id, name, age FROM people;"
        "INSERT INTO g.knows SELECT s, t, 1.0 FROM edges;"
        + sink("out_far", "a bigint", "far.txt")
        + f"INSERT INTO out_far {FAR_QUERY};"
    )
    out = []
    for run in ("incremental", "full"):
        folder = tmp_path / run
        write(folder / "people.txt", "".join(f"{i},p{i},30\n" for i in range(1, 8)))
        write(folder / "cities.txt", "")
        write(folder / "edges.txt", "".join(e + "\n" for e in FAR_EDGES))
        if run == "full":
            monkeypatch.setattr(job, "local_incremental_result", lambda *args: None)
            monkeypatch.setattr(job, "incremental_result", lambda *args: None)
        Session(spark=spark, base_dir=str(folder), conf=ENGINES[path]).execute(text)
        out.append([sorted(w) for w in windows_of(folder / "far.txt")])
    assert spy["far"] and spy["far"][0] == path, spy["far"]
    assert out[0] == out[1] == [["1"], ["4", "5"]]


def test_geaflow_incremental_traversal_covers_the_full_result_as_a_set(
    spark, tmp_path, full_by_window
):
    flag = {"geaflow.dsl.graph.enable.incr.traversal": "true"}
    windows = run_job(spark, tmp_path / "job", PEOPLE, flag)
    seen: dict[str, set[str]] = {name: set() for name in QUERIES}
    repeated = False
    for i, full in enumerate(full_by_window):
        for name in QUERIES:
            if i < len(windows[name]):
                repeated |= bool(seen[name] & set(windows[name][i]))
                seen[name].update(windows[name][i])
            assert seen[name] == set(full[name]), f"{name} after window {i}"
    # Paths rooted near a change are emitted again, as GeaFlow does.
    assert repeated


# ------------------------------------------------- generated jobs, both paths
def _generated(rng, folder: Path) -> list[tuple[str, str]]:
    """Input files of a job (people rewritten later with other ages, edges of
    two labels, some to ids no vertex has yet) and its queries: linear
    patterns of 1-3 hops in any direction, with label choices, filters on
    vertices and edges, named or anonymous elements (DISTINCT or not)."""
    ids = list(range(1, rng.randint(4, 9)))
    people = [f"{i},p{i},{rng.randint(0, 60)}" for i in ids]
    people += [f"{rng.choice(ids)},q,{rng.randint(0, 60)}" for _ in range(rng.randint(0, 4))]
    edges = [
        f"{rng.choice(ids + [99])},{rng.choice(ids)},{rng.choice(['knows', 'lives'])},"
        f"{rng.choice([0.1, 0.5, 0.9])}"
        for _ in range(rng.randint(6, 20))
    ]
    write(folder / "people.txt", "".join(p + "\n" for p in people))
    write(folder / "cities.txt", "".join(c + "\n" for c in CITIES))
    write(folder / "edges.txt", "".join(e + "\n" for e in edges))
    queries = []
    for _ in range(3):
        hops = rng.randint(1, 3)
        names = [f"v{k}" for k in range(hops + 1)]
        named = [rng.random() < 0.7 for _ in names]
        named[0] = True
        text = "MATCH "
        for k, v in enumerate(names):
            cond = f" WHERE {v}.age > {rng.randint(0, 50)}" if rng.random() < 0.3 else ""
            label = ":person" if cond or rng.random() < 0.5 else ""
            text += f"({v if named[k] or cond else ''}{label}{cond})"
            if k < hops:
                e = f"e{k}"
                labels = rng.choice([":knows", ":lives", ":knows|lives", ""])
                econd = f" WHERE {e}.w > 0.3" if rng.random() < 0.3 else ""
                body = f"{e if econd else ''}{labels}{econd}"
                text += rng.choice([f"-[{body}]->", f"<-[{body}]-", f"-[{body}]-"])
        returned = [v for v, keep in zip(names, named, strict=True) if keep]
        schema = ", ".join(f"{v} bigint" for v in returned)
        queries.append((schema, text + " RETURN " + ", ".join(f"{v}.id" for v in returned)))
    # One the delta rule does not take: run in full on both versions.
    queries.append(rng.choice(WHOLE_QUERIES))
    return queries


# Statements over one graph that are not a chain of fixed hops: a cycle back
# to a bound vertex, an aggregate, a variable-length edge.
WHOLE_QUERIES = [
    ("a bigint, b bigint", "MATCH (a:person)-[e0]->(b)-[e1]->(a) RETURN a.id, b.id"),
    (
        "k bigint, n bigint, s bigint",
        "MATCH (a:person)-[e:knows]-(b:person) "
        "RETURN a.id AS k, COUNT(b.id) AS n, SUM(b.age) AS s GROUP BY k",
    ),
    ("a bigint, b bigint", "MATCH (a:person)-[e:knows]->{1,2}(b) RETURN a.id, b.id"),
]


def _generated_job(spark, folder: Path, queries, conf) -> list[list[list[str]]]:
    from geaflow_sql import Session

    text = (
        "CREATE TABLE people (id bigint, name varchar, age int) WITH (type='file', "
        "geaflow.dsl.file.path='people.txt', geaflow.dsl.window.size = 3);"
        "CREATE TABLE cities (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='cities.txt');"
        "CREATE TABLE edges (s bigint, t bigint, type varchar, w double) WITH (type='file', "
        "geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = 7);" + GRAPH + "USE GRAPH g;"
        "INSERT INTO g.person SELECT id, name, age FROM people;"
        "INSERT INTO g.city SELECT id, name FROM cities;"
        "INSERT INTO g.knows SELECT s, t, w FROM edges WHERE type = 'knows';"
        "INSERT INTO g.lives SELECT s, t, w FROM edges WHERE type = 'lives';"
    )
    for k, (schema, _) in enumerate(queries):
        text += sink(f"out{k}", schema, f"out{k}.txt")
    for k, (_, query) in enumerate(queries):
        text += f"INSERT INTO out{k} {query};"
    Session(spark=spark, base_dir=str(folder), conf=conf).execute(text)
    return [windows_of(folder / f"out{k}.txt") for k in range(len(queries))]


# (seed, GeaFlow's incremental traversal on): with it, each window's rows
# are the paths rooted near its changes, walked back from them on the
# driver in Arrow (local_match._geaflow_rows) or on Spark.
DRIVER_CASES = [(0, False), (1, False), (2, False), (3, True), (4, True)]


@pytest.mark.parametrize(("seed", "traversal"), DRIVER_CASES)
def test_the_driver_path_emits_what_sparks_path_emits_window_by_window(
    spark, tmp_path, spy, monkeypatch, seed, traversal
):
    import random

    import runtime.streaming.local_match as local_match

    walks = []
    real_walk = local_match._geaflow_rows

    def counted(*args):
        walks.append(1)
        return real_walk(*args)

    monkeypatch.setattr(local_match, "_geaflow_rows", counted)
    rng = random.Random(seed)
    queries = _generated(rng, tmp_path / "local")
    _generated(random.Random(seed), tmp_path / "spark")
    flag = {"geaflow.dsl.graph.enable.incr.traversal": str(traversal).lower()}
    local = _generated_job(spark, tmp_path / "local", queries, {**ENGINES["local"], **flag})
    assert any(a == "local" for answers in spy.values() for a in answers), spy
    # The last query, not a chain, was answered on the driver past window 1.
    whole = spy.get(f"out{len(queries) - 1}", [])
    assert whole and set(whole) == {"local"}, str(sorted(spy.items()))
    # Every statement's first window, its whole result, too.
    firsts = {k: v for k, v in spy.items() if k.endswith("@first")}
    assert firsts and all(v == ["local"] for v in firsts.values()), firsts
    assert bool(walks) == traversal, "GeaFlow's traversal ran on the driver"
    on_spark = _generated_job(spark, tmp_path / "spark", queries, {**ENGINES["spark"], **flag})
    for (_, query), mine, theirs in zip(queries, local, on_spark, strict=True):
        assert [Counter(w) for w in mine] == [Counter(w) for w in theirs], query


MIXED_IDS = (
    """
CREATE TABLE people (id int, name varchar) WITH (type='file',
  geaflow.dsl.file.path='people.txt');
CREATE TABLE firms (id bigint, name varchar) WITH (type='file',
  geaflow.dsl.file.path='firms.txt');
CREATE TABLE links (s bigint, t bigint) WITH (type='file',
  geaflow.dsl.file.path='links.txt', geaflow.dsl.window.size = 2);
CREATE GRAPH m (
  Vertex person (id int ID, name varchar),
  Vertex firm (id bigint ID, name varchar),
  Edge link (s bigint SOURCE ID, t bigint DESTINATION ID)
) WITH (storeType='memory');
USE GRAPH m;
INSERT INTO m.person SELECT id, name FROM people;
INSERT INTO m.firm SELECT id, name FROM firms;
INSERT INTO m.link SELECT s, t FROM links;
"""
    + sink("paths", "a bigint, b bigint, c bigint", "paths.txt")
    + """
INSERT INTO paths MATCH (a:person)-[:link]->(b)-[:link]->(c) RETURN a.id, b.id, c.id;
"""
)


def test_vertex_labels_of_different_id_types_walk_as_on_spark(spark, tmp_path):
    # A person's id is an INT, a firm's a BIGINT past INT's range: the graph's
    # ids are BIGINT, and GeaFlow's walk back from a written edge reaches a
    # firm's id, which the person label cannot hold.  Each window's rows on
    # the driver are Spark's.
    from geaflow_sql import Session

    big = 3_000_000_000
    links = [(1, big), (big, 2), (2, 1), (1, 2), (big + 1, 1), (2, big + 1)]
    out = {}
    for engine in ("auto", "distributed"):
        folder = tmp_path / engine
        write(folder / "people.txt", "1,p1\n2,p2\n")
        write(folder / "firms.txt", f"{big},f1\n{big + 1},f2\n")
        write(folder / "links.txt", "".join(f"{s},{t}\n" for s, t in links))
        conf = {
            "geaflow.dsl.graph.enable.incr.traversal": "true",
            "geaflow.dsl.query.engine": engine,
        }
        Session(spark=spark, base_dir=str(folder), conf=conf).execute(MIXED_IDS)
        out[engine] = [Counter(w) for w in windows_of(folder / "paths.txt")]
    assert out["auto"] == out["distributed"]
    assert sum(out["auto"], Counter())  # some paths


QUIET_WINDOWS = (
    """
CREATE TABLE people (id bigint, name varchar) WITH (type='file',
  geaflow.dsl.file.path='people.txt');
CREATE TABLE edges (s bigint, t bigint, type varchar, w double) WITH (type='file',
  geaflow.dsl.file.path='edges.txt', geaflow.dsl.window.size = 2);
CREATE GRAPH q (
  Vertex person (id bigint ID, name varchar),
  Edge knows (s bigint SOURCE ID, t bigint DESTINATION ID, w double),
  Edge likes (s bigint SOURCE ID, t bigint DESTINATION ID, w double)
) WITH (storeType='memory');
USE GRAPH q;
INSERT INTO q.person SELECT id, name FROM people;
INSERT INTO q.knows SELECT s, t, w FROM edges WHERE type = 'knows';
INSERT INTO q.likes SELECT s, t, w FROM edges WHERE type = 'likes';
"""
    + sink("pairs", "a bigint, w double, heavy boolean, f float", "pairs.txt")
    + """
INSERT INTO pairs MATCH (a:person)-[e:knows]->(b:person)
  RETURN a.id, e.w, e.w > 0.5, CAST(e.w AS float);
"""
)


@pytest.mark.parametrize("path", list(ENGINES))
def test_a_window_writing_none_of_the_patterns_edges_emits_no_rows(spark, tmp_path, spy, path):
    # Window 1 writes only edges of another label, window 2 writes nothing:
    # neither adds a path, and the empty result is written as any other is,
    # whatever its columns' types (doubles, floats and booleans printed on
    # the driver too).
    from geaflow_sql import Session

    write(tmp_path / "people.txt", "".join(f"{i},p{i}\n" for i in range(1, 5)))
    edges = [
        "1,2,knows,0.7",
        "2,3,knows,0.25",
        "1,3,likes,0.5",
        "3,4,likes,0.5",
        "1,4,other,1.0",
        "2,4,other,1.0",
        "3,1,knows,1.5",
    ]
    write(tmp_path / "edges.txt", "".join(e + "\n" for e in edges))
    Session(spark=spark, base_dir=str(tmp_path), conf=ENGINES[path]).execute(QUIET_WINDOWS)
    assert [sorted(w) for w in windows_of(tmp_path / "pairs.txt")] == [
        ["1,0.7,true,0.7", "2,0.25,false,0.25"],
        [],
        [],
        ["3,1.5,true,1.5"],
    ]
    if path == "local":
        assert spy["pairs"][:2] == ["local", "local"], spy
