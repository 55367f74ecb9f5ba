"""Running Python vertex programs (``geaflow_sql.udga``) on Spark.

``UserAlgorithm`` adapts a user's ``AlgorithmUserFunction`` to the
``Algorithm`` interface CALL uses.  The vertex program itself always runs in
batches inside Spark tasks:

* **local** (graphs up to ``geaflow.dsl.iteration.local.max.edges`` edges):
  the graph travels into one task as an Arrow stream and every superstep runs
  there, messages held in dictionaries;
* **distributed**: each superstep is one ``mapInPandas`` over the vertices that
  have messages (vertex rows carry their edge lists and state), producing new
  values, messages and output rows; supersteps are rounds of an iteration
  cycle with the usual checkpoint policy.

Values, messages and output rows travel between supersteps pickled.  Both
engines apply the same rules (see ``geaflow_sql.udga``), so they give the
same rows for algorithms that do not depend on the order of messages.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ExecutionError, ValidationError
from geaflow_sql.udga import AlgorithmContext, Edge, EdgeDirection, Vertex
from planner.algorithms import user_signature

from .base import Algorithm, AlgorithmGraph, CallContext
from .dist_graph import Needs, union_frame
from .engines import use_local
from .iteration import cut_lineage, iterate
from .local_graph import LocalGraph
from .options import RunOptions, options_of

VALUE, MESSAGE, TAKE = 0, 1, 2
_UNSET = object()


class _Context(AlgorithmContext):
    """The context of one task: collects what ``process``/``finish`` emit."""

    def __init__(self, id_type: Any, combiner: Any) -> None:
        self.id_type = id_type
        self.current_iteration = 1
        self.combiner = combiner
        self.outbox: dict[Any, Any] | list[tuple[Any, Any]] = {} if combiner else []
        self.takes: list[tuple[Any, ...]] = []
        self.values: list[tuple[Any, Any]] = []
        self._edges: Any = None
        self._vertex_id: Any = None

    def bind(self, vertex_id: Any, edges: Any) -> None:
        self._vertex_id = vertex_id
        self._edges = edges

    def send_message(self, vertex_id: Any, message: Any) -> None:
        if self.combiner is None:
            self.outbox.append((vertex_id, message))  # type: ignore[union-attr]
            return
        box = self.outbox
        assert isinstance(box, dict)
        old = box.get(vertex_id, _UNSET)
        box[vertex_id] = message if old is _UNSET else self.combiner.combine(old, message)

    def update_vertex_value(self, value: Any) -> None:
        self.values.append((self._vertex_id, value))

    def load_edges(self, direction: EdgeDirection = EdgeDirection.BOTH) -> list[Edge]:
        if isinstance(direction, str):
            direction = EdgeDirection(direction.upper())
        return self._edges(direction)

    def take(self, row: Any) -> None:
        self.takes.append(tuple(row))

    def drain_messages(self) -> list[tuple[Any, Any]]:
        box = self.outbox
        self.outbox = {} if self.combiner else []
        return list(box.items()) if isinstance(box, dict) else box


def _combine(messages: list[Any], combiner: Any) -> list[Any]:
    if combiner is None or len(messages) < 2:
        return messages
    acc = messages[0]
    for m in messages[1:]:
        acc = combiner.combine(acc, m)
    return [acc]


def _call(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception as err:
        name = getattr(fn, "__qualname__", str(fn))
        raise ExecutionError(f"graph algorithm {name} failed: {type(err).__name__}: {err}") from err


# ---------------------------------------------------------------------------
# The adapter
# ---------------------------------------------------------------------------


class UserAlgorithm(Algorithm):
    """A user's ``AlgorithmUserFunction`` instance, callable with CALL."""

    def __init__(self, instance: Any, name: str | None = None) -> None:
        self.instance = instance
        self.signature = user_signature(name or type(instance).__name__.lower(), instance)

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        opts = options_of(ctx, graph)
        bound = opts.max_iterations
        own = getattr(self.instance, "max_iterations", None)
        if own is not None:
            if int(own) < 1:
                raise ValidationError(f"{self.name}: max_iterations must be at least 1")
            bound = min(bound, int(own))
        schema = self.spark_schema(graph.id_type)
        if use_local(graph, opts):
            # One round of the call's cycle builds the task that runs every superstep.
            local = _run_local(self.instance, graph, list(args), bound, schema)
            return opts.iteration.run(lambda _: (False, local), 1)
        return _run_distributed(self.instance, graph, list(args), bound, schema, opts)


# ---------------------------------------------------------------------------
# Local: all supersteps inside one task
# ---------------------------------------------------------------------------


def _graph_needs(graph: AlgorithmGraph) -> Needs:
    return Needs(
        vertex_labels=True,
        edge_labels=True,
        vertex_props=tuple(graph.vertex_properties),
        edge_props=tuple(graph.edge_properties),
    )


def _run_local(
    instance: Any, graph: AlgorithmGraph, args: list[Any], bound: int, schema: Any
) -> Any:
    frame = union_frame(graph, _graph_needs(graph))
    vprops, eprops, id_type = (
        list(graph.vertex_properties),
        list(graph.edge_properties),
        graph.id_type,
    )

    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        received = list(batches)
        if not received:
            return
        g = LocalGraph.from_arrow(pa.Table.from_batches(received))
        rows = run_in_memory(instance, g, args, bound, id_type, vprops, eprops)
        yield _rows_batch(rows, schema)

    return frame.coalesce(1).mapInArrow(task, schema)


def run_in_memory(
    instance: Any,
    g: LocalGraph,
    args: list[Any],
    bound: int,
    id_type: Any,
    vprops: list[str],
    eprops: list[str],
) -> list[tuple[Any, ...]]:
    """Every superstep of the vertex program over an in-memory graph; the output rows."""
    combiner = getattr(instance, "combiner", None)
    ctx = _Context(id_type, combiner)
    _call(instance.init, ctx, list(args))
    ids = g.ids.tolist()
    index = {vid: i for i, vid in enumerate(ids[: g.nv])}
    vprop_values = [g.vertex_props[p].tolist() for p in vprops]
    eprop_values = [g.edge_props[p].tolist() for p in eprops]
    labels = g.vertex_label.tolist()
    elabels = g.edge_label.tolist()
    out_of = _incident(g.src, g.nv)
    in_of = _incident(g.dst, g.nv)
    src, dst = g.src.tolist(), g.dst.tolist()

    def edges_of(v: int) -> Any:
        def load(direction: EdgeDirection) -> list[Edge]:
            found: list[Edge] = []
            if direction in (EdgeDirection.OUT, EdgeDirection.BOTH):
                found += [
                    _edge(
                        ids[v], ids[dst[e]], elabels[e], EdgeDirection.OUT, e, eprops, eprop_values
                    )
                    for e in out_of[v]
                ]
            if direction in (EdgeDirection.IN, EdgeDirection.BOTH):
                found += [
                    _edge(
                        ids[v], ids[src[e]], elabels[e], EdgeDirection.IN, e, eprops, eprop_values
                    )
                    for e in in_of[v]
                ]
            return found

        return load

    values: dict[int, Any] = {}

    def vertex(v: int) -> Vertex:
        props = tuple(col[v] for col in vprop_values)
        value = values.get(v, props)
        return Vertex(ids[v], labels[v], value, dict(zip(vprops, props, strict=True)))

    inbox: dict[int, list[Any]] = {v: [] for v in range(g.nv)}
    iteration = 1
    while inbox and iteration <= bound:
        ctx.current_iteration = iteration
        for v in sorted(inbox):
            ctx.bind(ids[v], edges_of(v))
            _call(instance.process, vertex(v), _combine(inbox[v], combiner))
            for vid, value in ctx.values:
                values[index[vid]] = value
            ctx.values.clear()
        nxt: dict[int, list[Any]] = {}
        for target, message in ctx.drain_messages():
            t = index.get(target)
            if t is not None:
                nxt.setdefault(t, []).append(message)
        inbox = nxt
        iteration += 1
    ctx.current_iteration = iteration - 1
    for v in range(g.nv):
        ctx.bind(ids[v], edges_of(v))
        _call(instance.finish, vertex(v))
        for vid, value in ctx.values:
            values[index[vid]] = value
        ctx.values.clear()
    return ctx.takes


def _incident(ends: np.ndarray, nv: int) -> list[list[int]]:
    out: list[list[int]] = [[] for _ in range(nv)]
    for e, v in enumerate(ends.tolist()):
        if v < nv:
            out[v].append(e)
    return out


def _edge(
    me: Any,
    other: Any,
    label: Any,
    direction: EdgeDirection,
    e: int,
    names: list[str],
    cols: list[list[Any]],
) -> Edge:
    props = tuple(col[e] for col in cols)
    return Edge(me, other, label, direction, props, dict(zip(names, props, strict=True)))


def _rows_batch(rows: list[tuple[Any, ...]], schema: Any) -> Any:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    width = len(schema.fields)
    for row in rows:
        if len(row) != width:
            raise ExecutionError(
                f"graph algorithm output row {row!r} has {len(row)} values, expected {width}"
            )
    arrays = [
        pa.array([_plain(row[i]) for row in rows], type=to_arrow_type(f.dataType))
        for i, f in enumerate(schema.fields)
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[f.name for f in schema.fields])


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------------------
# Distributed: one mapInPandas per superstep
# ---------------------------------------------------------------------------


def _run_distributed(
    instance: Any, graph: AlgorithmGraph, args: list[Any], bound: int, schema: Any, opts: RunOptions
) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as ST

    id_type = graph.id_type
    id_spark = T.to_spark_type(id_type)
    vprops, eprops = list(graph.vertex_properties), list(graph.edge_properties)
    vertices = graph.vertices.where(F.col("id").isNotNull()).dropDuplicates(["id"])
    edges = graph.edges.where(F.col("src").isNotNull() & F.col("dst").isNotNull())
    eprop_struct = F.struct(*[F.col(f"`{p}`").alias(p) for p in eprops]) if eprops else F.lit(None)
    out_lists = _edge_lists(edges, "src", "dst", eprop_struct, "out_edges")
    in_lists = _edge_lists(edges, "dst", "src", eprop_struct, "in_edges")
    vprop_struct = F.struct(*[F.col(f"`{p}`").alias(p) for p in vprops]) if vprops else F.lit(None)
    adjacency = (
        vertices.select(
            "id", F.col("label").cast("string").alias("label"), vprop_struct.alias("props")
        )
        .join(out_lists, "id", "left")
        .join(in_lists, "id", "left")
    )
    adjacency = adjacency.localCheckpoint(eager=True)
    out_schema = ST.StructType(
        [
            ST.StructField("kind", ST.ByteType()),
            ST.StructField("id", id_spark),
            ST.StructField("blob", ST.BinaryType()),
        ]
    )
    empty_state = adjacency.where(F.lit(False)).select(
        "id", F.lit(None).cast("binary").alias("value")
    )
    empty_takes = adjacency.where(F.lit(False)).select(F.lit(None).cast("binary").alias("blob"))
    rounds_run = [0]

    def superstep(iteration: int, finishing: bool) -> Any:
        def run_batches(batches: Iterator[Any]) -> Iterator[Any]:
            yield from _process_batches(
                instance, args, id_type, vprops, eprops, iteration, finishing, batches
            )

        return run_batches

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        iteration = round_no + 1
        rounds_run[0] = iteration
        state = frames["state"]
        if iteration == 1:
            active = adjacency.withColumn("inbox", F.lit(None).cast("array<binary>"))
        else:
            inbox = (
                frames["messages"].groupBy(F.col("id")).agg(F.collect_list("blob").alias("inbox"))
            )
            active = adjacency.join(inbox, "id")
        batch = active.join(state, "id", "left")
        # User code runs once per superstep: materialise its output before
        # three frames read it (this also keeps each round's plan a leaf).
        out = cut_lineage(
            batch.mapInPandas(superstep(iteration, False), out_schema), opts.checkpoint
        )
        values = out.where(F.col("kind") == VALUE).select("id", F.col("blob").alias("value"))
        new_state = state.join(values.select("id"), "id", "left_anti").unionByName(values)
        messages = out.where(F.col("kind") == MESSAGE).select("id", "blob")
        takes = frames["takes"].unionByName(out.where(F.col("kind") == TAKE).select("blob"))
        return {"state": new_state, "messages": messages, "takes": takes}, _no_messages

    start = {
        "state": empty_state,
        "messages": empty_state.select("id", F.col("value").alias("blob")),
        "takes": empty_takes,
    }
    frames = iterate(start, step, bound, opts, check_every_round=True)
    rounds = rounds_run[0]
    last = frames["state"]
    finish = adjacency.withColumn("inbox", F.lit(None).cast("array<binary>")).join(
        last, "id", "left"
    )
    finished = finish.mapInPandas(superstep(max(rounds, 1), True), out_schema)
    takes = frames["takes"].unionByName(finished.where(F.col("kind") == TAKE).select("blob"))

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        rows: list[tuple[Any, ...]] = []
        for batch in batches:
            rows.extend(pickle.loads(b) for b in batch.column("blob").to_pylist())
        if rows:
            yield _rows_batch(rows, schema)

    return takes.coalesce(1).mapInArrow(decode, schema).localCheckpoint(eager=True)


def _no_messages(frames: dict[str, Any]) -> bool:
    return frames["messages"].isEmpty()


def _process_batches(
    instance: Any,
    args: list[Any],
    id_type: Any,
    vprops: list[str],
    eprops: list[str],
    iteration: int,
    finishing: bool,
    batches: Iterator[Any],
) -> Iterator[Any]:
    """One superstep (or the finish pass) over pandas batches of vertex rows."""
    import pandas as pd

    combiner = getattr(instance, "combiner", None)
    ctx = _Context(id_type, combiner)
    _call(instance.init, ctx, list(args))
    ctx.current_iteration = iteration
    for batch in batches:
        kinds: list[int] = []
        keys: list[Any] = []
        blobs: list[bytes] = []
        for row in batch.itertuples(index=False):
            vid = row.id
            props = _props_tuple(row.props, vprops)
            value = pickle.loads(row.value) if row.value is not None else props
            vertex = Vertex(vid, row.label, value, dict(zip(vprops, props, strict=True)))
            ctx.bind(vid, _edge_loader(vid, row.out_edges, row.in_edges, eprops))
            if finishing:
                _call(instance.finish, vertex)
            else:
                inbox = [pickle.loads(b) for b in row.inbox] if row.inbox is not None else []
                _call(instance.process, vertex, _combine(inbox, combiner))
            for owner, new in ctx.values:
                kinds.append(VALUE)
                keys.append(owner)
                blobs.append(pickle.dumps(new))
            ctx.values.clear()
        for target, message in ctx.drain_messages():
            kinds.append(MESSAGE)
            keys.append(target)
            blobs.append(pickle.dumps(message))
        for taken in ctx.takes:
            kinds.append(TAKE)
            keys.append(None)
            blobs.append(pickle.dumps(taken))
        ctx.takes.clear()
        yield pd.DataFrame(
            {
                "kind": pd.Series(kinds, dtype="int8"),
                "id": pd.Series(keys, dtype=object),
                "blob": blobs,
            }
        )


def _props_tuple(props: Any, names: list[str]) -> tuple[Any, ...]:
    if props is None or not names:
        return tuple(None for _ in names)
    return tuple(_plain(props[n]) for n in names)


def _edge_loader(vid: Any, out_edges: Any, in_edges: Any, eprops: list[str]) -> Any:
    def load(direction: EdgeDirection) -> list[Edge]:
        found: list[Edge] = []
        groups = []
        if direction in (EdgeDirection.OUT, EdgeDirection.BOTH):
            groups.append((out_edges, EdgeDirection.OUT))
        if direction in (EdgeDirection.IN, EdgeDirection.BOTH):
            groups.append((in_edges, EdgeDirection.IN))
        for entries, d in groups:
            for entry in entries if entries is not None else []:
                props = _props_tuple(entry["props"], eprops)
                found.append(
                    Edge(
                        vid,
                        _plain(entry["other"]),
                        entry["label"],
                        d,
                        props,
                        dict(zip(eprops, props, strict=True)),
                    )
                )
        return found

    return load


def user_algorithm(instance: Any, name: str | None = None) -> UserAlgorithm:
    """The ``Algorithm`` that runs a user's vertex program instance."""
    if not (
        callable(getattr(instance, "init", None)) and callable(getattr(instance, "process", None))
    ):
        raise ValidationError(
            f"{type(instance).__name__} is not a graph algorithm: it needs init() and process()"
        )
    return UserAlgorithm(instance, name)


def _edge_lists(edges: Any, at: str, other: str, props: Any, name: str) -> Any:
    """Per vertex (column ``at`` of the edges), its edges as a list ``name`` of
    (other end, label, properties)."""
    from pyspark.sql import functions as F

    return edges.groupBy(F.col(at).alias("id")).agg(
        F.collect_list(
            F.struct(
                F.col(other).alias("other"),
                F.col("label").cast("string").alias("label"),
                props.alias("props"),
            )
        ).alias(name)
    )
