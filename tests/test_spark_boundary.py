"""Only ``runtime/spark_adapter.py`` talks to Spark below the DataFrame API
(and ``runtime/jvm_archive.py``, whose builder process starts a local JVM of
its own to write the driver's class archive, and never runs over Connect).

Spark Connect has no JVM on the client: ``spark.sparkContext``, the py4j
handles (``_jvm``, ``_jsc``, ``_jdf``, ``_jsparkSession``), ``DataFrame.rdd``
and py4j itself exist on classic Spark only.  Everything outside the adapter
must use what both offer, so a script runs the same over ``--master`` and
``--remote``.  The check reads the source of every module (attribute names
and imports, inside functions too), and is run over a tree with a planted
``sparkContext`` call to show that it can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("geaflow_sql", "grammar", "planner", "runtime")
ADAPTER = "runtime/spark_adapter.py"
BELOW_ALLOWED = (ADAPTER, "runtime/jvm_archive.py")
CLASSIC_ONLY = {
    "_jvm",
    "_jsc",
    "_jdf",
    "_jsparkSession",
    "_jconf",
    "_gateway",
    "sparkContext",
    "rdd",
}


def classic_only_uses(rel: str, source: str) -> list[str]:
    """``path:line name`` for every classic-only attribute or py4j import in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in CLASSIC_ONLY:
            found.append(f"{rel}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.Import):
            found += [
                f"{rel}:{node.lineno} import {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "py4j"
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "py4j":
            found.append(f"{rel}:{node.lineno} from {node.module} import")
    return found


def project_sources() -> dict[str, str]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return out


def violations(sources: dict[str, str]) -> list[str]:
    out = []
    for rel, source in sources.items():
        if rel not in BELOW_ALLOWED:
            out += classic_only_uses(rel, source)
    return out


def test_only_the_adapter_goes_below_the_dataframe_api():
    sources = project_sources()
    assert all(rel in sources for rel in BELOW_ALLOWED)
    assert violations(sources) == []


def test_the_adapter_itself_does_go_below_it():
    """The check looks at the right names: the adapter has all of its kinds."""
    found = classic_only_uses(ADAPTER, project_sources()[ADAPTER])
    assert any(".sparkContext" in f for f in found)
    assert any("._jdf" in f for f in found)
    assert any("from py4j" in f for f in found)


def test_a_planted_spark_context_call_is_found():
    sources = project_sources()
    rel = "runtime/connectors/jdbc.py"
    planted = dict(sources)
    planted[rel] = sources[rel] + (
        "\n\ndef _planted(spark):\n"
        "    def inner():\n"
        "        return spark.sparkContext.defaultParallelism\n"
        "    return inner\n"
    )
    found = violations(planted)
    assert len(found) == 1 and found[0].startswith(rel) and found[0].endswith(".sparkContext")
    # ... and a py4j import, and a DataFrame's rdd, in any module.
    planted[rel] = sources[rel] + "\nimport py4j.java_gateway\n\nrows = lambda df: df.rdd\n"
    assert [f.split(" ", 1)[1] for f in violations(planted)] == [
        "import py4j.java_gateway",
        ".rdd",
    ]
