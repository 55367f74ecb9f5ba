"""Golden files of the PipelineGraph and the ExecutionGroups (no Spark needed).

``tests/golden/physical/<name>.txt`` holds cases of representative statements
(``== name`` / statements / ``--`` / expected text, as the rule goldens) and
the PipelineGraph and ExecutionGroups EXPLAIN prints for them after every
rule ran.  ``== name | windowed`` plans the statements as one windowed job
(the tables are read in windows); otherwise a case is one batch statement.
Set ``GEAFLOW_SQL_REGEN_GOLDEN=1`` to rewrite the expected text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from geaflow_sql.core.config import Config
from planner.explain import render_groups, render_pipeline
from planner.logical import Job, LogicalNode
from planner.optimizer import optimize
from planner.physical import build_execution_graph
from planner.pipeline import build_pipeline
from tests.golden_plans import catalog, load_cases, plan_of, rewrite

GOLDEN = Path(__file__).parent / "golden" / "physical"
FILES = sorted(GOLDEN.glob("*.txt"))


def physical_text(plan: LogicalNode, windowed: bool) -> str:
    config = Config({})
    roots = plan.inputs if isinstance(plan, Job) else (plan,)
    optimized = [optimize(r, config).after for r in roots]
    root = optimized[0] if len(optimized) == 1 else Job(tuple(optimized))
    pipeline = build_pipeline(root, config)
    groups = build_execution_graph(pipeline, windowed)
    return render_pipeline(pipeline) + "\n" + render_groups(groups)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_physical_golden_file(path: Path) -> None:
    cases = load_cases(path)
    assert cases, f"{path} has no cases"
    cat = catalog()
    actual: dict[str, str] = {}
    failures = []
    for case in cases:
        windowed = case.name.rstrip().endswith("| windowed")
        text = physical_text(plan_of(case.query, cat), windowed)
        actual[case.name] = text
        if text != case.expected:
            failures.append(f"== {case.title}\n-- expected\n{case.expected}\n-- got\n{text}")
    if os.environ.get("GEAFLOW_SQL_REGEN_GOLDEN") == "1":
        rewrite(path, cases, actual)
        return
    assert not failures, "\n\n".join(failures)
