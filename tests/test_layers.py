"""Layers that only point down, and no import circles (ARCHITECTURE.md, "Layout and layers").

Every import of the project's own modules is read from the source (imports
inside functions too) and checked against the layers:

    geaflow_sql/core/         -> nothing else of the project
    geaflow_sql/udf, udga     -> core (the public extension API)
    grammar/                  -> core
    planner/                  -> grammar, core, extension API
    runtime/                  -> planner, grammar, core, extension API
    the rest of geaflow_sql/  -> anything

and the module graph must have no cycle (a module reaching itself through
its imports).  Imports under ``if TYPE_CHECKING:`` name types only and never
run: they must point down like any other, but they do not make a cycle.  The
checks run over the real tree and over the tree with a forbidden import
added, to show that they can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("geaflow_sql", "grammar", "planner", "runtime")
API = {"geaflow_sql.udf", "geaflow_sql.udga"}
ALLOWED = {
    "core": {"core"},
    "api": {"core", "api"},
    "grammar": {"core", "grammar"},
    "planner": {"core", "api", "grammar", "planner"},
    "runtime": {"core", "api", "grammar", "planner", "runtime"},
    "front": {"core", "api", "grammar", "planner", "runtime", "front"},
}


def project_sources() -> dict[str, str]:
    """Module name -> source text, for every module of the project's packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def layer_of(module: str) -> str:
    if module == "geaflow_sql.core" or module.startswith("geaflow_sql.core."):
        return "core"
    if module in API:
        return "api"
    top = module.split(".")[0]
    return top if top in ("grammar", "planner", "runtime") else "front"


def _is_package(module: str, sources: dict[str, str]) -> bool:
    return any(name.startswith(module + ".") for name in sources)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of the imports under ``if TYPE_CHECKING:``."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        lines.add(sub.lineno)
    return lines


def imports_of(
    module: str, source: str, sources: dict[str, str], *, runtime_only: bool = False
) -> list[tuple[str, int]]:
    """(project module imported, line) for every import statement in ``source``
    (``runtime_only``: not those under ``if TYPE_CHECKING:``)."""
    package = module if _is_package(module, sources) else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def add(name: str, line: int) -> None:
        # The deepest project module the name refers to.
        parts = name.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in sources:
                found.append((candidate, line))
                return
            parts.pop()

    tree = ast.parse(source)
    skip = _type_checking_lines(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                add(submodule if submodule in sources else target, node.lineno)
    return [(m, line) for m, line in found if m != module]


def layer_violations(sources: dict[str, str]) -> list[str]:
    out = []
    for module, source in sources.items():
        layer = layer_of(module)
        for target, line in imports_of(module, source, sources):
            if layer_of(target) not in ALLOWED[layer]:
                out.append(f"{module}:{line} ({layer}) imports {target} ({layer_of(target)})")
    return out


def import_cycles(sources: dict[str, str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    graph = {
        m: sorted({t for t, _ in imports_of(m, s, sources, runtime_only=True)})
        for m, s in sources.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        # Iterative depth-first search: (node, next neighbour position).
        work = [(v, 0)]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, i = work[-1]
            if i < len(graph[node]):
                work[-1] = (node, i + 1)
                w = graph[node][i]
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, 0))
                elif w in on_stack:
                    low[node] = min(low[node], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return cycles


def test_imports_only_point_down() -> None:
    assert layer_violations(project_sources()) == []


def test_no_import_cycles() -> None:
    assert import_cycles(project_sources()) == []


def test_a_forbidden_import_is_found() -> None:
    sources = project_sources()
    # An upward import hidden inside a function, as the planner once had.
    sources["planner.probe"] = "def f():\n    from runtime.udfs import ensure_registered\n"
    assert layer_violations(sources) == ["planner.probe:2 (planner) imports runtime.udfs (runtime)"]
    # Core may import nothing else of the project, not even the front package.
    sources = project_sources()
    sources["geaflow_sql.core.probe"] = "from ..session import Session\n"
    assert layer_violations(sources) == [
        "geaflow_sql.core.probe:1 (core) imports geaflow_sql.session (front)"
    ]


def test_an_import_cycle_is_found() -> None:
    sources = project_sources()
    sources["grammar.probe_a"] = "from . import probe_b\n"
    sources["grammar.probe_b"] = "def f():\n    import grammar.probe_a\n"
    assert ["grammar.probe_a", "grammar.probe_b"] in import_cycles(sources)
    # The same import for type hints only is no cycle.
    sources["grammar.probe_b"] = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import grammar.probe_a\n"
    )
    assert import_cycles(sources) == []
