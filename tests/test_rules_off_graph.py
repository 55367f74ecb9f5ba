"""The graph suites of the corpus with the optimizer switched off.

Graph rules (filter and label pushdown into matches, choosing where a pattern
starts, sql2graph) must only change how a MATCH runs, never its rows: every
listed case of these suites passes with the optimizer off too.  That they do
fire with it on is checked in ``test_conformance_graphs.py``.
"""

from __future__ import annotations

from tests.corpus_shards import GRAPH_SUITES, assert_listed_cases_pass_with_rules_off


def test_graph_suites_pass_with_rules_off(spark, corpus, tmp_path):
    assert_listed_cases_pass_with_rules_off(spark, corpus, tmp_path, GRAPH_SUITES, at_least=120)
