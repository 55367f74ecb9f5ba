"""The rule-based optimizer: named, timed phases of pure rewrite rules.

    optimize(plan, config)                        # the phases of planner.rules,
                                                  # minus what config switches off
    optimize(plan, rules=[rule], checks=[check])  # what a test asks for

Each rule is a pure function ``plan -> plan`` (``planner/rules/<name>.py``).
A phase runs its rules in order and again while one of them changes the plan
(at most ``max_passes`` times).  Every rule application is timed and recorded,
and each ``check`` (``planner.checks.check_plan`` in the tests) looks at the
plan before and after it, as DuckDB's optimizer verifies after every pass.
``geaflow.dsl.optimizer.disabled.rules`` switches rules or whole phases off,
``geaflow.dsl.optimizer.enabled = false`` all of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from geaflow_sql.core.config import OPTIMIZER_ENABLED, Config

from .logical import LogicalNode
from .rules import PHASES, Phase, Rule

# (rule name, plan before the rule, plan after it); raises on a broken plan.
PlanCheck = Callable[[str, LogicalNode, LogicalNode], None]


@dataclass(frozen=True)
class RuleApplication:
    phase: str
    rule: str
    changed: bool
    seconds: float


@dataclass(frozen=True)
class PhaseRun:
    name: str
    passes: int
    seconds: float


@dataclass
class OptimizeResult:
    before: LogicalNode
    after: LogicalNode
    trace: list[RuleApplication] = field(default_factory=list)
    phases: list[PhaseRun] = field(default_factory=list)


def configured_phases(config: Config) -> tuple[Phase, ...]:
    """The phases of ``planner.rules`` without the rules ``config`` switches off."""
    if not config.get_bool(OPTIMIZER_ENABLED):
        return ()
    disabled = config.disabled_rules()
    return tuple(
        Phase(p.name, tuple(r for r in p.rules if r.name not in disabled))
        for p in PHASES
        if p.name not in disabled
    )


def optimize(
    plan: LogicalNode,
    config: Config | None = None,
    *,
    rules: Sequence[Phase] | Sequence[Rule] | None = None,
    checks: Sequence[PlanCheck] = (),
    max_passes: int = 3,
) -> OptimizeResult:
    """Run the phases (``rules``: phases, or rules that make one phase) over ``plan``."""
    if rules is None:
        phases = configured_phases(config if config is not None else Config())
    elif all(isinstance(r, Rule) for r in rules):
        phases = (Phase("rules", tuple(r for r in rules if isinstance(r, Rule))),)
    else:
        phases = tuple(p for p in rules if isinstance(p, Phase))
    result = OptimizeResult(plan, plan)
    current = plan
    for phase in phases:
        start = time.perf_counter()
        passes = 0
        for _ in range(max_passes):
            passes += 1
            changed_any = False
            for rule in phase.rules:
                rule_start = time.perf_counter()
                new = rule.apply(current)
                changed = new is not current and new != current
                result.trace.append(
                    RuleApplication(
                        phase.name, rule.name, changed, time.perf_counter() - rule_start
                    )
                )
                for check in checks:
                    check(rule.name, current, new)
                if changed:
                    changed_any = True
                    current = new
            if not changed_any:
                break
        result.phases.append(PhaseRun(phase.name, passes, time.perf_counter() - start))
    result.after = current
    return result
