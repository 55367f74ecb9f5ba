"""The graph suites of the corpus with the optimizer switched off.

Graph rules (filter and label pushdown into matches, choosing where a pattern
starts, sql2graph) must only change how a MATCH runs, never its rows: every
listed case of these suites passes with the optimizer off too.  That they do
fire with it on is checked in ``test_conformance_graphs.py``.
"""

from __future__ import annotations

from tests.corpus_shards import GRAPH_SUITES, must_pass, run_shard


def test_graph_suites_pass_with_rules_off(spark, corpus, tmp_path):
    off = run_shard(spark, corpus, tmp_path, GRAPH_SUITES, {"geaflow.dsl.optimizer.enabled": "false"})
    report, fired = off.report, off.fired
    listed = set(must_pass())
    ran = [r for r in report.results if r.id in listed]
    assert len(ran) >= 120, f"only {len(ran)} listed graph cases ran"
    broken = [f"{r.id}: {r.status} {r.reason}" for r in ran if r.status != "passed"]
    assert not broken, "with rules off:\n" + "\n".join(broken)
    assert not fired, f"rules ran although the optimizer was off: {fired}"
