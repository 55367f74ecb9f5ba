"""The SQL suites of the corpus with the optimizer switched off.

Rules (pushdown, pruning, constant folding, branch removal) must only change
how a plan runs, never its answers: every listed case of these suites passes
with ``geaflow.dsl.optimizer.enabled = false`` too.
"""

from __future__ import annotations

from tests.corpus_shards import assert_listed_cases_pass_with_rules_off

SQL_SUITES = (
    "AggregateTest",
    "CorrelateTest",
    "DistinctTest",
    "FilterTest",
    "ProjectTest",
    "SortTest",
    "TableScanTest",
    "UnionTest",
    "ValuesTest",
    "ViewTest",
    "TypesTest",
    "DateQuarterDayOfYearTest",
    "JsonParserTest",
    "MathSignCbrtTruncTest",
    "JDBCTest",
)


def test_sql_suites_pass_with_rules_off(spark, corpus, tmp_path):
    assert_listed_cases_pass_with_rules_off(spark, corpus, tmp_path, SQL_SUITES, at_least=52)
