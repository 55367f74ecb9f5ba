"""Golden-file tests of the optimizer rules, one file per rule.

``tests/golden/rules/<rule>.txt`` holds pairs of an input query and the plan
``planner.explain.render_logical`` prints after the optimizer ran with *only
that rule* enabled (every other rule switched off through
``geaflow.dsl.optimizer.disabled.rules``)::

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
from dataclasses import dataclass
from pathlib import Path

import pytest

from geaflow_sql.core.catalog import Catalog
from geaflow_sql.core.config import Config
from grammar.parser import parse
from planner.binder import BindContext, StatementBinder
from planner.explain import render_logical
from planner.logical import Job, LogicalNode, Union
from planner.optimizer import optimize
from planner.rules import all_rule_names
from planner.statements import SessionChange

GOLDEN = Path(__file__).parent / "golden" / "rules"

SCHEMA = """
CREATE TABLE users (id bigint, name varchar, age int, city varchar)
  WITH (type='file', geaflow.dsl.file.path='/tmp/users.txt');
CREATE TABLE orders (oid bigint, uid bigint, amount double, status varchar)
  WITH (type='file', geaflow.dsl.file.path='/tmp/orders.txt');
CREATE TABLE items (iid bigint, oid bigint, price double)
  WITH (type='file', geaflow.dsl.file.path='/tmp/items.txt');
CREATE TABLE sink (a bigint, b varchar)
  WITH (type='file', geaflow.dsl.file.path='/tmp/sink.txt');
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar, age int),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double)
) WITH (storeType='memory');
CREATE GRAPH social (
  Vertex person (id bigint ID, name varchar, age int),
  Vertex software (id bigint ID, name varchar, lang varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double),
  Edge created (src bigint SOURCE ID, dst bigint DESTINATION ID, weight double)
) WITH (storeType='memory');
USE GRAPH g;
"""


@dataclass
class Case:
    name: str
    query: str
    expected: str

    @property
    def title(self) -> str:
        return self.name.split("|")[0].strip()

    @property
    def after(self) -> list[str]:
        if "| after:" not in self.name:
            return []
        return [r.strip() for r in self.name.split("| after:", 1)[1].split(",") if r.strip()]


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    name: str | None = None
    query: list[str] = []
    plan: list[str] = []
    in_plan = False

    def flush() -> None:
        if name is not None:
            cases.append(Case(name, "\n".join(query).strip(), "\n".join(plan).rstrip()))

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("== "):
            flush()
            name, query, plan, in_plan = line[3:].strip(), [], [], False
        elif name is None:
            continue  # header comments
        elif line.strip() == "--" and not in_plan:
            in_plan = True
        elif in_plan:
            plan.append(line)
        else:
            query.append(line)
    flush()
    return cases


def catalog() -> Catalog:
    cat = Catalog()
    ctx = BindContext(cat, Config({}))
    for st in parse(SCHEMA).statements:
        bound = StatementBinder(ctx).bind(st)
        if isinstance(bound, SessionChange):
            cat.current_graph = bound.value.name
        elif bound.kind == "graph":  # type: ignore[attr-defined]
            cat.add_graph(bound.record)  # type: ignore[attr-defined]
        else:
            cat.add_table(bound.record)  # type: ignore[attr-defined]
    return cat


def plan_of(text: str, cat: Catalog) -> LogicalNode:
    roots: list[LogicalNode] = []
    # A case may start with ``USE GRAPH social;`` (for several labels); the
    # next case starts on ``g`` again.
    current = cat.current_graph
    for raw in [p.strip() for p in text.split(";") if p.strip()]:
        detach = raw.startswith("@nosink")
        wrap = raw.startswith("@union")
        script = parse(raw.removeprefix("@nosink").removeprefix("@union").strip())
        ctx = BindContext(cat, Config({}), script.text)
        bound = StatementBinder(ctx).bind(script.statements[0])
        if isinstance(bound, SessionChange):
            cat.current_graph = bound.value.name
            continue
        root = bound.root  # type: ignore[attr-defined]
        if wrap:
            root = root.with_inputs(Union((root.inputs[0],), True))
        roots.append(root.inputs[0] if detach else root)
    cat.current_graph = current
    return roots[0] if len(roots) == 1 else Job(tuple(roots))


def only(rule: str) -> Config:
    others = [r for r in all_rule_names() if r != rule]
    return Config({"geaflow.dsl.optimizer.disabled.rules": ",".join(others)})


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
            plan = optimize(plan, only(before)).after
        result = optimize(plan, only(rule))
        applied = {a.rule for a in result.trace}
        assert applied <= {rule}, f"other rules ran: {applied}"
        text = render_logical(result.after)
        actual[case.name] = text
        if text != case.expected:
            failures.append(
                f"== {case.title}\n{case.query}\n-- expected\n{case.expected}\n-- got\n{text}"
            )
    if regen:
        _rewrite(path, cases, actual)
        return
    assert not failures, "\n\n".join(failures)


def test_a_disabled_rule_does_not_run():
    cat = catalog()
    plan = plan_of("SELECT name FROM users WHERE 1 + 1 = 2 AND age > 3", cat)
    on = optimize(plan, only("constant_folding"))
    off = optimize(
        plan, Config({"geaflow.dsl.optimizer.disabled.rules": ",".join(all_rule_names())})
    )
    assert on.after != plan
    assert off.after == plan and not off.trace
    everything_off = optimize(plan, Config({"geaflow.dsl.optimizer.enabled": "false"}))
    assert everything_off.after == plan


def _rewrite(path: Path, cases: list[Case], actual: dict[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    header = text.split("\n== ", 1)[0] if not text.startswith("== ") else ""
    out = [header.rstrip(), ""] if header.strip() else []
    for case in cases:
        out += [f"== {case.name}", case.query, "--", actual[case.name], ""]
    path.write_text("\n".join(out), encoding="utf-8")
