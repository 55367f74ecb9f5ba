"""A CALL of a built-in algorithm in the local engine: its numpy kernel over
Arrow copies of the graph's labels, with no Spark job.

The kernel is the one the local algorithm engine runs inside one Spark task
(``runtime.algorithms.engines``), fed the same one-table layout that
``union_frame`` builds (vertices first, in storage order, then edges), so the
two give the same rows.  What the Spark path would not run locally does not
run here either: a user's algorithm, one with its own ``run`` (the
incremental ones), ``geaflow.dsl.algorithm.engine = distributed`` or the
GraphFrames backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from geaflow_sql.core import types as T
from runtime.algorithms.base import AlgorithmGraph
from runtime.algorithms.builtin import BuiltinAlgorithm
from runtime.algorithms.engines import kernel_batches
from runtime.algorithms.local_graph import EDGE_PROP, KIND, LABEL, VERTEX_PROP, A, B
from runtime.algorithms.options import run_options
from runtime.algorithms.registry import implementation

from .types import NotLocal, arrow_type, widens

# (label info, is a vertex label, its columns, their GeaFlow types)
Label = tuple[Any, bool, list[str], list[Any]]


def local_call(node: Any, config: Any, labels: list[Label]) -> Callable[[list[Any]], Any]:
    """The call as a function of the labels' Arrow rows (in ``labels`` order)."""
    if node.function is not None:
        raise NotLocal("a user-defined algorithm")
    impl = implementation(node.signature, None)
    if not isinstance(impl, BuiltinAlgorithm) or not impl.batch_run_is_kernel:
        raise NotLocal(f"algorithm {node.name}")
    if type(impl).local is BuiltinAlgorithm.local:
        raise NotLocal(f"algorithm {node.name} (no local kernel)")
    opts = run_options(config)
    if opts.engine == "distributed":
        raise NotLocal("an algorithm when geaflow.dsl.algorithm.engine = distributed")
    if opts.backend == "graphframes":
        raise NotLocal("an algorithm on the GraphFrames backend")
    graph = node.graph
    vtype, etype = graph.vertex_type(), graph.edge_type()
    id_type = vtype.field_type(T.VERTEX_ID_FIELD)
    vprops = {f.name: f.type for f in vtype.fields if not f.name.startswith("~")}
    eprops = {f.name: f.type for f in etype.fields if not f.name.startswith("~")}
    facts = AlgorithmGraph(None, None, id_type, vprops, eprops, graph.name)
    if impl.uses_shards:
        facts.shard_count = int(graph.shard_count or 1)
    p = impl.prepare(impl.bind(list(node.args), id_type), facts)
    needs = impl.needs(p)
    schema = impl.spark_schema(id_type)
    max_iterations = opts.max_iterations
    plans = [
        _layout(info, is_vertex, cols, types, needs, id_type, vprops, eprops)
        for info, is_vertex, cols, types in labels
    ]
    out_types = [arrow_type(f.type) for f in node.schema]

    def call(tables: list[Any]) -> Any:
        import pyarrow as pa

        parts = [plan(table) for plan, table in zip(plans, tables, strict=True)]
        graph_table = pa.concat_tables(parts)
        batches = list(kernel_batches(impl, graph_table, p, max_iterations, schema, id_type))
        if batches:
            result = pa.Table.from_batches(batches)
        else:
            result = pa.Table.from_pylist(
                [], schema=pa.schema([(f.name, _arrow_type_of(f)) for f in schema.fields])
            )
        arrays = [c.cast(t) for c, t in zip(result.columns, out_types, strict=True)]
        return pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])

    return call


def _arrow_type_of(field: Any) -> Any:
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(field.dataType)


def _layout(
    info: Any,
    is_vertex: bool,
    columns: list[str],
    types: list[Any],
    needs: Any,
    id_type: Any,
    vprops: dict[str, Any],
    eprops: dict[str, Any],
) -> Callable[[Any], Any]:
    """A label's rows (Arrow, columns as the table has them) in the one-table layout."""
    lowered = [c.lower() for c in columns]

    def index(name: str | None) -> int | None:
        if not name or name.lower() not in lowered:
            return None
        return lowered.index(name.lower())

    def checked(i: int | None, target: Any) -> int | None:
        if i is not None and not widens(types[i], target):
            raise NotLocal(f"a cast of {types[i]} to {target}")
        return i

    id_arrow = arrow_type(id_type)
    if is_vertex:
        a = checked(index(info.id_field), id_type)
        b = None
        keys = {info.id_field.lower()}
        wanted = [(VERTEX_PROP + n, n, vprops[n]) for n in needs.vertex_props]
        with_label = needs.vertex_labels
        kind = 0
    else:
        a = checked(index(info.src_field), id_type)
        b = checked(index(info.dst_field), id_type)
        keys = {info.src_field.lower(), info.dst_field.lower(), (info.ts_field or "").lower()}
        wanted = [(EDGE_PROP + n, n, eprops[n]) for n in needs.edge_props]
        with_label = needs.edge_labels
        kind = 1
    props = []
    for out_name, name, t in wanted:
        i = index(name)
        props.append((out_name, None if i is None or name.lower() in keys else checked(i, t), t))
    # Every part has every column of the layout, so the parts concatenate.
    other = (
        [(EDGE_PROP + n, eprops[n]) for n in needs.edge_props]
        if is_vertex
        else [(VERTEX_PROP + n, vprops[n]) for n in needs.vertex_props]
    )

    def build(table: Any) -> Any:
        import pyarrow as pa

        n = table.num_rows

        def column(i: int | None, t: Any) -> Any:
            arrow = arrow_type(t)
            return pa.nulls(n, arrow) if i is None else table.column(i).cast(arrow)

        cols = {
            KIND: pa.repeat(pa.scalar(kind, pa.int8()), n),
            A: column(a, id_type) if a is not None else pa.nulls(n, id_arrow),
            B: column(b, id_type) if b is not None else pa.nulls(n, id_arrow),
            LABEL: (
                pa.repeat(pa.scalar(info.label, pa.string()), n)
                if with_label
                else pa.nulls(n, pa.string())
            ),
        }
        vertex_cols = {name: column(i, t) for name, i, t in props}
        missing = {name: pa.nulls(n, arrow_type(t)) for name, t in other}
        if is_vertex:
            cols.update(vertex_cols)
            cols.update(missing)
        else:
            cols.update(missing)
            cols.update(vertex_cols)
        return pa.table(cols)

    return build
