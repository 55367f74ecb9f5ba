"""Weighted search prefixes: ANY CHEAPEST, ALL CHEAPEST, CHEAPEST k [GROUPS].

``MATCH p = ANY CHEAPEST (a)-[e:R COST e.w]->{1,4}(b)`` keeps, per pair of
end vertices, the path of least cost: the sum over its edges of the COST of
the edge pattern each matched (1 for a pattern without one, so with no COST
CHEAPEST is SHORTEST).  A path with a null cost is no candidate.
``path_cost(p)`` returns the cost.  (PGQL and the GQL drafts write it so;
Kuzu's ``* WSHORTEST(w)`` is the same search over one weighted edge.)

The oracle: Kuzu enumerates every walk of the bounded run with the weights
of its edges (its WALK semantics, ``is_trail``/``is_acyclic`` for the mode)
and the selection is done here by hand, per pair of end vertices, on the
costs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from tests.test_kuzu_beyond import (
    _SETTINGS,
    SQUARE,
    _labels,
    check_chosen,
    draw_run,
    failure,
    least_per_pair,
)
from tests.test_kuzu_differential import Graph, geaflow_rows, graphs

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PER_GRAPH = 10

# search -> (k, k counts costs)
SEARCHES = {
    "ANY CHEAPEST": (1, False),
    "ALL CHEAPEST": (1, True),
    "CHEAPEST 2": (2, False),
    "CHEAPEST 2 GROUPS": (2, True),
}
# COST written on the edge -> the cost of an edge of weight w (None: null)
COSTS = {
    "": lambda w: 1,
    " COST e.w": lambda w: w,
    " COST e.w * 2 + 1": lambda w: None if w is None else 2 * w + 1,
    " COST CASE WHEN e.w > 2 THEN 0 ELSE 3 END": lambda w: 0 if w is not None and w > 2 else 3,
}


@dataclass(frozen=True)
class Weighted:
    gql: str
    cypher: str  # every walk: (a.id, b.id, its edges' weights)
    search: str
    cost: str


def select(walks: Counter, search: str, cost: str) -> Counter:
    """Per pair of end vertices, the ``k`` cheapest walks (their costs), or
    every walk of the ``k`` least costs; walks of a null cost left out."""
    k, groups = SEARCHES[search]
    each = COSTS[cost]
    by_pair: dict[tuple, list[int]] = {}
    for (a, b, weights), times in walks.items():
        costs = [each(w) for w in weights]
        if any(c is None for c in costs):
            continue
        by_pair.setdefault((a, b), []).extend([sum(costs)] * times)
    return least_per_pair(by_pair, k, groups)


@st.composite
def weighted_pairs(draw) -> Weighted:
    """``p = SEARCH [MODE] (a)-[e ... COST ...]-{m,n}(b)``, conditions on
    ``a`` and on every edge of the run."""
    search = draw(st.sampled_from(list(SEARCHES)))
    cost = draw(st.sampled_from(list(COSTS)))
    a_labels, labels, left, right, a_cond, e_cond = draw_run(draw, "<>")
    mode = draw(st.sampled_from(["", "", "TRAIL", "ACYCLIC"]))
    # (Kuzu's *0..n misses some walks of no edges and repeats others: a run
    # of no edges is checked by hand)
    low = draw(st.integers(1, 2))
    high = draw(st.integers(2, 4))  # ({1,1} is one hop: no mode means anything there)
    a_g = f"(a{_labels(a_labels, True)}{' WHERE ' + a_cond if a_cond else ''})"
    e_g = f"[e{labels}{' WHERE ' + e_cond if e_cond else ''}{cost}]"
    prefix = search.replace(" GROUPS", f" {mode} GROUPS") if "GROUPS" in search else search
    prefix = prefix if "GROUPS" in search or not mode else f"{search} {mode}"
    gql = (
        f"MATCH p = {prefix} {a_g}{left}{e_g}{right}{{{low},{high}}}(b) "
        "RETURN a.id, b.id, path_cost(p)"
    )
    conds = [a_cond] if a_cond else []
    conds += {"": [], "TRAIL": ["is_trail(p)"], "ACYCLIC": ["is_acyclic(p)"]}[mode]
    lam = f" (e, n | WHERE {e_cond})" if e_cond else ""
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    cypher = (
        f"MATCH p = (a{_labels(a_labels, False)}){left}[e{labels}*{low}..{high}{lam}]{right}(b)"
        f"{where} RETURN a.id, b.id, properties(rels(p), 'w')"
    )
    return Weighted(gql, cypher, search, cost)


@settings(_SETTINGS, max_examples=4)
@given(g=graphs(), qs=st.lists(weighted_pairs(), min_size=PER_GRAPH, max_size=PER_GRAPH))
def test_cheapest_paths_agree_with_kuzus_walks(spark, tmp_path_factory, g, qs):
    tmp = tmp_path_factory.mktemp("cheapest")
    check_chosen(spark, tmp, g, qs, {}, lambda p, w: select(w, p.search, p.cost))


def test_cheapest_paths_by_hand(spark, tmp_path):
    """On SQUARE (R: 1->2 w1, 2->3 w2, 3->4 w3, 4->1 w4, chord 1->3 w5; S: 2->1)."""
    from_1 = "(a WHERE a.id = 1)"
    queries = [
        # The cheapest way to 3 is the longer one, 1->2->3 (3 < 5).
        f"MATCH p = ANY CHEAPEST {from_1}-[e:R COST e.w]->{{1,4}}(b) "
        "RETURN b.id, path_cost(p), length(p)",
        # Ties: the chord costs 2, every other edge 1.
        f"MATCH p = ALL CHEAPEST {from_1}-[e:R COST CASE WHEN e.w = 5 THEN 2 ELSE 1 END]->"
        "{1,4}(b) RETURN b.id, path_cost(p)",
        # A null cost: 2->3 cannot be taken.
        f"MATCH p = ANY CHEAPEST {from_1}-[e:R COST CASE WHEN e.w = 2 THEN NULL ELSE e.w END]->"
        "{1,4}(b) RETURN b.id, path_cost(p)",
        # A quantified sub-path: its first edge costs its weight, its second nothing.
        f"MATCH p = ANY CHEAPEST {from_1} ((x)-[e:R COST e.w]->(y)-[f:R COST 0]->(z)){{1,2}} (b) "
        "RETURN b.id, path_cost(p)",
        # Without COST, CHEAPEST is SHORTEST: every edge costs 1.
        f"MATCH p = ANY CHEAPEST {from_1}-[e:R]->{{1,4}}(b) RETURN b.id, path_cost(p), length(p)",
        # Two cheapest, then the MATCH's WHERE on the chosen paths.
        f"MATCH p = CHEAPEST 2 {from_1}-[e:R COST e.w]->{{1,4}}(b) WHERE b.id = 3 "
        "RETURN path_cost(p)",
        # Runs of no edges cost nothing; the next cheapest way back to 1 costs 10.
        f"MATCH p = CHEAPEST 2 {from_1}-[e:R COST e.w]->{{0,4}}(b) WHERE b.id = 1 "
        "RETURN path_cost(p), length(p)",
        # Fixed length: the cheaper of two parallel ways of one hop each.
        "MATCH p = ANY CHEAPEST (a WHERE a.id = 2)-[e COST e.w]-(b WHERE b.id = 1) "
        "RETURN path_cost(p), label(e)",
    ]
    got = geaflow_rows(spark, tmp_path / "square", SQUARE, queries, {})
    assert got[0] == Counter({(2, 1, 1): 1, (3, 3, 2): 1, (4, 6, 3): 1, (1, 10, 4): 1})
    assert got[1] == Counter({(2, 1): 1, (3, 2): 2, (4, 3): 2, (1, 4): 2})
    assert got[2] == Counter({(2, 1): 1, (3, 5): 1, (4, 8): 1, (1, 12): 1})
    assert got[3] == Counter({(3, 1): 1, (4, 5): 1, (1, 4): 1, (2, 9): 1})
    assert got[4] == Counter({(2, 1, 1): 1, (3, 1, 1): 1, (4, 2, 2): 1, (1, 3, 3): 1})
    assert got[5] == Counter({(3,): 1, (5,): 1})
    assert got[6] == Counter({(0, 0): 1, (10, 4): 1})
    assert got[7] == Counter({(1, "R"): 1})


def test_a_cost_may_be_fractional(spark, tmp_path):
    g = Graph(
        (("A", 1, 1), ("A", 2, 2), ("A", 3, 3)), (("R", 1, 2, 1), ("R", 2, 3, 1), ("R", 1, 3, 3))
    )
    got = geaflow_rows(
        spark,
        tmp_path,
        g,
        [
            "MATCH p = ANY CHEAPEST (a WHERE a.id = 1)-[e COST e.w / 4.0]->{1,2}(b) "
            "WHERE b.id = 3 RETURN path_cost(p), length(p)"
        ],
        {},
    )
    assert got[0] == Counter({(0.5, 2): 1})


def test_misused_costs_are_located_errors(errors):
    for text, words, where in (
        (
            "MATCH p = (a)-[e:R COST e.w]->{1,3}(b) RETURN a",
            "under a CHEAPEST search",
            "line 1, column 25",
        ),
        (
            "MATCH p = ANY CHEAPEST (a)-[e:R COST a.p]->{1,3}(b) RETURN a",
            "may only read the edge",
            "line 1, column 38",
        ),
        (
            "MATCH p = ANY CHEAPEST (a)-[e:R COST 'x']->{1,3}(b) RETURN a",
            "COST is a number",
            "line 1, column 38",
        ),
        (
            "MATCH p = ANY SHORTEST (a)-[e:R]->{1,3}(b) RETURN path_cost(p)",
            "has no cost",
            "line 1, column 51",
        ),
        (
            "MATCH p = ANY SHORTEST (a)-[e:R COST e.w]->{1,3}(b) RETURN a",
            "search is ANY SHORTEST",
            "line 1, column 38",
        ),
        ("MATCH CHEAPEST (a)-[e:R]->{1,3}(b) RETURN a", "number of paths", "line 1, column 7"),
        ("MATCH ANY CHEAPEST (a) RETURN a", "lone vertex", "line 1, column 7"),
        ("MATCH (a)-[:R COST 1]->(b) RETURN a", "unexpected", "line 1, column 15"),
    ):
        message = failure(errors, text)
        assert words in message and where in message, message


def test_a_variable_named_cost_is_still_a_name(errors):
    # COST is a keyword only after a named edge's other parts.
    errors.execute("MATCH (a)-[cost:R]->(b) RETURN cost.w")
    errors.execute("MATCH (a)-[cost]->(b) RETURN cost.w")
    errors.execute("MATCH (cost)-[e:R]->(b) RETURN cost.p")


def test_explain_shows_the_cost_order(errors):
    plan = errors.explain(
        "MATCH p = ALL CHEAPEST (a)-[e:R COST e.w]->{1,3}(b) RETURN a.id, path_cost(p)"
    )
    assert "GroupLimit" in plan and "order=[$cost$p" in plan and "groups=1" in plan, plan
    assert "AGGREGATE(" in plan, plan
    # One variable-length edge: the search drops walks a cheaper earlier one makes needless.
    assert "cheapest walks (all, cost=" in plan, plan
