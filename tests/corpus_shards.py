"""The conformance corpus split in two shards that run in parallel test workers.

The corpus is the slowest part of the test run, so its cases are split by
suite: graph queries in one shard, everything else (SQL, algorithms,
streams) in the other.  Each shard checks its own cases against the
must-pass list; together they cover every case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MUST_PASS = Path(__file__).parent / "conformance" / "must_pass.txt"

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

# Rules that rewrite graph plans; the graph shard must see each of them fire
# (a rule that never applies would make the rules-off run prove nothing).
GRAPH_RULES = (
    "push_filter_into_vertex_match",
    "push_filter_into_edge_match",
    "push_label_into_match",
    "choose_match_start",
    "sql2graph",
)


def must_pass() -> list[str]:
    if not MUST_PASS.exists():
        return []
    return [
        ln.strip()
        for ln in MUST_PASS.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


def corpus_suites(corpus: Path) -> list[str]:
    cases = json.loads((corpus / "cases.json").read_text(encoding="utf-8"))["cases"]
    return sorted({c["suite"] for c in cases})


def corpus_ids(corpus: Path) -> set[str]:
    cases = json.loads((corpus / "cases.json").read_text(encoding="utf-8"))["cases"]
    return {c["id"] for c in cases}


def other_suites(corpus: Path) -> list[str]:
    return [s for s in corpus_suites(corpus) if s not in GRAPH_SUITES]


@dataclass
class ShardRun:
    """A shard's report and, per case, the rules that changed one of its plans."""

    report: Any
    fired_by_case: dict[str, set[str]] = field(default_factory=dict)

    @property
    def fired(self) -> set[str]:
        return set().union(*self.fired_by_case.values()) if self.fired_by_case else set()


def run_shard(
    spark: Any,
    corpus: Path,
    work: Path,
    suites: list[str] | tuple[str, ...],
    conf: dict | None = None,
) -> ShardRun:
    """Run a shard (suite names or case ids) with the optimizer spied on."""
    import pytest

    import planner.optimizer as optimizer
    import runtime.plans as plans
    from geaflow_sql.conformance import ConformanceRunner
    from planner.checks import check_plan

    run = ShardRun(None)
    current: list[str] = [""]
    real = optimizer.optimize

    def spy(plan, config=None, **kwargs):
        # The plan check runs after every rule on every corpus statement.
        result = real(plan, config, checks=[check_plan], **kwargs)
        run.fired_by_case.setdefault(current[0], set()).update(
            a.rule for a in result.trace if a.changed
        )
        return result

    # A generous per-case limit: a slow CI machine must not turn a passing case into a failure.
    runner = ConformanceRunner(corpus, spark=spark, work_dir=work, timeout=600)
    real_case = runner.run_case

    def run_case(case, run_dir, case_conf):
        current[0] = case["id"]
        run.fired_by_case.setdefault(case["id"], set())
        return real_case(case, run_dir, case_conf)

    runner.run_case = run_case  # type: ignore[method-assign]
    mp = pytest.MonkeyPatch()
    mp.setattr(plans, "optimize", spy)
    try:
        run.report = runner.run(list(suites), conf or {})  # suite names and ids match exactly
    finally:
        mp.undo()
    print("\n" + run.report.summary())
    return run


def regressed(report: Any) -> list[str]:
    listed = set(must_pass())
    return [
        f"{r.id}: {r.status} {r.reason}"
        for r in report.results
        if r.id in listed and r.status != "passed"
    ]


def newly_passing(report: Any) -> list[str]:
    listed = set(must_pass())
    return sorted(r.id for r in report.results if r.status == "passed" and r.id not in listed)


def assert_listed_cases_pass_with_rules_off(
    spark: Any, corpus: Path, work: Path, suites: Any, at_least: int
) -> None:
    """Every listed case of ``suites`` passes with the optimizer switched off,
    at least ``at_least`` of them ran, and no rule fired.

    These runs also keep every query on Spark (``geaflow.dsl.query.engine =
    distributed``): with rules on, the queries the local engine runs go
    there, so between them the two runs check both engines on the corpus."""
    off = run_shard(
        spark,
        corpus,
        work,
        suites,
        {"geaflow.dsl.optimizer.enabled": "false", "geaflow.dsl.query.engine": "distributed"},
    )
    listed = set(must_pass())
    ran = [r for r in off.report.results if r.id in listed]
    assert len(ran) >= at_least, f"only {len(ran)} listed cases ran"
    broken = [f"{r.id}: {r.status} {r.reason}" for r in ran if r.status != "passed"]
    assert not broken, "with rules off:\n" + "\n".join(broken)
    assert not off.fired, f"rules ran although the optimizer was off: {off.fired}"
