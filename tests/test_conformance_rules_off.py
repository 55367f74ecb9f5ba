"""The SQL and graph conformance suites with the optimizer switched off.

Rules (pushdown, pruning, folding, label pushdown, choosing where a pattern
starts, sql2graph) must only change how a plan runs, never its answers: every
listed case of these suites passes with ``geaflow.dsl.optimizer.enabled =
false`` too.  The run with rules on is ``test_conformance.py``, which also
checks that each graph rule fired somewhere on the corpus.
"""

from __future__ import annotations

import pytest

from tests.test_conformance import must_pass

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

GRAPH_SUITES = (
    "GQLMatchTest",
    "GQLReturnTest",
    "GQLFilterTest",
    "GQLJoinTest",
    "GQLLetTest",
    "GQLSubQueryTest",
    "GQLContinueMatchTest",
    "GQLLoopMatchTest",
    "GQLUnionTest",
    "GQLDistinctTest",
    "GQLSortTest",
    "GQLParameterRequestTest",
    "GQLSourceDestinationTest",
    "GQLConstraintTest",
    "GQLGlobalVariableTest",
    "GQLWriteAndReadTest",
    "JoinToGraphTest",
)


@pytest.mark.parametrize(
    "suites, at_least", [(SQL_SUITES, 52), (GRAPH_SUITES, 150)], ids=["sql", "graph"]
)
def test_suites_pass_with_rules_off(spark, corpus, tmp_path, monkeypatch, suites, at_least):
    import planner.optimizer as optimizer
    import runtime.executor as executor
    from geaflow_sql.conformance import ConformanceRunner

    fired: set[str] = set()
    real = optimizer.optimize

    def spy(plan, config, max_passes=3):
        result = real(plan, config, max_passes)
        fired.update(a.rule for a in result.trace if a.changed)
        return result

    monkeypatch.setattr(executor, "optimize", spy)
    runner = ConformanceRunner(corpus, spark=spark, work_dir=tmp_path)
    report = runner.run(suites, {"geaflow.dsl.optimizer.enabled": "false"})
    listed = set(must_pass())
    ran = [r for r in report.results if r.id in listed]
    assert len(ran) >= at_least, f"only {len(ran)} listed cases ran"
    broken = [f"{r.id}: {r.status} {r.reason}" for r in ran if r.status != "passed"]
    assert not broken, "with rules off:\n" + "\n".join(broken)
    assert not fired, f"rules ran although the optimizer was off: {fired}"
