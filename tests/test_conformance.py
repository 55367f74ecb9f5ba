"""GeaFlow's own query tests, run by the conformance runner on the shared SparkSession.

This file runs every suite but the graph ones (``test_conformance_graphs.py``
runs those in the other test worker).  Every listed case must pass; a case
that passes but is not listed fails the run too (like a strict xfail), so the
list always says what works.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus_shards import (
    corpus_ids,
    must_pass,
    newly_passing,
    other_suites,
    regressed,
    run_shard,
)


@pytest.fixture(scope="module")
def report(spark, corpus, tmp_path_factory):
    rep = run_shard(
        spark, corpus, tmp_path_factory.mktemp("conformance"), other_suites(corpus)
    ).report
    rep.write(Path("conformance-report.json"))
    return rep


def test_every_corpus_script_parses(report):
    parse = report.parse
    assert parse["scripts"] > 200
    assert parse["parsed"] == parse["scripts"], parse["failures"][:5]


def test_listed_cases_are_in_the_corpus(corpus):
    missing = sorted(set(must_pass()) - corpus_ids(corpus))
    assert not missing, f"listed cases not in the corpus: {missing}"


def test_listed_cases_pass(report):
    assert must_pass(), "the must-pass list is empty"
    broken = regressed(report)
    assert not broken, "regressed:\n" + "\n".join(broken)


def test_newly_passing_cases_are_listed(report):
    new = newly_passing(report)
    assert not new, (
        "these cases pass now; add them to tests/conformance/must_pass.txt:\n" + "\n".join(new)
    )
