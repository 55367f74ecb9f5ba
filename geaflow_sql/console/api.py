"""The console's JSON API (Starlette).

    POST /api/statements  {"statement": "...", "session": "name", "page_size": N}
         -> {"columns": [...], "rows": [[...]], "total": N, "truncated": bool,
             "offset": 0, "result": "id"}                 a query (its first page)
         -> {"message": "...", "text": "..."}             any other statement
         -> 400 {"error": "...", "line": N, "column": N}  a statement in error
    GET  /api/results/{id}?offset=N&limit=N               another page of a query
    POST /api/cancel      {"session": "name"}             cancel its running statement
    POST /api/explain     {"statement": "...", "session": "name"}
         -> {"text": "...", "dot": "...", "svg": "..."}    (svg null without Graphviz)
    GET  /api/progress?session=name  -> {"running": bool, "done": N, "total": N}  (Spark tasks)
    GET  /api/catalog?session=name                        tables, views, graphs, functions
    GET  /api/health                                      {"ok": true}
    POST /api/highlight   {"text": "..."}  -> {"spans": [[start, end, class], ...]}
    POST /api/complete    {"text": "...", "cursor": N, "session": "name"}
         -> {"completions": [{"text", "replace", "meta"}, ...]}
    GET  /  and /static/...                               the page

Every answer is JSON, every refusal a 4xx with ``{"error": ...}``: bad
JSON, a missing field, a body over the size limit (413), a workspace busy
with another statement (409), a missing or wrong token (401).  With a
token, every request carries it (``Authorization: Bearer <token>``, or
``?token=`` for a page loaded by a browser).  A failure of the engine
itself answers 500 with its message; the server goes on serving.
"""

from __future__ import annotations

import hmac
import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from . import editing
from .workspaces import ConsoleError, Workspaces

DEFAULT_SESSION = "default"
PAGE_SIZE = 100
# The largest request body the API reads (a script is text; this is plenty).
MAX_REQUEST_BYTES = 1 << 20
# A body over the limit but at most this many times it is read (and dropped)
# before the refusal; a larger one is refused at once.
DRAINED_BYTES = 16

log = logging.getLogger("geaflow_sql.console")

# The page: plain HTML, CSS and JavaScript, no build step.
STATIC = Path(__file__).resolve().parent / "static"
_NO_STORE = {"Cache-Control": "no-store"}


def vis_network_js() -> Path | None:
    """vis-network's browser bundle, as the ``pyvis`` package ships it."""
    spec = importlib.util.find_spec("pyvis")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("lib/vis-*/vis-network.min.js"))
    return found[-1] if found else None


def build_app(
    spaces: Workspaces, token: str | None = None, max_request_bytes: int = MAX_REQUEST_BYTES
) -> Starlette:
    """The API over ``spaces``; ``token``: the one every request must carry."""

    @_answers
    async def statements(request: Request) -> JSONResponse:
        body = await _json_body(request, max_request_bytes)
        text = _field(body, "statement", str)
        name = _session_name(body)
        page_size = _field(body, "page_size", int, PAGE_SIZE)
        if not text.strip():
            raise ConsoleError(400, {"error": "the statement is empty"})
        out = await run_in_threadpool(spaces.run, name, text, max(1, page_size))
        return JSONResponse(out)

    @_answers
    async def results(request: Request) -> JSONResponse:
        offset = _query_int(request, "offset", 0)
        limit = _query_int(request, "limit", PAGE_SIZE)
        return JSONResponse(spaces.page(request.path_params["result_id"], offset, limit))

    @_answers
    async def cancel(request: Request) -> JSONResponse:
        body = await _json_body(request, max_request_bytes)
        cancelled = await run_in_threadpool(spaces.cancel, _session_name(body))
        return JSONResponse({"cancelled": cancelled})

    @_answers
    async def progress(request: Request) -> JSONResponse:
        name = request.query_params.get("session", DEFAULT_SESSION)
        return JSONResponse(await run_in_threadpool(spaces.progress, name))

    @_answers
    async def explain(request: Request) -> JSONResponse:
        body = await _json_body(request, max_request_bytes)
        text = _field(body, "statement", str)
        out = await run_in_threadpool(spaces.explain, _session_name(body), text)
        return JSONResponse(out)

    @_answers
    async def catalog(request: Request) -> JSONResponse:
        name = request.query_params.get("session", DEFAULT_SESSION)
        out = await run_in_threadpool(spaces.catalog, name)
        return JSONResponse(out)

    @_answers
    async def highlight(request: Request) -> JSONResponse:
        body = await _json_body(request, max_request_bytes)
        return JSONResponse({"spans": editing.highlight(_field(body, "text", str))})

    @_answers
    async def complete(request: Request) -> JSONResponse:
        body = await _json_body(request, max_request_bytes)
        text = _field(body, "text", str)
        cursor = _field(body, "cursor", int, len(text))
        name = _session_name(body)
        found = await run_in_threadpool(spaces.complete, name, text, cursor)
        return JSONResponse({"completions": found})

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_NO_STORE)

    async def graph_library(request: Request) -> Response:
        found = vis_network_js()
        if found is None:
            return JSONResponse({"error": "vis-network (the pyvis package) is not installed"}, 404)
        return FileResponse(found, media_type="text/javascript")

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    app = Starlette(
        routes=[
            Route("/api/statements", statements, methods=["POST"]),
            Route("/api/results/{result_id}", results, methods=["GET"]),
            Route("/api/cancel", cancel, methods=["POST"]),
            Route("/api/explain", explain, methods=["POST"]),
            Route("/api/progress", progress, methods=["GET"]),
            Route("/api/catalog", catalog, methods=["GET"]),
            Route("/api/health", health, methods=["GET"]),
            Route("/api/highlight", highlight, methods=["POST"]),
            Route("/api/complete", complete, methods=["POST"]),
            Route("/", page, methods=["GET"]),
            Route("/static/vis-network.min.js", graph_library, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={HTTPException: _http_error},
    )
    if token is not None:
        app.add_middleware(_TokenCheck, token=token)  # type: ignore[arg-type]
    return app


class _TokenCheck:
    """Refuses (401) a request that does not carry the server's token: in an
    ``Authorization: Bearer`` header, a ``token`` query parameter, or the
    cookie set when a page was loaded with one (so its scripts and styles,
    which the browser fetches by plain links, come too)."""

    COOKIE = "geaflow_token"

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get("authorization", "")
        bearer = header[len("bearer ") :].strip() if header.lower().startswith("bearer ") else None
        by_query = request.query_params.get("token")
        given = bearer or by_query or request.cookies.get(self.COOKIE, "")
        if not hmac.compare_digest(given.encode(), self.token):
            response = JSONResponse({"error": "a valid token is required"}, status_code=401)
            await response(scope, receive, send)
            return
        if by_query is None:
            await self.app(scope, receive, send)
            return
        cookie = f"{self.COOKIE}={by_query}; HttpOnly; SameSite=Strict; Path=/"

        async def with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, with_cookie)


async def _json_body(request: Request, limit: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        if int(declared) <= DRAINED_BYTES * limit:
            # (read and dropped, so that a client still sending gets the answer)
            async for _ in request.stream():
                pass
        raise ConsoleError(413, {"error": f"the request is over {limit} bytes"})
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ConsoleError(413, {"error": f"the request is over {limit} bytes"})
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError) as err:
        raise ConsoleError(400, {"error": f"the request is not JSON: {err}"}) from None
    if not isinstance(body, dict):
        raise ConsoleError(400, {"error": "the request must be a JSON object"})
    return body


_MISSING = object()


def _field(body: dict[str, Any], name: str, kind: type, default: Any = _MISSING) -> Any:
    value = body.get(name, default)
    if value is _MISSING:
        raise ConsoleError(400, {"error": f"the request has no {name!r}"})
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ConsoleError(400, {"error": f"{name!r} must be a {kind.__name__}"})
    return value


def _session_name(body: dict[str, Any]) -> str:
    name = _field(body, "session", str, DEFAULT_SESSION)
    if not name or len(name) > 100:
        raise ConsoleError(400, {"error": "'session' must be a name of 1 to 100 characters"})
    return str(name)


def _query_int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit():
        raise ConsoleError(400, {"error": f"{name!r} must be a number of 0 or more"})
    return int(raw)


async def _http_error(request: Request, err: Exception) -> JSONResponse:
    """Starlette's own refusals (no such route, a method it does not take), as JSON."""
    assert isinstance(err, HTTPException)
    return JSONResponse({"error": err.detail}, status_code=err.status_code)


def _answers(handler: Any) -> Any:
    """``handler``, answering a refusal with its status and body and any other
    failure with 500 and its message (logged in one line; the server goes on)."""

    async def answered(request: Request) -> JSONResponse:
        try:
            response: JSONResponse = await handler(request)
            return response
        except ConsoleError as err:
            return JSONResponse(err.body, status_code=err.status)
        except Exception as err:  # noqa: BLE001 - the server must go on serving
            log.error(
                "%s %s failed: %s: %s", request.method, request.url.path, type(err).__name__, err
            )
            return JSONResponse(
                {"error": f"internal error: {type(err).__name__}: {err}"}, status_code=500
            )

    return answered
