"""The LDBC BI algorithms GeaFlow ships as UDFs: BI 15, 19 and 20 as vertex programs.

GeaFlow's ``org.apache.geaflow.dsl.udf.ldbc`` package holds three
``AlgorithmUserFunction`` classes that its LDBC BI test queries call with
``CREATE FUNCTION``.  Their answers depend on how they are staged in
supersteps (fixed iteration budgets, heartbeat messages that keep Person
vertices running, scores that only reach a person in time to be counted), so
they are written here as vertex programs on the same superstep rules
(``geaflow_sql.udga``) rather than as closed formulas; the runner executes them
in one task for small graphs and as distributed supersteps for large ones.

Rules as GeaFlow's classes apply them (iterations are numbered from 1):

* ``bi15_connection(person1, person2, startDate, endDate) -> (distance)``.
  Iterations 1-29 propagate reply scores: a Forum created within
  [startDate, endDate] activates its Posts (iteration 1 only: nothing messages
  a forum later); an activated message sends (1.0 for a Post, 0.5 for a
  Comment, its creator) to each direct reply and activates it; a message
  receiving such a score forwards it to its own creator, who adds it to the
  score of that person if the two know each other.  Iterations 30-59 relax
  distances from both persons over ``knows`` with weight
  1 / (score(a->b) + score(b->a) + 1).  Iteration 60 emits, for every Person
  reached from both, the sum of its two distances.
* ``bi19_interaction(city1, city2) -> (person1Id, person2Id, totalWeight)``.
  Iterations cycle person / message / message (iteration % 3 = 1, 2, 0): a
  person announces itself to the messages it created; the announcement travels
  one ``replyOf`` edge either way and on to that message's creator, arriving
  with the neighbours' distance maps (sent over ``knows`` in the third step).
  A neighbour that interacted n times relaxes the maps by
  max(round(40 - sqrt(n)), 1).  Iteration 31 emits every
  (person of city 1, person of city 2, distance sum) pair held by a person.
* ``bi20_recruitment(person) -> (id, distance)``.  Over ``knows``, a person
  reaches a neighbour who studied at one of its universities with weight
  1 + |difference of class years|; 30 iterations of relaxation, then every
  person other than the source is emitted with its distance (Long.MAX_VALUE,
  9223372036854775807, when unreached, as GeaFlow emits it).

A vertex's own properties are read by name (``creationDate``, ``classYear``).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from geaflow_sql.udga import AlgorithmUserFunction, EdgeDirection, Vertex
from planner.algorithms import builtin_signature

from ..udga_runner import UserAlgorithm

PERSON, FORUM, POST, COMMENT = "Person", "Forum", "Post", "Comment"
LONG_MAX = 2**63 - 1


def _edges(ctx: Any, label: str, direction: EdgeDirection) -> list[Any]:
    return [e for e in ctx.load_edges(direction) if e.label == label]


class ConnectionPath(AlgorithmUserFunction):
    """LDBC BI 15 (GeaFlow ``BIConnectionPathAlgorithm``)."""

    output = (("distance", "DOUBLE"),)
    max_iterations = 60
    SCORE_ROUNDS = 30  # iterations 1..29 propagate scores
    GIGANTIC = 1000000001.0
    THRESHOLD = 1000000000.0

    def init(self, context: Any, params: list[Any]) -> None:
        self.ctx = context
        self.left, self.right = int(params[0]), int(params[1])
        self.start, self.end = int(params[2]), int(params[3])

    def process(self, vertex: Vertex, messages: list[Any]) -> None:
        it = self.ctx.current_iteration
        if it < self.SCORE_ROUNDS:
            self._scores(vertex, messages, it)
        elif it < self.max_iterations:
            if vertex.label == PERSON:
                self._distances(vertex, messages, it)
        elif vertex.label == PERSON:
            _, left, right = vertex.value
            if left + right < self.THRESHOLD:
                self.ctx.take((left + right,))

    def _scores(self, vertex: Vertex, messages: list[Any], it: int) -> None:
        ctx = self.ctx
        if vertex.label == PERSON:
            ctx.send_message(vertex.id, (-1.0, 0))  # keeps the person running
            if it == 1:
                scores = {e.target_id: 0.0 for e in _edges(ctx, "knows", EdgeDirection.BOTH)}
            else:
                scores = dict(vertex.value[0])
            for score, who in messages:
                if score > 0 and who in scores:
                    scores[who] += score
            ctx.update_vertex_value((scores, None, None))
        elif vertex.label == FORUM:
            created = vertex.properties.get("creationDate")
            if created is not None and self.start <= created <= self.end:
                for e in _edges(ctx, "containerOf", EdgeDirection.OUT):
                    ctx.send_message(e.target_id, (-1.0, 0))
        elif vertex.label in (POST, COMMENT):
            creators = _edges(ctx, "hasCreator", EdgeDirection.OUT)
            active = False
            for score, who in messages:
                if score < 0:
                    active = True
                else:
                    for c in creators:
                        ctx.send_message(c.target_id, (score, who))
            if active:
                score = 1.0 if vertex.label == POST else 0.5
                replies = _edges(ctx, "replyOf", EdgeDirection.IN)
                for c in creators:
                    for r in replies:
                        ctx.send_message(r.target_id, (score, c.target_id))
                for r in replies:
                    ctx.send_message(r.target_id, (-1.0, 0))

    def _distances(self, vertex: Vertex, messages: list[Any], it: int) -> None:
        ctx = self.ctx
        ctx.send_message(vertex.id, (0, 0.0, self.GIGANTIC, self.GIGANTIC))
        scores = vertex.value[0]
        changed = False
        if it == self.SCORE_ROUNDS:
            left = 0.0 if vertex.id == self.left else self.GIGANTIC
            right = 0.0 if vertex.id == self.right else self.GIGANTIC
            changed = True
        else:
            _, left, right = vertex.value
            for sender, score, to_left, to_right in messages:
                if to_left >= self.THRESHOLD and to_right >= self.THRESHOLD:
                    continue
                if sender in scores:
                    score += scores[sender]
                step = 1.0 / (score + 1.0)
                if to_left + step < left:
                    left, changed = to_left + step, True
                if to_right + step < right:
                    right, changed = to_right + step, True
        ctx.update_vertex_value((scores, left, right))
        if changed:
            for e in _edges(ctx, "knows", EdgeDirection.BOTH):
                ctx.send_message(e.target_id, (vertex.id, scores.get(e.target_id), left, right))


class CityInteraction(AlgorithmUserFunction):
    """LDBC BI 19 (GeaFlow ``BICityInteractionAlgorithm``)."""

    output = (("person1Id", "BIGINT"), ("person2Id", "BIGINT"), ("totalWeight", "BIGINT"))
    max_iterations = 31  # = 1 (mod 3): the last iteration is a person iteration
    INTERACTION, HEARTBEAT, MAPS = -1, -2, 0

    def init(self, context: Any, params: list[Any]) -> None:
        self.ctx = context
        self.city1, self.city2 = int(params[0]), int(params[1])

    def process(self, vertex: Vertex, messages: list[Any]) -> None:
        ctx = self.ctx
        it = ctx.current_iteration
        step = it % 3
        if step == 1 and vertex.label == PERSON:
            if it == self.max_iterations:
                near1, near2, _ = vertex.value
                for p1, d1 in near1.items():
                    for p2, d2 in near2.items():
                        ctx.take((p1, p2, d1 + d2))
                return
            self._relax(vertex, messages, it)
        elif step == 2 and vertex.label in (POST, COMMENT):
            replies = _edges(ctx, "replyOf", EdgeDirection.BOTH)
            for msg in messages:
                for e in replies:
                    ctx.send_message(e.target_id, msg)
        elif step == 0:
            if vertex.label in (POST, COMMENT):
                creators = _edges(ctx, "hasCreator", EdgeDirection.OUT)
                for msg in messages:
                    for e in creators:
                        ctx.send_message(e.target_id, msg)
            elif vertex.label == PERSON:
                near1, near2, _ = vertex.value
                for e in _edges(ctx, "knows", EdgeDirection.BOTH):
                    ctx.send_message(e.target_id, (self.MAPS, near1, near2, vertex.id))
        if vertex.label == PERSON:
            ctx.send_message(vertex.id, (self.HEARTBEAT, 0))

    def _relax(self, vertex: Vertex, messages: list[Any], it: int) -> None:
        ctx = self.ctx
        if it == 1:
            near1: dict[Any, int] = {}
            near2: dict[Any, int] = {}
            for e in _edges(ctx, "isLocatedIn", EdgeDirection.OUT):
                if e.target_id == self.city1:
                    near1[vertex.id] = 0
                if e.target_id == self.city2:
                    near2[vertex.id] = 0
        else:
            near1, near2 = dict(vertex.value[0]), dict(vertex.value[1])
        interactions = Counter(m[1] for m in messages if m[0] == self.INTERACTION)
        for msg in messages:
            if msg[0] != self.MAPS:
                continue
            _, their1, their2, sender = msg
            n = interactions.get(sender, 0)
            if n <= 0:
                continue
            step = max(math.floor(40 - math.sqrt(n) + 0.5), 1)  # Java Math.round
            for mine, theirs in ((near1, their1), (near2, their2)):
                for person, distance in theirs.items():
                    if person not in mine or distance + step < mine[person]:
                        mine[person] = distance + step
        ctx.update_vertex_value((near1, near2, vertex.id))
        for e in _edges(ctx, "hasCreator", EdgeDirection.IN):
            ctx.send_message(e.target_id, (self.INTERACTION, vertex.id))


class Recruitment(AlgorithmUserFunction):
    """LDBC BI 20 (GeaFlow ``BIRecruitmentAlgorithm``)."""

    output = (("id", "BIGINT"), ("distance", "BIGINT"))
    max_iterations = 31
    RELAX_ROUNDS = 30

    def init(self, context: Any, params: list[Any]) -> None:
        self.ctx = context
        self.source = int(params[0])

    def process(self, vertex: Vertex, messages: list[Any]) -> None:
        if vertex.label != PERSON:
            return
        ctx = self.ctx
        it = ctx.current_iteration
        if it > self.RELAX_ROUNDS:
            if vertex.id != self.source:
                ctx.take((vertex.id, vertex.value[0]))
            return
        knows: list[Any] = []
        years: dict[Any, Any] = {}
        for e in ctx.load_edges(EdgeDirection.BOTH):
            if e.label == "knows":
                knows.append(e.target_id)
            elif e.label == "studyAt":
                years[e.target_id] = e.properties.get("classYear")
        if it == 1:
            distance = 0 if vertex.id == self.source else LONG_MAX
        else:
            distance = vertex.value[0]
            for _, theirs, university, year in messages:
                if theirs != LONG_MAX and university in years:
                    candidate = theirs + 1 + abs(years[university] - year)
                    distance = min(distance, candidate)
        ctx.update_vertex_value((distance,))
        ctx.send_message(vertex.id, (0, LONG_MAX, 0, 0))  # keeps the person running
        for target in knows:
            for university, year in years.items():
                ctx.send_message(target, (vertex.id, distance, university, year))


class LdbcAlgorithm(UserAlgorithm):
    """One of the programs above behind its built-in signature."""

    def __init__(self, name: str, program: AlgorithmUserFunction) -> None:
        self.instance = program
        self.signature = builtin_signature(name)


def ldbc_algorithms() -> list[LdbcAlgorithm]:
    return [
        LdbcAlgorithm("bi15_connection", ConnectionPath()),
        LdbcAlgorithm("bi19_interaction", CityInteraction()),
        LdbcAlgorithm("bi20_recruitment", Recruitment()),
    ]
