"""EXPLAIN as a picture (planner/explain_dot.py), and ``--explain --format``.

Planned only (``check_only``): no Spark starts.  The picture must hold the
same plans as the text: each logical operator once (a shared subtree too),
an arrow from each input to its reader, the PipelineGraph's vertices and
edges, and every pipeline vertex inside its ExecutionGroup.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from .console_server import environment

SCRIPT = """
CREATE TABLE people (id bigint, name varchar, age int)
  WITH (type = 'file', geaflow.dsl.file.path = 'people.txt');
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID)
) WITH (storeType = 'memory');
USE GRAPH g;
"""

QUERIES = [
    "SELECT name, count(*) AS n FROM people WHERE age > 3 GROUP BY name ORDER BY n",
    "SELECT a.name FROM people a JOIN people b ON a.id = b.age UNION SELECT name FROM people",
    "MATCH (a:person)-[e:knows]->{1,3}(b) RETURN a.name, b.name",
]


def clusters(dot: str) -> dict[str, list[str]]:
    """The lines of each top-level cluster of the digraph."""
    out: dict[str, list[str]] = {}
    current = None
    for line in dot.splitlines():
        m = re.match(r"  subgraph cluster_(\w+) \{", line)
        if m:
            current = m.group(1)
            out[current] = []
        elif line == "  }":
            current = None
        elif current is not None:
            out[current].append(line)
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_the_picture_holds_the_plans_the_text_shows(tmp_path, query):
    from geaflow_sql import Session

    session = Session(base_dir=str(tmp_path))
    session.execute(SCRIPT, check_only=True)
    (result,) = session.execute(f"EXPLAIN {query}", check_only=True)
    dot = result.extra["dot"]
    assert dot.startswith("digraph explain {") and dot.rstrip().endswith("}")
    parts = clusters(dot)
    assert list(parts) == ["before", "after", "pipeline", "groups"]
    for level in ("before", "after"):
        nodes = [ln for ln in parts[level] if re.match(rf"    {level}\d+ \[label=", ln)]
        edges = re.findall(rf"^  ({level}\d+ -> {level}\d+);$", dot, re.M)
        declared = {ln.split()[0] for ln in nodes}
        for edge in edges:
            src, _, dst = edge.split()
            assert src in declared and dst in declared, edge
        assert len(edges) >= len(nodes) - 1  # connected: every operator reaches the root
    text = result.text
    section = text.split("== PipelineGraph ==")[1].split("== ExecutionGroups")[0]
    pipeline_lines = [ln for ln in section.splitlines() if "] " in ln]
    vertices = [ln for ln in parts["pipeline"] if re.match(r"    p\d+ \[label=", ln)]
    assert len(vertices) == len(pipeline_lines) > 0
    # Every pipeline vertex sits in a group, once.
    grouped = re.findall(r"    +g(\d+) \[label=", "\n".join(parts["groups"]))
    assert sorted(int(v) for v in grouped) == sorted(
        int(re.match(r"    p(\d+)", v).group(1)) for v in vertices
    )


def test_quotes_and_long_labels_stay_inside_their_string():
    from planner.explain_dot import _quote

    assert _quote('a "b" \\c') == '"a \\"b\\" \\\\c"'
    long = _quote("x" * 500)
    assert len(long) == 82 and long.endswith('…"')


def run_cli(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "geaflow_sql.cli", *args],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_command_line_writes_the_picture(tmp_path):
    script = SCRIPT + QUERIES[2] + ";\n" + QUERIES[0] + ";\n"
    (tmp_path / "q.gql").write_text(script, encoding="utf-8")
    done = run_cli(["-f", "q.gql", "--explain", "--check", "--format", "dot"], tmp_path)
    assert done.returncode == 0, done.stderr
    # Only the two pictures: DDL says nothing, so the output is a DOT file.
    assert done.stdout.count("digraph explain {") == 2
    assert done.stdout.startswith("digraph explain {")
    if shutil.which("dot") is not None:
        drawn = subprocess.run(
            ["dot", "-Tsvg"], input=done.stdout, capture_output=True, text=True, check=False
        )
        assert drawn.returncode == 0, drawn.stderr
    done = run_cli(["-f", "q.gql", "--explain", "--check", "--format", "svg"], tmp_path)
    if shutil.which("dot") is None:
        assert done.returncode == 1 and "apt-get install graphviz" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("<svg") == 2 and "Traceback" not in done.stderr
    done = run_cli(["-f", "q.gql", "--format", "dot"], tmp_path)
    assert done.returncode == 2 and "use it with --explain" in done.stderr
