"""The rule-based optimizer: ordered, named phases of pure rewrite rules.

Each rule is a pure function ``plan -> plan`` (``planner/rules/<name>.py``).
Phases follow GeaFlow's grouping (pre-rewrite, logical, post-optimize).  Any
rule can be switched off with ``geaflow.dsl.optimizer.disabled.rules`` (or all
with ``geaflow.dsl.optimizer.enabled = false``); every application is timed
and recorded, and in tests followed by a plan check.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from geaflow_sql.core.config import OPTIMIZER_ENABLED, Config

from .logical import LogicalNode
from .rules import PHASES, Rule


@dataclass(frozen=True)
class RuleApplication:
    phase: str
    rule: str
    changed: bool
    seconds: float


@dataclass
class OptimizeResult:
    before: LogicalNode
    after: LogicalNode
    trace: list[RuleApplication] = field(default_factory=list)


# Called after every rule in tests, to check plan invariants.
_CHECKS: list[Callable[[str, LogicalNode], None]] = []


def add_plan_check(check: Callable[[str, LogicalNode], None]) -> None:
    _CHECKS.append(check)


def remove_plan_check(check: Callable[[str, LogicalNode], None]) -> None:
    if check in _CHECKS:
        _CHECKS.remove(check)


def enabled_rules(config: Config) -> list[tuple[str, Rule]]:
    if not config.get_bool(OPTIMIZER_ENABLED):
        return []
    disabled = config.disabled_rules()
    out = []
    for phase, rules in PHASES:
        for rule in rules:
            if rule.name not in disabled and phase not in disabled:
                out.append((phase, rule))
    return out


def optimize(plan: LogicalNode, config: Config, max_passes: int = 3) -> OptimizeResult:
    result = OptimizeResult(plan, plan)
    current = plan
    rules = enabled_rules(config)
    for phase_name, phase_rules in PHASES:
        active = [r for p, r in rules if p == phase_name and r in phase_rules]
        for _ in range(max_passes):
            changed_any = False
            for rule in active:
                start = time.perf_counter()
                new = rule.apply(current)
                changed = new is not current and new != current
                result.trace.append(
                    RuleApplication(phase_name, rule.name, changed, time.perf_counter() - start)
                )
                for check in _CHECKS:
                    check(rule.name, new)
                if changed:
                    changed_any = True
                    current = new
            if not changed_any:
                break
    result.after = current
    return result
