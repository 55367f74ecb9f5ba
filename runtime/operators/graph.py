"""Graph operators: vertex/edge values from the stores, path expansion, algorithms.

Vertex and edge values are structs of the graph's unified types (see
``geaflow_sql.core.catalog.unified_type``).  Expanding a path joins the edges whose
``~src`` is the path's current vertex; an edge taken against its direction is
emitted reversed (``~src``/``~dst`` swapped, ``~direction = 'IN'``), so the
next vertex is always the edge's ``~dst``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.dialect import to_spark_sql
from planner.expressions import type_of
from planner.graph_nodes import EdgeMatch, GraphAlgorithm, GraphLabelScan, VertexMatch
from runtime.algorithms.base import AlgorithmGraph, LazyFrame
from runtime.env import Env
from runtime.expressions import cast_as, cast_column, spark_ident, spark_sql
from runtime.held import hold, local_frame, rows_of
from runtime.operators import both_ways
from runtime.spark_adapter import checkpoint_counting, fits_broadcast, select_sql
from runtime.stores.written import written_held, written_since


def _find(df_cols: list[str], name: str) -> str | None:
    lowered = name.lower()
    for c in df_cols:
        if c.lower() == lowered:
            return c
    return None


def _text(value: str) -> str:
    return to_spark_sql(exp.Literal.string(value))


# The values are built as one SQL expression (``selectExpr``) rather than a tree
# of Columns: each Column method is a py4j round trip, and a MATCH reads these
# values once per vertex and hop, so on small graphs the round trips cost more
# than the Spark job.


def vertex_values(env: Env, graph: Any, labels: tuple[str, ...], vtype: T.StructType) -> Any:
    """DataFrame with one struct column ``v`` per vertex of the given labels."""
    infos = [graph.vertex(lab) for lab in labels] if labels else list(graph.vertices)
    rows = tuple(env.graph_frame(graph, info.label, True) for info in infos)
    what = ("vertex", tuple(info.label for info in infos), vtype)
    return env.ctx.stores.frames.get(
        (env.spark, *rows), what, lambda: _vertex_values(env, infos, rows, vtype)
    )


def _vertex_values(env: Env, infos: list[Any], rows: tuple[Any, ...], vtype: T.StructType) -> Any:
    frames = []
    for info, df in zip(infos, rows, strict=True):
        cols = df.columns
        parts = []
        for f in vtype.fields:
            spark_type = T.spark_sql_type(f.type)
            if f.name == T.VERTEX_ID_FIELD:
                value = cast_column(_find(cols, info.id_field), spark_type)
            elif f.name == T.LABEL_FIELD:
                value = _text(info.label)
            else:
                src = _find(cols, f.name)
                keep = src is not None and src.lower() != info.id_field.lower()
                value = cast_column(src if keep else None, spark_type)
            parts.append(f"{value} AS {spark_ident(f.name)}")
        frames.append(df.selectExpr(f"struct({', '.join(parts)}) AS v"))
    return _values_column(env, frames, "v", vtype)


def edge_values(
    env: Env, graph: Any, labels: tuple[str, ...], etype: T.StructType, direction: str
) -> Any:
    """DataFrame with one struct column ``e``: edges as seen from their ``~src``."""
    infos = [graph.edge(lab) for lab in labels] if labels else list(graph.edges)
    rows = tuple(env.graph_frame(graph, info.label, False) for info in infos)
    what = ("edge", tuple(info.label for info in infos), etype, direction)
    return env.ctx.stores.frames.get(
        (env.spark, *rows), what, lambda: _edge_values(env, infos, rows, etype, direction)
    )


def _edge_values(
    env: Env, infos: list[Any], rows: tuple[Any, ...], etype: T.StructType, direction: str
) -> Any:
    frames = []
    directions = ["OUT", "IN"] if direction == "BOTH" else [direction]
    for info, df in zip(infos, rows, strict=True):
        cols = df.columns
        src_col = _find(cols, info.src_field)
        dst_col = _find(cols, info.dst_field)
        keys = {info.src_field.lower(), info.dst_field.lower(), (info.ts_field or "").lower()}
        for d in directions:
            first, second = (src_col, dst_col) if d == "OUT" else (dst_col, src_col)
            parts = []
            for f in etype.fields:
                spark_type = T.spark_sql_type(f.type)
                if f.name == T.EDGE_SRC_FIELD:
                    value = cast_column(first, spark_type)
                elif f.name == T.EDGE_DST_FIELD:
                    value = cast_column(second, spark_type)
                elif f.name == T.LABEL_FIELD:
                    value = _text(info.label)
                elif f.name == T.EDGE_DIRECTION_FIELD:
                    value = _text(d)
                elif f.name == T.EDGE_TS_FIELD:
                    src = _find(cols, info.ts_field) if info.ts_field else None
                    value = cast_column(src, spark_type)
                else:
                    src = _find(cols, f.name)
                    keep = src is not None and src.lower() not in keys
                    value = cast_column(src if keep else None, spark_type)
                parts.append(f"{value} AS {spark_ident(f.name)}")
            frames.append(df.selectExpr(f"struct({', '.join(parts)}) AS e"))
    return _values_column(env, frames, "e", etype)


def _values_column(env: Env, frames: list[Any], name: str, struct: T.StructType) -> Any:
    """The labels' values as one column ``name`` (no rows when no label matched)."""
    if not frames:
        from pyspark.sql import types as ST

        schema = ST.StructType([ST.StructField(name, T.to_spark_type(struct))])
        return local_frame(env.spark, [], schema)
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def _filtered(df: Any, name: str, condition: Any) -> Any:
    """Apply a filter bound over one field (``c0``) to the struct column ``name``."""
    if condition is None:
        return df
    return df.selectExpr(f"{name} AS c0").where(spark_sql(condition)).selectExpr(f"c0 AS {name}")


# The joins and projections below are SQL text too (a round trip per item).


def vertex_match(env: Env, node: VertexMatch, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    vertices = vertex_values(env, node.graph, node.labels, node.vertex_type)
    if node.input is None:
        out = vertices.selectExpr("v AS c0")
        if node.filter is not None:
            out = out.where(spark_sql(node.filter))
        return out
    base = inputs[0]
    n = len(node.input.schema)
    right = vertices.selectExpr(f"v AS c{n}")
    if node.id_key is not None:
        joined = base.join(right, F.expr(f"c{node.id_key} = c{n}.`~id`"), "inner")
    else:
        joined = base.crossJoin(right)
    if node.filter is not None:
        joined = joined.where(spark_sql(node.filter))
    return joined


def edge_match(env: Env, node: EdgeMatch, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    path = inputs[0]
    n = len(node.input.schema)
    names = [f"c{i}" for i in range(n)]
    edges = _filtered(
        edge_values(env, node.graph, node.edge_labels, node.edge_type, node.direction),
        "e",
        node.edge_filter,
    )
    if not node.is_loop:
        expanded = path.join(edges, F.expr(f"c{node.source}.`~id` = e.`~src`"), "inner")
        ends = select_sql(expanded, [*names, "e AS __edge", "e.`~dst` AS __at"])
    else:
        ends = _loop(env, node, path, edges, names)
    # A run that keeps its elements: its edges and the vertices between them.
    run = [f"__redges AS c{n + 1}", f"__rverts AS c{n + 2}"] if node.keep_run else []
    target = node.target_index
    if node.edge_only:
        return select_sql(ends, [*names, f"__edge AS c{n}"])
    if node.target_bound is not None:
        out = ends.where(f"__at = c{node.target_bound}.`~id`")
        return select_sql(out, [*names, f"__edge AS c{n}", *run])
    vertices = _filtered(
        vertex_values(env, node.graph, node.target_labels, node.vertex_type),
        "v",
        node.target_filter,
    )
    if not node.is_loop:
        joined = _target_first(path, edges, vertices, node, n)
        if joined is not None:
            return select_sql(joined, [*names, f"e AS c{n}", f"v AS c{n + 1}"])
    meets = "__at = v.`~id`"
    if node.is_loop:
        # A run of no hops ends at its start vertex itself (not at another
        # label's vertex with the same id); a run of hops ends at a vertex
        # that passed the loop's body (_loop checked that one such exists).
        hopped = "__hops > 0"
        if node.via_end and node.has_body:
            vertices = vertices.selectExpr("v AS c0").selectExpr(
                "c0 AS v", f"{_body_test(node)} AS __body"
            )
            hopped = f"({hopped} AND __body)"
        if node.min_hops == 0:
            start = f"(__hops = 0 AND v.`~label` = c{node.source}.`~label`)"
            hopped = f"({hopped} OR {start})"
        meets = f"{meets} AND {hopped}"
    joined = ends.join(vertices, F.expr(meets), "inner")
    return select_sql(joined, [*names, f"__edge AS c{n}", *run, f"v AS c{target}"])


def _target_first(path: Any, edges: Any, vertices: Any, node: EdgeMatch, n: int) -> Any | None:
    """The hop as ``path ⋈ (edges ⋈ targets)`` when that is the cheaper order, else None.

    Joining the path to the edges first carries every edge the path reaches
    to the target's filter; when the target has a filter and its vertices
    are small enough to broadcast, the edges that reach a passing target are
    found first, by probing that broadcast as the edges stream past.  That
    side has no more rows than the edges, so it is broadcast to the path
    when the edges would have been (Spark's estimate, by the columns every
    hop reads); otherwise Spark chooses the join.  (The path has already
    been expanded: a hop never reorders hops.)
    """
    from pyspark.sql import functions as F

    if node.target_filter is None or not fits_broadcast(vertices):
        return None
    reaching = edges.join(F.broadcast(vertices), F.expr("e.`~dst` = v.`~id`"), "inner")
    if fits_broadcast(edges.selectExpr("e.`~src`", "e.`~dst`")):
        reaching = F.broadcast(reaching)
    return path.join(reaching, F.expr(f"c{node.source}.`~id` = e.`~src`"), "inner")


def _body_test(node: EdgeMatch) -> str:
    """SQL: whether the vertex in column ``c0`` passes a loop's body, its
    labels and filter."""
    test = "true"
    if node.via_labels:
        labels = ", ".join(_text(label) for label in node.via_labels)
        test = f"c0.`{T.LABEL_FIELD}` IN ({labels})"
    if node.via_filter is not None:
        test = f"({test} AND coalesce({spark_sql(node.via_filter)}, false))"
    return test


def _loop(env: Env, node: EdgeMatch, path: Any, edges: Any, names: list[str]) -> Any:
    """Paths of ``min_hops``..``max_hops`` edges as rounds of the node's iteration cycle.

    The walks are computed from the distinct vertices the paths stand at, a
    small table materialised once, and joined back to the paths at the end;
    each round extends the walks by one edge (a lazily built DataFrame; the
    final union runs as one Spark job).  Building the rounds on the paths
    themselves would copy the whole path plan (earlier hops, loops and
    subqueries) into every round and the union, and a second loop further on
    would multiply those copies: on a long query the plan, not the data,
    outgrew the driver's heap.  The edge column keeps the last edge.

    After each edge the walk goes on only from a vertex that exists and
    passes the loop's body (GeaFlow's vertex step after every edge); the run
    is emitted before that test when the body does not hold at its end.
    """
    from pyspark.sql import functions as F

    # (SQL text, not Column calls, each a dozen py4j round trips)
    etype = T.spark_sql_type(node.edge_type)
    vtype = T.spark_sql_type(node.vertex_type)
    starts = path.selectExpr(f"c{node.source}.`~id` AS __from").where("__from IS NOT NULL")
    starts = starts.distinct()
    # (kept when the final union first computes it: no job of its own)
    starts = starts.localCheckpoint(eager=False)
    # A kept run: its edges so far, the vertices between them, and (in the
    # frontier) the vertex it stands at, to add once it moves on.
    no_run = _no_run(node)
    # A search by cost: each walk's cost so far, each edge's own (an edge of
    # null cost is not taken).
    costs = node.reach_cost is not None
    ctype = "double"
    if node.reach_cost is not None:
        # (integer costs add up exactly as integers, as the path's cost does)
        if getattr(type_of(node.reach_cost), "is_integer", False):
            ctype = "bigint"
        edges = (
            edges.selectExpr("e AS c0")
            .selectExpr("c0 AS e", f"{spark_sql(node.reach_cost)} AS __ecost")
            .where("__ecost IS NOT NULL")
        )
    walk0 = starts.selectExpr(
        "__from",
        f"CAST(NULL AS {etype}) AS __edge",
        "__from AS __at",
        "0 AS __hops",
        *(no_run if node.keep_run else []),
        *([f"CAST(0 AS {ctype}) AS __cost"] if costs else []),
    )
    body = vertex_values(env, node.graph, node.via_labels, node.vertex_type)
    body = _filtered(body, "v", node.via_filter)
    if node.keep_run:
        # One vertex per id (where two labels share an id, the least label's).
        body_ids = (
            body.selectExpr("v.`~id` AS __vid", "v AS __atv")
            .groupBy("__vid")
            .agg(F.expr("min_by(__atv, __atv.`~label`) AS __atv"))
        )
        frontier0 = walk0.selectExpr("*", f"CAST(NULL AS {vtype}) AS __atv")
    else:
        body_ids = body.selectExpr("v.`~id` AS __vid")
        frontier0 = walk0
    levels: list[Any] = []
    state = {"frontier": frontier0}
    if node.min_hops == 0:
        levels.append(walk0)
    # A first-reach search: the (start, vertex) pairs met in earlier rounds
    # (the start itself when a run may have no edges), each round's walks
    # checkpointed, so that a round reads only what the last one kept.
    met: list[Any] = []
    if node.first_reach is not None and node.min_hops == 0:
        met.append(walk0.select("__from", "__at", *(["__cost"] if costs else [])))
    # A shortest-path search whose end is bound by an earlier pattern: the
    # (start, end) pairs not reached yet.  A pair's first level is the only
    # one it takes walks from (first_reached drops later walks to it), so a
    # start whose ends are all reached walks no further, and the search ends
    # at the level that reaches its last pair.  (Not by cost: a cheaper walk
    # may have more edges.)
    if node.first_reach is not None and node.target_bound is not None and not costs:
        state["needs"] = (
            path.selectExpr(
                f"c{node.source}.`~id` AS __from", f"c{node.target_bound}.`~id` AS __at"
            )
            .where("__from IS NOT NULL AND __at IS NOT NULL")
            .distinct()
            .localCheckpoint(eager=True)
        )
        if node.min_hops == 0:
            state["needs"] = state["needs"].where("__from <> __at")
    # Both ends bound: searched from both when that pays (see both_ways).
    pairs = both_ways.pairs_to_meet(state["needs"]) if "needs" in state else 0
    if pairs:
        found = both_ways.search_both_ways(
            env, node, state["needs"], pairs, edges, body_ids, etype, vtype
        )
        return _walks_joined(path, [walk0, found] if node.min_hops == 0 else [found], node, names)
    # An open end the MATCH's WHERE narrows (EdgeMatch.search_ends): the ids
    # of the vertices it may be, and the (start, such vertex) pairs reached.
    # A start that reached all of them walks no further.
    ends, ends_count = None, 0
    if node.search_ends is not None and node.first_reach is not None and not costs:
        ends = _filtered(
            vertex_values(env, node.graph, node.target_labels, node.vertex_type),
            "v",
            node.search_ends,
        )
        ends, counted = checkpoint_counting(
            ends.selectExpr("v.`~id` AS __end").distinct(), ends="count(1)"
        )
        ends_count = counted["ends"]
        # (a run of no edges reaches its start first)
        state["found"] = (
            walk0.select("__from", "__at").join(ends, F.expr("__at = __end"), "left_semi")
            if node.min_hops == 0
            else None
        )

    def checkpointed_round(reached: Any) -> Any:
        """The round's walks kept, their number read by the checkpoint's job
        (a round that reaches nothing new ends the search)."""
        reached, counted = checkpoint_counting(reached, rows="count(1)")
        state["reached"] = counted["rows"]
        return reached

    def first_reached(reached: Any) -> Any:
        if costs:
            return cheapest_reached(reached)
        for earlier in met:
            reached = reached.join(earlier, ["__from", "__at"], "left_anti")
        if node.first_reach == "ANY":
            reached = reached.dropDuplicates(["__from", "__at"])
        reached = checkpointed_round(reached)
        met.append(reached.select("__from", "__at"))
        return reached

    def cheapest_reached(reached: Any) -> Any:
        """The round's walks no earlier walk from the same start to the same
        vertex makes needless (see ``EdgeMatch.reach_cost``); ``met`` holds
        one table, the least cost each (start, vertex) was reached at."""
        from pyspark.sql import Window

        keep = "<" if node.first_reach == "ANY" else "<="
        if met:
            best = met[0].withColumnRenamed("__cost", "__best")
            reached = reached.join(best, ["__from", "__at"], "left").where(
                f"__best IS NULL OR __cost {keep} __best"
            )
            reached = reached.drop("__best")
        pair = Window.partitionBy("__from", "__at")
        if node.first_reach == "ANY":
            ranked = F.row_number().over(pair.orderBy("__cost"))
            reached = reached.withColumn("__rank", ranked).where("__rank = 1").drop("__rank")
        else:
            least = F.min("__cost").over(pair)
            reached = reached.withColumn("__least", least).where("__cost = __least")
            reached = reached.drop("__least")
        reached = checkpointed_round(reached)
        now = reached.select("__from", "__at", "__cost")
        if met:
            now = (
                now.unionByName(met[0])
                .groupBy("__from", "__at")
                .agg(F.min("__cost").alias("__cost"))
            )
        met[:] = [now.localCheckpoint(eager=True)]
        return reached

    def step(round_no: int) -> tuple[bool, Any]:
        # (SQL text, not Column calls: a round is built once per hop, and
        # each Column is a dozen py4j round trips)
        hop = round_no + 1
        frontier = state["frontier"]
        kept = []
        if node.keep_run:
            kept = [
                "concat(__redges, array(e)) AS __redges",
                "CASE WHEN __hops > 0 THEN concat(__rverts, array(__atv)) ELSE __rverts END"
                " AS __rverts",
            ]
        if costs:
            kept.append(f"__cost + CAST(__ecost AS {ctype}) AS __cost")
        reached = frontier.join(edges, F.expr("__at = e.`~src`"), "inner").selectExpr(
            "__from", "e AS __edge", "e.`~dst` AS __at", f"{hop} AS __hops", *kept
        )
        more = hop < node.max_hops
        needs = state.get("needs")
        if node.first_reach is not None:
            reached = first_reached(reached)
            # (nothing new reached: no later round reaches anything)
            more = more and state["reached"] > 0
        meets = F.expr("__at = __vid")
        if node.keep_run:
            passed = reached.join(body_ids, meets, "inner").drop("__vid")
        else:
            passed = reached.join(body_ids, meets, "left_semi")
        frontier = passed
        if ends is not None and ends_count == 0:
            # (no end to reach: the WHERE keeps nothing)
            frontier, more = passed.where("false"), False
        elif ends is not None:
            found = (
                reached.select("__from", "__at")
                .join(F.broadcast(ends), F.expr("__at = __end"), "left_semi")
                .distinct()
            )
            if state["found"] is not None:
                found = found.unionByName(state["found"])
            state["found"] = found = found.localCheckpoint(eager=True)
            done = found.groupBy("__from").count().where(f"count >= {ends_count}")
            # (every start reached all its ends, or none walks on: read from
            # the checkpoint the next round reads the frontier from)
            frontier, counted = checkpoint_counting(
                passed.join(done.select("__from"), "__from", "left_anti"), walks="count(1)"
            )
            more = more and counted["walks"] > 0
        elif needs is not None:
            needs, counted = checkpoint_counting(
                needs.join(reached, ["__from", "__at"], "left_anti"), left="count(1)"
            )
            state["needs"] = needs
            frontier = passed.join(needs.select("__from"), "__from", "left_semi")
            # (no start left with an end to reach; when none of those walks
            # on, the next round reaches nothing new and ends the search: one
            # job a round fewer than asking each round.  Only a first-reach
            # search has pairs it needs.)
            more = more and counted["left"] > 0
        state["frontier"] = frontier
        if hop >= node.min_hops:
            levels.append(passed.drop("__atv") if node.via_end else reached)
        return more, hop

    if node.max_hops > 0:
        env.iterate(node, step, node.max_hops)
    return _walks_joined(path, levels, node, names)


def _no_run(node: EdgeMatch) -> list[str]:
    """SQL: a kept run of no edges, its two empty lists."""
    etype = T.spark_sql_type(node.edge_type)
    vtype = T.spark_sql_type(node.vertex_type)
    return [
        f"CAST(array() AS ARRAY<{etype}>) AS __redges",
        f"CAST(array() AS ARRAY<{vtype}>) AS __rverts",
    ]


def _walks_joined(path: Any, levels: list[Any], node: EdgeMatch, names: list[str]) -> Any:
    """The paths each joined with the walks (of ``levels``) from the vertex
    they stand at: the path's columns, ``__edge, __at, __hops`` and a kept
    run's two lists."""
    from pyspark.sql import functions as F

    run = ["__redges", "__rverts"] if node.keep_run else []
    if not levels:
        etype = T.spark_sql_type(node.edge_type)
        return path.selectExpr(
            *names,
            f"CAST(NULL AS {etype}) AS __edge",
            f"c{node.source}.`~id` AS __at",
            "0 AS __hops",
            *(_no_run(node) if node.keep_run else []),
        ).where("false")
    walks = levels[0]
    for lv in levels[1:]:
        walks = walks.unionByName(lv)
    return path.join(walks, F.expr(f"c{node.source}.`~id` = __from"), "inner").select(
        *names, "__edge", "__at", "__hops", *run
    )


def graph_label_scan(env: Env, node: GraphLabelScan, inputs: list[Any]) -> Any:
    df = env.graph_frame(node.graph, node.label, node.is_vertex)
    cols = df.columns
    return select_sql(
        df,
        [
            cast_as(_find(cols, f.name), T.spark_sql_type(f.type), f"c{i}")
            for i, f in enumerate(node.fields_)
        ],
    )


def algorithm_graph(env: Env, graph: Any, lazy: bool = False) -> Any:
    """The graph as (vertices, edges) DataFrames for an algorithm (``lazy``:
    built the first time they are used, ``LazyFrame``)."""
    from pyspark.sql import functions as F

    vtype = graph.vertex_type()
    etype = graph.edge_type()
    id_type = vtype.field_type(T.VERTEX_ID_FIELD)
    vertex_props = {f.name: f.type for f in vtype.fields if not f.name.startswith("~")}
    edge_props = {f.name: f.type for f in etype.fields if not f.name.startswith("~")}

    def vertices() -> Any:
        v = vertex_values(env, graph, (), vtype)
        return v.select(
            F.col("v.`~id`").alias("id"),
            F.col("v.`~label`").alias("label"),
            *[F.col(f"v.`{name}`").alias(name) for name in vertex_props],
        )

    def edges() -> Any:
        e = edge_values(env, graph, (), etype, "OUT")
        has_ts = etype.field_type(T.EDGE_TS_FIELD) is not None
        ts = [F.col("e.`~ts`").alias("ts")] if has_ts else []
        return e.select(
            F.col("e.`~src`").cast(T.spark_sql_type(id_type)).alias("src"),
            F.col("e.`~dst`").cast(T.spark_sql_type(id_type)).alias("dst"),
            F.col("e.`~label`").alias("label"),
            *ts,
            *[F.col(f"e.`{name}`").alias(name) for name in edge_props],
        )

    frames = (LazyFrame(vertices), LazyFrame(edges)) if lazy else (vertices(), edges())
    out = AlgorithmGraph(frames[0], frames[1], id_type, vertex_props, edge_props, graph.name)
    out.spark = env.spark
    return out


def graph_algorithm(env: Env, node: GraphAlgorithm, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    window = env.reads.window
    incremental = window is not None and node.signature.incremental
    graph = algorithm_graph(env, node.graph, lazy=incremental)
    graph.iteration = env.iteration(node)
    if window is not None and node.signature.incremental:
        # An incremental algorithm in a windowed job gets this call site's
        # state from the previous window and what the graph gained since.
        key = f"{window.statement}:{node.name}:{node.args!r}"
        state = window.algorithm_state.setdefault(key, {})
        graph.state = state
        now = env.ctx.stores.store(env.ctx, node.graph).version_number()
        before = state.get("__version")
        written = None if before is None else written_since(env, node.graph, int(before))
        if written is not None:
            # What the store's parts since the last run hold: work in
            # proportion to the window, not to the graph.
            delta = algorithm_graph(
                env.with_reads(env.reads.serving(node.graph, written)), node.graph, lazy=True
            )
            graph.new_edges = delta.edges
            graph.new_vertices = delta.vertices
            graph.held_delta = written_held(env, node.graph, int(before), graph.id_type)
        elif before is not None:
            at_before = env.with_reads(env.reads.at_version(node.graph, int(before)))
            previous = algorithm_graph(at_before, node.graph)
            graph.new_edges = graph.edges.exceptAll(previous.edges)
            graph.new_vertices = graph.vertices.exceptAll(previous.vertices)
        else:
            graph.new_edges = graph.edges
            graph.new_vertices = graph.vertices
        graph.window = window.number
        state["__version"] = now
    # The algorithms (numpy, pandas, scipy) load when a CALL first runs.
    from runtime.algorithms.registry import implementation

    instance = node.function.instance if node.function is not None else None
    out = implementation(node.signature, instance).run(env.ctx, graph, list(node.args))
    typed = out.select(
        *[
            F.col(f"c{i}").cast(T.spark_sql_type(f.type)).alias(f"c{i}")
            if not isinstance(f.type, T.StructType)
            else F.col(f"c{i}")
            for i, f in enumerate(node.fields_)
        ]
    )
    rows = rows_of(out)
    if rows is not None and not any(isinstance(f.type, T.StructType) for f in node.fields_):
        # Made on the driver: the typed rows stay at hand there too.
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_type

        columns = []
        for i, f in enumerate(node.fields_):
            column, target = rows.column(i), to_arrow_type(T.to_spark_type(f.type))
            same = column.type == target
            if not same and not (pa.types.is_integer(column.type) and pa.types.is_integer(target)):
                return typed  # a cast only Spark's rules decide
            try:
                columns.append(column if same else column.cast(target))
            except pa.ArrowInvalid:
                return typed  # out of range: Spark's rows only
        hold(typed, pa.Table.from_arrays(columns, names=[f"c{i}" for i in range(len(columns))]))
    return typed
