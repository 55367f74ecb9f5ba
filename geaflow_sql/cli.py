"""``geaflow-sql``: run a script (-f), statements (-e), or an interactive shell.

    geaflow-sql -f query.gql [--conf key=value ...] [--master URL | --remote sc://HOST:PORT]
    geaflow-sql -e "SELECT 1" --output csv
    geaflow-sql -f query.gql --explain     # plans instead of running
    geaflow-sql -f query.gql --explain --format svg > plan.svg   # ... as a picture
    geaflow-sql -f query.gql --check       # parse and plan, run nothing
    geaflow-sql                            # interactive shell
    geaflow-sql serve [--port N]           # the web console (console/serve.py)

Errors are printed as ``file:line:col: message`` with the line and a caret;
the exit status is 1 for a bad script, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys

from .arguments import find_user_code, parse_conf
from .core.errors import GeaflowError


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="geaflow-sql",
        description="Run GeaFlow DSL (SQL + GQL) on Apache Spark.",
    )
    src = ap.add_mutually_exclusive_group()
    src.add_argument("-f", "--file", help="script file to run")
    src.add_argument("-e", "--execute", help="statements to run")
    ap.add_argument(
        "--conf", action="append", metavar="KEY=VALUE", help="job configuration (repeatable)"
    )
    spark = ap.add_mutually_exclusive_group()
    spark.add_argument(
        "--master",
        help="Spark master URL: local[*] (the default), spark://host:7077, yarn, k8s://...",
    )
    spark.add_argument(
        "--remote", metavar="sc://HOST:PORT", help="run on a Spark Connect server instead"
    )
    ap.add_argument(
        "--explain", action="store_true", help="print each statement's plans instead of running it"
    )
    ap.add_argument(
        "--format",
        choices=("text", "dot", "svg"),
        default="text",
        help="with --explain: the plans as text, or as a picture (Graphviz DOT, or SVG)",
    )
    ap.add_argument(
        "--check", action="store_true", help="parse and plan every statement without running it"
    )
    ap.add_argument(
        "--output",
        choices=("table", "csv", "json"),
        default="table",
        help="how query results print",
    )
    ap.add_argument("--quiet", "-q", action="store_true", help="print only query results")
    ap.add_argument("--version", action="store_true", help="print the version and exit")
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        from .console.serve import main as serve

        return serve(argv[1:])
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.version:
        from . import __version__

        print(f"geaflow-sql {__version__}")
        return 0
    if args.format != "text" and not args.explain:
        ap.error("--format dot|svg draws plans: use it with --explain")
    conf = parse_conf(args.conf)
    try:
        from runtime.spark_adapter import choose_master

        master = choose_master(args.master, args.remote)
    except GeaflowError as err:
        print(f"geaflow-sql: {err.message}", file=sys.stderr)
        return 2
    debug = bool(os.environ.get("GEAFLOW_SQL_DEBUG"))
    find_user_code(args.file)
    if args.file is None and args.execute is None:
        from .shell import run_shell

        return run_shell(master=master, conf=conf, output=args.output)
    if args.file is not None:
        try:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as err:
            print(f"geaflow-sql: cannot read {args.file}: {err.strerror}", file=sys.stderr)
            return 2
        source = args.file
        base_dir = os.getcwd()
    else:
        text = args.execute
        source = "<command line>"
        base_dir = os.getcwd()
    # The runtime and PySpark load only once there is something to run.
    from .scripts import run_script

    try:
        return run_script(
            text,
            source,
            conf,
            master,
            explain=args.explain,
            check=args.check,
            output=args.output,
            quiet=args.quiet,
            base_dir=base_dir,
            picture=None if args.format == "text" else args.format,
        )
    except GeaflowError as err:
        err.with_context(text=text, source=source)
        if debug and err.__context__ is not None:
            # The failure an execution error stands for (Spark's, pyarrow's, ours).
            import traceback

            traceback.print_exception(err.__context__, file=sys.stderr)
        print(err.format(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("geaflow-sql: cancelled", file=sys.stderr)
        return 130
    except Exception as err:  # a bug of ours: say so without a traceback
        if debug:
            raise
        print(
            f"{source}: internal error: {type(err).__name__}: {err} "
            "(set GEAFLOW_SQL_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
