"""The graph suites of GeaFlow's corpus (MATCH, RETURN, joins to graphs, ...).

Split from ``test_conformance.py`` so the two halves of the corpus run in
parallel test workers.

The graph rules (filter and label pushdown into matches, choosing where a
pattern starts, sql2graph) must only change how a MATCH runs, never its rows:
every listed case passes with the optimizer off too.  The rules-on run records
which rules changed a plan of each case; a case where none did runs the very
same plans with the optimizer off, so the rules-off run repeats only the cases
some rule rewrote.  Each graph rule must fire somewhere, or the rules-off run
would prove nothing about it.
"""

from __future__ import annotations

import re

import pytest

from tests.corpus_shards import (
    GRAPH_RULES,
    GRAPH_SUITES,
    must_pass,
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
    assert not new, "these cases pass now; add them to tests/conformance/must_pass.txt:\n" + "\n".join(new)


def test_graph_rules_fire_on_the_corpus(rules_on):
    assert set(GRAPH_RULES) <= rules_on.fired, (
        f"graph rules that never fired: {set(GRAPH_RULES) - rules_on.fired}"
    )


def test_rewritten_graph_cases_pass_with_rules_off(spark, corpus, tmp_path, rules_on):
    listed = set(must_pass())
    rewritten = sorted(
        cid for cid, rules in rules_on.fired_by_case.items() if rules and cid in listed
    )
    # Most graph cases have a filter or label to push down: the rerun is no token.
    assert len(rewritten) >= 60, f"only {len(rewritten)} listed graph cases were rewritten"
    off = run_shard(
        spark,
        corpus,
        tmp_path,
        [f"^{re.escape(cid)}$" for cid in rewritten],
        {"geaflow.dsl.optimizer.enabled": "false"},
    )
    assert sorted(r.id for r in off.report.results) == rewritten
    broken = [f"{r.id}: {r.status} {r.reason}" for r in off.report.results if r.status != "passed"]
    assert not broken, "with rules off:\n" + "\n".join(broken)
    assert not off.fired, f"rules ran although the optimizer was off: {off.fired}"
