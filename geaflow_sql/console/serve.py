"""``geaflow-sql serve``: the web console's server.

    geaflow-sql serve [--host 127.0.0.1] [--port 8765] [--master URL | --remote sc://...]
                      [--init script.gql] [--conf key=value ...] [--token T]

Bound to 127.0.0.1 by default.  Bound to any other address the server
needs a token: the one given, or one it makes and prints; then every
request must carry it.  Spark starts (and the ``--init`` script is checked
by running it once) before the server takes its first request.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
from typing import Any

from ..arguments import find_user_code, parse_conf
from ..core.errors import GeaflowError

DEFAULT_PORT = 8765
# Addresses only this machine reaches: no token needed to bind them.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="geaflow-sql serve", description="Serve the web console and its JSON API."
    )
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    spark = ap.add_mutually_exclusive_group()
    spark.add_argument("--master", help="Spark master URL (default local[*])")
    spark.add_argument("--remote", metavar="sc://HOST:PORT", help="a Spark Connect server")
    ap.add_argument("--init", metavar="SCRIPT", help="script each new workspace runs first")
    ap.add_argument(
        "--conf", action="append", metavar="KEY=VALUE", help="job configuration (repeatable)"
    )
    ap.add_argument(
        "--token", help="token every request must carry (made and printed off loopback)"
    )
    ap.add_argument(
        "--max-rows", type=int, default=10_000, help="most rows of a query fetched (10000)"
    )
    return ap


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    conf = parse_conf(args.conf)
    init = None
    if args.init is not None:
        try:
            with open(args.init, encoding="utf-8") as fh:
                init = (fh.read(), args.init)
        except OSError as err:
            print(f"geaflow-sql serve: cannot read {args.init}: {err.strerror}", file=sys.stderr)
            return 2
    try:
        # Bound first (a port in use is told at once), and before the address
        # is printed: a client that reads it may connect at once (it waits in
        # the backlog until uvicorn serves).
        listening = socket.create_server(
            (args.host, args.port), family=_family(args.host), backlog=128
        )
    except OSError as err:
        print(
            f"geaflow-sql serve: cannot bind {args.host}:{args.port}: {err.strerror}",
            file=sys.stderr,
        )
        return 2
    token = args.token
    if token is None and args.host not in LOOPBACK:
        token = secrets.token_urlsafe(24)
        print(f"geaflow-sql serve: bound to {args.host}, so every request needs the token {token}")
    find_user_code(args.init)
    from .workspaces import ConsoleError

    try:
        spaces = _workspaces(args, conf, init)
    except (GeaflowError, ConsoleError) as failed:
        listening.close()
        told = failed.cause if isinstance(failed, ConsoleError) else failed
        if told is None:
            print(f"geaflow-sql serve: {failed}", file=sys.stderr)
            return 1
        if init is not None:
            told.with_context(text=init[0], source=init[1])
        print(told.format(), file=sys.stderr)
        return 1
    import uvicorn

    from .api import build_app

    port = listening.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"geaflow-sql console on http://{shown}:{port}/", flush=True)
    server = uvicorn.Server(uvicorn.Config(build_app(spaces, token), log_level="warning"))
    try:
        server.run(sockets=[listening])
    finally:
        spaces.close()
    return 0


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _workspaces(args: Any, conf: dict[str, str], init: tuple[str, str] | None) -> Any:
    """The server's workspaces, on a Spark started now; the init script is run
    once, in the default workspace, so that a bad one stops the start."""
    from ..session import Session
    from .api import DEFAULT_SESSION
    from .workspaces import Workspaces

    first = Session(args.master, conf, remote=args.remote, base_dir=os.getcwd())
    spark = first.spark

    def new_session() -> Session:
        return Session(args.master, conf, spark=spark, base_dir=os.getcwd())

    spaces = Workspaces(new_session, init, max_rows=args.max_rows, first=first)
    spaces.workspace(DEFAULT_SESSION)
    return spaces
