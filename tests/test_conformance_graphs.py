"""The graph suites of GeaFlow's corpus (MATCH, RETURN, joins to graphs, ...).

Split from ``test_conformance.py`` so the two halves of the corpus run in
parallel test workers.

Also checks that each graph rule changed a plan somewhere in these suites,
which is what gives the rules-off run (``test_rules_off_graph.py``, in the
other worker) its meaning.
"""

from __future__ import annotations

import pytest

from tests.corpus_shards import (
    GRAPH_RULES,
    GRAPH_SUITES,
    newly_passing,
    regressed,
    run_shard,
)


@pytest.fixture(scope="module")
def rules_on(spark, corpus, tmp_path_factory):
    return run_shard(spark, corpus, tmp_path_factory.mktemp("graph-conformance"), GRAPH_SUITES)


def test_listed_graph_cases_pass(rules_on):
    report = rules_on.report
    assert len(report.results) >= 120, f"only {len(report.results)} graph cases ran"
    broken = regressed(report)
    assert not broken, "regressed:\n" + "\n".join(broken)


def test_newly_passing_graph_cases_are_listed(rules_on):
    new = newly_passing(rules_on.report)
    assert not new, (
        "these cases pass now; add them to tests/conformance/must_pass.txt:\n" + "\n".join(new)
    )


def test_graph_rules_fire_on_the_corpus(rules_on):
    assert set(GRAPH_RULES) <= rules_on.fired, (
        f"graph rules that never fired: {set(GRAPH_RULES) - rules_on.fired}"
    )
