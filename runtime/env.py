"""What an operator is given besides its node and its inputs.

``Env`` pairs the job's runtime context (Spark, configuration, catalog,
graph stores, metrics) with what this evaluation reads (``Reads``) and with
the way its iterations run: as child cycles of the statement's cycle, under
the ExecutionGroup ids the planner gave them.  It is immutable; an
evaluation that reads something else (a graph's previous version, a delta)
makes a new one with ``with_reads``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from geaflow_sql.core.catalog import GraphInfo, TableInfo

from .context import RuntimeContext
from .reads import Reads
from .scheduler import IterationRunner


@dataclass(frozen=True)
class Env:
    ctx: RuntimeContext
    reads: Reads = Reads()
    # Iterator node (by id) -> how its iteration runs (its group's cycle).
    iterations: Mapping[int, IterationRunner] = field(default_factory=dict)
    # Tables a graph is defined USING, read once per evaluation (outside
    # windowed jobs, whose tables change from window to window).
    table_cache: dict[TableInfo, Any] = field(default_factory=dict, compare=False)

    @property
    def spark(self) -> Any:
        return self.ctx.spark

    @property
    def windowed(self) -> bool:
        return self.reads.window is not None

    def with_reads(self, reads: Reads) -> Env:
        return replace(self, reads=reads)

    def graph_frame(self, graph: GraphInfo, label: str, is_vertex: bool) -> Any:
        """A label's rows (its declared columns) as this evaluation reads them."""
        served = self.reads.served(graph, label, is_vertex)
        if served is not None:
            return served
        return self.ctx.stores.store(self.ctx, graph).frame(self, label, is_vertex)

    def iteration(self, node: Any) -> IterationRunner:
        """How ``node`` (an ITERATOR of the plan) runs its rounds."""
        runner = self.iterations.get(id(node))
        if runner is None:  # pragma: no cover - every ITERATOR has its group
            raise KeyError(f"{node.kind} is not an iterator of the plan being run")
        return runner

    def iterate(
        self,
        node: Any,
        step: Callable[[int], tuple[bool, Any]],
        max_rounds: int | None,
        on_finish: Callable[[], Any] | None = None,
    ) -> Any:
        return self.iteration(node).run(step, max_rounds, on_finish)
