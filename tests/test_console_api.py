"""The web console's JSON API, over HTTP, against a real ``geaflow-sql serve``.

Each server is a process of its own on 127.0.0.1 (or another loopback
address, for the token rule) with its own Spark; requests go over real
sockets.  What is checked: a script and a MATCH answer rows, pages of a
result, a statement in error answers 400 with its line and column, every
malformed request a clear 4xx, workspaces apart, cancel, and the token.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from geaflow_sql.core.catalog import DEFAULT_INSTANCE

from .console_server import Server

GRAPH = """
CREATE GRAPH g (
  Vertex person (id bigint ID, name varchar, age int),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, w double)
) WITH (storeType = 'memory');
USE GRAPH g;
INSERT INTO g.person VALUES (1, 'ann', 31), (2, 'bob', 25), (3, 'cy', 40);
INSERT INTO g.knows VALUES (1, 2, 0.5), (2, 3, 1.5), (1, 3, 2.0);
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = Server(tmp_path_factory.mktemp("console"), "127.0.0.1", "--max-rows", "4")
    yield started
    started.stop()


def test_a_script_and_a_match_answer_rows_a_page_at_a_time(server):
    status, out = server.run(GRAPH, session="graphs")
    assert status == 200 and "message" in out, out
    status, out = server.run(
        "MATCH (a:person)-[e:knows]->(b:person) WHERE a.age > 26 "
        "RETURN a.name AS a, b.name AS b, e.w AS w ORDER BY w",
        session="graphs",
        page_size=2,
    )
    assert status == 200, out
    assert out["columns"] == ["a", "b", "w"]
    assert out["rows"] == [["ann", "bob", 0.5], ["ann", "cy", 2.0]]
    assert (out["total"], out["truncated"]) == (2, False)
    status, out = server.run(
        "SELECT id, name FROM (VALUES (1, 'x'), (2, 'y'), (3, 'z')) AS t(id, name) ORDER BY id",
        page_size=2,
    )
    assert out["rows"] == [[1, "x"], [2, "y"]] and out["total"] == 3
    status, page = server.call(f"/api/results/{out['result']}?offset=2&limit=5")
    assert status == 200 and page["rows"] == [[3, "z"]] and page["offset"] == 2
    status, page = server.call("/api/results/nothing-kept")
    assert status == 404 and "error" in page


def test_a_statement_in_error_answers_its_line_and_column(server):
    status, out = server.run("SELECT 1;\n  SELEC x")
    assert status == 400
    assert (out["line"], out["column"]) == (2, 3)
    assert "SELEC" in out["error"]
    status, out = server.run("SELECT 1 AS a;\nSELECT nope FROM missing_table")
    assert status == 400 and out["line"] == 2 and "missing_table" in out["error"]


def test_malformed_requests_are_refused_and_the_server_goes_on(server):
    cases = [
        (b"{not json", 400, "not JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b"{}", 400, "'statement'"),
        (b'{"statement": 3}', 400, "'statement'"),
        (b'{"statement": "   "}', 400, "empty"),
        (b'{"statement": "SELECT 1", "session": ""}', 400, "'session'"),
        (b'{"statement": "SELECT 1", "page_size": "ten"}', 400, "'page_size'"),
        (json.dumps({"statement": "SELECT 1 -- " + "x" * (1 << 20)}).encode(), 413, "bytes"),
    ]
    for raw, status, words in cases:
        got, out = server.call("/api/statements", raw=raw)
        assert (got, words in out.get("error", "")) == (status, True), (raw[:40], got, out)
    assert server.call("/api/nowhere")[0] == 404
    assert server.call("/api/statements", method="GET")[0] == 405
    assert server.call("/api/results/x?offset=-1")[0] == 400
    assert server.run("SELECT 41 + 1 AS v")[1]["rows"] == [[42]]


def test_workspaces_do_not_see_each_other(server):
    assert server.run("CREATE VIEW mine (x) AS SELECT 7", session="tab-a")[0] == 200
    assert server.run("SELECT x FROM mine", session="tab-a")[1]["rows"] == [[7]]
    status, out = server.run("SELECT x FROM mine", session="tab-b")
    assert status == 400 and "mine" in out["error"]
    # SET values are a workspace's own too.
    server.run("SET geaflow.dsl.query.engine = distributed", session="tab-a")
    status, out = server.run("SELECT 1 AS one", session="tab-b")
    assert status == 200


def test_a_long_statement_is_cancelled_and_its_workspace_runs_the_next(server):
    setup = (
        "SET geaflow.dsl.query.engine = distributed;"
        "CREATE VIEW ten (x) AS SELECT * FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) AS t(x);"
        "CREATE VIEW thousand (x) AS SELECT * FROM (VALUES "
        + ", ".join(f"({i})" for i in range(1000))
        + ") AS t(x);"
    )
    assert server.run(setup, session="long")[0] == 200
    answers: list = []
    # 10^11 rows: minutes even in Spark's generated code (10^9 took 3 s on
    # a 2-core machine).  A task looks at its kill flag between the rows of
    # the scan that feeds its stage, the thousand: every 10^8 rows here.
    long = "SELECT count(*) FROM thousand a, ten b, ten c, ten d, ten e, ten f, ten g, ten h, ten i"
    worker = threading.Thread(target=lambda: answers.append(server.run(long, session="long")))
    started = time.monotonic()
    worker.start()
    time.sleep(5)
    # While it runs, its workspace takes
    # nothing else; cancel stops it (asked again until it does: a cancel that
    # comes before the Spark job starts has no job to stop).
    status, out = server.run("SELECT 2", session="long")
    assert status == 409 and "running" in out["error"], out
    # Its progress: the tasks of its Spark job once that starts (another
    # workspace runs none).
    deadline = time.monotonic() + 90
    while True:
        progress = server.call("/api/progress?session=long")[1]
        assert progress["running"] and 0 <= progress["done"] <= progress["total"], progress
        if progress["total"] > 0:
            break
        assert time.monotonic() < deadline, "no Spark job started"
        time.sleep(0.5)
    assert server.call("/api/progress?session=idle")[1] == {
        "running": False,
        "done": 0,
        "total": 0,
    }
    assert server.call("/api/cancel", {"session": "long"})[1] == {"cancelled": True}
    while worker.is_alive() and time.monotonic() - started < 90:
        worker.join(2)
        server.call("/api/cancel", {"session": "long"})
    assert not worker.is_alive()
    status, out = answers[0]
    assert status == 400 and out["kind"] == "cancelled", out
    assert server.run("SELECT 3 AS v", session="long")[1]["rows"] == [[3]]
    assert server.call("/api/cancel", {"session": "long"})[1] == {"cancelled": False}
    assert server.call("/api/progress?session=long")[1]["running"] is False


def test_off_127_0_0_1_every_request_needs_the_printed_token(tmp_path):
    # (127.0.0.2 is this machine too, but not the default address: the rule
    # is that only 127.0.0.1, localhost and ::1 bind without a token)
    server = Server(tmp_path, "127.0.0.2")
    try:
        printed = "".join(server.printed)
        token = printed.split("needs the token ", 1)[1].split()[0]
        assert server.run("SELECT 1")[0] == 401
        assert server.call("/api/health")[0] == 401
        assert server.call("/api/statements", {"statement": "SELECT 1"}, token="wrong")[0] == 401
        status, out = server.call("/api/statements", {"statement": "SELECT 5 AS v"}, token=token)
        assert (status, out["rows"]) == (200, [[5]])
        status, _ = server.call(f"/api/health?token={token}")
        assert status == 200
        # The page, loaded with the token, sets a cookie its scripts come with.
        assert server.fetch("/static/console.js")[0] == 401
        status, headers, _ = server.fetch(f"/?token={token}")
        cookie = headers["set-cookie"].split(";")[0]
        assert status == 200 and cookie == f"geaflow_token={token}"
        assert "HttpOnly" in headers["set-cookie"]
        assert server.fetch("/static/console.js", {"Cookie": cookie})[0] == 200
        assert server.fetch("/static/console.js", {"Cookie": "geaflow_token=x"})[0] == 401
    finally:
        server.stop()


def test_a_result_over_the_row_limit_is_cut_and_says_so(server):
    values = ", ".join(f"({i})" for i in range(6))
    status, out = server.run(f"SELECT x FROM (VALUES {values}) AS t(x) ORDER BY x")
    assert status == 200
    assert out["rows"] == [[0], [1], [2], [3]]
    assert (out["total"], out["truncated"]) == (4, True)


def test_the_catalog_and_explain_of_a_workspace(server):
    script = GRAPH + (
        "CREATE TABLE people (id bigint, name varchar) WITH (type = 'file', "
        "geaflow.dsl.file.path = 'people.txt');"
        "CREATE VIEW adults (name) AS SELECT name FROM people;"
    )
    assert server.run(script, session="cat")[0] == 200
    status, out = server.call("/api/catalog?session=cat")
    assert status == 200
    assert [(t["name"], t["connector"]) for t in out["tables"]] == [("people", "file")]
    assert out["tables"][0]["columns"] == [
        {"name": "id", "type": "BIGINT"},
        {"name": "name", "type": "VARCHAR"},
    ]
    assert out["views"] == [{"name": "adults", "columns": ["name"]}]
    (graph,) = out["graphs"]
    assert (graph["name"], graph["store"], out["current_graph"]) == ("g", "memory", "g")
    assert graph["parts"] == ["g"]
    assert [(v["label"], v["id"]) for v in graph["vertices"]] == [("person", "id")]
    assert [f["name"] for f in graph["vertices"][0]["fields"]] == ["id", "name", "age"]
    assert [(e["label"], e["source"], e["destination"]) for e in graph["edges"]] == [
        ("knows", "src", "dst")
    ]
    assert "page_rank" in out["algorithms"] and "concat" in out["builtin_functions"]
    # From another instance the graph is named with its own: each part to quote.
    assert server.run(GRAPH + "USE INSTANCE elsewhere", session="cat-inst")[0] == 200
    (graph,) = server.call("/api/catalog?session=cat-inst")[1]["graphs"]
    assert (graph["name"], graph["parts"]) == (f"{DEFAULT_INSTANCE}.g", [DEFAULT_INSTANCE, "g"])
    status, drawn = server.run(f"SHOW GRAPH `{DEFAULT_INSTANCE}`.`g` SAMPLE 5", session="cat-inst")
    assert status == 200 and drawn["columns"] == ["vertex", "edge"], drawn
    # Another workspace has none of it.
    other = server.call("/api/catalog?session=cat-other")[1]
    assert (other["tables"], other["graphs"]) == ([], [])
    status, out = server.call(
        "/api/explain",
        {"statement": "MATCH (a:person)-[e:knows]->(b) RETURN a.name", "session": "cat"},
    )
    assert status == 200 and "== PipelineGraph ==" in out["text"], out
    # The same plans as a picture: every level a cluster of the digraph.
    assert out["dot"].startswith("digraph explain {")
    for cluster in ("before", "after", "pipeline", "groups"):
        assert f"subgraph cluster_{cluster} {{" in out["dot"]
    status, out = server.call(
        "/api/explain", {"statement": "SELECT 1;\nSELECT nothing FROM nowhere", "session": "cat"}
    )
    assert (status, out["line"], out["column"]) == (400, 2, 21), out
    status, out = server.call("/api/explain", {"statement": "SET a = 1", "session": "cat"})
    assert status == 400 and "no query" in out["error"]


def test_the_page_and_what_its_editor_asks(server):
    status, headers, body = server.fetch("/")
    assert status == 200 and b"<title>geaflow-sql console</title>" in body
    for asset in ("console.js", "console.css", "vis-network.min.js"):
        status, headers, body = server.fetch(f"/static/{asset}")
        assert status == 200 and len(body) > 1000, asset
    # Colours: the shell's lexer's spans.
    status, out = server.call("/api/highlight", {"text": "SELECT 'x' -- note\nMATCH (a:person)"})
    assert status == 200
    assert out["spans"] == [
        [0, 6, "keyword"],
        [7, 10, "string"],
        [11, 18, "comment"],
        [19, 24, "keyword"],
        [28, 34, "label"],
    ]
    # Completion: the shell's completer over the workspace's catalog.
    assert server.run(GRAPH, session="complete")[0] == 200
    text = "MATCH (a:pe"
    status, out = server.call(
        "/api/complete", {"text": text, "cursor": len(text), "session": "complete"}
    )
    assert status == 200
    assert {"text": "person", "replace": 2, "meta": "vertex of g"} in out["completions"]
    status, out = server.call(
        "/api/complete", {"text": text, "cursor": len(text), "session": "complete-other"}
    )
    assert not any(c["text"] == "person" for c in out["completions"])
    assert server.call("/api/complete", {"text": 5})[0] == 400


def test_bad_starts_are_told_without_a_traceback(tmp_path):
    import socket
    import subprocess
    import sys

    from .console_server import environment

    (tmp_path / "init.gql").write_text("CREATE TABLE t (id bigint);\nSELEC 1;\n", encoding="utf-8")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        for args, code, words in (
            (["--port", str(port)], 2, f"cannot bind 127.0.0.1:{port}"),
            (["--port", "0", "--init", "missing.gql"], 2, "cannot read missing.gql"),
            (["--port", "0", "--init", "init.gql", "--master", "local[1]"], 1, "init.gql:2:1"),
        ):
            done = subprocess.run(
                [sys.executable, "-m", "geaflow_sql.cli", "serve", *args],
                cwd=tmp_path,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == code, (args, done.stderr)
            assert words in done.stderr and "Traceback" not in done.stderr, done.stderr
