"""The graph suites of GeaFlow's corpus (MATCH, RETURN, joins to graphs, ...).

Split from ``test_conformance.py`` so the two halves of the corpus run in
parallel test workers.  Also checks that each graph rule fired somewhere in
these suites, which is what gives the rules-off run its meaning.
"""

from __future__ import annotations

import pytest

from tests.corpus_shards import GRAPH_RULES, GRAPH_SUITES, newly_passing, regressed, run_shard

FIRED: set[str] = set()


@pytest.fixture(scope="module")
def report(spark, corpus, tmp_path_factory):
    rep, fired = run_shard(spark, corpus, tmp_path_factory.mktemp("graph-conformance"), GRAPH_SUITES)
    FIRED.update(fired)
    return rep


def test_listed_graph_cases_pass(report):
    assert len(report.results) >= 120, f"only {len(report.results)} graph cases ran"
    broken = regressed(report)
    assert not broken, "regressed:\n" + "\n".join(broken)


def test_newly_passing_graph_cases_are_listed(report):
    new = newly_passing(report)
    assert not new, "these cases pass now; add them to tests/conformance/must_pass.txt:\n" + "\n".join(new)


def test_graph_rules_fire_on_the_corpus(report):
    assert set(GRAPH_RULES) <= FIRED, f"graph rules that never fired: {set(GRAPH_RULES) - FIRED}"
