"""Running a planned statement: optimize, build the PipelineGraph and the
ExecutionGraph, turn the groups into cycles and let the scheduler run them.

A batch statement is one cycle with one round: its head builds every
operator's DataFrame (lazily, children first) and its tail runs the sinks'
Spark actions.  Windowed statements run a round per window (see
``runtime.streaming``); iterations inside operators run child cycles.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import Any

from geaflow_sql.core.errors import GeaflowError, UnsupportedError
from planner.explain import render_all
from planner.logical import SINK_TYPES, LogicalNode
from planner.optimizer import OptimizeResult, optimize
from planner.physical import ExecutionGraph, build_execution_graph
from planner.pipeline import SINK, PipelineGraph, build_pipeline

from .errors import translate
from .operators.registry import operator_for
from .scheduler import CycleScheduler, ExecutionCycle, RoundOutcome


@dataclass
class PreparedPlan:
    optimized: OptimizeResult
    pipeline: PipelineGraph
    execution: ExecutionGraph
    udfs: tuple[Any, ...] = ()

    @property
    def plan(self) -> LogicalNode:
        return self.optimized.after


def prepare(
    root: LogicalNode, config: Any, windowed: bool = False, udfs: tuple[Any, ...] = ()
) -> PreparedPlan:
    optimized = optimize(root, config)
    pipeline = build_pipeline(optimized.after, config)
    execution = build_execution_graph(pipeline, windowed)
    return PreparedPlan(optimized, pipeline, execution, udfs)


class BatchCycle(ExecutionCycle):
    """The top-level group of a batch statement: one round."""

    mode = "once"

    def __init__(self, ctx: Any, prepared: PreparedPlan) -> None:
        super().__init__(prepared.execution.root.id, max_rounds=1)
        self.ctx = ctx
        self.prepared = prepared
        self.frames: dict[int, Any] = {}
        self.results: dict[int, Any] = {}

    def head(self, round_no: int) -> None:
        # Build each operator's DataFrame, children first (ids are topological).
        pipeline = self.prepared.pipeline
        for v in pipeline.vertices:
            if v.kind == SINK:
                continue
            inputs = [self.frames[e.src] for e in pipeline.inputs_of(v.id)]
            self.frames[v.id] = build_operator(self.ctx, v.node, inputs)

    def tail(self, round_no: int) -> RoundOutcome:
        pipeline = self.prepared.pipeline
        for v in pipeline.vertices:
            if v.kind != SINK:
                continue
            inputs = [self.frames[e.src] for e in pipeline.inputs_of(v.id)]
            self.results[v.id] = build_operator(self.ctx, v.node, inputs)
        return RoundOutcome(False, self.results)

    def finish(self) -> Any:
        return self.results


def build_operator(ctx: Any, node: LogicalNode, inputs: list[Any]) -> Any:
    fn = operator_for(node)
    if fn is None:
        raise UnsupportedError(f"no runtime operator for {node.kind}")
    return fn(ctx, node, inputs)


def run_prepared(ctx: Any, prepared: PreparedPlan) -> Any:
    """Run a prepared plan; returns the result of its (single) sink."""
    from .udfs import ensure_registered

    ensure_registered(ctx.spark, prepared.udfs)
    scheduler = CycleScheduler()
    cycle: ExecutionCycle = BatchCycle(ctx, prepared)
    try:
        results = scheduler.run(cycle)
    except GeaflowError:
        raise
    except Exception as err:  # Spark / Java / user code
        raise translate(err) from None
    sinks = [v for v in prepared.pipeline.vertices if isinstance(v.node, SINK_TYPES)]
    if not sinks:
        return None
    return results.get(sinks[-1].id)


def spark_plan_text(df: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            df.explain(mode="formatted")
        except Exception as err:  # pragma: no cover - explain is best effort
            print(f"(Spark plan unavailable: {err})")
    return buf.getvalue()


def explain_prepared(ctx: Any, prepared: PreparedPlan, with_spark: bool = True) -> str:
    spark_text = None
    if with_spark:
        try:
            cycle = BatchCycle(ctx, prepared)
            cycle.head(0)
            sink_inputs = [
                e.src
                for v in prepared.pipeline.vertices
                if v.kind == SINK
                for e in prepared.pipeline.inputs_of(v.id)
            ]
            if sink_inputs:
                spark_text = spark_plan_text(cycle.frames[sink_inputs[-1]])
        except GeaflowError as err:
            spark_text = f"(Spark plan unavailable: {err.message})"
        except Exception as err:
            spark_text = f"(Spark plan unavailable: {translate(err).message})"
    return render_all(prepared.optimized, prepared.pipeline, prepared.execution, spark_text)
