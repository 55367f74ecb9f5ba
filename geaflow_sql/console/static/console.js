// The geaflow-sql console page: an editor, the rows, the graph, the plans.
// Everything it knows comes from the JSON API (geaflow_sql/console/api.py).
"use strict";

const $ = (id) => document.getElementById(id);
const PAGE = 100;
// The most rows of a result the graph view draws.
const DRAWN = 2000;
// The vertices a graph's "draw" in the catalog panel shows.
const SAMPLE = 200;

// ------------------------------------------------------------ the server
// Each tab is a workspace of its own (a Session on the server), kept across
// reloads of the tab; a token given in the address goes with every request.
const params = new URLSearchParams(location.search);
if (params.get("token")) sessionStorage.setItem("geaflow-token", params.get("token"));
const token = sessionStorage.getItem("geaflow-token");
let workspace = sessionStorage.getItem("geaflow-workspace");
if (!workspace) {
  workspace = "tab-" + Math.random().toString(36).slice(2, 10);
  sessionStorage.setItem("geaflow-workspace", workspace);
}
$("workspace").textContent = "workspace " + workspace;

async function api(path, body) {
  const init = { headers: {} };
  if (token) init.headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const answer = await fetch(path, init);
  let json;
  try {
    json = await answer.json();
  } catch (e) {
    json = { error: "the server answered " + answer.status };
  }
  return { status: answer.status, json };
}

// ------------------------------------------------------------ the editor
const source = $("source");
const colours = $("colours");
let highlightTimer = null;
let errorSpan = null; // [start, end] of the text an error points at
let painted = []; // the highlighter's last spans for the text shown

// A name (its parts: [instance, name] or [name]) as the DSL reads it
// whatever it holds: each part back-quoted, a back-quote doubled.
function quoted(parts) {
  return parts.map((p) => "`" + p.replace(/`/g, "``") + "`").join(".");
}

function escapeHtml(text) {
  return text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
}

function paint(spans) {
  painted = spans;
  const text = source.value;
  const marks = spans.slice();
  if (errorSpan) marks.push([errorSpan[0], errorSpan[1], "bad"]);
  marks.sort((a, b) => a[0] - b[0]);
  let html = "";
  let at = 0;
  for (const [start, end, css] of marks) {
    if (start < at) continue;
    html += escapeHtml(text.slice(at, start));
    html += `<span class="${css}">${escapeHtml(text.slice(start, end))}</span>`;
    at = end;
  }
  html += escapeHtml(text.slice(at)) + "\n";
  colours.innerHTML = html;
  colours.scrollTop = source.scrollTop;
}

function highlightSoon() {
  clearTimeout(highlightTimer);
  highlightTimer = setTimeout(async () => {
    const text = source.value;
    const { status, json } = await api("/api/highlight", { text });
    if (status === 200 && text === source.value) paint(json.spans);
  }, 120);
}

source.addEventListener("input", () => {
  errorSpan = null;
  paint([]);
  highlightSoon();
  if (!$("completions").hidden) complete();
});
source.addEventListener("scroll", () => {
  colours.scrollTop = source.scrollTop;
});

// Completion: Ctrl+Space, from the shell's completer over this workspace.
let choices = [];
let chosen = 0;

async function complete() {
  const cursor = source.selectionStart;
  const { status, json } = await api("/api/complete", {
    text: source.value,
    cursor,
    session: workspace,
  });
  const list = $("completions");
  choices = status === 200 ? json.completions : [];
  chosen = 0;
  if (!choices.length) {
    list.hidden = true;
    return;
  }
  list.innerHTML = "";
  choices.forEach((c, i) => {
    const item = document.createElement("li");
    item.innerHTML = `${escapeHtml(c.text)} <span class="meta">${escapeHtml(c.meta || "")}</span>`;
    item.addEventListener("mousedown", (event) => {
      event.preventDefault();
      take(i);
    });
    list.appendChild(item);
  });
  const lines = source.value.slice(0, cursor).split("\n").length;
  list.style.top = Math.min(lines * 20 + 8, source.clientHeight - 20) + "px";
  list.style.left = "40px";
  list.hidden = false;
  mark();
}

function mark() {
  [...$("completions").children].forEach((li, i) => li.classList.toggle("chosen", i === chosen));
}

function take(i) {
  const c = choices[i];
  const end = source.selectionStart;
  const start = end - c.replace;
  source.setRangeText(c.text, start, end, "end");
  $("completions").hidden = true;
  source.focus();
  highlightSoon();
}

source.addEventListener("keydown", (event) => {
  const list = $("completions");
  if (!list.hidden) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : choices.length - 1)) % choices.length;
      mark();
      event.preventDefault();
      return;
    }
    if (event.key === "Enter" || event.key === "Tab") {
      take(chosen);
      event.preventDefault();
      return;
    }
    if (event.key === "Escape") {
      list.hidden = true;
      return;
    }
  }
  if (event.key === " " && event.ctrlKey) {
    event.preventDefault();
    complete();
  } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    run();
  }
});
source.addEventListener("blur", () => {
  $("completions").hidden = true;
});

// ------------------------------------------------------------ running
let running = false;
let started = 0;
let clock = null;

function statement() {
  const { selectionStart: a, selectionEnd: b, value } = source;
  return b > a ? value.slice(a, b) : value;
}

function busy(on) {
  running = on;
  $("run").disabled = on;
  $("explain").disabled = on;
  $("cancel").disabled = !on;
  const bar = $("progress");
  bar.hidden = !on;
  bar.removeAttribute("value"); // (moving until Spark reports tasks)
  clearInterval(clock);
  if (on) {
    started = performance.now();
    let ticks = 0;
    clock = setInterval(() => {
      say(`running ${seconds()} s`);
      if (++ticks % 3 === 0) showProgress();
    }, 200);
  }
}

// The bar: the Spark tasks done of the stages this tab's statement runs.
async function showProgress() {
  const { status, json } = await api(`/api/progress?session=${encodeURIComponent(workspace)}`);
  const bar = $("progress");
  if (!running || status !== 200) return;
  if (json.total > 0) {
    bar.max = json.total;
    bar.value = json.done;
    bar.title = `${json.done} of ${json.total} Spark tasks`;
  } else {
    bar.removeAttribute("value");
  }
}

function seconds() {
  return ((performance.now() - started) / 1000).toFixed(1);
}

function say(text) {
  $("status").textContent = text;
}

async function run() {
  const offset = source.selectionEnd > source.selectionStart ? source.selectionStart : 0;
  await runText(statement(), offset);
}

// Runs ``text``; ``offset``: where it starts in the editor (null when it is
// not the editor's: an error then marks no place there).
async function runText(text, offset) {
  if (running || !text.trim()) return;
  remember(text);
  showError(null);
  busy(true);
  let answer, all;
  try {
    answer = await api("/api/statements", { statement: text, session: workspace, page_size: PAGE });
    if (answer.status === 200 && answer.json.columns) all = await drawnRows(answer.json);
  } catch (e) {
    answer = { status: 0, json: { error: `no answer from the server (${e.message})` } };
  } finally {
    busy(false);
  }
  const { status, json } = answer;
  if (status !== 200) {
    say(`failed after ${seconds()} s`);
    showError(json, text, offset);
    return;
  }
  if (json.columns) {
    say(`${json.total}${json.truncated ? "+" : ""} rows in ${seconds()} s`);
    showRows(json);
    const drawn = drawGraph(all) || paintValues(all);
    choose(drawn ? "graph" : "table");
  } else {
    say(`${json.message} (${seconds()} s)`);
    $("text").textContent = json.text || json.message;
    choose("text");
  }
  (json.warnings || []).forEach((w) => say($("status").textContent + " — " + w));
  loadCatalog();
}

// The rows the graph view draws: the first page and, when there are more
// and the first page has something to draw, the rest of the kept rows up to
// DRAWN.
async function drawnRows(page) {
  if (page.total <= page.rows.length || !drawable(page)) return page;
  const { status, json } = await api(`/api/results/${page.result}?offset=0&limit=${DRAWN}`);
  return status === 200 ? json : page;
}

$("run").addEventListener("click", run);
$("cancel").addEventListener("click", async () => {
  await api("/api/cancel", { session: workspace });
  say("cancelling…");
});
$("explain").addEventListener("click", async () => {
  const text = statement();
  if (!text.trim()) return;
  const offset = source.selectionEnd > source.selectionStart ? source.selectionStart : 0;
  showError(null);
  busy(true);
  let answer;
  try {
    answer = await api("/api/explain", { statement: text, session: workspace });
  } catch (e) {
    answer = { status: 0, json: { error: `no answer from the server (${e.message})` } };
  } finally {
    busy(false);
  }
  const { status, json } = answer;
  if (status !== 200) {
    showError(json, text, offset);
    return;
  }
  say(`explained in ${seconds()} s`);
  $("text").textContent = json.text;
  if (json.svg) showPlanPicture(json.svg);
  else drawPlan(json.dot);
  choose("plan");
});

// ------------------------------------------------------------ plans
// EXPLAIN's picture (planner/explain_dot.py) drawn from its DOT text: each
// level in a colour of its own, inputs below the operators that read them.
const LEVELS = [
  ["before", /^before/, "#dbe8fb", "logical plan before rules"],
  ["after", /^after/, "#d9f2d0", "after rules"],
  ["pipeline", /^p\d/, "#fde7c8", "PipelineGraph"],
  ["groups", /^g\d/, "#eadcf5", "ExecutionGroups"],
];
let plan = null;

// Graphviz's drawing (the server's, when it has Graphviz): the levels as
// boxes, the ExecutionGroups nested in theirs.  Parsed as an SVG document,
// so nothing in it runs.
function showPlanPicture(svg) {
  if (plan) plan.destroy();
  plan = null;
  const picture = new DOMParser().parseFromString(svg, "image/svg+xml").documentElement;
  $("plan").replaceChildren(document.importNode(picture, true));
  $("legend").textContent = "";
}

// Without Graphviz: vis-network's layout of the same DOT (no boxes for the
// groups; a colour per level instead).
function drawPlan(dot) {
  const parsed = vis.network.convertDot(dot);
  for (const node of parsed.nodes) {
    const level = LEVELS.find(([, pattern]) => pattern.test(node.id)) || LEVELS[0];
    node.group = level[0];
    node.shape = "box";
  }
  const groups = {};
  for (const [name, , colour] of LEVELS) groups[name] = { color: { background: colour, border: "#888" } };
  $("legend").innerHTML = LEVELS.map(
    ([, , colour, title]) => `<span style="background:${colour}">${title}</span>`,
  ).join("");
  if (plan) plan.destroy();
  $("plan").textContent = "";
  plan = new vis.Network(
    $("plan"),
    { nodes: new vis.DataSet(parsed.nodes), edges: new vis.DataSet(parsed.edges) },
    {
      groups,
      layout: { hierarchical: { direction: "DU", sortMethod: "directed", levelSeparation: 70 } },
      physics: false,
      edges: { arrows: "to", font: { size: 9 } },
      nodes: { font: { size: 11 } },
    },
  );
}

// An error: its message, its line with a caret under the column, and (for
// the editor's text) the place marked in the editor (the cursor put there).
function showError(json, text, offset) {
  const box = $("error");
  errorSpan = null;
  if (!json) {
    box.hidden = true;
    paint([]);
    highlightSoon();
    return;
  }
  box.hidden = false;
  const where = json.line ? `line ${json.line}, column ${json.column}: ` : "";
  $("error-message").textContent = where + json.error;
  const lines = text.split("\n");
  const caret = json.line ? " ".repeat(Math.max(0, json.column - 1)) + "^" : "";
  $("error-line").textContent = json.line ? `${lines[json.line - 1] || ""}\n${caret}` : "";
  if (json.line && offset !== null) {
    let at = offset;
    for (let i = 0; i < json.line - 1; i++) at += lines[i].length + 1;
    at += json.column - 1;
    const word = /^[\w$~]*/.exec(source.value.slice(at))[0];
    errorSpan = [at, at + Math.max(1, word.length)];
    source.focus();
    source.setSelectionRange(at, at);
    // (marked at once, over the colours shown; the highlighter repaints)
    paint(painted);
  }
  highlightSoon();
}

// ------------------------------------------------------------ results
let current = null; // the result shown: {result, total, offset, columns}

function cell(value) {
  if (value === null) return "NULL";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function showRows(page) {
  current = page;
  const table = $("rows");
  table.innerHTML = "";
  const head = table.insertRow();
  for (const name of page.columns) {
    const th = document.createElement("th");
    th.textContent = name;
    head.appendChild(th);
  }
  for (const row of page.rows) {
    const tr = table.insertRow();
    for (const value of row) tr.insertCell().textContent = cell(value);
  }
  const last = Math.min(page.offset + page.rows.length, page.total);
  $("page").textContent = page.total ? `${page.offset + 1}–${last} of ${page.total}` : "no rows";
  $("previous").disabled = page.offset === 0;
  $("next").disabled = last >= page.total;
}

async function turn(by) {
  if (!current) return;
  const offset = Math.max(0, current.offset + by * PAGE);
  const { status, json } = await api(`/api/results/${current.result}?offset=${offset}&limit=${PAGE}`);
  if (status === 200) showRows(json);
  else showError(json, "", 0);
}
$("previous").addEventListener("click", () => turn(-1));
$("next").addEventListener("click", () => turn(1));

function choose(view) {
  for (const b of document.querySelectorAll("#views button")) {
    b.classList.toggle("chosen", b.dataset.view === view);
  }
  for (const name of ["table", "graph", "plan", "text"]) $(name + "-view").hidden = name !== view;
  if (view === "graph" && network) network.fit();
  if (view === "plan" && plan) plan.fit();
}
for (const b of document.querySelectorAll("#views button")) {
  b.addEventListener("click", () => choose(b.dataset.view));
}

// ------------------------------------------------------------ the graph
// Vertices and edges anywhere in the rows (a column of them, a path's lists)
// are drawn, coloured by label; a click shows an element's properties.
let network = null;

function elements(value, nodes, edges) {
  if (Array.isArray(value)) {
    value.forEach((v) => elements(v, nodes, edges));
  } else if (value && typeof value === "object") {
    if ("~src" in value && "~dst" in value) {
      const key = `${value["~label"]}:${value["~src"]}->${value["~dst"]}:${JSON.stringify(value)}`;
      edges.set(key, value);
    } else if ("~id" in value) {
      nodes.set(String(value["~id"]), value);
    } else {
      Object.values(value).forEach((v) => elements(v, nodes, edges));
    }
  }
}

// A result's vertices and edges (its paths' too), by id.
function collected(page) {
  const nodes = new Map();
  const edges = new Map();
  page.rows.forEach((row) => elements(row, nodes, edges));
  return { nodes, edges };
}

// The rows of a result that give a value to a node drawn: an id, then the value.
function paintable(page) {
  if (!network || page.columns.length < 2) return [];
  const drawn = network.body.data.nodes;
  return page.rows.filter((r) => drawn.get(String(r[0])) !== null);
}

// Whether the graph view has a use for a result's rows: vertices, edges or
// paths to draw, or values for the nodes drawn (see paintValues).
function drawable(page) {
  const { nodes, edges } = collected(page);
  return nodes.size > 0 || edges.size > 0 || paintable(page).length > 0;
}

function drawGraph(page) {
  const { nodes, edges } = collected(page);
  // (rows with none leave the last graph drawn: an algorithm's values may paint it)
  if (!nodes.size && !edges.size) return false;
  for (const e of edges.values()) {
    for (const end of [e["~src"], e["~dst"]]) {
      if (!nodes.has(String(end))) nodes.set(String(end), { "~id": end, "~label": "?" });
    }
  }
  const named = (v) => v.name ?? v["~id"];
  const data = {
    nodes: new vis.DataSet(
      [...nodes.entries()].map(([id, v]) => ({
        id,
        label: String(named(v)),
        group: v["~label"],
        title: v["~label"],
        element: v,
      })),
    ),
    edges: new vis.DataSet(
      [...edges.values()].map((e, i) => ({
        id: i,
        from: String(e["~src"]),
        to: String(e["~dst"]),
        label: e["~label"],
        arrows: "to",
        element: e,
      })),
    ),
  };
  $("graph").textContent = "";
  if (network) network.destroy();
  network = new vis.Network($("graph"), data, {
    edges: { font: { size: 11 } },
    nodes: { shape: "dot", size: 14 },
    physics: { stabilization: { iterations: 200 } },
  });
  network.on("click", (event) => {
    const node = event.nodes[0];
    const edge = event.edges[0];
    const item = node !== undefined ? data.nodes.get(node) : edge !== undefined ? data.edges.get(edge) : null;
    $("element").textContent = item ? JSON.stringify(item.element, null, 2) : "";
  });
  return true;
}

// An algorithm's result over the graph on the page (CALL page_rank, wcc: a
// vertex id and a value per row): nodes sized by a numeric value, or
// coloured by a component id, on the graph already drawn.
function paintValues(page) {
  const rows = paintable(page);
  if (!rows.length) return false;
  const values = rows.map((r) => r[1]);
  const numbers = values.every((v) => typeof v === "number");
  const distinct = new Set(values.map(String));
  const update = [];
  if (numbers && distinct.size > Math.max(2, rows.length / 2)) {
    const low = Math.min(...values);
    const high = Math.max(...values);
    for (const [id, v] of rows) {
      const size = high > low ? 10 + (30 * (v - low)) / (high - low) : 20;
      update.push({ id: String(id), size, title: `${page.columns[1]} = ${v}` });
    }
  } else {
    const palette = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#46f0f0", "#f032e6", "#bcf60c"];
    const index = new Map([...distinct].map((v, i) => [v, i]));
    for (const [id, v] of rows) {
      const colour = palette[index.get(String(v)) % palette.length];
      update.push({ id: String(id), color: { background: colour, border: colour }, title: `${page.columns[1]} = ${v}` });
    }
  }
  network.body.data.nodes.update(update);
  return true;
}

// ------------------------------------------------------------ side panel
function details(summary, open) {
  const d = document.createElement("details");
  d.open = !!open;
  const s = document.createElement("summary");
  s.innerHTML = summary;
  d.appendChild(s);
  return d;
}

function fieldsLine(fields) {
  return fields.map((f) => `${escapeHtml(f.name)} <span class="meta">${escapeHtml(f.type)}</span>`).join("<br>");
}

async function loadCatalog() {
  const { status, json } = await api(`/api/catalog?session=${encodeURIComponent(workspace)}`);
  const panel = $("catalog");
  if (status !== 200) {
    panel.textContent = json.error;
    return;
  }
  panel.innerHTML = "";
  // (the user's definitions open; the built-in lists closed)
  const group = (title, items, render, open = items.length > 0) => {
    const d = details(`${title} <span class="meta">${items.length}</span>`, open);
    items.forEach((item) => d.appendChild(render(item)));
    panel.appendChild(d);
  };
  group("Tables", json.tables, (t) => {
    const d = details(`${escapeHtml(t.name)} <span class="meta">${escapeHtml(t.connector)}</span>`);
    d.insertAdjacentHTML("beforeend", `<div>${fieldsLine(t.columns)}</div>`);
    return d;
  });
  group("Views", json.views, (v) => {
    const d = details(escapeHtml(v.name));
    d.insertAdjacentHTML("beforeend", `<div>${v.columns.map(escapeHtml).join("<br>")}</div>`);
    return d;
  });
  group("Graphs", json.graphs, (g) => {
    const current = g.name === json.current_graph ? " (in use)" : "";
    const d = details(`${escapeHtml(g.name)} <span class="meta">${escapeHtml(g.store)}${current}</span>`);
    const draw = document.createElement("button");
    draw.className = "draw";
    draw.textContent = "draw";
    draw.title = `draw ${SAMPLE} of its vertices and the edges among them`;
    draw.addEventListener("click", (event) => {
      event.preventDefault(); // (not the details' toggle)
      runText(`SHOW GRAPH ${quoted(g.parts)} SAMPLE ${SAMPLE}`, null);
    });
    d.querySelector("summary").appendChild(draw);
    for (const v of g.vertices) {
      const l = details(`(:${escapeHtml(v.label)})`);
      l.insertAdjacentHTML("beforeend", `<div>${fieldsLine(v.fields)}</div>`);
      d.appendChild(l);
    }
    for (const e of g.edges) {
      const l = details(`[:${escapeHtml(e.label)}]`);
      l.insertAdjacentHTML("beforeend", `<div>${fieldsLine(e.fields)}</div>`);
      d.appendChild(l);
    }
    return d;
  });
  const line = (text) => {
    const div = document.createElement("div");
    div.textContent = text;
    return div;
  };
  group("Functions", json.functions.concat(json.builtin_functions), line, false);
  group("Algorithms", json.algorithms, line, false);
  panel.querySelectorAll("details details").forEach((d) => (d.open = false));
}
$("refresh").addEventListener("click", loadCatalog);

// ------------------------------------------------------------ history
function history() {
  try {
    return JSON.parse(localStorage.getItem("geaflow-history") || "[]");
  } catch (e) {
    return [];
  }
}

function remember(text) {
  const kept = [text, ...history().filter((t) => t !== text)].slice(0, 50);
  localStorage.setItem("geaflow-history", JSON.stringify(kept));
  showHistory();
}

function showHistory() {
  const list = $("history");
  list.innerHTML = "";
  for (const text of history()) {
    const item = document.createElement("li");
    item.textContent = text.replace(/\s+/g, " ");
    item.title = text;
    item.addEventListener("click", () => {
      source.value = text;
      showError(null);
    });
    list.appendChild(item);
  }
}

showHistory();
loadCatalog();
paint([]);
