"""Quantified path patterns (ISO GQL): ``(x) ((a)-[e]->(b) WHERE ...){m,n} (y)``.

Kuzu has no quantified sub-paths (its recursive relationships repeat one
edge), so the generated queries are checked against an oracle written here:
every walk of the sub-path is listed by brute force on the generated graph,
and chains of ``m`` to ``n`` of them, each starting where the one before
ended, are counted.  The semantics followed are ISO GQL's (also Cypher 25's):

* the vertex before the parentheses is the first vertex of the first
  repetition, each repetition starts at the vertex the previous one ended
  at, and the vertex after them is where the last ended; for no
  repetitions the vertex before and after is one vertex;
* the sub-path's WHERE is checked in every repetition, over that
  repetition's elements;
* outside the parentheses a variable of the sub-path is a group variable:
  the list of its values in the repetitions, in the order written (also
  when the pattern is matched from its end);
* every walk is a row (WALK: a repetition may pass a vertex or edge again);
  a path mode before the pattern restricts that.

The graphs are ``test_kuzu_differential``'s (labels ``A``/``B`` with an
int ``p``, edges ``R``/``S`` with an int ``w``, nulls, ids unique across
labels).  Every element of a generated pattern is named, so GeaFlow's set
semantics for anonymous elements never applies.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import pytest

from tests.test_kuzu_beyond import SQUARE, failure, rows_on_both
from tests.test_kuzu_differential import Graph

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ARROWS = {"OUT": ("-", "->"), "IN": ("<-", "-"), "BOTH": ("-", "-")}
OPS = {
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
}


@dataclass(frozen=True)
class Cond:
    """``var.prop op value`` (``value`` a constant, or None for IS NULL)."""

    op: str
    value: int | None

    def gql(self, var: str, prop: str) -> str:
        if self.value is None:
            return f"{var}.{prop} IS NULL"
        return f"{var}.{prop} {self.op} {self.value}"

    def holds(self, x: int | None) -> bool:
        if self.value is None:
            return x is None
        return x is not None and OPS[self.op](x, self.value)


@dataclass(frozen=True)
class Elem:
    var: str
    labels: tuple[str, ...]
    cond: Cond | None
    direction: str = ""  # edges: OUT, IN or BOTH

    def gql(self, prop: str) -> str:
        text = self.var + (":" + "|".join(self.labels) if self.labels else "")
        if self.cond is not None:
            text += " WHERE " + self.cond.gql(self.var, prop)
        return text


@dataclass(frozen=True)
class Quantified:
    x: Elem
    body: tuple[Elem, ...]  # vertex, edge, vertex[, edge, vertex]
    compare: tuple[str, str, str] | None  # (left var, op, right var) over p / w
    low: int
    high: int
    y: Elem
    y_first: bool  # y is bound by an earlier pattern: the pattern is walked from its end

    def gql(self) -> str:
        parts = []
        for k, el in enumerate(self.body):
            if k % 2 == 0:
                parts.append(f"({el.gql('p')})")
            else:
                left, right = ARROWS[el.direction]
                parts.append(f"{left}[{el.gql('w')}]{right}")
        where = ""
        if self.compare is not None:
            a, op, b = self.compare
            where = f" WHERE {a}.{_prop(a)} {op} {b}.{_prop(b)}"
        sub = f"({''.join(parts)}{where}){{{self.low},{self.high}}}"
        ret = "x.id, y.id, cardinality(a)"
        if self.low >= 1:
            # (GeaFlow's lists index from 0)
            ret += ", a[0].id, e[0].w, b[cardinality(b) - 1].id"
        if self.y_first:
            return f"MATCH ({self.y.gql('p')}), ({self.x.gql('p')}) {sub} (y) RETURN {ret}"
        return f"MATCH ({self.x.gql('p')}) {sub} ({self.y.gql('p')}) RETURN {ret}"


def _prop(var: str) -> str:
    return "w" if var in ("e", "f") else "p"


# ---------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------


def _passes(el: Elem, label: str, value: int | None) -> bool:
    return (not el.labels or label in el.labels) and (el.cond is None or el.cond.holds(value))


def _body_walks(g: Graph, q: Quantified) -> list[dict[str, tuple]]:
    """Every walk of the sub-path: each variable's (id or edge index, prop)."""
    vertices = {vid: (lab, p) for lab, vid, p in g.vertices}
    steps: dict[int, list[tuple[int, int]]] = defaultdict(list)  # vertex -> (edge, next)
    walks: list[dict[str, tuple]] = []

    def extend(k: int, at: int, bound: dict[str, tuple]) -> None:
        if k == len(q.body):
            walks.append(bound)
            return
        edge, node = q.body[k], q.body[k + 1]
        for idx, (lab, s, d, w) in enumerate(g.edges):
            if not _passes(edge, lab, w):
                continue
            ends = []
            if edge.direction in ("OUT", "BOTH") and s == at:
                ends.append(d)
            if edge.direction in ("IN", "BOTH") and d == at:
                ends.append(s)
            for nxt in ends:
                vlab, vp = vertices[nxt]
                if _passes(node, vlab, vp):
                    extend(k + 2, nxt, {**bound, edge.var: (idx, w), node.var: (nxt, vp)})

    del steps
    first = q.body[0]
    for vid, (lab, p) in vertices.items():
        if _passes(first, lab, p):
            extend(1, vid, {first.var: (vid, p)})
    if q.compare is not None:
        a, op, b = q.compare
        walks = [
            w
            for w in walks
            if w[a][1] is not None and w[b][1] is not None and OPS[op](w[a][1], w[b][1])
        ]
    return walks


def oracle(g: Graph, q: Quantified) -> Counter:
    vertices = {vid: (lab, p) for lab, vid, p in g.vertices}
    last = q.body[-1].var
    by_start: dict[int, list[dict[str, tuple]]] = defaultdict(list)
    for w in _body_walks(g, q):
        by_start[w["a"][0]].append(w)
    out: Counter = Counter()

    def chain(x: int, at: int, done: list[dict[str, tuple]]) -> None:
        if len(done) >= q.low and _passes(q.y, *vertices[at]):
            row: tuple = (x, at, len(done))
            if q.low >= 1:
                row += (done[0]["a"][0], done[0]["e"][1], done[-1]["b"][0])
            out[row] += 1
        if len(done) < q.high:
            for w in by_start[at]:
                chain(x, w[last][0], [*done, w])

    for vid, (lab, p) in vertices.items():
        if _passes(q.x, lab, p):
            chain(vid, vid, [])
    return out


# ---------------------------------------------------------------------------
# Generated queries
# ---------------------------------------------------------------------------

# Mostly no condition and any label, so that most generated queries match something.
conds = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.builds(Cond, st.sampled_from(list(OPS)), st.integers(0, 4)),
    st.just(Cond("null", None)),
)
vertex_labels = st.sampled_from([(), (), (), ("A",), ("B",), ("A", "B")])
edge_labels = st.sampled_from([(), (), ("R",), ("S",)])


@st.composite
def dense_graphs(draw) -> Graph:
    """``test_kuzu_differential``'s graphs, with edges enough for chains of walks."""
    n = draw(st.integers(3, 6))
    labels = draw(st.lists(st.sampled_from(["A", "B"]), min_size=n, max_size=n))
    p = st.one_of(st.integers(0, 4), st.none())
    vertices = tuple((lab, vid, draw(p)) for vid, lab in enumerate(labels, start=1))
    pairs = [(s, d) for s in range(1, n + 1) for d in range(1, n + 1) if s != d]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=n, max_size=2 * n, unique=True))
    edges = tuple((draw(st.sampled_from(["R", "S"])), s, d, draw(p)) for s, d in chosen)
    return Graph(vertices, edges)


@st.composite
def quantified(draw) -> Quantified:
    def vertex(var: str, cond: bool = True) -> Elem:
        return Elem(var, draw(vertex_labels), draw(conds) if cond else None)

    def edge(var: str) -> Elem:
        return Elem(var, draw(edge_labels), draw(conds), draw(st.sampled_from(list(ARROWS))))

    body: tuple[Elem, ...] = (vertex("a"), edge("e"), vertex("b"))
    if draw(st.booleans()):
        body = (body[0], body[1], vertex("m"), edge("f"), body[2])
    names = [el.var for el in body]
    compare = None
    if draw(st.integers(0, 2)) == 0:
        left, right = draw(st.sampled_from([(a, b) for a in names for b in names if a < b]))
        if _prop(left) == _prop(right):
            compare = (left, draw(st.sampled_from(list(OPS))), right)
    low = draw(st.integers(0, 2))
    high = draw(st.integers(max(low, 1), 3))
    return Quantified(vertex("x"), body, compare, low, high, vertex("y"), draw(st.booleans()))


COUNTED: dict[str, int] = {}


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    g=dense_graphs(),
    qs=st.lists(quantified(), min_size=8, max_size=8),
    rules=st.booleans(),
)
def test_quantified_paths_agree_with_the_oracle(spark, tmp_path_factory, g, qs, rules):
    conf = {} if rules else {"geaflow.dsl.optimizer.enabled": "false"}
    # Each query runs on the local engine and again on Spark: the same rows.
    got = rows_on_both(spark, tmp_path_factory.mktemp("qpp"), g, [q.gql() for q in qs], conf)
    for q, have in zip(qs, got, strict=True):
        want = oracle(g, q)
        assert have == want, (
            f"\ngraph: {g}\nrules: {rules}\nGQL: {q.gql()}\n"
            f"only geaflow-sql: {dict(have - want)}\nonly the oracle: {dict(want - have)}"
        )
    COUNTED["pairs"] = COUNTED.get("pairs", 0) + len(qs)


def test_the_oracle_ran_enough_queries():
    """Runs after the property test above (pytest keeps file order)."""
    if not COUNTED:
        pytest.skip("run together with the property test of this module")
    assert COUNTED["pairs"] >= 32, COUNTED


# ---------------------------------------------------------------------------
# By hand, on SQUARE: 1->2->3->4->1 and 1->3 (R), 2->1 (S)
# ---------------------------------------------------------------------------


def test_group_variables_list_each_repetition_in_written_order(spark, tmp_path):
    got = rows_on_both(
        spark,
        tmp_path,
        SQUARE,
        [
            # Each repetition's WHERE reads that repetition's elements.
            "MATCH (x WHERE x.id = 1) ((a)-[e:R]->(b) WHERE b.p > a.p){1,3} (y) "
            "RETURN y.id, cardinality(e), a[0].id, e[cardinality(e) - 1].w",
            # Matched from its end (y bound first): the lists are still as written.
            "MATCH (y WHERE y.id = 4), (x) ((a)-[e:R]->(b)){2} (y) RETURN x.id, a[0].id, a[1].id",
            # No repetitions: y is x, the lists are empty.
            "MATCH (x WHERE x.id = 2) ((a)-[e:R]->(b)){0,1} (y) RETURN y.id, cardinality(a)",
            # A sub-path of two edges; the pattern may start with it.
            "MATCH ((a)-[e:R]->(m)-[f:R]->(b)){2} RETURN a[0].id, b[1].id, m[1].id",
        ],
        {},
    )
    assert got[0] == Counter(
        {(2, 1, 1, 1): 1, (3, 1, 1, 5): 1, (3, 2, 1, 2): 1, (4, 2, 1, 3): 1, (4, 3, 1, 3): 1}
    )
    assert got[1] == Counter({(1, 1, 3): 1, (2, 2, 3): 1})
    assert got[2] == Counter({(2, 0): 1, (3, 1): 1})
    # Four steps of R from each start: 1-2-3-4-1, 1-3-4-1-2, 1-3-4-1-3,
    # 2-3-4-1-2, 2-3-4-1-3, 3-4-1-2-3, 3-4-1-3-4, 4-1-2-3-4, 4-1-3-4-1.
    assert sum(got[3].values()) == 9
    assert got[3][(1, 1, 4)] == 1 and got[3][(4, 1, 4)] == 1


def test_path_values_and_modes_span_the_repetitions(spark, tmp_path):
    got = rows_on_both(
        spark,
        tmp_path,
        SQUARE,
        [
            "MATCH p = (x WHERE x.id = 1)-[r:R]->(z) ((a)-[e:R]->(b)){0,2} (y) "
            "RETURN y.id, length(p), nodes(p)[length(p)].id, edges(p)[0].w",
            # Four edges from 1 over R: TRAIL refuses 1-3-4-1-3 (1->3 twice),
            # ACYCLIC every return, SIMPLE a return only as the last step.
            "MATCH p = TRAIL (x WHERE x.id = 1) ((a)-[e:R]->(b)){4} (y) RETURN y.id",
            "MATCH p = ACYCLIC (x WHERE x.id = 1) ((a)-[e:R]->(b)){4} (y) RETURN y.id",
            "MATCH p = SIMPLE (x WHERE x.id = 1) ((a)-[e:R]->(b)){4} (y) RETURN y.id",
            "MATCH p = WALK (x WHERE x.id = 1) ((a)-[e:R]->(b)){4} (y) RETURN y.id",
            # A search prefix chooses among paths through the repetitions.
            "MATCH p = ANY SHORTEST (x WHERE x.id = 1) ((a)-[e:R]->(b)){1,4} (y) "
            "RETURN y.id, length(p)",
        ],
        {},
    )
    # 1->2 then 0..2 more: ends at 2 (1 edge), 3 (2), 4 (3); 1->3 then: 3, 4, 1.
    assert got[0] == Counter(
        {
            (2, 1, 2, 1): 1,
            (3, 2, 3, 1): 1,
            (4, 3, 4, 1): 1,
            (3, 1, 3, 5): 1,
            (4, 2, 4, 5): 1,
            (1, 3, 1, 5): 1,
        }
    )
    assert got[4] == Counter({(1,): 1, (2,): 1, (3,): 1})
    assert got[1] == Counter({(1,): 1, (2,): 1})
    assert got[2] == Counter()
    assert got[3] == Counter({(1,): 1})
    assert got[5] == Counter({(2, 1): 1, (3, 1): 1, (4, 2): 1, (1, 3): 1})


def test_misused_quantified_patterns_are_located_errors(errors):  # noqa: F811
    for text, words, where in (
        (
            "MATCH (a), (x) ((a)-[e]->(b)){1,2} (y) RETURN a",
            "bound outside the quantified path pattern",
            "line 1, column 16",
        ),
        (
            "MATCH (a) ((a)-[e]->(b)){1,2} RETURN a",
            "inside a quantified path pattern of this path",
            "line 1, column 7",
        ),
        (
            "MATCH (x) ((a)-[e]->(b) WHERE b.p > x.p){1,2} (y) RETURN y",
            "x",
            "line 1, column 37",
        ),
        (
            "MATCH (x) ((a)-[e]->{1,2}(b)){1,2} (y) RETURN y",
            "one hop",
            "line 1, column 15",
        ),
        ("MATCH (x)\n (y) RETURN y", "side by side", "line 2, column 2"),
        (
            "MATCH (x) ((a)-[e]->(b)){1,2} (y), (a)-[f]->(z) RETURN z",
            "group variable",
            "line 1, column 36",
        ),
        ("MATCH (x) ((a)-[e]->(b)){3,1} (y) RETURN y", "empty", "line 1, column 11"),
        # The same name inside and outside, in one path.
        (
            "MATCH (x) ((a)-[e]->(b)){1,2} (a) RETURN x",
            "inside a quantified path pattern of this path",
            "line 1, column 31",
        ),
        (
            "MATCH (x) ((a)-[e]->(b)){1,2} ((a)-[f]->(c)){1,2} RETURN x",
            "two quantified path patterns",
            "line 1, column 31",
        ),
        # Every path of a fixed repetition count has one length.
        (
            "MATCH p = ANY SHORTEST (x) ((a)-[e]->(b)){2} (y) RETURN y",
            "fixed length",
            "line 1, column 11",
        ),
    ):
        message = failure(errors, text)
        assert words in message and where in message, (text, message)


def test_explain_shows_the_repetition(errors):  # noqa: F811
    plan = errors.explain("MATCH (x) ((a)-[e:R]->(b) WHERE a.p < b.p){1,3} (y) RETURN y")
    assert "RepeatMatch" in plan and "{1,3}" in plan and "groups=a|e|b" in plan, plan
