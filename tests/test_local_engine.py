"""The local engine (runtime.local) against the distributed path.

Every query here runs twice, with ``geaflow.dsl.query.engine`` = local and =
distributed, and must give the same rows; the generated ones are built only
from what the local engine translates, so each must also have run locally
(``result.extra["engine"]``).  Data: random graphs and tables with NULLs,
negative numbers, repeated values and strings of mixed case, written as
Parquet and as text files.
"""

from __future__ import annotations

import math
import random
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from geaflow_sql import Session
from geaflow_sql.core.errors import GeaflowError
from tests.conftest import newest_job, write

SEEDS = range(40)


@pytest.fixture(scope="module")
def session(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("local_engine")
    s = Session(spark=spark, base_dir=str(folder))
    s.folder = folder  # type: ignore[attr-defined]
    return s


def _rows(session, query: str, engine: str) -> tuple[list[tuple], str]:
    session.execute(f"SET geaflow.dsl.query.engine = {engine}")
    (result,) = session.execute(query)
    return result.collect(), result.extra.get("engine", "")


def both(session, query: str, ordered: bool = False) -> list[tuple]:
    """The rows of ``query`` on both engines, checked equal; it ran locally."""
    local, where = _rows(session, query, "local")
    assert where == "local", (query, where)
    spark_rows, _ = _rows(session, query, "distributed")
    session.execute("SET geaflow.dsl.query.engine = auto")
    if ordered:
        assert local == spark_rows, query
    else:
        assert sorted(local, key=repr) == sorted(spark_rows, key=repr), query
    return local


# ----------------------------------------------------------------- the data
def _maybe(rng: random.Random, value: object) -> object:
    """``value``, or NULL a quarter of the time."""
    return None if rng.random() < 0.25 else value


def _graph_files(folder, rng: random.Random, tag: str) -> None:
    n = rng.randint(1, 40)
    ids = rng.sample(range(-20, 200), n)
    names = ["a", "B", "b", "ab", "", None]
    person = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "age": pa.array([_maybe(rng, rng.randint(-3, 90)) for _ in ids], pa.int32()),
            "name": pa.array([rng.choice(names) for _ in ids], pa.string()),
            "score": pa.array([rng.choice([None, -1.5, 0.0, 0.25, 2.0]) for _ in ids]),
        }
    )
    m = rng.randint(0, 120)
    ends = [*ids, 999]  # an edge may point at no vertex
    knows = pa.table(
        {
            "src": pa.array([rng.choice(ends) for _ in range(m)], pa.int64()),
            "dst": pa.array([rng.choice(ends) for _ in range(m)], pa.int64()),
            "weight": pa.array([rng.choice([None, 0.5, 1.0, 2.5, -1.0]) for _ in range(m)]),
            "since": pa.array([_maybe(rng, rng.randint(2000, 2010)) for _ in range(m)], pa.int32()),
        }
    )
    pq.write_table(person, folder / f"person_{tag}.parquet")
    pq.write_table(knows, folder / f"knows_{tag}.parquet")


def _generated_graph(session, rng: random.Random, tag: str) -> None:
    """A graph ``g_<tag>`` of generated files, declared and in use."""
    _graph_files(session.folder, rng, tag)
    _declare_graph(session, tag)


def _declare_graph(session, tag: str) -> None:
    folder = session.folder
    session.execute(
        f"""
        CREATE TABLE person_{tag} (id bigint, age int, name varchar, score double)
          WITH (type='file', format='parquet',
                geaflow.dsl.file.path='{folder / f"person_{tag}.parquet"}');
        CREATE TABLE knows_{tag} (src bigint, dst bigint, weight double, since int)
          WITH (type='file', format='parquet',
                geaflow.dsl.file.path='{folder / f"knows_{tag}.parquet"}');
        CREATE GRAPH g_{tag} (
          Vertex person USING person_{tag} WITH ID(id),
          Edge knows USING knows_{tag} WITH ID(src, dst)
        ) WITH (storeType='memory');
        USE GRAPH g_{tag};
        """
    )


# ------------------------------------------------------------ the generator
def _vertex_condition(rng: random.Random, v: str) -> str:
    choices = [
        f"{v}.age > {rng.randint(-5, 95)}",
        f"{v}.age <= {rng.randint(-5, 95)}",
        f"{v}.name = '{rng.choice(['a', 'B', 'b', 'ab', ''])}'",
        f"{v}.name IS NULL",
        f"{v}.score >= {rng.choice(['0.0', '0.25', '-1.5'])}",
        f"{v}.id IN ({', '.join(str(rng.randint(-20, 200)) for _ in range(3))})",
        f"{v}.age + {rng.randint(-3, 3)} < {rng.randint(0, 90)}",
        f"NOT ({v}.age BETWEEN {rng.randint(0, 40)} AND {rng.randint(40, 90)})",
    ]
    picked = rng.sample(choices, rng.randint(1, 2))
    return f" {rng.choice(['AND', 'OR'])} ".join(f"({c})" for c in picked)


def _edge_condition(rng: random.Random, e: str) -> str:
    choices = [
        f"{e}.weight > {rng.choice(['0.5', '1.0', '-2.0'])}",
        f"{e}.weight IS NULL",
        f"{e}.since < {rng.randint(2000, 2010)}",
        f"{e}.since * 2 >= {rng.randint(4000, 4020)}",
    ]
    return f"({rng.choice(choices)})"


def match_query(rng: random.Random) -> tuple[str, bool]:
    """A MATCH of 1-3 hops with conditions (some of a range of hops, some
    closing a cycle), and a RETURN the local engine runs."""
    hops = rng.randint(1, 3)
    names = ["a", "b", "c", "d"][: hops + 1]
    parts = []
    ranged: list[bool] = []  # (a hop of a range of edges binds a list, not an edge)
    for i, v in enumerate(names):
        cond = f" WHERE {_vertex_condition(rng, v)}" if rng.random() < 0.5 else ""
        parts.append(f"({v}:person{cond})")
        if i < hops:
            e = f"e{i}"
            arrow = rng.choice([("-", "->"), ("<-", "-"), ("-", "-")])
            econd = f" WHERE {_edge_condition(rng, e)}" if rng.random() < 0.4 else ""
            # A variable-length edge now and then, from no hop up.
            low = rng.randint(0, 2)
            hops_range = f"{{{low},{rng.randint(max(low, 1), 3)}}}" if rng.random() < 0.35 else ""
            ranged.append(bool(hops_range))
            parts.append(f"{arrow[0]}[{e}:knows{econd}]{arrow[1]}{hops_range}")
    if rng.random() < 0.15:
        parts[-1] = "(a)"  # a cycle back to the first vertex
        names[-1] = "a"
    pattern = "MATCH " + "".join(parts)
    if rng.random() < 0.3:
        pattern += f" WHERE {names[0]}.age < {names[-1]}.age + {rng.randint(0, 20)}"
    last = names[-1]
    kind = rng.choice(["rows", "count", "group", "ordered", "elements"])
    if kind == "elements":  # the vertices and edges themselves
        edge = "" if ranged[0] else ", e0"
        return f"{pattern} RETURN {names[0]}{edge}, {last}", False
    if kind == "rows":
        return (
            f"{pattern} RETURN {names[0]}.id AS x, e0.weight AS w, {last}.name AS n, "
            f"{last}.age - {names[0]}.age AS gap",
            False,
        )
    if kind == "count":
        return (
            f"{pattern} RETURN count(*) AS n, count({last}.name) AS named, sum({last}.age) AS s",
            False,
        )
    if kind == "group":
        return (
            f"{pattern} RETURN {names[0]}.name AS k, count(*) AS n, sum({last}.age) AS s, "
            f"min(e0.weight) AS lo, max({last}.name) AS hi, avg({names[0]}.age) AS mean "
            "GROUP BY k",
            False,
        )
    # A total order: every returned column is a key, the ids make rows unique.
    return (
        f"{pattern} RETURN {names[0]}.id AS x, {last}.id AS y, e0.weight AS w "
        f"ORDER BY x DESC, y, w NULLS LAST LIMIT {rng.randint(1, 8)}",
        True,
    )


def sql_query(rng: random.Random, tag: str) -> tuple[str, bool]:
    p, k = f"person_{tag}", f"knows_{tag}"
    kind = rng.choice(["filter", "join", "group", "union", "ordered"])
    if kind == "filter":
        return (
            f"SELECT id, age * 2 AS twice, name FROM {p} WHERE {_vertex_condition(rng, p)}",
            False,
        )
    if kind == "join":
        how = rng.choice(["JOIN", "LEFT JOIN"])
        return (
            f"SELECT x.id, y.dst, y.weight FROM {p} x {how} {k} y ON x.id = y.src "
            f"WHERE {_vertex_condition(rng, 'x')}",
            False,
        )
    if kind == "group":
        return (
            f"SELECT name, count(*) AS n, count(DISTINCT age) AS ages, sum(age) AS s, "
            f"min(score) AS lo, max(score) AS hi FROM {p} GROUP BY name",
            False,
        )
    if kind == "union":
        word = rng.choice(["UNION", "UNION ALL"])
        return f"SELECT src AS v FROM {k} {word} SELECT id AS v FROM {p}", False
    return (
        f"SELECT id, age FROM {p} ORDER BY age DESC NULLS LAST, id LIMIT {rng.randint(1, 9)}",
        True,
    )


# -------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_match_and_sql_give_the_same_rows_on_both_engines(session, seed):
    rng = random.Random(seed)
    tag = f"s{seed}"
    _generated_graph(session, rng, tag)
    for _ in range(3):
        query, ordered = match_query(rng)
        both(session, query, ordered)
    for _ in range(2):
        query, ordered = sql_query(rng, tag)
        both(session, query, ordered)


def path_query(rng: random.Random) -> str:
    """A path variable over a run of 0-3 edges (or repetitions of a one-edge
    sub-path; after a fixed hop now and then, or back to its start), with a mode, a search prefix that keeps
    more than one path, path functions in WHERE and RETURN; what it returns
    does not depend on which of equally short paths a search keeps."""
    mode = rng.choice(["", "WALK ", "TRAIL ", "ACYCLIC ", "SIMPLE "])
    search = rng.choice(
        ["", "", "SHORTEST 2 ", "SHORTEST 2 GROUPS ", "ANY 2 ", "ANY SHORTEST ", "ALL SHORTEST "]
    )
    # What a search keeps is fixed as a whole, as lengths, or as pairs of ends.
    whole = not search or "GROUPS" in search or search.startswith("ALL")
    lengths = search in ("SHORTEST 2 ", "ANY SHORTEST ")
    left, right = rng.choice([("-", "->"), ("<-", "-"), ("-", "-")])
    low = rng.randint(0, 2)
    # (a search over paths of one length means nothing: an error)
    high = rng.randint(low + 1 if search else max(low, 1), 3)
    acond = f" WHERE {_vertex_condition(rng, 'a')}" if rng.random() < 0.6 else ""
    econd = f" WHERE {_edge_condition(rng, 'e')}" if rng.random() < 0.3 else ""
    start = f"(a:person{acond})"
    if rng.random() < 0.3:
        start += f"{left}[f:knows]{right}(m:person)"
    end = "(a)" if rng.random() < 0.2 and low > 0 else "(b:person)"
    # (ISO GQL writes a mode before GROUPS)
    prefix = f"SHORTEST 2 {mode}GROUPS " if "GROUPS" in search else f"{search}{mode}"
    run = f"{left}[e:knows{econd}]{right}{{{low},{high}}}"
    if rng.random() < 0.4:
        # The run as a quantified sub-path, its condition checked in each repetition.
        conds = [_edge_condition(rng, "e"), _vertex_condition(rng, "v")]
        inner = " AND ".join(c for c in conds if rng.random() < 0.4)
        run = f" ((u){left}[e:knows]{right}(v:person){' WHERE ' + inner if inner else ''})"
        run += f"{{{low},{high}}} "
    pattern = f"MATCH p = {prefix}{start}{run}{end}"
    # A MATCH's WHERE filters the paths a search kept: only one reading
    # what does not depend on which of them it kept.
    wheres = [""]
    if whole or lengths:
        wheres.append(f" WHERE length(p) > {rng.randint(0, 2)}")
    if whole:
        wheres.append(" WHERE nodes(p)[1].age > 20")
        wheres.append(" WHERE edges(p)[0].weight IS NULL OR cardinality(nodes(p)) = 2")
    pattern += rng.choice(wheres)
    b = "a" if end == "(a)" else "b"
    if not (whole or lengths):
        return f"{pattern} RETURN a.id AS x, {b}.id AS y"
    if lengths:
        return f"{pattern} RETURN a.id AS x, {b}.id AS y, length(p) AS n"
    if rng.random() < 0.5:
        return f"{pattern} RETURN a.id AS x, count(*) AS n, sum(length(p)) AS s GROUP BY x"
    k, j = rng.randint(0, 3), rng.randint(0, 2)
    return (
        f"{pattern} RETURN a.id AS x, {b}.id AS y, path_length(p) AS n, "
        f"nodes(p)[{k}].id AS v, edges(p)[{j}].weight AS w, cardinality(edges(p)) AS m"
    )


@pytest.mark.parametrize("seed", range(8))
def test_path_values_modes_and_searches_give_the_same_rows_on_both_engines(session, seed):
    # The local engine keeps a run's vertices and edges as lists, builds the
    # path from them, tests modes over their values (a TRAIL takes equal
    # parallel edges for one, the generated edges repeat) and keeps k paths
    # per pair of ends; the generated graphs have null and repeated values.
    rng = random.Random(1700 + seed)
    tag = f"p{seed}"
    _generated_graph(session, rng, tag)
    for _ in range(4):
        both(session, path_query(rng))


@pytest.mark.parametrize("seed", range(3))
def test_request_tables_give_the_same_rows_on_both_engines(session, seed):
    # Each request row starts its own paths: joined to its vertices by id, or
    # (a filter reading both, no id equality) to every vertex the filter keeps.
    rng = random.Random(500 + seed)
    tag = f"r{seed}"
    _generated_graph(session, rng, tag)
    k = rng.randint(0, 60)
    requests = f"WITH p AS (SELECT id, age FROM person_{tag} WHERE age > {k})"
    for match in (
        "MATCH (a WHERE a.age < p.age)-[e:knows]->(b) RETURN p.id, a.id, e.weight, b.id",
        f"MATCH (a WHERE a.id = p.id)-[e]->(b WHERE b.age > {k}) RETURN p.id, b.id",
        "MATCH (a WHERE a.age + p.age > 60 AND a.id <> p.id) RETURN p.id, a.id, a.name",
    ):
        both(session, f"{requests} {match}")


def subquery_query(rng: random.Random) -> str:
    """A MATCH whose hop is filtered, or whose vertex gains properties (LET),
    by path-pattern subqueries: counts and sums over the paths leaving it,
    joined back to the vertex they start from (a vertex no path leaves
    counts 0; its sum is 0.0)."""
    arrow = rng.choice([("-", "->"), ("<-", "-"), ("-", "-")])
    left, right = rng.choice([("-[", "]->"), ("<-[", "]-"), ("-[", "]-")])
    cond = f" WHERE {_vertex_condition(rng, 'a')}" if rng.random() < 0.5 else ""
    head = f"MATCH (a:person{cond}){arrow[0]}[e:knows]{arrow[1]}(b)"
    count = f"COUNT((b){left}{right}(c) => c)"
    total = f"SUM((b){left}e1:knows{right}(c) => e1.weight)"
    largest = f"MAX((b){left}:knows{right}(c) => c.age)"
    kind = rng.choice(["where", "let", "both"])
    if kind == "where":
        return f"{head} WHERE {count} >= {rng.randint(0, 3)} RETURN a.id, e.weight, b.id, b.name"
    lets = f" LET b.n = {count}, LET b.w = {total}, LET b.oldest = {largest}"
    where = f" WHERE {count} > {rng.randint(0, 2)}" if kind == "both" else ""
    return f"{head}{where}{lets} RETURN a.id, b.id, b.n, b.w, b.oldest, b.age"


def coalesce_query(rng: random.Random, tag: str) -> str:
    fallback = rng.choice(["0", "-7", "2.5", "CAST(NULL AS int)"])
    return (
        f"SELECT id, COALESCE(age, {fallback}) AS a, COALESCE(name, 'none') AS n, "
        f"COALESCE(score, age, {rng.randint(-3, 3)}) AS s FROM person_{tag}"
    )


def branching_query(rng: random.Random, tag: str) -> str:
    """IF, CASE and integer % (by zero too) over a table's values, NULLs
    among them."""
    k, m = rng.randint(-3, 90), rng.choice([3, -4, 7])
    return (
        f"SELECT id, IF(age > {k}, name, 'young') AS t, "
        "CASE WHEN score IS NULL THEN -1 WHEN score > 0 THEN 1 ELSE 0 END AS sign, "
        f"CASE WHEN age < {k} THEN age * 2 WHEN name = 'a' THEN id END AS pick, "
        f"age % {m} AS r, id % {m} AS ir, age % 0 AS zero, age % (id - id) AS none "
        f"FROM person_{tag}"
    )


def element_order_query(rng: random.Random) -> str:
    """ORDER BY vertices and edges (as Spark orders structs: field by field);
    rows that tie on every key are equal in every returned field."""
    keys = rng.sample(["a", "b DESC", "e", "e DESC", "a DESC"], 2)
    return (
        "MATCH (a:person)-[e:knows]->(b:person) "
        "RETURN a.id AS x, a.name AS n, e.weight AS w, e.since AS s, b.id AS y, b.age AS g "
        f"ORDER BY {', '.join(keys)}, b, e LIMIT {rng.randint(1, 12)}"
    )


def pattern_union_query(rng: random.Random) -> str:
    """Two patterns in one MATCH with no variable in common: each row has the
    other pattern's vertices missing, ordered with them (a missing vertex
    sorts where the key puts NULLs)."""
    first = f"(a:person WHERE {_vertex_condition(rng, 'a')})-[e:knows]->(b)"
    second = f"(c:person WHERE {_vertex_condition(rng, 'c')})<-[:knows]-(d)"
    keys = rng.sample(["a", "a DESC", "c", "c DESC NULLS FIRST", "b NULLS LAST"], 2)
    return (
        f"MATCH {first} | {second} "
        "RETURN a.id AS x, b.name AS y, c.id AS z, d.age AS w "
        f"ORDER BY {', '.join(keys)}, a, b, c, d LIMIT {rng.randint(1, 15)}"
    )


def optional_query(rng: random.Random) -> str:
    """OPTIONAL MATCH: a vertex it finds none for is missing, so COUNT does
    not count it, IS NULL holds, = is NULL, and a LET on it keeps it missing."""
    cond = _vertex_condition(rng, "a")
    head = (
        f"MATCH (a:person WHERE {cond}) "
        f"OPTIONAL MATCH (a)-[e:knows WHERE e.weight > {rng.choice(['0.0', '1.0'])}]->(b)"
    )
    kind = rng.choice(["count", "rows", "ordered"])
    if kind == "count":
        return f"{head} RETURN a.id AS x, count(b) AS n, count(e) AS m GROUP BY x"
    let = f" LET b.extra = b.age + {rng.randint(0, 5)}" if rng.random() < 0.7 else ""
    if kind == "rows":
        return (
            f"{head}{let} RETURN a.id AS x, b.id AS y, b IS NULL AS gone, "
            "a = b AS same, e IS NULL AS no_edge"
        )
    return (
        f"{head}{let} RETURN a.id AS x, b.id AS y, b.age AS g "
        f"ORDER BY b {rng.choice(['', 'DESC', 'NULLS LAST', 'DESC NULLS FIRST'])}, a, e "
        f"LIMIT {rng.randint(1, 15)}"
    )


@pytest.mark.parametrize("seed", range(8))
def test_subqueries_lets_and_branches_give_the_same_rows_on_both_engines(session, seed):
    # The local engine counts a vertex by its label (one an outer join did
    # not find has none), joins rows back to a vertex by comparing every
    # property, builds the vertex LET adds a property to, and orders by
    # vertices and edges property by property.
    rng = random.Random(900 + seed)
    tag = f"q{seed}"
    _generated_graph(session, rng, tag)
    for _ in range(3):
        both(session, subquery_query(rng))
    both(session, coalesce_query(rng, tag))
    both(session, branching_query(rng, tag))
    both(session, element_order_query(rng), ordered=True)
    both(session, pattern_union_query(rng), ordered=True)
    optional = optional_query(rng)
    both(session, optional, ordered="ORDER BY" in optional)


def test_a_let_on_a_vertex_optional_match_did_not_find_keeps_it_missing(session):
    # As Cypher's SET on null: the LET changes nothing that is not there, so
    # the vertex is still missing (not a vertex of NULL properties with the
    # new one set), on both engines.
    folder = session.folder
    write(folder / "lp.txt", "1,ann,30\n2,bob,40\n3,cy,50\n")
    write(folder / "lk.txt", "1,2\n")
    session.execute(
        "CREATE TABLE lp (id bigint, name varchar, age int) WITH (type='file', "
        "geaflow.dsl.file.path='lp.txt');"
        "CREATE TABLE lk (s bigint, d bigint) WITH (type='file', geaflow.dsl.file.path='lk.txt');"
        "CREATE GRAPH lg (Vertex person USING lp WITH ID(id), Edge knows USING lk WITH ID(s, d))"
        " WITH (storeType='memory'); USE GRAPH lg;"
    )
    rows = both(
        session,
        "MATCH (a:person) OPTIONAL MATCH (a)-[e:knows]->(b) LET b.older = b.age + 1 "
        "RETURN a.id, b.id, b.older, b IS NULL AS gone, count(b) AS n GROUP BY a.id, b.id, "
        "b.older, gone",
    )
    assert sorted(rows) == [
        (1, 2, 41, False, 1),
        (2, None, None, True, 0),
        (3, None, None, True, 0),
    ]
    # The vertices and edges themselves: a missing one is NULL (not a vertex
    # of NULL properties), a LET's property is in the value, and a NULL
    # beside a vertex in a UNION is a NULL vertex.
    rows = both(
        session,
        "MATCH (a:person) OPTIONAL MATCH (a)-[e:knows]->(b) LET b.older = b.age + 1 RETURN a, e, b",
    )
    got = {r[0]["~id"]: (r[1], r[2]) for r in rows}
    assert got[2] == got[3] == (None, None)
    assert got[1][0]["~src"] == 1 and got[1][0]["~dst"] == 2 and got[1][0]["~label"] == "knows"
    assert got[1][1]["older"] == 41 and got[1][1]["~label"] == "person"
    rows = both(
        session,
        "SELECT v, NULL AS e FROM (MATCH (v:person WHERE v.id = 3) RETURN v) x "
        "UNION ALL SELECT NULL, e FROM (MATCH (a)-[e]->(b) RETURN e) y",
    )
    assert sorted((v is None, e is None) for v, e in rows) == [(False, True), (True, False)]


def test_in_a_subquery_of_a_boolean_operand_is_the_operands_membership(session):
    # SQL's three-valued IN of (x > 1 OR x IS NULL): the operand whole, on both engines.
    query = (
        "SELECT x, (x > 1 OR x IS NULL) IN (SELECT b FROM (VALUES (false)) AS t(b)) AS f "
        "FROM (VALUES (1), (2), (CAST(NULL AS INT))) AS v(x)"
    )
    expected = sorted([(1, True), (2, False), (None, False)], key=repr)
    for engine in ("auto", "distributed"):
        rows, _ = _rows(session, query, engine)
        assert sorted(rows, key=repr) == expected, engine
    session.execute("SET geaflow.dsl.query.engine = auto")


@pytest.mark.parametrize("ids", ["unique", "repeated", "text"])
def test_using_tables_ids_are_checked_in_the_copy_the_local_engine_reads(session, monkeypatch, ids):
    # Whether a vertex label's USING table holds each id once (then its rows
    # are read as they stand) is counted in the Arrow copy the local engine
    # reads anyway, not by a Spark job; a repeated id (the later row wins)
    # gives the same rows on both engines.
    from runtime.stores import memory

    counted = []
    real = memory._each_once

    def each_once(column):
        counted.append(len(column))
        return real(column)

    monkeypatch.setattr(memory, "_each_once", each_once)
    folder = session.folder
    people = {"unique": "1,ann\n2,bob\n3,cy\n", "repeated": "1,ann\n2,bob\n3,cy\n2,bea\n"}
    people["text"] = "a,ann\nb,bob\nc,cy\n"
    kind = "varchar" if ids == "text" else "bigint"
    knows = "a,b\nb,c\n" if ids == "text" else "1,2\n2,3\n3,1\n"
    write(folder / f"up_{ids}.txt", people[ids])
    write(folder / f"uk_{ids}.txt", knows)
    session.execute(
        f"CREATE TABLE up_{ids} (id {kind}, name varchar) WITH (type='file', "
        f"geaflow.dsl.file.path='up_{ids}.txt');"
        f"CREATE TABLE uk_{ids} (s {kind}, d {kind}) WITH (type='file', "
        f"geaflow.dsl.file.path='uk_{ids}.txt');"
        f"CREATE GRAPH ug_{ids} (Vertex person USING up_{ids} WITH ID(id), "
        f"Edge knows USING uk_{ids} WITH ID(s, d)) WITH (storeType='memory'); USE GRAPH ug_{ids};"
    )
    query = "MATCH (a:person)-[e:knows]->(b:person) RETURN a.name, b.name"
    local, where = _rows(session, query, "local")
    spark_rows, _ = _rows(session, query, "distributed")
    session.execute("SET geaflow.dsl.query.engine = auto")
    assert sorted(local) == sorted(spark_rows)
    assert counted == [len(people[ids].split())]
    if ids == "repeated":
        assert ("bea", "cy") in local and ("bob", "cy") not in local
    else:
        assert where == "local"


@pytest.fixture(scope="module")
def people(session):
    """The module's session, with a text table ``people`` (id, name, age, w) with empty fields."""
    folder = session.folder
    (folder / "people.txt").write_text(
        "1,Ann,30,1.5\n2,bob,,2.0\n3,,41,\n4,Dan,-7,0.0\n", encoding="utf-8"
    )
    session.execute(
        f"CREATE TABLE people (id bigint, name varchar, age int, w double) "
        f"WITH (type='file', geaflow.dsl.file.path='{folder / 'people.txt'}')"
    )
    return session


def test_the_local_engine_reads_a_text_table_as_the_spark_path_does(people):
    session = people
    rows = both(session, "SELECT id, name, age, w FROM people WHERE age IS NULL OR age > 0")
    assert sorted(rows) == [(1, "Ann", 30, 1.5), (2, "bob", None, 2.0), (3, "", 41, None)]


def test_a_changed_file_is_read_again(session):
    path = session.folder / "changing.txt"
    path.write_text("1\n2\n", encoding="utf-8")
    session.execute(
        f"CREATE TABLE changing (x bigint) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    assert both(session, "SELECT sum(x) AS s FROM changing") == [(3,)]
    time.sleep(0.01)
    path.write_text("1\n2\n30\n", encoding="utf-8")
    assert both(session, "SELECT sum(x) AS s FROM changing") == [(33,)]


@pytest.mark.parametrize(
    "query, reason",
    [
        ("SELECT upper(name) FROM people", "expression"),
        ("SELECT id / 2 FROM people", "expression"),
        ("SELECT stddev_pop(w) FROM people", "aggregate STDDEV_POP of float"),
        ("SELECT a.id FROM people a, people b", "cross join"),
        ("SELECT CAST(name AS double) FROM people", "cast"),
    ],
)
def test_what_the_local_engine_does_not_run_the_same_way_runs_distributed(people, query, reason):
    session = people
    session.execute("SET geaflow.dsl.query.engine = auto")
    (result,) = session.execute(query)
    where = result.extra.get("engine", "")
    assert where.startswith("distributed: the local engine does not run"), where
    assert reason in where
    result.collect()


def test_inputs_over_the_size_limit_run_distributed(people):
    session = people
    session.execute("SET geaflow.dsl.query.local.max.bytes = 10")
    try:
        (result,) = session.execute("SELECT id FROM people")
        assert "over geaflow.dsl.query.local.max.bytes" in result.extra["engine"]
        # 'local' runs it locally whatever its size.
        assert sorted(both(session, "SELECT id FROM people WHERE id < 3")) == [(1,), (2,)]
    finally:
        session.execute("SET geaflow.dsl.query.local.max.bytes = 67108864")


def test_an_integer_overflow_gives_sparks_answer(session):
    path = session.folder / "big.txt"
    path.write_text("2147483647\n1\n", encoding="utf-8")
    session.execute(
        f"CREATE TABLE bigint_t (x int) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    session.execute("SET geaflow.dsl.query.engine = local")
    (result,) = session.execute("SELECT x + 1 AS y FROM bigint_t")
    # DuckDB raises on the overflow that Spark wraps: the query runs on Spark.
    assert result.extra["engine"].startswith("distributed: the local engine failed")
    assert sorted(result.collect()) == [(-2147483648,), (2,)]
    session.execute("SET geaflow.dsl.query.engine = auto")


def _cast_inputs(rng: random.Random) -> list[str]:
    """Lines ``text,integer,double`` for casts that may lose values: numbers
    with signs, fractions, spaces and junk; integers and doubles at and past
    each integer type's bounds."""
    texts = ["0", "-0", "+7", "007", " 5", "5\t", "5.", "5.9", "-5.9", ".5", ".", "-.", "+"]
    texts += ["", "-", "1e3", "0x10", "1_000", "12a", "--1", "1.2.3", "\u0665", "\uff15"]
    texts += [str(b + d) for b in (2**7, 2**15, 2**31, 2**63) for d in (-1, 0)]
    texts += [str(-b + d) for b in (2**7, 2**15, 2**31, 2**63) for d in (0, -1)]
    texts += [
        "".join(rng.choice("0123456789+-. \te") for _ in range(rng.randint(1, 6)))
        for _ in range(60)
    ]
    ints = [
        0,
        -1,
        127,
        128,
        -129,
        2**15,
        2**31 - 1,
        2**31,
        -(2**31) - 1,
        2**40 + 3,
        2**63 - 1,
        -(2**63),
    ]
    ints += [rng.randint(-(2**63), 2**63 - 1) for _ in range(40)]
    doubles = [
        "NaN",
        "Infinity",
        "-Infinity",
        "0.0",
        "-0.5",
        "1.5",
        "127.9",
        "-128.9",
        "2147483647.5",
    ]
    doubles += ["-2147483649.0", "9.3E18", "-9.3E18", "1.0E30"]
    doubles += [repr(rng.uniform(-3e9, 3e9)) for _ in range(40)]
    n = max(len(texts), len(ints), len(doubles))
    return [
        f"{texts[k % len(texts)]},{ints[k % len(ints)]},{doubles[k % len(doubles)]}"
        for k in range(n)
    ]


def test_casts_that_may_lose_values_give_sparks_answers(session):
    # Spark's non-ANSI CAST, which the Spark path runs: a string is a number
    # or NULL, a wider integer wraps, a float truncates and saturates.
    path = session.folder / "casts.txt"
    path.write_text("".join(line + "\n" for line in _cast_inputs(random.Random(5))), "utf-8")
    session.execute(
        f"CREATE TABLE casts (s varchar, i bigint, d double) "
        f"WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    columns = ["s", "i"]  # (not d: NaN is not equal to itself)
    for source in ("s", "i", "d"):
        columns += [f"CAST({source} AS {t})" for t in ("tinyint", "smallint", "int", "bigint")]
    rows = both(session, f"SELECT {', '.join(columns)} FROM casts")
    # Some of each kind of answer: numbers, NULLs from junk, wrapped values.
    assert any(r[2] is None for r in rows) and any(r[5] == 5 for r in rows)
    assert any(r[6] is not None and r[6] != r[1] for r in rows)
    assert {r[13] for r in rows} >= {0, 2**63 - 1, -(2**63)}  # NaN, saturated


def test_a_local_result_is_also_a_dataframe(people):
    session = people
    session.execute("SET geaflow.dsl.query.engine = auto")
    result = session.sql("SELECT id, name FROM people WHERE id <= 2")
    assert sorted(result.collect()) == [(1, "Ann"), (2, "bob")]
    assert sorted(tuple(r) for r in result.dataframe.collect()) == [(1, "Ann"), (2, "bob")]


def test_a_long_local_query_is_cancelled(session):
    path = session.folder / "same.txt"
    path.write_text("1\n" * 3000, encoding="utf-8")
    session.execute(
        f"CREATE TABLE same (k bigint) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    session.execute("SET geaflow.dsl.query.engine = local")
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            # 3,000^3 rows meet on one key: minutes of work.
            session.execute(
                "SELECT count(*) FROM same a JOIN same b ON a.k = b.k JOIN same c ON b.k = c.k"
            )
        except GeaflowError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(3.0)
    assert worker.is_alive(), outcome
    started = time.monotonic()
    while worker.is_alive() and time.monotonic() - started < 30:
        session.cancel()
        worker.join(0.2)
    assert not worker.is_alive()
    assert "cancelled" in str(outcome.get("error")), outcome
    session.execute("SET geaflow.dsl.query.engine = auto")


def test_explain_and_the_cycle_trace_show_where_a_query_runs(people):
    session = people
    session.execute("SET geaflow.dsl.query.engine = auto; SET geaflow.dsl.trace.cycles = true")
    try:
        text = session.explain("SELECT id FROM people WHERE id > 1")
        assert "== Engine ==\nlocal: one DuckDB query" in text
        assert "FROM input0" in text
        (result,) = session.execute("SELECT id FROM people WHERE id > 1")
        assert result.extra["engine"] == "local"
        # The local run is the statement's root group, one round.
        events = result.extra["cycles"]
        assert {cycle for cycle, _, _ in events} == {0}
        assert [kind for _, kind, _ in events].count("execute") == 1
        text = session.explain("SELECT upper(name) FROM people")
        assert "== Engine ==\ndistributed: the local engine does not run expression" in text
    finally:
        session.execute("SET geaflow.dsl.trace.cycles = false")


# Calls whose rows the local engine computes with the kernel the algorithm
# engine runs inside a Spark task; {v} is a vertex id of the graph.
CALLS = [
    "page_rank(0.85, 0.0, 10) YIELD (id, pr)",
    "wcc() YIELD (id, c)",
    "cc() YIELD (id, c)",
    "lpa(5) YIELD (id, c)",
    "kcore(2) YIELD (id, c)",
    "sssp({v}) YIELD (id, c)",
    "khop({v}, 2) YIELD (id, c)",
    "closeness_centrality({v}) YIELD (id, c)",
    "triangle_count() YIELD (id, c)",
    "cluster_coefficient() YIELD (id, c)",
    "louvain() YIELD (id, c)",
    "common_neighbors({v}, {w}) YIELD (id)",
]


@pytest.mark.parametrize("seed", range(6))
def test_algorithm_calls_give_the_same_rows_on_both_engines(session, seed):
    rng = random.Random(1000 + seed)
    tag = f"a{seed}"
    _generated_graph(session, rng, tag)
    (ids,) = session.execute(f"SELECT id FROM person_{tag}")
    some = [r[0] for r in ids.collect()]
    for call in CALLS:
        text = call.format(v=rng.choice(some), w=rng.choice(some))
        query = f"CALL {text} RETURN *"
        both(session, query)
        # And consumed by SQL in the same local query.
        if "c)" in text:
            both(session, f"CALL {text} RETURN c, count(*) AS n GROUP BY c")


# --------------------------------------------------- graphs written by INSERT
def _value(v: object, sql_type: str) -> str:
    if v is None:
        return f"CAST(NULL AS {sql_type})"
    return f"'{v}'" if isinstance(v, str) else str(v)


def _insert_graph(session, rng: random.Random, tag: str, store: str) -> None:
    """A graph filled by a few INSERTs of VALUES: vertex ids written again
    (by a later INSERT and within one), edges repeated and to missing ids."""
    session.execute(
        f"""
        CREATE GRAPH g_{tag} (
          Vertex person (id bigint ID, age int, name varchar, score double),
          Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double, since int)
        ) WITH (storeType='{store}');
        USE GRAPH g_{tag};
        """
    )
    ids = list(range(-3, rng.randint(5, 30)))
    for _ in range(rng.randint(1, 3)):
        rows = [
            f"({rng.choice(ids)}, {_value(_maybe(rng, rng.randint(-3, 90)), 'INT')}, "
            f"{_value(rng.choice(['a', 'B', 'b', 'ab', '', None]), 'VARCHAR')}, "
            f"{_value(rng.choice([None, -1.5, 0.0, 0.25, 2.0]), 'DOUBLE')})"
            for _ in range(rng.randint(1, 25))
        ]
        session.execute(f"INSERT INTO g_{tag}.person VALUES {', '.join(rows)}")
    ends = [*ids, 999]
    for _ in range(rng.randint(1, 3)):
        rows = [
            f"({rng.choice(ends)}, {rng.choice(ends)}, "
            f"{_value(rng.choice([None, 0.5, 1.0, 2.5, -1.0]), 'DOUBLE')}, "
            f"{_value(_maybe(rng, rng.randint(2000, 2010)), 'INT')})"
            for _ in range(rng.randint(0, 40))
        ]
        if rows:
            session.execute(f"INSERT INTO g_{tag}.knows VALUES {', '.join(rows)}")


@pytest.mark.parametrize("seed", range(8))
def test_graphs_written_by_insert_give_the_same_rows_on_both_engines(session, seed):
    """Labels a store holds on the driver (arrow_parts) are read by the local
    engine: a rewritten vertex id is its last row, as on Spark."""
    rng = random.Random(2000 + seed)
    store = "memory" if seed % 2 == 0 else "rocksdb"
    session.execute(f"SET geaflow.file.persistent.root = '{session.folder / 'stores'}'")
    tag = f"i{seed}"
    _insert_graph(session, rng, tag, store)
    for _ in range(3):
        query, ordered = match_query(rng)
        both(session, query, ordered)
    both(
        session, f"SELECT id, age, name, score FROM person WHERE {_vertex_condition(rng, 'person')}"
    )
    both(session, "SELECT src, dst, weight, since FROM knows")


def test_graph_writes_held_on_the_driver_match_writes_left_to_spark(session, tmp_path):
    """The same script with the driver route switched off writes the same
    graph: every label reads the same rows, and each INSERT counts the same."""
    scripts = []
    for seed in range(3):
        rng = random.Random(3000 + seed)
        scripts.append((seed, rng))
    for seed, _ in scripts:
        rows = {}
        counts = {}
        for limit in ("67108864", "0"):
            rng = random.Random(3000 + seed)
            tag = f"r{seed}_{limit}"
            session.execute(f"SET geaflow.dsl.store.local.max.bytes = {limit}")
            session.execute(f"SET geaflow.file.persistent.root = '{tmp_path / limit}'")
            store = "memory" if seed % 2 == 0 else "rocksdb"
            written = []
            original = session.execute

            def record(text, original=original, written=written):
                out = original(text)
                written.extend(r.rows_written for r in out if r.kind == "insert")
                return out

            session.execute = record
            try:
                _insert_graph(session, rng, tag, store)
            finally:
                session.execute = original
            session.execute("SET geaflow.dsl.query.engine = distributed")
            rows[limit] = (
                sorted(session.sql("SELECT * FROM person").collect(), key=repr),
                sorted(session.sql("SELECT * FROM knows").collect(), key=repr),
            )
            counts[limit] = written
        session.execute("SET geaflow.dsl.store.local.max.bytes = 67108864")
        session.execute("SET geaflow.dsl.query.engine = auto")
        assert rows["67108864"] == rows["0"], seed
        assert counts["67108864"] == counts["0"], seed
        assert all(isinstance(n, int) for n in counts["0"]), counts


def _graph_from_table_script(tag: str, store: str) -> str:
    return f"""
CREATE TABLE src_{tag} (id bigint, name varchar, age int, score double, other bigint)
  WITH (type='file', geaflow.dsl.file.path='src_{tag}.txt');
CREATE GRAPH g_{tag} (
  Vertex person (id bigint ID, name varchar, age bigint, score double),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double)
) WITH (storeType='{store}');
USE GRAPH g_{tag};
INSERT INTO g_{tag}.person SELECT id, name, age, score FROM src_{tag} WHERE age IS NULL OR age > 5;
INSERT INTO g_{tag}(person.id, person.name, knows.src, knows.dst, knows.weight)
  SELECT other, name, id, other, score * 2 FROM src_{tag};
INSERT INTO g_{tag}.knows(src, dst) SELECT id, id + 1 FROM src_{tag} WHERE id < 10;
INSERT INTO g_{tag}.person(id, age) SELECT id, name FROM src_{tag};
"""


@pytest.mark.parametrize("seed", range(4))
def test_graph_inserts_from_tables_are_the_same_on_both_engines(session, seed):
    """An INSERT into a graph whose query the local engine runs writes the
    store from the driver (rows it holds go in with no Spark job): the same
    labels, rows and counts as on Spark, with ids written again, null keys,
    integer widening, several labels in one INSERT and columns left out; a
    column that needs a cast (text to a number) goes to Spark."""
    rng = random.Random(4000 + seed)
    store = "memory" if seed % 2 == 0 else "rocksdb"
    session.execute(f"SET geaflow.file.persistent.root = '{session.folder / 'stores'}'")
    ids = [*range(-2, rng.randint(4, 20)), None]
    lines = []
    for _ in range(rng.randint(1, 40)):
        fields = [
            rng.choice(ids),
            rng.choice(["a", "b c", "", "7", None]),
            _maybe(rng, rng.randint(-3, 90)),
            rng.choice([None, -1.5, 0.1, 2.0, 1e-5, 3e22]),
            rng.choice(ids),
        ]
        lines.append(",".join("" if f is None else str(f) for f in fields))
    results = {}
    for engine in ("local", "distributed"):
        tag = f"t{seed}_{engine[0]}"
        write(session.folder / f"src_{tag}.txt", "\n".join(lines) + "\n")
        session.execute(f"SET geaflow.dsl.query.engine = {engine}")
        out = session.execute(_graph_from_table_script(tag, store))
        inserts = [r for r in out if r.kind == "insert"]
        engines = [r.extra.get("engine", "") for r in inserts]
        if engine == "local":
            # The last INSERT writes text into a number column: Spark casts it.
            assert engines[:3] == ["local"] * 3, engines
            assert "casts a column on Spark" in engines[3], engines
        session.execute("SET geaflow.dsl.query.engine = distributed")
        results[engine] = (
            [r.rows_written for r in inserts],
            sorted(
                session.sql("MATCH (a:person) RETURN a.id, a.name, a.age, a.score").collect(),
                key=repr,
            ),
            sorted(
                session.sql("MATCH (a)-[e:knows]->(b) RETURN a.id, b.id, e.weight").collect(),
                key=repr,
            ),
        )
    session.execute("SET geaflow.dsl.query.engine = auto")
    assert results["local"] == results["distributed"], seed


def test_a_graph_insert_held_on_the_driver_runs_no_spark_job(session):
    """Once its table's scan is kept, an INSERT into a memory graph that the
    local engine runs starts no Spark job: the store keeps the driver's rows."""
    write(session.folder / "src_j.txt", "1,a,3,0.5,2\n2,b,9,1.5,1\n")
    session.execute(_graph_from_table_script("j", "memory").split("INSERT")[0])
    insert = "INSERT INTO g_j.knows SELECT id, other, score FROM src_j"
    session.execute(insert)  # reads the table once and keeps its scan
    spark = session.spark

    before = newest_job(spark)
    (result,) = session.execute(insert)
    assert result.extra.get("engine") == "local" and result.rows_written == 2
    assert newest_job(spark) == before
    rows = session.sql("SELECT src, dst, weight FROM knows").collect()
    assert sorted(rows) == [(1, 2, 0.5), (1, 2, 0.5), (2, 1, 1.5), (2, 1, 1.5)]


# ------------------------------------------------------------------ VALUES
def _literal(rng: random.Random, kind: str) -> str:
    if rng.random() < 0.2:
        return "NULL"
    if kind == "int":
        return str(rng.choice([0, 1, -1, 7, 2147483647, -2147483648, rng.randint(-999, 999)]))
    if kind == "bigint":
        return str(rng.choice([2**40, -(2**62), 9223372036854775807, rng.randint(-9, 9) * 2**33]))
    if kind == "double":
        value = rng.choice([0.5, -1.25, 1e300, 2.0**-1074, rng.uniform(-1e6, 1e6)])
        return f"CAST({value!r} AS DOUBLE)"
    if kind == "bool":
        return rng.choice(["true", "false"])
    return "'" + rng.choice(["a", "Ab", "it''s", "", " x ", "Ünï"]) + "'"


def values_query(rng: random.Random) -> str:
    kinds = [rng.choice(["int", "bigint", "double", "bool", "str"]) for _ in range(3)]
    rows = []
    for _ in range(rng.randint(1, 6)):
        values = [_literal(rng, k) for k in kinds]
        if rng.random() < 0.3 and kinds[0] == "int" and values[0] != "NULL":
            values[0] = f"{values[0]} + {rng.randint(-5, 5)} * 2"  # an expression row
        rows.append("(" + ", ".join(values) + ")")
    table = f"(VALUES {', '.join(rows)}) AS t(a, b, c)"
    return rng.choice(
        [
            f"SELECT a, b, c FROM {table}",
            f"SELECT c, count(*) AS n FROM {table} GROUP BY c",
            f"SELECT a, c FROM {table} WHERE a IS NOT NULL",
        ]
    )


@pytest.mark.parametrize("seed", range(12))
def test_values_give_the_same_rows_on_both_engines(session, seed):
    rng = random.Random(5000 + seed)
    for _ in range(4):
        both(session, values_query(rng))
    # A SELECT without FROM: rows of no columns under a projection.
    n = rng.randint(-9, 9)
    assert both(session, f"SELECT {n} AS x, 'k' AS y") == [(n, "k")]


def test_insert_values_writes_the_same_file_on_both_engines(session):
    contents = []
    for engine in ("local", "distributed"):
        path = session.folder / f"values_{engine}.txt"
        session.execute(
            f"CREATE TABLE values_{engine} (id bigint, name varchar, w double, ok boolean) "
            f"WITH (type='file', geaflow.dsl.file.path='{path}')"
        )
        session.execute(f"SET geaflow.dsl.query.engine = {engine}")
        (result,) = session.execute(
            f"INSERT INTO values_{engine} VALUES (1, 'a,b', 0.1, true), "
            f"(-2, NULL, CAST(1e-7 AS DOUBLE), false), (3, 'z', NULL, NULL)"
        )
        assert result.extra.get("engine", "").startswith(engine), result.extra
        contents.append(path.read_text(encoding="utf-8") if path.is_file() else _folder_text(path))
    session.execute("SET geaflow.dsl.query.engine = auto")
    assert contents[0] == contents[1]
    assert contents[0].count("\n") == 3


def _folder_text(path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(path.iterdir()) if p.is_file())


# ----------------------------------------------------------- windowed jobs
WINDOWED = """
{checkpoint}
SET geaflow.dsl.query.engine = {engine};
CREATE TABLE es_{tag} (s bigint, t bigint, w double) WITH (type='file',
  geaflow.dsl.file.path='es_{tag}.txt', geaflow.dsl.window.size = 3);
CREATE GRAPH gw_{tag} (Vertex node (id bigint ID),
  Edge link (s bigint SOURCE ID, t bigint DESTINATION ID, w double)) WITH (storeType='memory');
CREATE TABLE copied_{tag} (s bigint, t bigint, w double)
  WITH (type='file', geaflow.dsl.file.path='out_{tag}/copied.txt');
USE GRAPH gw_{tag};
INSERT INTO gw_{tag}.node SELECT s FROM es_{tag} WHERE s IS NOT NULL;
INSERT INTO gw_{tag}.link SELECT s, t, w FROM es_{tag};
INSERT INTO copied_{tag} SELECT s, t, w * 2 FROM es_{tag} WHERE t > 2 OR w IS NULL;
CREATE TABLE answered_{tag} (r bigint, a bigint, b bigint)
  WITH (type='file', geaflow.dsl.file.path='out_{tag}/answered.txt');
{requests}
"""
# Requests streamed from the table, answered on the graph as each window
# leaves it (a job with them runs window by window, never fused).
REQUESTS = """
INSERT INTO answered_{tag} SELECT * FROM (
  WITH p AS (SELECT s, t FROM es_{tag})
  MATCH (a WHERE a.id > p.t)-[e:link]->(b) RETURN p.s, a.id, b.id
);
"""


@pytest.mark.parametrize("checkpointed", [True, False], ids=["windows", "fused"])
def test_windowed_statements_over_a_small_file_run_on_the_driver(
    session, monkeypatch, checkpointed
):
    """A windowed job over a small local file: with a checkpoint each window
    is its own round, and the source holds its numbered rows on the driver
    (one Spark job before the first), so every window's statements run
    there (requests answered on the graph, too); without one the windows are fused and read as the table's kept
    scan.  The files and graph they write are Spark's, line for line."""
    import runtime.streaming.job as job

    rows = [
        (1, 2, 0.5),
        (2, 3, None),
        (3, 1, 1.5),
        (4, 5, 2.0),
        (5, 4, None),
        (6, 1, 3.0),
        (7, 8, 1.0),
    ]
    lines = "".join(f"{s},{t},{'' if w is None else w}\n" for s, t, w in rows)
    jobs_per_round: list[int] = []
    real_round = job.WindowedJob.run_round

    def counted_round(self, r):
        before = newest_job(session.spark)
        real_round(self, r)
        jobs_per_round.append(newest_job(session.spark) - before)

    from runtime.connectors.base import ReplayableSource

    frames_asked: list[int] = []
    real_window = ReplayableSource.window

    def counted_window(self, i):
        frames_asked.append(i)
        return real_window(self, i)

    written = {}
    for engine in ("auto", "distributed"):
        tag = f"{engine[0]}{int(checkpointed)}"
        write(session.folder / f"es_{tag}.txt", lines)
        checkpoint = f"SET geaflow.dsl.checkpoint.dir = 'ck_{tag}';" if checkpointed else ""
        requests = REQUESTS.format(tag=tag) if checkpointed else ""
        script = WINDOWED.format(checkpoint=checkpoint, engine=engine, tag=tag, requests=requests)
        if engine == "auto":
            monkeypatch.setattr(job.WindowedJob, "run_round", counted_round)
            monkeypatch.setattr(ReplayableSource, "window", counted_window)
        own = Session(spark=session.spark, base_dir=str(session.folder))  # (settings of its own)
        own.execute(script)
        monkeypatch.undo()
        copied = (session.folder / f"out_{tag}" / "copied.txt").read_text().splitlines()
        answered = session.folder / f"out_{tag}" / "answered.txt"
        answered = answered.read_text().splitlines() if answered.exists() else []
        links = own.sql("MATCH (a)-[e:link]->(b) RETURN a.id, b.id, e.w").collect()
        written[engine] = (copied, sorted(links, key=repr), sorted(answered))
    assert written["auto"] == written["distributed"]
    # (t > 2 or no w: 4 rows; links between written nodes: all but 7->8)
    assert len(written["auto"][0]) == 4 and len(written["auto"][1]) == 6
    # Requests answered on the graph as each window left it, on the driver.
    assert bool(written["auto"][2]) == checkpointed
    # Held rows: no job in a window.  Fused: one round, a job copying the
    # kept scan for each set of columns read (s alone; s, t and w).
    assert jobs_per_round == ([0, 0, 0] if checkpointed else [2])
    # The local engine takes held rows without asking the source for a
    # window's frame (a stream source's frame may read it).
    assert frames_asked == []


def _java_quotient(x: float | None, y: float | None) -> float | None:
    """Java's ``x / y`` of doubles (IEEE 754): by a zero, Infinity signed by
    both operands, NaN for 0 / 0."""
    if x is None or y is None:
        return None
    if y == 0:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _java_remainder(x: float | None, y: float | None) -> float | None:
    """Java's ``x % y`` of doubles: the dividend's sign (C's fmod); NaN by a
    zero or of an infinite dividend."""
    if x is None or y is None:
        return None
    if y == 0 or math.isinf(x) or math.isnan(x) or math.isnan(y):
        return math.nan
    return math.fmod(x, y)


@pytest.mark.parametrize("seed", range(3))
def test_float_quotients_and_remainders_are_javas_on_both_engines(session, seed):
    # GeaFlow divides doubles as Java does: by a zero (of either sign) a
    # quotient is +-Infinity or NaN and a remainder NaN, where Spark's own
    # arithmetic gives NULL; an integer divisor of 0 counts as +0.0.
    rng = random.Random(900 + seed)
    pool = [0.0, -0.0, 1.5, -2.0, 3.0, None, 7.25, -0.5]
    n = rng.randint(3, 12)
    a = [rng.choice(pool) for _ in range(n)]
    b = [rng.choice(pool) for _ in range(n)]
    i = [rng.choice([0, 2, -3, None]) for _ in range(n)]
    tag = f"f{seed}"
    path = session.folder / f"floats_{tag}.parquet"
    pq.write_table(
        pa.table(
            {
                "id": pa.array(range(n), pa.int64()),
                "a": pa.array(a, pa.float64()),
                "b": pa.array(b, pa.float64()),
                "i": pa.array(i, pa.int32()),
            }
        ),
        path,
    )
    session.execute(
        f"CREATE TABLE floats_{tag} (id bigint, a double, b double, i int) "
        f"WITH (type='file', format='parquet', geaflow.dsl.file.path='{path}')"
    )
    query = (
        f"SELECT id, a / b, a % b, a / i, i / b, a % i, a / 0, a / -0.0, a * 1.5e0 / b "
        f"FROM floats_{tag}"
    )
    local, where = _rows(session, query, "local")
    assert where == "local", where
    spark_rows, _ = _rows(session, query, "distributed")
    session.execute("SET geaflow.dsl.query.engine = auto")
    key = repr  # (NaN is not equal to itself; its text is)
    assert sorted(map(key, local)) == sorted(map(key, spark_rows))
    expected = []
    for k in range(n):
        x, y, z = a[k], b[k], i[k]
        zf = None if z is None else float(z)
        expected.append(
            (
                k,
                _java_quotient(x, y),
                _java_remainder(x, y),
                _java_quotient(x, zf),
                _java_quotient(zf, y),
                _java_remainder(x, zf),
                _java_quotient(x, 0.0),
                _java_quotient(x, -0.0),
                _java_quotient(None if x is None else x * 1.5, y),
            )
        )
    assert sorted(map(key, local)) == sorted(map(key, expected))
