"""Benchmark: shortest walks between bound ends on Spark, searched from both
ends (runtime/operators/both_ways.py) against the search from the starts
alone, and the local engine for scale.

    python bench/shortest.py [--persons N] [--edges M] [--pairs K] [--runs R] [--dir DIR]

The graph is bench/match.py's (``person`` vertices, ``knows`` edges with
uniform random ends; default 200,000 and 1,000,000, written once as
Parquet).  The query binds both ends, then searches::

    MATCH (a:person WHERE a.id IN (...)), (b:person WHERE b.id IN (...)),
          p = ANY SHORTEST (a)-[e:knows]->{1,}(b)
    RETURN a.id, b.id, length(p)

with ``--pairs`` starts and as many ends; ``--search all`` asks for
``ALL SHORTEST`` and each walk's vertices too (``nodes(p)``).  The one-sided search is the
same operator with the choice of both ends turned off (in this process
only).  Every side must give the same rows; timings are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def query(persons: int, pairs: int, search: str) -> str:
    step = max(1, persons // (2 * pairs + 1))
    starts = [i * step for i in range(pairs)]
    ends = [persons - 1 - i * step for i in range(pairs)]
    return (
        f"MATCH (a:person WHERE a.id IN ({', '.join(map(str, starts))})), "
        f"(b:person WHERE b.id IN ({', '.join(map(str, ends))})), "
        + (
            "p = ANY SHORTEST (a)-[e:knows]->{1,}(b) RETURN a.id, b.id, length(p)"
            if search == "any"
            else "p = ALL SHORTEST (a)-[e:knows]->{1,}(b) RETURN a.id, b.id, length(p), nodes(p)"
        )
    )


def main() -> int:
    from match import generate, session_for

    ap = argparse.ArgumentParser()
    ap.add_argument("--persons", type=int, default=200_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--search", choices=["any", "all"], default="any")
    ap.add_argument("--dir", default=os.path.join("/tmp", "geaflow-sql-bench", "match"))
    ap.add_argument("--master", default="local[*]")
    args = ap.parse_args()

    folder = Path(args.dir) / f"{args.persons}_{args.edges}"
    generate(folder, args.persons, args.edges)
    from runtime.operators import both_ways
    from runtime.spark_adapter import create_session

    spark = create_session(args.master)
    session = session_for(spark, folder)
    text = query(args.persons, args.pairs, args.search)
    print(f"graph: {args.persons:,} persons, {args.edges:,} edges; {text}")
    choose = both_ways.pairs_to_meet

    def run(engine: str, meet: bool) -> Counter:
        session.execute(f"SET geaflow.dsl.query.engine = {engine}")
        both_ways.pairs_to_meet = choose if meet else (lambda needs: 0)
        try:
            rows = session.sql(text).collect()
            return Counter(tuple(repr(v) if isinstance(v, list) else v for v in r) for r in rows)
        finally:
            both_ways.pairs_to_meet = choose

    sides = {
        "Spark, from both ends": lambda: run("distributed", True),
        "Spark, from the starts": lambda: run("distributed", False),
        "local engine": lambda: run("auto", True),
    }
    answers: dict[str, Counter] = {}
    times: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.runs):
        for side, fn in sides.items():
            start = time.perf_counter()
            answers[side] = fn()
            times[side].append(time.perf_counter() - start)
    if len({frozenset(a.items()) for a in answers.values()}) != 1:
        print(f"RESULTS DIFFER: {answers}", file=sys.stderr)
        return 1
    answer = next(iter(answers.values()))
    print(f"  rows: {sum(answer.values())}, lengths {sorted({r[2] for r in answer})[:5]}")
    for side, t in times.items():
        print(f"  {side:<23}: best {min(t):7.2f} s   runs {' '.join(f'{x:.2f}' for x in t)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
