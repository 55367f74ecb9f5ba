"""``python -m geaflow_sql.conformance``: run the corpus, print counts, write a report."""

from __future__ import annotations

import argparse
import sys

from .runner import ConformanceRunner


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m geaflow_sql.conformance")
    ap.add_argument(
        "--path", help="corpus folder (default: $GEAFLOW_SQL_CONFORMANCE or ../shared/conformance)"
    )
    ap.add_argument("--report", default="conformance-report.json", help="JSON report to write")
    ap.add_argument("--only", nargs="*", help="case ids, suite names or regexes to run")
    ap.add_argument("--rules-off", action="store_true", help="run with the optimizer switched off")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per case")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--master", help="Spark master URL (default local[2])")
    where.add_argument("--remote", metavar="sc://HOST:PORT", help="a Spark Connect server")
    ap.add_argument(
        "--spark-defaults",
        action="store_true",
        help="Spark's default shuffle partitions (200) and adaptive execution, "
        "instead of the small-data settings",
    )
    args = ap.parse_args(argv)
    runner = ConformanceRunner(
        args.path,
        master=args.remote or args.master,
        spark_defaults=args.spark_defaults,
        timeout=args.timeout,
        log=None if args.quiet else (lambda m: print(m, flush=True)),
    )
    conf = {"geaflow.dsl.optimizer.enabled": "false"} if args.rules_off else {}
    report = runner.run(args.only, conf)
    report.write(args.report)
    parse = report.parse
    print(
        f"parse: {parse['parsed']}/{parse['scripts']} corpus scripts parse "
        f"(median {parse['median_parse_ms']} ms)"
    )
    for suite, counts in report.by_suite().items():
        print(f"  {suite:32} " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
