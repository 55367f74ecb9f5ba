"""Small data stays small: a long multi-MATCH query in Spark's default 1 GiB driver.

The query has the shape of LDBC BI 17: a tag's messages walked up their reply
chains (``{0,}``) to a forum, a second pattern after a comma, a ``COUNT``
path subquery in the WHERE, and three more MATCH clauses of which the first
shares no variable with what came before (its WHERE does) and the next two
join it back.  Bound one pattern onto the paths so far, the second MATCH
multiplied every earlier path with every new one (tens of millions of wide
rows here) and the driver ran out of heap; bound as path tables joined where
they meet (``planner/binder/graph_components.py``) it needs seconds.

The graph (a few thousand vertices) is generated; the answer is checked
against a Python evaluation of the same patterns.  The query runs in a child
process whose Spark driver has ``spark.driver.memory=1g``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT
from tests.jvm_env import quick_jit

MAX_HOPS = 10  # geaflow.dsl.match.max.hops: the bound of {0,}


def generate(seed: int, out: Path) -> dict:
    rnd = random.Random(seed)
    persons = list(range(1, 301))
    forums = list(range(1001, 1031))
    posts = list(range(10001, 10801))
    comments = list(range(20001, 21601))
    tags = {30001: "hot", 30002: "cold", 30003: "warm", 30004: "mild", 30005: "odd"}
    g: dict = defaultdict(list)
    for m in posts:
        g["containerOf"].append((rnd.choice(forums), m))
    messages = list(posts)
    for c in comments:
        pool = messages[-300:] if rnd.random() < 0.6 else messages
        g["replyOf"].append((c, rnd.choice(pool)))
        messages.append(c)
    for m in messages:
        g["hasCreator"].append((m, rnd.choice(persons)))
        for t in rnd.sample(sorted(tags), rnd.randint(1, 2)):
            g["hasTag"].append((m, t))
    for f in forums:
        for p in rnd.sample(persons, 15):
            g["hasMember"].append((f, p))
    out.mkdir(parents=True, exist_ok=True)

    def write(name: str, rows) -> None:
        text = "".join(",".join(str(v) for v in r) + "\n" for r in rows)
        (out / name).write_text(text, encoding="utf-8")

    write("person.txt", ((p,) for p in persons))
    write("forum.txt", ((f,) for f in forums))
    write("post.txt", ((m,) for m in posts))
    write("comment.txt", ((c,) for c in comments))
    write("tag.txt", tags.items())
    edges = [(s, d, label) for label, rows in g.items() for s, d in rows]
    write("edge.txt", edges)
    return {"posts": set(posts), "comments": set(comments), "tags": tags, "edges": g}


SCRIPT = """
CREATE GRAPH social (
  Vertex Person (id bigint ID),
  Vertex Forum (id bigint ID),
  Vertex Post (id bigint ID),
  Vertex Comment (id bigint ID),
  Vertex Tag (id bigint ID, name varchar),
  Edge containerOf (s bigint SOURCE ID, t bigint DESTINATION ID),
  Edge replyOf (s bigint SOURCE ID, t bigint DESTINATION ID),
  Edge hasCreator (s bigint SOURCE ID, t bigint DESTINATION ID),
  Edge hasTag (s bigint SOURCE ID, t bigint DESTINATION ID),
  Edge hasMember (s bigint SOURCE ID, t bigint DESTINATION ID)
) WITH (storeType='memory');
USE GRAPH social;
CREATE TABLE t_person (id bigint) WITH (type='file', geaflow.dsl.file.path='{d}/person.txt');
CREATE TABLE t_forum (id bigint) WITH (type='file', geaflow.dsl.file.path='{d}/forum.txt');
CREATE TABLE t_post (id bigint) WITH (type='file', geaflow.dsl.file.path='{d}/post.txt');
CREATE TABLE t_comment (id bigint) WITH (type='file', geaflow.dsl.file.path='{d}/comment.txt');
CREATE TABLE t_tag (id bigint, name varchar) WITH (type='file', geaflow.dsl.file.path='{d}/tag.txt');
CREATE TABLE t_edge (s bigint, t bigint, label varchar)
  WITH (type='file', geaflow.dsl.file.path='{d}/edge.txt');
INSERT INTO social.Person SELECT id FROM t_person;
INSERT INTO social.Forum SELECT id FROM t_forum;
INSERT INTO social.Post SELECT id FROM t_post;
INSERT INTO social.Comment SELECT id FROM t_comment;
INSERT INTO social.Tag SELECT id, name FROM t_tag;
INSERT INTO social.containerOf SELECT s, t FROM t_edge WHERE label = 'containerOf';
INSERT INTO social.replyOf SELECT s, t FROM t_edge WHERE label = 'replyOf';
INSERT INTO social.hasCreator SELECT s, t FROM t_edge WHERE label = 'hasCreator';
INSERT INTO social.hasTag SELECT s, t FROM t_edge WHERE label = 'hasTag';
INSERT INTO social.hasMember SELECT s, t FROM t_edge WHERE label = 'hasMember';
"""

QUERY = """
MATCH (t:Tag WHERE t.name = 'hot')<-[:hasTag]-(m:Post|Comment)-[:replyOf]->{0,}(p:Post)
      <-[:containerOf]-(f:Forum),
      (u:Tag WHERE u.name = 'hot')<-[:hasTag]-(m1:Post|Comment)-[:hasCreator]->(a:Person)
WHERE COUNT((f)-[:hasMember]->(x:Person WHERE x.id = a.id) => x) = 0
MATCH (w:Tag WHERE w.name = 'hot')<-[:hasTag]-(c:Comment)-[:hasCreator]->(b:Person)
      <-[:hasMember]-(f2:Forum)
WHERE f2.id <> f.id
MATCH (c)-[:replyOf]->(m)
MATCH (m1)-[:replyOf]->{0,}(p1:Post)<-[:containerOf]-(f2)
RETURN a.id AS person, COUNT(DISTINCT m.id) AS n
GROUP BY person
"""

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from geaflow_sql import Session
session = Session(base_dir={work!r})
session.execute({script!r})
rows = session.sql({query!r}).collect()
print("ROWS" + json.dumps(sorted([list(r) for r in rows])))
"""


def oracle(g: dict) -> list[list[int]]:
    out: dict = defaultdict(list)
    into: dict = defaultdict(list)
    for label, rows in g["edges"].items():
        for s, d in rows:
            out[(label, s)].append(d)
            into[(label, d)].append(s)
    hot = next(t for t, name in g["tags"].items() if name == "hot")
    tagged = set(into[("hasTag", hot)])

    def forums_up(m: int) -> set[int]:
        """Forums holding a Post at the end of 0..MAX_HOPS replyOf edges from m,
        every vertex a hop reaches being a Post (GeaFlow's loop body:
        ``-[:replyOf]->{0,}(p:Post)`` checks the label after every edge)."""
        found, frontier = set(), [m]
        for hop in range(MAX_HOPS + 1):
            for x in frontier:
                if x in g["posts"]:
                    found.update(into[("containerOf", x)])
            if hop < MAX_HOPS:
                frontier = [y for x in frontier for y in out[("replyOf", x)] if y in g["posts"]]
        return found

    members = defaultdict(set)
    for f, p in g["edges"]["hasMember"]:
        members[f].add(p)
    up = {m: forums_up(m) for m in tagged}
    answer: dict = defaultdict(set)
    for m in tagged:  # m: Post or Comment
        forums_m = up[m]
        replies = [c for c in into[("replyOf", m)] if c in tagged and c in g["comments"]]
        if not forums_m or not replies:
            continue
        f2_options = {
            f2
            for c in replies
            for b in out[("hasCreator", c)]
            for f2, people in members.items()
            if b in people
        }
        for m1 in tagged:
            for a in out[("hasCreator", m1)]:
                for f in forums_m:
                    if a in members[f]:
                        continue
                    if any(f2 != f for f2 in f2_options & up[m1]):
                        answer[a].add(m)
                        break
    return sorted([a, len(ms)] for a, ms in answer.items())


def test_long_multi_match_runs_in_a_1g_driver(tmp_path):
    g = generate(3, tmp_path / "data")
    want = oracle(g)
    assert want, "the generated graph should answer the query"
    script = SCRIPT.replace("{d}", str(tmp_path / "data"))
    child = CHILD.format(root=str(ROOT), work=str(tmp_path / "work"), script=script, query=QUERY)
    env = quick_jit(dict(os.environ))
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env["SPARK_DRIVER_MEMORY"] = "1g"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(child)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("ROWS")]
    assert lines, done.stderr[-3000:]
    assert json.loads(lines[0][4:]) == want
