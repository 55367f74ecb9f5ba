"""GeaFlow's own query tests, run by the conformance runner on the shared SparkSession.

Every listed case must pass; a case that passes but is not listed fails the
run too (like a strict xfail), so the list always says what works.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MUST_PASS = Path(__file__).parent / "conformance" / "must_pass.txt"


def must_pass() -> list[str]:
    if not MUST_PASS.exists():
        return []
    return [
        ln.strip()
        for ln in MUST_PASS.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


# Rules that rewrite graph plans; the full run must see each of them fire on
# the corpus (a rule that never applies would make the rules-off run prove nothing).
GRAPH_RULES = (
    "push_filter_into_vertex_match",
    "push_filter_into_edge_match",
    "push_label_into_match",
    "choose_match_start",
    "sql2graph",
)

FIRED: set[str] = set()


@pytest.fixture(scope="module")
def report(spark, corpus, tmp_path_factory):
    import planner.optimizer as optimizer
    import runtime.executor as executor
    from geaflow_sql.conformance import ConformanceRunner

    real = optimizer.optimize

    def spy(plan, config, max_passes=3):
        result = real(plan, config, max_passes)
        FIRED.update(a.rule for a in result.trace if a.changed)
        return result

    runner = ConformanceRunner(corpus, spark=spark, work_dir=tmp_path_factory.mktemp("conformance"))
    mp = pytest.MonkeyPatch()
    mp.setattr(executor, "optimize", spy)
    try:
        rep = runner.run()
    finally:
        mp.undo()
    out = Path("conformance-report.json")
    rep.write(out)
    print("\n" + rep.summary())
    return rep


def test_every_corpus_script_parses(report):
    parse = report.parse
    assert parse["scripts"] > 200
    assert parse["parsed"] == parse["scripts"], parse["failures"][:5]


def test_listed_cases_pass(report):
    status = {r.id: r for r in report.results}
    listed = must_pass()
    assert listed, "the must-pass list is empty"
    broken = [f"{cid}: {status[cid].status} {status[cid].reason}" for cid in listed if cid in status and status[cid].status != "passed"]
    missing = [cid for cid in listed if cid not in status]
    assert not missing, f"listed cases not in the corpus: {missing}"
    assert not broken, "regressed:\n" + "\n".join(broken)


def test_newly_passing_cases_are_listed(report):
    listed = set(must_pass())
    new = sorted(r.id for r in report.results if r.status == "passed" and r.id not in listed)
    assert not new, "these cases pass now; add them to tests/conformance/must_pass.txt:\n" + "\n".join(new)


def test_graph_rules_fire_on_the_corpus(report):
    assert set(GRAPH_RULES) <= FIRED, f"graph rules that never fired: {set(GRAPH_RULES) - FIRED}"
