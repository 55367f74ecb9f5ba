"""The SQL suites of the corpus with the optimizer switched off.

Rules (pushdown, pruning, constant folding, branch removal) must only change
how a plan runs, never its answers: every listed case of these suites passes
with ``geaflow.dsl.optimizer.enabled = false`` too.
"""

from __future__ import annotations

from tests.corpus_shards import must_pass, run_shard

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
    off = run_shard(spark, corpus, tmp_path, SQL_SUITES, {"geaflow.dsl.optimizer.enabled": "false"})
    report, fired = off.report, off.fired
    listed = set(must_pass())
    ran = [r for r in report.results if r.id in listed]
    assert len(ran) >= 52, f"only {len(ran)} listed SQL cases ran"
    broken = [f"{r.id}: {r.status} {r.reason}" for r in ran if r.status != "passed"]
    assert not broken, "with rules off:\n" + "\n".join(broken)
    assert not fired, f"rules ran although the optimizer was off: {fired}"
