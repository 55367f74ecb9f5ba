"""The README's demo script (examples/demo.gql) gives the answers it is meant to show."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_script(spark, tmp_path):
    from geaflow_sql import Session

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    script = (tmp_path / "examples" / "demo.gql").read_text(encoding="utf-8")
    results = Session(spark=spark, base_dir=str(tmp_path)).execute(script)
    queries = [r.query for r in results if r.query is not None]
    adults, decades, paths, reached, ranks = (q.collect() for q in queries)

    assert sorted(adults) == [("josh", 32), ("peter", 35)]
    assert sorted((tmp_path / "target" / "demo" / "adults.txt").read_text().split()) == [
        "josh,32",
        "peter,35",
    ]
    assert decades == [(2, 2, 28.0), (3, 2, 33.5)]
    # knows: marko->vadas, marko->josh, josh->vadas, josh->peter, peter->marko
    assert [p[:3] for p in paths] == [
        ("marko", "josh", "peter"),
        ("marko", "josh", "vadas"),
        ("peter", "marko", "josh"),
        ("josh", "peter", "marko"),
        ("peter", "marko", "vadas"),
    ]
    assert [round(p[3], 6) for p in paths] == [1.8, 1.4, 1.2, 1.0, 0.7]
    assert reached == [("marko", 2), ("peter", 2), ("josh", 1)]
    # lop (5) has no edges: GeaFlow's unnormalised PageRank leaves it at 1 - d.
    assert [r[0] for r in ranks] == [2, 1, 3, 4, 5]
    assert ranks[-1][1] == 0.15
