"""Benchmark: driver time per statement over GeaFlow's conformance corpus.

    python bench/plan_time.py [--path CORPUS] [--only PATTERN ...] [--json FILE]

Runs the corpus cases (as ``python -m geaflow_sql.conformance`` does, on one
local[2] SparkSession with the tests' small-data settings) and, for every
INSERT and query statement, splits its wall time into

* **Spark time**: time spent inside PySpark actions (``collect``, ``count``,
  writers, eager checkpoints, ...), patched here around PySpark itself so the
  measure does not depend on how the engine is written;
* **plan time**: the rest: parsing, binding, rules, building the plans and
  the DataFrames, and the py4j round trips that costs (counted too).

A windowed job reports its statements together when the job ends; its first
statement carries the job's whole time and the others, which took no time of
their own, are left out.  Prints the median and quartiles of plan time per
statement and the median py4j calls; timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_state = {"depth": 0, "spark": 0.0, "py4j": 0}

_ACTIONS = {
    "pyspark.sql.classic.dataframe": (
        "DataFrame",
        (
            "collect",
            "count",
            "toPandas",
            "toArrow",
            "take",
            "first",
            "head",
            "isEmpty",
            "localCheckpoint",
            "checkpoint",
            "toLocalIterator",
            "foreach",
            "foreachPartition",
        ),
    ),
    "pyspark.sql.readwriter": (
        "DataFrameWriter",
        ("save", "parquet", "csv", "json", "text", "orc", "jdbc", "insertInto", "saveAsTable"),
    ),
}


def _timed(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _state["depth"]:
            return fn(*args, **kwargs)
        _state["depth"] += 1
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _state["spark"] += time.perf_counter() - start
            _state["depth"] -= 1

    return wrapper


def patch_pyspark() -> None:
    import importlib

    from py4j.clientserver import ClientServerConnection
    from py4j.java_gateway import GatewayConnection

    for module_name, (cls_name, methods) in _ACTIONS.items():
        cls = getattr(importlib.import_module(module_name), cls_name)
        for m in methods:
            if hasattr(cls, m):
                setattr(cls, m, _timed(getattr(cls, m)))
    for conn in (ClientServerConnection, GatewayConnection):
        original = conn.send_command

        def counted(self: Any, command: Any, _orig: Any = original) -> Any:
            _state["py4j"] += 1
            return _orig(self, command)

        conn.send_command = counted  # type: ignore[method-assign]


def main() -> None:
    from geaflow_sql.conformance.runner import ConformanceRunner

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", default=None, help="write every statement's numbers here")
    args = parser.parse_args()
    patch_pyspark()
    samples: list[dict[str, Any]] = []

    class TimingRunner(ConformanceRunner):
        def _run_script(self, session: Any, rel: str, variables: dict[str, Any]) -> None:
            from geaflow_sql.conformance.runner import substitute

            path = self.corpus / rel.lstrip("/")
            text = substitute(path.read_text(encoding="utf-8"), variables)
            results = session.iter_execute(text, str(path.relative_to(self.corpus)))
            while True:
                spark0, py4j0, wall0 = _state["spark"], _state["py4j"], time.perf_counter()
                try:
                    result = next(results)
                except StopIteration:
                    return
                wall = time.perf_counter() - wall0
                if result.kind not in ("insert", "query") or wall < 1e-3:
                    continue
                spark = _state["spark"] - spark0
                samples.append(
                    {
                        "script": rel,
                        "line": result.line,
                        "kind": result.kind,
                        "wall": wall,
                        "spark": spark,
                        "plan": wall - spark,
                        "py4j": _state["py4j"] - py4j0,
                    }
                )

    runner = TimingRunner(args.path)
    start = time.perf_counter()
    report = runner.run(args.only)
    print(report.summary(), f"({time.perf_counter() - start:.0f} s)")
    plans = sorted(s["plan"] for s in samples)
    if not plans:
        print("no statements timed")
        return
    q = statistics.quantiles(plans, n=4) if len(plans) > 1 else [plans[0]] * 3
    print(f"statements timed: {len(plans)}")
    print(
        f"plan time per statement: median {q[1] * 1000:.1f} ms "
        f"(quartiles {q[0] * 1000:.1f} / {q[2] * 1000:.1f} ms), "
        f"total {sum(plans):.1f} s"
    )
    print(f"Spark time in actions: total {sum(s['spark'] for s in samples):.1f} s")
    print(f"py4j calls per statement: median {statistics.median(s['py4j'] for s in samples):.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(samples, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
