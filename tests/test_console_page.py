"""The web console's page, driven in a real headless Chromium (Selenium).

A ``geaflow-sql serve`` process on 127.0.0.1, Debian's ``chromium`` and
``chromedriver`` (``.ci/run`` installs them).  The test types a CREATE GRAPH
script and a MATCH into the editor, sees the rows in the table and the graph
drawn (a screenshot, decoded, must show the nodes' colour), gets an error
with its position, completes a word, and cancels a long statement.  With
``GEAFLOW_SQL_SCREENSHOT=path`` it also keeps its screenshot there (the
README's picture is made so).
"""

from __future__ import annotations

import os
import shutil
import struct
import time
import zlib

import pytest

from .console_server import Server

SCRIPT = """CREATE GRAPH social (
  Vertex person (id bigint ID, name varchar, age int),
  Vertex city (id bigint ID, name varchar),
  Edge knows (src bigint SOURCE ID, dst bigint DESTINATION ID, since int),
  Edge lives (src bigint SOURCE ID, dst bigint DESTINATION ID)
) WITH (storeType = 'memory');
USE GRAPH social;
INSERT INTO social.person VALUES (1, 'ann', 31), (2, 'bob', 25), (3, 'cy', 40), (4, 'dee', 35);
INSERT INTO social.city VALUES (10, 'hangzhou'), (11, 'berlin');
INSERT INTO social.knows VALUES (1, 2, 2019), (2, 3, 2020), (3, 1, 2021), (1, 4, 2022);
INSERT INTO social.lives VALUES (1, 10), (2, 10), (3, 11), (4, 11);
"""

MATCH = "MATCH (a:person)-[e]->(b) RETURN a, e, b"

# vis-network's colours for its first two groups (labels): node fills.
GROUP_FILLS = [(0x97, 0xC2, 0xFC), (0xFF, 0xFF, 0x00)]


def browser():
    """Headless Chromium under Selenium."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,900")
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA bytes) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    step = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * step
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - step] if x >= step else 0
            up = previous[x]
            corner = previous[x - step] if x >= step else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(bytes(line) if step == 4 else _rgba(bytes(line)))
        previous = line
    return width, height, rows


def _rgba(rgb: bytes) -> bytes:
    return b"".join(rgb[i : i + 3] + b"\xff" for i in range(0, len(rgb), 3))


def count_colour(rows: list[bytes], colour: tuple[int, int, int], slack: int = 6) -> int:
    found = 0
    for row in rows:
        for i in range(0, len(row), 4):
            if all(abs(row[i + k] - colour[k]) <= slack for k in range(3)):
                found += 1
    return found


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        pytest.fail("chromium and chromedriver are needed (.ci/run installs them)")
    server = Server(tmp_path_factory.mktemp("page"), "127.0.0.1")
    driver = browser()
    driver.get(f"http://127.0.0.1:{server.port}/")
    try:
        yield driver
    finally:
        driver.quit()
        server.stop()


def wait_for(check, seconds: float = 90, what: str = ""):
    """``check()``'s first true answer; an element the page replaced while
    ``check`` looked at it (the catalog is redrawn after each run) counts as
    not yet."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + seconds
    while True:
        try:
            got = check()
        except StaleElementReferenceException:
            got = None
        if got:
            return got
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.1)


def type_and_run(driver, text: str) -> str:
    """Type ``text`` into the editor (replacing what was there), run it, and
    wait until it is done: the status line then."""
    from selenium.webdriver.common.by import By

    editor = driver.find_element(By.ID, "source")
    editor.clear()
    editor.send_keys(text)
    driver.find_element(By.ID, "run").click()
    wait_for(lambda: driver.find_element(By.ID, "cancel").get_attribute("disabled"), what="run")
    return driver.find_element(By.ID, "status").text


def test_a_script_then_a_match_shows_rows_and_draws_the_graph(page, tmp_path):
    from selenium.webdriver.common.by import By

    status = type_and_run(page, SCRIPT)
    assert "failed" not in status, page.find_element(By.ID, "error").text
    # The catalog panel shows the new graph and its labels.
    wait_for(lambda: "social" in page.find_element(By.ID, "catalog").text, what="catalog")
    status = type_and_run(page, MATCH)
    assert status.startswith("8 rows"), status
    page.find_element(By.CSS_SELECTOR, "#views button[data-view=table]").click()
    headers = [th.text for th in page.find_elements(By.CSS_SELECTOR, "#rows th")]
    assert headers == ["a", "e", "b"]
    cells = page.find_elements(By.CSS_SELECTOR, "#rows tr td:first-child")
    assert len(cells) == 8 and all('"~label":"person"' in c.text for c in cells)
    # The graph: six vertices (four persons, two cities) and eight edges, drawn.
    page.find_element(By.CSS_SELECTOR, "#views button[data-view=graph]").click()
    counts = wait_for(
        lambda: page.execute_script(
            "return network && [network.body.data.nodes.length, network.body.data.edges.length]"
        ),
        what="the graph",
    )
    assert counts == [6, 8]
    page.execute_script("network.stopSimulation(); network.fit();")
    time.sleep(0.5)
    shot = page.find_element(By.ID, "graph").screenshot_as_png
    _, _, rows = png_pixels(shot)
    persons, cities = (count_colour(rows, c) for c in GROUP_FILLS)
    # (a node is a dot of radius 14: several hundred pixels of its fill)
    assert persons > 4 * 150 and cities > 2 * 150, (persons, cities)
    keep = os.environ.get("GEAFLOW_SQL_SCREENSHOT")
    if keep:
        page.save_screenshot(keep)


def test_an_error_shows_its_line_and_column_and_marks_the_editor(page):
    from selenium.webdriver.common.by import By

    status = type_and_run(page, "SELECT 1 AS one;\nSELECT nope FROM nowhere_table")
    assert status.startswith("failed")
    message = page.find_element(By.ID, "error-message").text
    assert message.startswith("line 2, column 18") and "nowhere_table" in message
    caret = page.find_element(By.ID, "error-line").text.split("\n")
    assert caret[0] == "SELECT nope FROM nowhere_table" and caret[1] == " " * 17 + "^"
    cursor = page.execute_script("return document.getElementById('source').selectionStart")
    assert cursor == len("SELECT 1 AS one;\n") + 17
    # (read in one script: the highlighter may repaint the colours meanwhile)
    bad = page.execute_script(
        "return [...document.querySelectorAll('#colours .bad')].map((e) => e.textContent)"
    )
    assert bad == ["nowhere_table"]


def test_completion_comes_from_the_workspace_catalog(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    editor = page.find_element(By.ID, "source")
    editor.clear()
    editor.send_keys("MATCH (a:pe")
    editor.send_keys(Keys.CONTROL, " ")
    items = wait_for(
        lambda: [li.text for li in page.find_elements(By.CSS_SELECTOR, "#completions li")],
        what="completions",
    )
    assert any(item.startswith("person") for item in items), items
    editor.send_keys(Keys.ENTER)
    assert editor.get_attribute("value") == "MATCH (a:person"
    # Keywords are coloured by the shell's lexer.
    wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "#colours .keyword"), what="colours")


def test_cancel_stops_a_long_statement(page):
    from selenium.webdriver.common.by import By

    setup = (
        "SET geaflow.dsl.query.engine = distributed;\n"
        "CREATE VIEW ten (x) AS SELECT * FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) AS t(x)"
    )
    type_and_run(page, setup)
    editor = page.find_element(By.ID, "source")
    editor.clear()
    editor.send_keys(
        "SELECT count(*) FROM ten a, ten b, ten c, ten d, ten e, ten f, ten g, ten h, ten i"
    )
    page.find_element(By.ID, "run").click()
    cancel = page.find_element(By.ID, "cancel")
    wait_for(lambda: cancel.is_enabled(), what="the run to start")
    # The bar shows the Spark tasks of the statement once its job runs.
    bar = page.find_element(By.ID, "progress")
    wait_for(lambda: bar.get_attribute("title"), what="the progress bar")
    assert bar.is_displayed() and float(bar.get_attribute("max")) > 0
    assert " of " in bar.get_attribute("title")
    started = time.monotonic()
    # (clicked again until it stops: a cancel before the Spark job starts has no job to stop)
    while cancel.is_enabled() and time.monotonic() - started < 90:
        cancel.click()
        time.sleep(2)
    assert not cancel.is_enabled()
    assert "cancelled" in page.find_element(By.ID, "error-message").text


def test_explain_draws_every_level_of_the_plan(page):
    from selenium.webdriver.common.by import By

    editor = page.find_element(By.ID, "source")
    editor.clear()
    editor.send_keys(MATCH)
    page.find_element(By.ID, "explain").click()
    wait_for(lambda: page.find_element(By.ID, "status").text.startswith("explained"), what="plan")
    # Graphviz's picture (the server has it: .ci/run installs it): a box per
    # level, each ExecutionGroup a box inside the groups' box.
    boxes = page.execute_script(
        "return [...document.querySelectorAll('#plan svg g.cluster > title')]"
        ".map(t => t.textContent)"
    )
    levels = {"cluster_before", "cluster_after", "cluster_pipeline", "cluster_groups"}
    assert levels <= set(boxes), boxes
    assert any(b.startswith("cluster_group") and b != "cluster_groups" for b in boxes), boxes
    nested = page.execute_script("return document.querySelectorAll('#plan svg g.cluster').length")
    assert nested == len(boxes)
    page.find_element(By.CSS_SELECTOR, "#views button[data-view=text]").click()
    assert "== PipelineGraph ==" in page.find_element(By.ID, "text").text
    # Without Graphviz the page lays out the same DOT itself: a colour per level.
    levels_drawn = page.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        api("/api/explain", { statement: arguments[0], session: workspace }).then(({ json }) => {
          drawPlan(json.dot);
          done(plan.body.data.nodes.get().map((n) => n.group));
        });
        """,
        MATCH,
    )
    assert set(levels_drawn) == {"before", "after", "pipeline", "groups"}, levels_drawn
    arrows = page.execute_script("return plan.body.data.edges.length")
    assert arrows >= len(levels_drawn) - 4  # (each level is connected)


def test_an_algorithms_result_sizes_or_colours_the_drawn_nodes(page):
    from selenium.webdriver.common.by import By

    status = type_and_run(page, "USE GRAPH social;\n" + MATCH)
    assert status.startswith("8 rows"), (status, page.find_element(By.ID, "error").text)
    assert page.execute_script("return network.body.data.nodes.length") == 6
    # Components: one colour per component on the graph drawn.
    status = type_and_run(page, "CALL wcc(10) YIELD (vid, component) RETURN vid, component")
    assert "rows" in status, page.find_element(By.ID, "error").text
    page.find_element(By.CSS_SELECTOR, "#views button[data-view=graph]").click()
    colours = page.execute_script(
        "return network.body.data.nodes.get().map(n => n.color && n.color.background)"
    )
    assert len(colours) == 6 and all(colours) and len(set(colours)) == 1, colours
    # PageRank: sizes that follow the values.
    status = type_and_run(page, "CALL page_rank(0.85, 0.01, 20) YIELD (vid, pr) RETURN vid, pr")
    assert "rows" in status, page.find_element(By.ID, "error").text
    sized = page.execute_script(
        "return network.body.data.nodes.get().map(n => [n.id, n.size, n.title])"
    )
    ranks = {node: float(title.split("= ")[1]) for node, _, title in sized}
    by_rank = sorted(sized, key=lambda n: ranks[n[0]])
    assert by_rank[0][1] < by_rank[-1][1], sized


def test_a_graph_in_the_catalog_is_drawn_whole_past_the_first_page(page):
    from selenium.webdriver.common.by import By

    n = 150
    # (a name the button must back-quote)
    script = (
        "CREATE GRAPH `the chain` (Vertex dot (id bigint ID), "
        "Edge next (s bigint SOURCE ID, t bigint DESTINATION ID)) WITH (storeType='memory');\n"
        f"INSERT INTO `the chain`.dot VALUES {', '.join(f'({i})' for i in range(n))};\n"
        f"INSERT INTO `the chain`.next VALUES {', '.join(f'({i}, {i + 1})' for i in range(n - 1))}"
    )
    editor = page.find_element(By.ID, "source")
    page.execute_script("arguments[0].value = arguments[1]", editor, script)
    page.find_element(By.ID, "run").click()
    wait_for(lambda: page.find_element(By.ID, "cancel").get_attribute("disabled"), what="run")

    def click_draw():
        # (found and clicked in one check: the catalog may be redrawn between)
        for button in page.find_elements(By.CSS_SELECTOR, "#catalog button.draw"):
            if button.find_element(By.XPATH, "..").text.startswith("the chain"):
                button.click()
                return True
        return False

    wait_for(click_draw, what="the graph in the catalog")
    status = wait_for(
        lambda: (
            (text := page.find_element(By.ID, "status").text).startswith(("2", "failed")) and text
        ),
        what="the drawing",
    )
    assert status.startswith(f"{2 * n - 1} rows"), (status, page.find_element(By.ID, "error").text)
    # Every vertex and edge is drawn, though the table shows the first page.
    counts = page.execute_script(
        "return [network.body.data.nodes.length, network.body.data.edges.length]"
    )
    assert counts == [n, n - 1]
    assert len(page.find_elements(By.CSS_SELECTOR, "#rows tr td:first-child")) == 100
    assert editor.get_attribute("value") == script  # the editor's text is left alone
