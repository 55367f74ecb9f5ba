"""Incremental MATCH on the driver: the rows a window adds, from Arrow rows
the graph store holds (``runtime.stores.arrow_parts``), with no Spark job.

The statements and their answers are those of ``incremental_match``: per
window, the rows of the statement's result that are new in this version of
the graph.  When the store holds every label of the graph on the driver, in
both versions, and the local engine translates the statement
(``runtime.local.translate``), the work runs as DuckDB queries there:

* **No vertex written since the previous version**: the delta rule.  Term
  ``i`` reads the written edges at hop ``i``, the previous version's edges
  before it and the current ones after it (vertices: current), so each new
  path comes from one term.  Without a DISTINCT the terms' rows are the
  answer.  Under a DISTINCT a path can be new while its row is not: the
  terms' DISTINCT rows (``touched``) are new unless the previous version
  already had them, which is looked up among the previous version's rows
  whose vertices, at each position the DISTINCT keeps, are ones ``touched``
  has there, so the lookup follows the change, not the graph.
* **A vertex written** (new, or written again with other properties: a row
  may appear, change or go): the statement on both versions, and the rows
  of the current one not in the previous one (``EXCEPT ALL``), as the full
  re-match does.

* **Any other statement over one graph** (a shape the delta rule does not
  take: a loop, a cycle closed on a bound vertex, an aggregate): the full
  difference, as for a written vertex.

* **GeaFlow's incremental traversal** (``geaflow.dsl.graph.enable.incr.traversal``,
  see ``incremental_match``): the walk back from what the window touched, in
  Arrow, and the statement on the current version from the roots reached.

Anything else returns None and ``incremental_match`` (Spark) runs instead:
a label not held,
inputs over ``geaflow.dsl.query.local.max.bytes``, a query the local engine
does not translate, or a DuckDB error.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from planner.logical import LogicalNode, walk
from runtime.env import Env
from runtime.local.inputs import HeldRows
from runtime.local.runner import LocalPlan, database, engine_setting, typed
from runtime.local.translate import NotLocal, Translator
from runtime.local.types import arrow_type
from runtime.plans import GRAPH_READS
from runtime.reads import graph_key
from runtime.stores.arrow_parts import label_rows

from .incremental_match import geaflow_traversal
from .match_shape import MatchShape, match_shape

OLD, NEW, DELTA, ROOTS = "old", "new", "delta", "roots"


def local_incremental_result(
    env: Env, top: LogicalNode, before: dict[str, int], now: dict[str, int]
) -> Any | None:
    """This window's rows of a graph-delta statement as an Arrow table (the
    Spark path's types), or None to leave it to ``incremental_match``."""
    if engine_setting(env.ctx.config) == "distributed":
        return None
    shape = match_shape(top)
    versions = _held(env, shape.graph if shape is not None else _one_graph(top), before, now)
    if versions is None:
        return None
    try:
        if not versions.written_edges and not versions.written_vertices:
            return _empty(top)
        if shape is not None and geaflow_traversal(env, shape):
            rows = _geaflow_rows(versions, shape)
        elif shape is None or versions.written_vertices:
            rows = _difference(versions, top)
        else:
            terms = _terms(versions, shape)
            if not terms:
                return _empty(top)  # what was written is not of the pattern's labels
            if shape.distinct is None:
                rows = _concat([_run(versions, top, tags) for tags in terms])
            else:
                rows = _new_distinct_rows(versions, shape, terms)
    except (NotLocal, _arrow_error()):
        return None  # Spark's path is the reference
    return typed(rows, top.schema)


def local_whole_result(env: Env, top: LogicalNode, now: dict[str, int]) -> Any | None:
    """A statement's whole result on the graph's current version (one that
    emits its result every window, an aggregate over the graph, or a
    graph-delta statement's first window) as an Arrow table of the Spark
    path's types, or None to leave it to Spark."""
    if engine_setting(env.ctx.config) == "distributed":
        return None
    versions = _held(env, _one_graph(top), now, now)
    if versions is None:
        return None
    try:
        rows = _run(versions, top, {}, NEW)
    except (NotLocal, _arrow_error()):
        return None  # Spark's path is the reference
    return typed(rows, top.schema)


def _held(env: Env, graph: Any, before: dict[str, int], now: dict[str, int]) -> HeldVersions | None:
    """``graph`` at the versions ``before`` and ``now`` give it, held on the
    driver; None when either is unknown or the store does not hold them."""
    if graph is None:
        return None
    key = graph_key(graph)
    if key not in before or key not in now:
        return None
    versions = HeldVersions(env, graph, int(before[key]), int(now[key]))
    return versions if versions.known else None


class HeldVersions:
    """A graph's labels at the previous and the current version, and the edges
    written between them, as Arrow rows held on the driver."""

    def __init__(self, env: Env, graph: Any, old: int, new: int) -> None:
        self.env = env
        self.graph = graph
        self.old = old
        self.new = new
        self.limit = env.ctx.local_bytes
        self.store = env.ctx.stores.store(env.ctx, graph)
        # The graph's vertex id type (each label's is it or narrower), in Arrow.
        self.id_type = arrow_type(graph.vertex_type().field_type(T.VERTEX_ID_FIELD))
        self._rows: dict[tuple[str, bool, str], HeldRows] = {}
        # The ids a vertex read tagged ``roots:<version>:<name>`` keeps, by tag.
        self.kept_ids: dict[str, Any] = {}
        self.known = hasattr(self.store, "held_rows")
        self.written_vertices: list[str] = []
        self.written_edges: list[str] = []
        labels = [(v, True) for v in graph.vertices] + [(e, False) for e in graph.edges]
        total = 0
        for info, is_vertex in labels if self.known else []:
            held = [self._label(info.label, is_vertex, tag) for tag in (OLD, NEW, DELTA)]
            if any(h is None for h in held):
                self.known = False
                return
            total += sum(h.table.nbytes for h in held if h is not None)
            delta = held[2]
            if delta is not None and delta.table.num_rows:
                (self.written_vertices if is_vertex else self.written_edges).append(info.label)
        if total > self.limit:
            self.known = False

    def _label(self, label: str, is_vertex: bool, tag: str) -> HeldRows | None:
        key = (label.lower(), is_vertex, tag)
        if key in self._rows:
            return self._rows[key]
        info = self.store.info(label, is_vertex)
        if tag == DELTA:
            since = self.store.held_since(label, is_vertex, self.old, self.limit)
            held = None if since is None else (since, True)
        else:
            version = self.old if tag == OLD else self.new
            held = self.store.held_rows(label, is_vertex, version, self.limit)
        if held is None:
            return None
        # Written rows are a delta: every one of them, as written.
        rows = label_rows(held[0], info, is_vertex and tag != DELTA, held[1])
        self._rows[key] = HeldRows(rows)
        return self._rows[key]

    def inputs(self, key: Any) -> tuple[Any, list[str], list[Any]]:
        """The local engine's inputs (``Translator``): a label of this graph at a tag."""
        if not (isinstance(key, tuple) and len(key) == 4 and key[0] == self.graph):
            raise NotLocal("an input other than the graph's labels")
        _, label, is_vertex, tag = key
        info = self.store.info(label, is_vertex)
        if tag.startswith(ROOTS):
            held = self._kept(label, tag)
        else:
            found = self._label(label, is_vertex, tag)
            if found is None:
                raise NotLocal(f"label {label}, not held")
            held = found
        return held, [c.name for c in info.fields], [c.type for c in info.fields]

    def _kept(self, label: str, tag: str) -> HeldRows:
        """A version's vertices of a label (the tag ``roots:<version>:<name>``
        says which), only those whose ids ``kept_ids[tag]`` holds."""
        import pyarrow.compute as pc

        key = (label.lower(), True, tag)
        if key not in self._rows:
            info = self.store.info(label, True)
            base = self._label(label, True, tag.split(":")[1])
            assert base is not None
            # Compared in the graph's id type (a label's may be narrower), as
            # the Spark path's restricted() compares them.
            ids = _as_ids(base.table.column(info.id_field), self.id_type)
            keep = pc.is_in(ids, value_set=_as_ids(self.kept_ids[tag], self.id_type))
            self._rows[key] = HeldRows(base.table.filter(keep))
        return self._rows[key]

    def ids(self, label: str, tag: str) -> Any:
        """The ids of a vertex label's rows at ``tag``, of the graph's id type."""
        info = self.graph.vertex(label)
        held = self._label(label, True, tag)
        assert held is not None
        return _as_ids(held.table.column(info.id_field), self.id_type)

    def pairs(self, labels: tuple[str, ...] | list[str], tag: str) -> tuple[Any, Any]:
        """The (source, target) ids of the edges of some labels (all when
        empty) at ``tag``."""
        import pyarrow as pa

        srcs, dsts = [], []
        for label in labels or [e.label for e in self.graph.edges]:
            info = self.graph.edge(label)
            held = self._label(label, False, tag)
            assert held is not None
            srcs.append(_as_ids(held.table.column(info.src_field), self.id_type))
            dsts.append(_as_ids(held.table.column(info.dst_field), self.id_type))
        return (
            pa.chunked_array([c for col in srcs for c in col.chunks], self.id_type),
            pa.chunked_array([c for col in dsts for c in col.chunks], self.id_type),
        )


def _run(
    versions: HeldVersions,
    node: LogicalNode,
    tags: dict[tuple[int, bool], str],
    default: str = NEW,
    rows: dict[int, Any] | None = None,
    flat: bool = False,
) -> Any:
    """``node``'s rows, reading the graph as ``tags`` say (``flat``: every
    column, vertices flattened, as ``Translator.translate_rows`` gives them)."""
    translator = Translator(versions.inputs, versions.env.ctx.config, tags, default, rows)
    if flat:
        translation = translator.translate_rows(node)
    else:
        translation = translator.translate(_collected(node))
    outcome = LocalPlan(translation, None).run()
    if outcome.table is None:
        raise NotLocal(outcome.reason)
    return outcome.table


def _collected(node: LogicalNode) -> LogicalNode:
    """``node`` under a collecting sink (what ``Translator.translate`` takes)."""
    from planner.logical import CollectSink

    return CollectSink(node)


def _terms(versions: HeldVersions, shape: MatchShape) -> list[dict[tuple[int, bool], str]]:
    """The delta rule's reads: per hop over written edges, the earlier hops'
    edges at the previous version, the later ones' at the current one."""
    hops = shape.hops
    out = []
    for i, hop in enumerate(hops):
        labels = hop.edge_labels or tuple(e.label for e in versions.graph.edges)
        if not any(lab in versions.written_edges for lab in labels):
            continue
        tags = {(id(h), False): OLD for h in hops[:i]}
        tags[(id(hop), False)] = DELTA
        out.append(tags)
    return out


def _one_graph(top: LogicalNode) -> Any:
    """The one graph a plan reads (its only inputs are that graph's labels,
    which ``HeldVersions.inputs`` checks), or None."""
    graphs = {graph_key(n.graph): n.graph for n in walk(top) if isinstance(n, GRAPH_READS)}
    return next(iter(graphs.values())) if len(graphs) == 1 else None


def _difference(versions: HeldVersions, top: LogicalNode) -> Any:
    """The statement's rows on the current version that the previous one lacks."""
    current = _run(versions, top, {}, NEW)
    previous = _run(versions, top, {}, OLD)
    return _sql("SELECT * FROM a EXCEPT ALL SELECT * FROM b", a=current, b=previous)


def _new_distinct_rows(
    versions: HeldVersions, shape: MatchShape, terms: list[dict[tuple[int, bool], str]]
) -> Any:
    """Under a DISTINCT: the rows the terms' paths make that the previous
    version did not have, through the operators above the DISTINCT."""
    assert shape.distinct is not None
    distinct = shape.distinct
    touched = _concat([_run(versions, distinct, tags, flat=True) for tags in terms])
    touched = _sql("SELECT DISTINCT * FROM a", a=touched)
    # The previous version's rows that could equal a touched row have, at
    # every vertex the DISTINCT keeps, a vertex some touched row has there:
    # each of those reads keeps only those vertices.
    tags: dict[tuple[int, bool], str] = {}
    for i, field in shape.keys:
        node = shape.root if field == 0 else shape.producer(field)
        if node is None or (id(node), True) in tags:
            continue
        tag = f"{ROOTS}:{OLD}:{field}"
        versions.kept_ids[tag] = touched.column(f"c{i}.{T.VERTEX_ID_FIELD}").unique()
        tags[(id(node), True)] = tag
    previous = _run(versions, distinct, tags, OLD, flat=True)
    new_rows = _sql("SELECT * FROM a EXCEPT SELECT * FROM b", a=touched, b=previous)
    return _run(versions, shape.top, {}, NEW, rows={id(distinct): new_rows})


def _geaflow_rows(versions: HeldVersions, shape: MatchShape) -> Any:
    """GeaFlow's incremental traversal (``incremental_match._geaflow_rows``,
    whose docstring gives the rule) on the driver: every path of the current
    graph rooted at the vertices reached by walking back ``hops - 1`` steps
    from the ones the window touched, plus the roots of paths through the
    written vertices."""
    touched = [versions.ids(lab, DELTA) for lab in versions.written_vertices]
    for label in versions.written_edges:
        touched += list(versions.pairs([label], DELTA))
    frontier = _distinct(touched)
    reached = [frontier]
    linear = shape.is_linear()
    edges = versions.pairs((), NEW)  # every label's, read once for all hops
    for hop in reversed(shape.hops[:-1]):
        # Back over an OUT hop is along in-edges: the pairs ending here.
        frontier = _step_back(frontier, _oriented(edges, hop.direction if linear else "BOTH"))
        reached.append(frontier)
    for field, labels in shape.vertex_reads():
        written = [
            lab for lab in (labels or versions.written_vertices) if lab in versions.written_vertices
        ]
        if not written:
            continue
        ids = _distinct([versions.ids(lab, DELTA) for lab in written])
        while field != 0:  # the exact walk back to the first vertex
            producer = shape.producer(field)
            assert producer is not None and producer.source is not None, field
            back = _oriented(versions.pairs(producer.edge_labels, NEW), producer.direction)
            ids = _step_back(ids, back)
            field = producer.source
        reached.append(ids)
    tag = f"{ROOTS}:{NEW}:geaflow"
    versions.kept_ids[tag] = _distinct(reached)
    return _run(versions, shape.top, {(id(shape.root), True): tag}, NEW)


def _as_ids(column: Any, id_type: Any) -> Any:
    """A column of vertex ids cast to the graph's id type (``HeldVersions.id_type``)."""
    try:
        return column.cast(id_type)
    except Exception as err:  # noqa: BLE001 - an id that does not cast: Spark's path
        raise NotLocal(f"vertex ids of type {column.type}") from err


def _distinct(arrays: list[Any]) -> Any:
    import pyarrow as pa

    chunks = [c for a in arrays for c in (a.chunks if isinstance(a, pa.ChunkedArray) else [a])]
    if not chunks:
        raise NotLocal("no vertex ids to walk from")  # (of no known type)
    return pa.chunked_array(chunks).unique()


def _oriented(pairs: tuple[Any, Any], direction: str) -> tuple[Any, Any]:
    """(from, to) as a hop walks the edges (``match_views.oriented``)."""
    import pyarrow as pa

    src, dst = pairs
    if direction == "OUT":
        return src, dst
    if direction == "IN":
        return dst, src
    return (
        pa.chunked_array(src.chunks + dst.chunks, src.type),
        pa.chunked_array(dst.chunks + src.chunks, src.type),
    )


def _step_back(ids: Any, pairs: tuple[Any, Any]) -> Any:
    """The ids the pairs leave from to arrive at ``ids``."""
    import pyarrow.compute as pc

    src, dst = pairs
    return src.filter(pc.is_in(dst, value_set=ids)).unique()


def _arrow_error() -> type[Exception]:
    """pyarrow's errors (an id that does not cast, ...), which leave the
    window to Spark (imported when one is raised)."""
    import pyarrow as pa

    return pa.ArrowException


def _empty(top: LogicalNode) -> Any:
    """No rows, in the Spark path's types (as every result leaves here: a
    sink printing them on the driver reads its columns' types)."""
    import pyarrow as pa

    return typed(pa.table({f"c{i}": pa.nulls(0) for i in range(len(top.schema))}), top.schema)


def _concat(tables: list[Any]) -> Any:
    import pyarrow as pa

    return pa.concat_tables(tables, promote_options="default")


def _sql(text: str, **tables: Any) -> Any:
    """DuckDB over Arrow tables named in ``text``."""
    con = database().cursor()
    try:
        for name, table in tables.items():
            con.register(name, table)
        return con.sql(text).to_arrow_table()
    except Exception as err:  # noqa: BLE001 - Spark's path is the reference
        raise NotLocal(f"a DuckDB error ({type(err).__name__})") from None
    finally:
        con.close()
