"""The interface between CALL and an algorithm implementation.

The planner binds ``CALL f(args) YIELD (a, b)`` against the current graph into a
``GraphAlgorithm`` plan node; at run time the operator builds an
``AlgorithmGraph`` from the graph store and calls ``Algorithm.run``, which
returns a DataFrame whose columns ``c0..cN`` are the algorithm's outputs in
order (YIELD names them by position).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import Catalog
from geaflow_sql.core.config import Config
from planner.algorithms import AlgorithmSignature
from runtime.scheduler import IterationRunner


class LazyFrame:
    """A DataFrame built the first time anything of it is used.

    An incremental algorithm's window mostly reads its own state and the
    window's delta (held on the driver): the graph's frames, and the
    delta's, cost py4j calls to build and are built only if read."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._frame: Any = None

    def frame(self) -> Any:
        if self._frame is None:
            self._frame = self._build()
        return self._frame

    def __getattr__(self, name: str) -> Any:
        return getattr(self.frame(), name)

    def __getitem__(self, item: Any) -> Any:
        return self.frame()[item]


@dataclass
class AlgorithmGraph:
    """A graph as two DataFrames, in the GraphFrames column convention.

    ``vertices``: columns ``id``, ``label``, then every vertex property of the
    graph (null where a label lacks it).  ``edges``: ``src``, ``dst``,
    ``label``, optional ``ts``, then every edge property.  ``id_type`` is the
    GeaFlow type of vertex ids.
    """

    vertices: Any
    edges: Any
    id_type: Any
    vertex_properties: dict[str, Any] = field(default_factory=dict)  # name -> type
    edge_properties: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    # Edges added since the previous window (incremental algorithms); None in batch.
    new_edges: Any = None
    new_vertices: Any = None
    # The SparkSession, for outputs made on the driver (None: the frames').
    spark: Any = None
    # The same delta already on the driver, when the store holds it there: a
    # pandas frame of kind (0 vertex, 1 edge), a, b (ids), label.
    held_delta: Any = None
    # Per-(algorithm, call site) state kept between windows by incremental
    # algorithms (checkpointed with the job: keep it picklable, e.g. numpy/pandas).
    state: dict[str, Any] = field(default_factory=dict)
    # The window being run (None outside windowed jobs).
    window: int | None = None
    # The graph's shardCount (GeaFlow runs an algorithm with one task per shard,
    # and a few algorithms' results depend on which vertices share a task);
    # None: look it up in the catalog by ``name``.
    shard_count: int | None = None
    # Number of edges when the caller knows it (saves a count to pick the engine).
    edge_count: int | None = None
    # How the call's supersteps run: rounds of its iteration group's cycle
    # (a scheduler of its own when called outside a statement).
    iteration: IterationRunner = field(default_factory=IterationRunner.standalone)


class CallContext(Protocol):
    """What an algorithm call reads of the runtime context: the job
    configuration (engine, bounds, checkpoints) and the catalog (a graph's
    shard count).  ``runtime.context.RuntimeContext`` is one."""

    @property
    def config(self) -> Config: ...

    @property
    def catalog(self) -> Catalog | None: ...


class Algorithm:
    """Base of built-in and user algorithm implementations.

    The planner bound the call against ``signature`` (arguments, output
    columns); the implementation computes the rows."""

    signature: AlgorithmSignature

    @property
    def name(self) -> str:
        return self.signature.name

    def output_types(self, id_type: Any) -> list[Any]:
        """GeaFlow types of the output columns, in order."""
        return self.signature.output_types(id_type)

    def spark_schema(self, id_type: Any) -> Any:
        """The output as a Spark schema with columns c0..cN."""
        from pyspark.sql import types as ST

        return ST.StructType(
            [
                ST.StructField(f"c{i}", T.to_spark_type(t), True)
                for i, t in enumerate(self.output_types(id_type))
            ]
        )

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        """A DataFrame with columns c0..cN (the outputs)."""
        raise NotImplementedError
