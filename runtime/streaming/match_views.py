"""The two versions of a graph an incremental MATCH window compares, what
was written between them, the neighbourhood of those writes both versions
are cut to, and the walks and paths GeaFlow's incremental traversal takes."""

from __future__ import annotations

import weakref
from typing import Any

from geaflow_sql.core import types as T
from planner.graph_nodes import EdgeMatch
from runtime.env import Env
from runtime.evaluator import evaluate
from runtime.spark_adapter import known_empty

from .match_shape import MatchShape

# Per graph store: label -> version -> vertices (see Views._kept_vertices).
KEPT_VERTICES: weakref.WeakKeyDictionary[Any, dict[str, dict[int, Any]]] = (
    weakref.WeakKeyDictionary()
)


class Views:
    """The previous and current version of a graph, what was written between
    them, and environments that read chosen frames of it."""

    def __init__(self, env: Env, graph: Any, old: int, new: int) -> None:
        self.env = env
        self.graph = graph
        self.old = old
        self.new = new
        self.id_type = T.spark_sql_type(graph.vertex_type().field_type(T.VERTEX_ID_FIELD))
        self.store = env.ctx.stores.store(env.ctx, graph)
        self.known = True
        self.written_vertices: dict[str, Any] = {}  # label -> rows written since
        self.written_edges: dict[str, Any] = {}
        self._frames: dict[tuple[int, str, bool], Any] = {}
        for infos, is_vertex, out in (
            (graph.vertices, True, self.written_vertices),
            (graph.edges, False, self.written_edges),
        ):
            for info in infos:
                parts = self.store.parts_since(env, info.label, is_vertex, old)
                if parts is None:
                    self.known = False
                    return
                # Windows past the end of a source still write (empty) parts.
                parts = [part for part in parts if not known_empty(part)]
                if parts:
                    out[info.label] = union(parts)

    def frame(self, version: int, label: str, is_vertex: bool) -> Any:
        """A label's rows in one version (built once)."""
        key = (version, label, is_vertex)
        if key not in self._frames:
            at = self.env.with_reads(self.env.reads.at_version(self.graph, version))
            df = self.store.frame(at, label, is_vertex)
            if is_vertex:
                df = self._kept_vertices(version, label, df)
            self._frames[key] = df
        return self._frames[key]

    def _kept_vertices(self, version: int, label: str, df: Any) -> Any:
        """A version's vertices, checkpointed the first time a job reads them.

        A store keeps one row per id by ranking every write of a label (a
        shuffle), and a window reads the vertices more than once; the current
        version's vertices are the previous ones of the next window, so the
        last two versions of each label are kept, beside the store."""
        versions = KEPT_VERTICES.setdefault(self.store, {}).setdefault(label, {})
        if version not in versions:
            versions[version] = df.localCheckpoint(eager=False)
            for stale in sorted(versions)[:-2]:
                del versions[stale]
        return versions[version]

    def written_ids(self, label: str) -> Any:
        info = self.graph.vertex(label)
        return self.written_vertices[label].select(
            F().col(f"`{info.id_field}`").cast(self.id_type).alias("id")
        )

    def written_ends(self, label: str) -> list[Any]:
        """The ids of both ends of an edge label's written rows (two frames of ``id``)."""
        f = F()
        pairs = self.pairs(self.graph.edge(label), self.written_edges[label])
        return [pairs.select(f.col("src").alias("id")), pairs.select(f.col("dst").alias("id"))]

    def id_frame(self, ids: Any) -> Any:
        """A frame of one ``id`` column (the graph's id type) of Arrow ``ids``."""
        import pyarrow as pa

        return self.env.spark.createDataFrame(pa.table({"id": ids}), f"id {self.id_type}")

    def pairs(self, info: Any, rows: Any) -> Any:
        """Edge rows as (src, dst) ids."""
        f = F()
        return rows.select(
            f.col(f"`{info.src_field}`").cast(self.id_type).alias("src"),
            f.col(f"`{info.dst_field}`").cast(self.id_type).alias("dst"),
        )

    def current_pairs(self, labels: tuple[str, ...]) -> Any:
        infos = [self.graph.edge(lab) for lab in labels] if labels else list(self.graph.edges)
        return union([self.pairs(i, self.frame(self.new, i.label, False)) for i in infos])

    def near(self, version: int, ids: Any) -> dict[tuple[str, bool], Any]:
        """Every label's rows at ``version`` on the vertices ``ids`` (a frame
        of ``id``) holds: those vertices, and the edges with both ends there."""
        keep = kept_ids(ids)
        out = restricted(self, version, (), ids)
        for info in self.graph.edges:
            df = self.frame(version, info.label, False)
            for end in (info.src_field, info.dst_field):
                df = keeping(self, df, end, keep)
            out[(info.label, False)] = df
        return out

    def context(self, chosen: dict[tuple[str, bool], Any], version: int | None = None) -> Env:
        """An environment reading ``chosen`` frames of the graph, its other
        labels at ``version`` (the current one by default)."""
        version = self.new if version is None else version
        labels = [(v.label, True) for v in self.graph.vertices]
        labels += [(e.label, False) for e in self.graph.edges]
        served = {
            key: chosen[key] if key in chosen else self.frame(version, *key) for key in labels
        }
        return self.env.with_reads(self.env.reads.serving(self.graph, served))


def F() -> Any:  # noqa: N802 - pyspark's functions module, imported on use
    from pyspark.sql import functions

    return functions


def union(frames: list[Any]) -> Any:
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def oriented(pairs: Any, direction: str) -> Any:
    """Pairs as a hop walks them: ``src`` is where it leaves from."""
    f = F()
    flipped = pairs.select(f.col("dst").alias("src"), f.col("src").alias("dst"))
    if direction == "OUT":
        return pairs
    if direction == "IN":
        return flipped
    return pairs.unionByName(flipped)


def step_back(ids: Any, pairs: Any) -> Any:
    """The ``src`` of the pairs arriving at ``ids``."""
    f = F()
    to = f.broadcast(ids.select(f.col("id").alias("__to")))
    # No distinct: a shuffle to remove repeats costs more than the repeats
    # (semi-joins take them; the neighbourhood search drops them on the driver).
    return pairs.join(to, f.col("dst") == f.col("__to"), "left_semi").select(
        f.col("src").alias("id")
    )


# Past this many ids a neighbourhood is compared with the graph's vertex count
# (a count of each vertex label); below it, matching the cut graph is cheap
# whatever the graph.
COUNTED_NEIGHBOURHOOD = 1000


def neighbourhood(views: Views, labels: tuple[str, ...], seeds: Any, radius: int) -> Any | None:
    """The ids within ``radius`` hops of ``seeds`` (a frame of ``id``), either
    way along the current version's edges of ``labels``, as a frame made from
    them on the driver; None when they are most of the graph: over
    ``geaflow.dsl.query.local.max.bytes``, or over a quarter of its vertices.

    One Spark job a hop: the frontier's neighbours are fetched (at most the
    byte limit's worth of ids, repeats included), and those not seen before
    are the next frontier.  (A graph cut to a quarter of its
    vertices or more is matched no faster than the whole: the semi-joins that
    cut it cost about what they save.  On bench/streams.py's dense random
    graph, 10^5 edges, the cut to every vertex took 15 s a window against the
    full re-match's 5.4 s.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    limit = views.env.ctx.local_bytes
    vertices: int | None = None  # counted once, when first needed

    def most_of_the_graph(ids: Any) -> bool:
        nonlocal vertices
        if ids.nbytes > limit:
            return True
        if len(ids) <= COUNTED_NEIGHBOURHOOD:
            return False
        if vertices is None:
            vertices = sum(
                views.frame(views.new, v.label, True).count() for v in views.graph.vertices
            )
        return len(ids) * 4 > vertices

    cap = max(1, limit // 8)  # ids fetched at most, 8 bytes each
    seen = _driver_ids(seeds, cap)
    if seen is None or most_of_the_graph(seen):
        return None
    frontier = seen
    pairs = oriented(views.current_pairs(labels), "BOTH")
    for _ in range(radius):
        if not len(frontier):
            break
        reached = _driver_ids(step_back(views.id_frame(frontier), pairs), cap)
        if reached is None:
            return None
        frontier = reached.filter(pc.invert(pc.is_in(reached, value_set=seen)))
        seen = pa.concat_arrays([seen, frontier])
        if most_of_the_graph(seen):
            return None
    return views.id_frame(seen)


def _driver_ids(ids: Any, cap: int) -> Any | None:
    """A frame's distinct, non-null ``id`` values, fetched as an Arrow array;
    None when it has more than ``cap`` rows (repeats counted)."""
    import pyarrow.compute as pc

    table = ids.select("id").limit(cap + 1).toArrow()
    if table.num_rows > cap:
        return None
    return pc.unique(table.column(0).combine_chunks().drop_null())


def walk_back(views: Views, shape: MatchShape, field: int, ids: Any) -> Any:
    """The first vertices of the paths through vertex ``ids`` at ``field``
    (walked back over current edges, filters not applied, so possibly more
    than needed, never fewer)."""
    while field != 0:
        hop = shape.producer(field)
        assert hop is not None, field
        pairs = oriented(views.current_pairs(hop.edge_labels), hop.direction)
        ids = step_back(ids, pairs)
        field = hop.source
    return ids


def restricted(
    views: Views, version: int, labels: tuple[str, ...], ids: Any
) -> dict[tuple[str, bool], Any]:
    """Vertex frames of some labels (all if empty) keeping the given ids."""
    keep = kept_ids(ids)
    return {
        (info.label, True): keeping(
            views, views.frame(version, info.label, True), info.id_field, keep
        )
        for info in (
            [views.graph.vertex(lab) for lab in labels] if labels else list(views.graph.vertices)
        )
    }


def kept_ids(ids: Any) -> Any:
    """A frame of ``id`` as the broadcast side ``keeping`` semi-joins against."""
    f = F()
    return f.broadcast(ids.select(f.col("id").alias("__keep")))


def keeping(views: Views, df: Any, column: str, keep: Any) -> Any:
    """The rows of ``df`` whose ``column``, in the graph's id type, ``keep`` holds."""
    cond = df[f"`{column}`"].cast(views.id_type) == F().col("__keep")
    return df.join(keep, cond, "left_semi")


def rooted_paths(views: Views, shape: MatchShape, version: int, roots: Any) -> Any:
    """The pattern's paths on ``version`` from the first vertices ``roots``
    (a frame of ``id``) keeps."""
    vertices = restricted(views, version, shape.root.labels, roots)
    df = evaluate(views.context(vertices, version), shape.root)
    for node in shape.chain[1:]:
        if isinstance(node, EdgeMatch):
            # Paths from a few roots are few: send them to the edges rather
            # than shuffle every edge to meet them.
            df = F().broadcast(df)
        df = evaluate(views.context({}, version), node, {id(node.inputs[0]): df})
    return df
