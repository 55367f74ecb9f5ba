"""Golden-file tests of the optimizer rules, one file per rule.

``tests/golden/rules/<rule>.txt`` holds pairs of an input query and the plan
``planner.explain.render_logical`` prints after the optimizer ran *only that
rule* (passed to ``optimize(..., rules=[rule])``, with the plan check
``planner.checks.check_plan`` after every application)::

    == a name for the case
    SELECT ... ;
    --
    <the expected plan>

A case of several statements separated by ``;`` is planned as one job (a
``Job`` over each statement's plan).  Two markers build plans the binder never
makes by itself but other planners (and the graph planner) do: ``@nosink``
before a statement adds it to the job without its sink, an intermediate result
nothing reads; ``@union`` wraps the statement's query in a one-input UNION.
``== name | after: rule_a, rule_b`` first runs those rules (each alone), so a
rule can be shown on the plans the rules before it leave.  A case may begin
with ``USE GRAPH social;`` to plan on the catalog's graph of several labels.
Set ``GEAFLOW_SQL_REGEN_GOLDEN=1`` to rewrite the expected plans from the
current output (then read the diff before committing it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from geaflow_sql.core import types as T
from geaflow_sql.core.config import Config
from planner.checks import check_plan
from planner.explain import render_logical
from planner.expressions import ref
from planner.logical import Field, InvalidPlan, LogicalNode, Project
from planner.optimizer import OptimizeResult, optimize
from planner.rules import PHASES, Rule, all_rule_names, rule_named
from tests.golden_plans import catalog, load_cases, plan_of, rewrite

GOLDEN = Path(__file__).parent / "golden" / "rules"


def run_rule(plan: LogicalNode, rule: str) -> OptimizeResult:
    """The optimizer with one rule, and the plan check after each application."""
    return optimize(plan, rules=[rule_named(rule)], checks=[check_plan])


RULE_FILES = sorted(GOLDEN.glob("*.txt"))


def test_every_rule_has_a_golden_file():
    assert {p.stem for p in RULE_FILES} >= set(all_rule_names())


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_golden_file(path: Path):
    rule = path.stem
    cases = load_cases(path)
    assert cases, f"{path} has no cases"
    cat = catalog()
    regen = os.environ.get("GEAFLOW_SQL_REGEN_GOLDEN") == "1"
    actual: dict[str, str] = {}
    failures = []
    for case in cases:
        plan = plan_of(case.query, cat)
        for before in case.after:
            plan = run_rule(plan, before).after
        result = run_rule(plan, rule)
        applied = {a.rule for a in result.trace}
        assert applied <= {rule}, f"other rules ran: {applied}"
        text = render_logical(result.after)
        actual[case.name] = text
        if text != case.expected:
            failures.append(
                f"== {case.title}\n{case.query}\n-- expected\n{case.expected}\n-- got\n{text}"
            )
    if regen:
        rewrite(path, cases, actual)
        return
    assert not failures, "\n\n".join(failures)


def test_a_disabled_rule_does_not_run():
    cat = catalog()
    plan = plan_of("SELECT name FROM users WHERE 1 + 1 = 2 AND age > 3", cat)
    others = [r for r in all_rule_names() if r != "constant_folding"]
    on = optimize(plan, Config({"geaflow.dsl.optimizer.disabled.rules": ",".join(others)}))
    off = optimize(
        plan, Config({"geaflow.dsl.optimizer.disabled.rules": ",".join(all_rule_names())})
    )
    assert on.after != plan
    assert {a.rule for a in on.trace} == {"constant_folding"}
    assert off.after == plan and not off.trace
    everything_off = optimize(plan, Config({"geaflow.dsl.optimizer.enabled": "false"}))
    assert everything_off.after == plan


def test_phases_are_named_and_timed():
    plan = plan_of("SELECT name FROM users WHERE 1 + 1 = 2 AND age > 3", catalog())
    result = optimize(plan, Config({}))
    assert [p.name for p in result.phases] == [p.name for p in PHASES]
    assert all(p.seconds >= 0 and 1 <= p.passes <= 3 for p in result.phases)
    assert {a.phase for a in result.trace} == {p.name for p in PHASES}


def test_the_plan_check_catches_a_rule_that_changes_the_fields():
    """A rule that drops an output field breaks the plan; the check after it says which."""

    def drop_last_field(node: LogicalNode) -> LogicalNode:
        if isinstance(node, Project) and len(node.exprs) > 1:
            return Project(node.input, node.exprs[:-1], node.fields_[:-1])
        return node

    plan = plan_of("SELECT name, age FROM users", catalog())
    broken = Rule("drop_last_field", node_fn=drop_last_field)
    assert optimize(plan, rules=[broken]).after != plan  # unchecked, it goes through
    with pytest.raises(InvalidPlan, match="drop_last_field: the plan's fields became"):
        optimize(plan, rules=[broken], checks=[check_plan])


def test_a_node_checks_its_invariants_when_built():
    plan = plan_of("SELECT name FROM users WHERE age > 3", catalog())
    scan = plan.inputs[0].inputs[0]
    with pytest.raises(InvalidPlan, match=r"reads field \$7 of an input of 4 fields"):
        Project(scan, (ref(7, T.INTEGER),), (Field("x", T.INTEGER),))
