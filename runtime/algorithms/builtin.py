"""The base of the built-in algorithms: parameters, outputs, engine choice.

A built-in is written three times over the same facts: ``local`` (numpy and
scipy over a ``LocalGraph``, the whole iteration inside one task),
``distributed`` (supersteps on DataFrames, see ``iteration``) and, where
GraphFrames has an equivalent, ``graphframes``.  ``run`` picks one:

* backend: ``geaflow.dsl.algorithm.backend`` = graphframes | builtin | auto
  (auto takes GraphFrames when its JVM package is loaded and the algorithm has
  an equivalent);
* engine: ``geaflow.dsl.algorithm.engine`` = local | distributed | auto (auto
  iterates locally when the graph has at most
  ``geaflow.dsl.iteration.local.max.edges`` edges).

All paths return the same rows; the tests hold them to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geaflow_sql.core.errors import ConfigError

from .base import Algorithm, AlgorithmGraph, CallContext
from .dist_graph import DistGraph, Needs
from .java_compat import cast_to_id
from .local_graph import LocalGraph
from .options import RunOptions, options_of

# The Maven coordinate to suggest when GraphFrames is asked for but not loaded
# (Spark 4, Scala 2.13; Spark 3 builds are named graphframes-spark3_2.12/2.13).
GRAPHFRAMES_PACKAGE = "io.graphframes:graphframes-spark4_2.13:0.12.1"


class BuiltinAlgorithm(Algorithm):
    has_graphframes = False
    # Whether ``run``, outside a windowed job, is this class's own ``run`` below
    # (an incremental algorithm that overrides it only for windows says so):
    # the local query engine then calls the ``local`` kernel itself.
    batch_run_is_kernel = True
    # Whether the result depends on which vertices share a GeaFlow task (see triangles).
    uses_shards = False

    def bind(self, args: list[Any], id_type: Any) -> dict[str, Any]:
        """The arguments by name (``signature.bind``), ids cast to the graph's id type."""
        p = self.signature.bind(list(args))
        for param in self.signature.params[: len(args)]:
            if param.kind == "id" and id_type is not None and self.signature.arguments is None:
                where = f"{self.name}() argument {param.name}"
                p[param.name] = cast_to_id(p[param.name], id_type, where)
        return p

    # The three implementations --------------------------------------------
    def prepare(self, p: dict[str, Any], graph: AlgorithmGraph) -> dict[str, Any]:
        """Complete the bound arguments with facts of the graph (a weight column, ...)."""
        return p

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs()

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        """Output columns (in order) computed in numpy."""
        raise NotImplementedError

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        """A DataFrame with the output columns c0..cN, computed in supersteps."""
        raise NotImplementedError

    def graphframes(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        raise NotImplementedError

    # Running -----------------------------------------------------------------
    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        from . import engines

        if self.uses_shards and graph.shard_count is None:
            graph.shard_count = shard_count_of(ctx, graph)
        p = self.prepare(self.bind(list(args), graph.id_type), graph)
        opts = options_of(ctx, graph)
        if self._use_graphframes(graph, opts):
            out = self.graphframes(DistGraph.of(graph, self.needs(p)), p, opts)
        elif engines.use_local(graph, opts):
            out = engines.run_local(self, graph, p, opts)
        else:
            out = self.distributed(DistGraph.of(graph, self.needs(p)), p, opts)
        schema = self.spark_schema(graph.id_type)
        return out.select(
            *[out[i].cast(f.dataType).alias(f.name) for i, f in enumerate(schema.fields)]
        )

    def _use_graphframes(self, graph: AlgorithmGraph, opts: RunOptions) -> bool:
        if opts.backend == "builtin":
            return False
        from runtime.spark_adapter import graphframes_available

        available = graphframes_available(graph.vertices.sparkSession)
        if opts.backend == "graphframes" and not available:
            raise ConfigError(
                "geaflow.dsl.algorithm.backend=graphframes needs GraphFrames' JVM package on "
                f"Spark's classpath: start Spark with --packages {GRAPHFRAMES_PACKAGE} (or "
                "spark.jars.packages), or set the backend to builtin or auto"
            )
        return available and self.has_graphframes


def shard_count_of(ctx: CallContext, graph: AlgorithmGraph) -> int:
    """The graph's shardCount from the catalog (1 when unknown)."""
    info = ctx.catalog.graph((graph.name,)) if ctx.catalog is not None and graph.name else None
    return int(info.shard_count or 1) if info is not None else 1
