"""Traversals: single-source shortest paths, k-hop, closeness, all-source paths.

Facts of GeaFlow's versions that shape the results:

* Every traversal follows OUT edges and counts hops (weights are ignored).
* A vertex program runs one superstep per hop, inside GeaFlow's bound of
  ``geaflow.dsl.max.traversal`` iterations: SSSP reaches distances up to
  bound - 1, k-hop up to min(k, bound - 1).
* SSSP's optional edge label restricts the edges it follows; its optional
  vertex label restricts the vertices that run at all (others neither relay
  nor report).  Only reached vertices are reported.
* Closeness (``closeness_centrality(source)``) reports one row for the source:
  (number of vertices - 1) / (sum of reported distances).  The source also
  adds d(u) + 1 for every edge u -> source from a reached u (the BFS message
  that comes back to it), as GeaFlow does.
* ``assp()`` reports, for every vertex, a JSON object with one shortest path
  from every other vertex that reaches it.  Of several shortest paths it keeps
  the smallest by comparing ids position by position (GeaFlow keeps whichever
  message arrives first).  ``incremental`` registers it, as in a windowed job
  it runs incrementally.
* In a windowed job ``sssp`` keeps its distances between windows and emits
  the vertices whose distance is new or shorter (see ``inc_sssp``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from planner.algorithms import builtin_signature

from ..base import AlgorithmGraph, CallContext
from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, Needs, with_self
from ..iteration import iterate
from ..java_compat import hashmap_bucket, hashmap_capacity, java_hash_codes
from ..local_graph import LocalGraph
from ..options import RunOptions, options_of

# ---------------------------------------------------------------------------
# Shared: hop distances
# ---------------------------------------------------------------------------


def hop_distances(
    g: LocalGraph, source: int, edge_mask: np.ndarray, node_mask: np.ndarray, max_depth: int
) -> np.ndarray:
    """Hops from ``source`` along OUT edges (-1 where unreached or deeper than ``max_depth``).

    Only nodes in ``node_mask`` may be entered or relay; edges outside
    ``edge_mask`` are not followed.
    """
    keep = edge_mask & node_mask[g.src] & node_mask[g.dst]
    adjacency = g.matrix(g.src[keep], g.dst[keep])
    dist = csgraph.shortest_path(adjacency, directed=True, unweighted=True, indices=source)
    out = np.full(g.n, -1, dtype=np.int64)
    reached = np.isfinite(dist) & (dist <= max_depth)
    out[reached] = dist[reached].astype(np.int64)
    return out


def hop_distances_distributed(
    dg: DistGraph, source: Any, pairs: Any, allowed: Any, max_depth: int, opts: RunOptions
) -> Any:
    """(id, dist) of vertices within ``max_depth`` hops, one superstep per hop.

    ``pairs`` are (a, b) hops and ``allowed`` the ids that run (only they relay
    and are entered).  The state has a row per allowed vertex, ``dist`` null
    until reached; round r expands the rows with ``dist == r``.
    """
    from pyspark.sql import functions as F

    hops = pairs.join(allowed.withColumnRenamed("id", "a"), "a", "left_semi").join(
        allowed.withColumnRenamed("id", "b"), "b", "left_semi"
    )
    links = with_self(hops.select("a", "b"), allowed).cache()
    start = allowed.select(
        "id", F.when(F.col("id") == F.lit(source), F.lit(0)).cast("long").alias("dist")
    )

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        state = frames["visited"]
        reached = F.when(~F.col("own") & (F.col("dist") == round_no), F.lit(round_no + 1))
        nxt = (
            state.join(links, state["id"] == links["a"])
            .groupBy(F.col("b").alias("id"))
            .agg(
                F.max(F.when(F.col("own"), F.col("dist"))).alias("old"),
                F.min(reached).alias("new"),
            )
            .select("id", F.coalesce("old", "new").cast("long").alias("dist"))
        )
        return {"visited": nxt}, _frontier_empty(round_no + 1)

    frames = iterate({"visited": start}, step, max_depth, opts)
    links.unpersist()
    return frames["visited"].where(F.col("dist").isNotNull())


def _frontier_empty(depth: int) -> Any:
    def check(frames: dict[str, Any]) -> bool:
        from pyspark.sql import functions as F

        return frames["visited"].where(F.col("dist") == depth).isEmpty()

    return check


# ---------------------------------------------------------------------------
# SSSP
# ---------------------------------------------------------------------------


class SingleSourceShortestPath(BuiltinAlgorithm):
    signature = builtin_signature("sssp")
    has_graphframes = True

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        if graph.new_edges is None:
            return super().run(ctx, graph, args)
        from .deltas import output_frame
        from .inc_sssp import HopState, collect_labeled_delta

        p = self.bind(list(args), graph.id_type)
        state = graph.state.get("hops")
        if not isinstance(state, HopState):
            state = graph.state["hops"] = HopState()
        changed = state.advance(
            collect_labeled_delta(graph),
            p["source"],
            p["vertex_label"],
            p["edge_label"],
            options_of(ctx).max_iterations - 1,
        )
        ids = state.id_array()[changed].tolist()
        return output_frame(graph, self, [ids, state.dist[changed].tolist()])

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs(
            vertex_labels=p["vertex_label"] is not None, edge_labels=p["edge_label"] is not None
        )

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        node_mask = np.zeros(g.n, dtype=bool)
        node_mask[: g.nv] = g.label_mask(p["vertex_label"])
        source = g.vertex_index(p["source"])
        if source is None or not node_mask[source]:
            return [g.ids[:0], np.zeros(0, dtype=np.int64)]
        edge_mask = (
            np.ones(g.ne, dtype=bool)
            if p["edge_label"] is None
            else g.edge_label == p["edge_label"]
        )
        dist = hop_distances(g, source, edge_mask, node_mask, max_iterations - 1)
        hit = np.flatnonzero(dist >= 0)
        return [g.ids[hit], dist[hit]]

    def _pairs_and_allowed(self, dg: DistGraph, p: dict[str, Any]) -> tuple[Any, Any]:
        from pyspark.sql import functions as F

        edges = (
            dg.edges
            if p["edge_label"] is None
            else dg.edges.where(F.col("label") == p["edge_label"])
        )
        pairs = edges.select(F.col("src").alias("a"), F.col("dst").alias("b"))
        return pairs, dg.vertex_ids(p["vertex_label"])

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        pairs, allowed = self._pairs_and_allowed(dg, p)
        return hop_distances_distributed(
            dg, p["source"], pairs, allowed, opts.max_iterations - 1, opts
        )

    def graphframes(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from .graphframes_paths import bounded_distances

        pairs, allowed = self._pairs_and_allowed(dg, p)
        return bounded_distances(p["source"], pairs, allowed, opts.max_iterations - 1)


# ---------------------------------------------------------------------------
# k-hop
# ---------------------------------------------------------------------------


class KHop(BuiltinAlgorithm):
    signature = builtin_signature("khop")
    has_graphframes = True

    def depth(self, p: dict[str, Any], max_iterations: int) -> int:
        return max(0, min(p["k"], max_iterations - 1))

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        source = None if p["source"] is None else g.vertex_index(p["source"])
        if source is None:
            return [g.ids[:0], np.zeros(0, dtype=np.int64)]
        node_mask = g.is_vertex.copy()
        dist = hop_distances(
            g, source, np.ones(g.ne, dtype=bool), node_mask, self.depth(p, max_iterations)
        )
        hit = np.flatnonzero(dist >= 0)
        return [g.ids[hit], dist[hit]]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        if p["source"] is None:
            return _empty(dg)
        return hop_distances_distributed(
            dg,
            p["source"],
            dg.pairs("OUT"),
            dg.vertex_ids(),
            self.depth(p, opts.max_iterations),
            opts,
        )

    def graphframes(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from .graphframes_paths import bounded_distances

        if p["source"] is None:
            return _empty(dg)
        return bounded_distances(
            p["source"], dg.pairs("OUT"), dg.vertex_ids(), self.depth(p, opts.max_iterations)
        )


def _empty(dg: DistGraph) -> Any:
    from pyspark.sql import functions as F

    return dg.vertices.where(F.lit(False)).select("id", F.lit(0).cast("long").alias("dist"))


# ---------------------------------------------------------------------------
# Closeness centrality
# ---------------------------------------------------------------------------


class ClosenessCentrality(BuiltinAlgorithm):
    signature = builtin_signature("closeness_centrality")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        source = g.vertex_index(p["source"])
        if source is None:
            return [g.ids[:0], np.zeros(0)]
        dist = hop_distances(
            g, source, np.ones(g.ne, dtype=bool), g.is_vertex.copy(), max(0, max_iterations - 3)
        )
        total = int(dist[dist > 0].sum())
        into_source = (g.dst == source) & g.is_vertex[g.src]
        back = dist[g.src[into_source]]
        total += int((back[back >= 0] + 1).sum())
        return [g.ids[[source]], np.array([_java_divide(g.nv - 1, total)])]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        dist = hop_distances_distributed(
            dg, p["source"], dg.pairs("OUT"), dg.vertex_ids(), max(0, opts.max_iterations - 3), opts
        )
        back = (
            dg.edges.where(F.col("dst") == F.lit(p["source"]))
            .join(dist, dg.edges["src"] == dist["id"])
            .select((F.col("dist") + 1).alias("d"))
        )
        total = (
            dist.select(F.col("dist").alias("d")).unionByName(back).agg(F.sum("d").alias("total"))
        )
        count = dg.vertices.agg((F.count("*") - 1).alias("num"))
        source = dg.vertex_ids().where(F.col("id") == F.lit(p["source"]))
        stats = source.crossJoin(count).crossJoin(total)
        cc = F.col("num").cast("double") / F.coalesce(F.col("total"), F.lit(0)).cast("double")
        # Java divides doubles: n/0 is Infinity (NaN when n is 0); Spark would give null.
        cc = (
            F.when(F.coalesce(F.col("total"), F.lit(0)) != 0, cc)
            .when(F.col("num") > 0, F.lit(float("inf")))
            .otherwise(F.lit(float("nan")))
        )
        return stats.select("id", cc.alias("cc"))


def _java_divide(num: int, den: int) -> float:
    if den == 0:
        return float("inf") if num > 0 else float("nan")
    return float(num) / float(den)


# ---------------------------------------------------------------------------
# All-source shortest paths
# ---------------------------------------------------------------------------


class AllSourceShortestPath(BuiltinAlgorithm):
    signature = builtin_signature("assp")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        keep = g.is_vertex[g.src] & g.is_vertex[g.dst]
        adjacency = sp.csr_matrix(
            (np.ones(int(keep.sum())), (g.src[keep], g.dst[keep])), shape=(g.n, g.n)
        )
        adjacency.sum_duplicates()
        id_rank = _natural_rank(g.ids)
        paths: list[dict[int, list[int]]] = [dict() for _ in range(g.nv)]
        for s in range(g.nv):
            for v, path in _min_paths(adjacency, s, id_rank, max_iterations - 1).items():
                paths[v][s] = path
        id_type = g.id_type_or_guess
        texts = [format_paths(g.ids[v], paths[v], g.ids, id_type) for v in range(g.nv)]
        return [np.array(texts, dtype=object)]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        ids = dg.vertex_ids()
        pairs = dg.pairs("OUT").join(ids.withColumnRenamed("id", "b"), "b", "left_semi")
        links = with_self(pairs, ids).cache()
        start = ids.select(
            F.col("id").alias("src"),
            F.col("id").alias("id"),
            F.array(F.col("id")).alias("path"),
            F.lit(0).cast("long").alias("dist"),
        )

        def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
            # One pass: own rows keep what (src, vertex) already has; rows from
            # the frontier (dist == round) offer the path one hop longer.
            state = frames["visited"]
            offer = ~F.col("own") & (F.col("dist") == round_no) & (F.col("b") != F.col("src"))
            nxt = (
                state.join(links, state["id"] == links["a"])
                .groupBy("src", F.col("b").alias("id"))
                .agg(
                    F.max(F.when(F.col("own"), F.col("path"))).alias("old_path"),
                    F.max(F.when(F.col("own"), F.col("dist"))).alias("old_dist"),
                    F.min(F.when(offer, F.concat("path", F.array("b")))).alias("new_path"),
                )
                .where(F.col("old_path").isNotNull() | F.col("new_path").isNotNull())
                .select(
                    "src",
                    "id",
                    F.coalesce("old_path", "new_path").alias("path"),
                    F.coalesce("old_dist", F.lit(round_no + 1).cast("long")).alias("dist"),
                )
            )
            return {"visited": nxt}, _frontier_empty(round_no + 1)

        frames = iterate({"visited": start}, step, opts.max_iterations - 1, opts)
        links.unpersist()
        found = frames["visited"].where(F.col("src") != F.col("id"))
        grouped = dg.vertex_ids().join(
            found.groupBy("id").agg(F.collect_list(F.struct("src", "path")).alias("paths")),
            "id",
            "left",
        )
        id_type = dg.id_type

        def to_json(batches: Any) -> Any:
            import pandas as pd

            for batch in batches:
                out = []
                for vid, entries in zip(batch["id"], batch["paths"], strict=True):
                    table = {}
                    for entry in entries if entries is not None else []:
                        table[entry["src"]] = list(entry["path"])
                    out.append(format_path_values(vid, table, id_type))
                yield pd.DataFrame({"res": out})

        return grouped.mapInPandas(to_json, "res string")


def _natural_rank(ids: np.ndarray) -> np.ndarray:
    order = np.argsort(ids.astype(str) if ids.dtype == object else ids, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    return rank


def _min_paths(
    adjacency: sp.csr_matrix, s: int, id_rank: np.ndarray, max_depth: int
) -> dict[int, list[int]]:
    """Shortest paths from ``s`` (node indices), the smallest id sequence among equals."""
    pred = {s: -1}
    level = np.array([s])
    order = {s: 0}
    depth = 0
    while len(level) and depth < max_depth:
        depth += 1
        rows = adjacency[level]
        owner = np.repeat(np.arange(len(level)), np.diff(rows.indptr))
        targets = rows.indices
        fresh = (
            np.array([t not in pred for t in targets.tolist()], dtype=bool)
            if len(targets)
            else targets.astype(bool)
        )
        owner, targets = owner[fresh], targets[fresh]
        if not len(targets):
            break
        # level is sorted by path order: the first owner of a target is the best predecessor
        by_target = np.lexsort((owner, targets))
        targets, owner = targets[by_target], owner[by_target]
        first = np.r_[True, targets[1:] != targets[:-1]]
        targets, owner = targets[first], owner[first]
        nxt = np.lexsort((id_rank[targets], owner))
        level_next = targets[nxt]
        for t, o in zip(level_next.tolist(), owner[nxt].tolist(), strict=True):
            pred[t] = int(level[o])
            order[t] = depth
        level = level_next
    out: dict[int, list[int]] = {}
    for v in pred:
        if v == s:
            continue
        path = [v]
        while pred[path[-1]] != -1:
            path.append(pred[path[-1]])
        out[v] = path[::-1]
    return out


def format_paths(vertex: Any, paths: dict[int, list[int]], ids: np.ndarray, id_type: Any) -> str:
    return format_path_values(
        vertex, {ids[s]: [ids[i] for i in path] for s, path in paths.items()}, id_type
    )


def format_path_values(vertex: Any, paths: dict[Any, list[Any]], id_type: Any) -> str:
    """GeaFlow's JSON (fastjson): non-string map keys unquoted, keys in HashMap order."""
    keys = list(paths)
    if keys:
        key_array = np.array(
            keys, dtype=np.int64 if isinstance(keys[0], (int, np.integer)) else object
        )
        buckets = hashmap_bucket(
            java_hash_codes(key_array, id_type), hashmap_capacity(np.array(len(keys)))
        )
        keys = [keys[i] for i in np.lexsort((_natural_rank(key_array), buckets))]
    body = ",".join(f"{_json_key(k)}:{_json_list(paths[k])}" for k in keys)
    return f'{{"vertex":{_json_value(vertex)},"paths":{{{body}}}}}'


def _json_value(v: Any) -> str:
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return json.dumps(str(v), ensure_ascii=False)


def _json_key(k: Any) -> str:
    return _json_value(k)


def _json_list(values: list[Any]) -> str:
    return "[" + ",".join(_json_value(v) for v in values) + "]"
