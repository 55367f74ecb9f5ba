"""Golden files of plans: cases of ``== name`` / statements / ``--`` / expected text.

Shared by the rule goldens (``test_rules_golden.py``) and the PipelineGraph
and ExecutionGroups goldens (``test_physical_golden.py``), over one catalog
of tables and graphs.  ``GEAFLOW_SQL_REGEN_GOLDEN=1`` rewrites the expected
text from the current output (then read the diff before committing it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from geaflow_sql.core.catalog import Catalog
from geaflow_sql.core.config import Config
from grammar.parser import parse
from planner.binder import BindContext, StatementBinder
from planner.logical import Job, LogicalNode, Union
from planner.statements import SessionChange

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


def rewrite(path: Path, cases: list[Case], actual: dict[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    header = text.split("\n== ", 1)[0] if not text.startswith("== ") else ""
    out = [header.rstrip(), ""] if header.strip() else []
    for case in cases:
        out += [f"== {case.name}", case.query, "--", actual[case.name], ""]
    path.write_text("\n".join(out), encoding="utf-8")
