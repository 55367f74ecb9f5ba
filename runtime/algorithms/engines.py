"""The local engine: a whole iteration inside one Spark task, in numpy.

On this kind of machine one Spark job costs a few tenths of a second, so a
superstep per job loses to a sparse-matrix kernel by two orders of magnitude
whenever the graph fits in one worker's memory.  ``run_local`` carries the
graph into a single task as one Arrow stream (``mapInArrow`` over one
partition), runs the algorithm's ``local`` kernel there and streams the rows
back; nothing is collected to the driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .dist_graph import union_frame
from .local_graph import LocalGraph
from .options import RunOptions


def edge_count(graph: Any) -> int:
    known = getattr(graph, "edge_count", None)
    if known is not None:
        return int(known)
    return int(graph.edges.count())


def use_local(graph: Any, opts: RunOptions) -> bool:
    if opts.engine == "local":
        return True
    if opts.engine == "distributed":
        return False
    return edge_count(graph) <= opts.local_max_edges


def run_local(algorithm: Any, graph: Any, p: dict[str, Any], opts: RunOptions) -> Any:
    """The algorithm's output DataFrame (c0..cN), computed by its local kernel in one task.

    The call's iteration cycle runs one round: the round that builds the
    task, inside which every superstep runs."""
    schema = algorithm.spark_schema(graph.id_type)
    frame = union_frame(graph, algorithm.needs(p))
    max_iterations = opts.max_iterations
    id_type = graph.id_type

    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        received = list(batches)
        if not received:
            return
        table = pa.Table.from_batches(received)
        yield from kernel_batches(algorithm, table, p, max_iterations, schema, id_type)

    def one_round(_: int) -> tuple[bool, Any]:
        return False, frame.coalesce(1).mapInArrow(task, schema)

    return opts.iteration.run(one_round, 1)


def kernel_batches(
    algorithm: Any, table: Any, p: dict[str, Any], max_iterations: int, schema: Any, id_type: Any
) -> Iterator[Any]:
    """Run the kernel over a graph table and yield the output as Arrow batches."""
    if table.num_rows == 0:
        return
    g = LocalGraph.from_arrow(table)
    g.id_type = id_type
    columns = algorithm.local(g, p, max_iterations)
    yield arrow_batch(columns, schema)


def arrow_batch(columns: list[np.ndarray], schema: Any) -> Any:
    """Output columns as one Arrow record batch of the Spark schema's types."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    arrays = []
    for values, f in zip(columns, schema.fields, strict=True):
        arrow_type = to_arrow_type(f.dataType)
        values = np.asarray(values)
        if values.dtype.kind in "biuf":
            arrays.append(pa.array(values).cast(arrow_type))
        else:
            arrays.append(pa.array(values.tolist(), type=arrow_type))
    return pa.RecordBatch.from_arrays(arrays, names=[f.name for f in schema.fields])
