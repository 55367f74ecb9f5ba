"""EXPLAIN: every level of a prepared statement, and Spark's own plan."""

from __future__ import annotations

import contextlib
import io
from typing import Any

from geaflow_sql.core.errors import GeaflowError
from planner.explain import render_all
from planner.logical import walk

from .batch import BatchCycle
from .context import RuntimeContext
from .errors import translate
from .evaluator import Evaluator
from .local.runner import plan as plan_local
from .plans import GRAPH_READS, PreparedPlan
from .reads import graph_key
from .scheduler import CycleScheduler


def spark_plan_text(df: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            df.explain(mode="formatted")
        except Exception as err:  # pragma: no cover - explain is best effort
            print(f"(Spark plan unavailable: {err})")
    return buf.getvalue()


def explain_text(ctx: RuntimeContext, prepared: PreparedPlan, spark: Any) -> str:
    """The plan levels of a prepared statement.  With ``spark`` (a batch
    statement that is to be explained in full), the frames are built as a run
    would build them, nothing is run, and Spark's formatted plan follows."""
    spark_text = None
    engine_text = None
    if prepared.execution.windowed:
        spark_text = "(built for each window when the job runs)"
    elif spark is not None:
        try:
            evaluator = Evaluator(ctx, prepared, CycleScheduler(record=False))
            local = plan_local(evaluator.env(), prepared.plans[0])
            if isinstance(local, str):
                engine_text = f"distributed: {local}"
            else:
                engine_text = "local: one DuckDB query over Arrow copies of its inputs\n"
                engine_text += local.translation.sql
            cycle = BatchCycle(evaluator)
            cycle.head(0)
            spark_text = spark_plan_text(cycle.sink_input())
        except GeaflowError as err:
            spark_text = f"(Spark plan unavailable: {err.message})"
        except Exception as err:
            spark_text = f"(Spark plan unavailable: {translate(err).message})"
    (optimized,) = prepared.optimized
    text = render_all(optimized, prepared.pipeline, prepared.execution, spark_text)
    if engine_text is not None:
        text += "\n\n== Engine ==\n" + engine_text
    pinned = _pinned_reads(ctx, prepared.plans[0])
    if pinned:
        text += "\n\n== Versions ==\n" + "\n".join(pinned)
    return text


def _pinned_reads(ctx: RuntimeContext, plan: Any) -> list[str]:
    """A line for each graph the plan reads at a version the session pinned
    (``USE GRAPH g VERSION n``)."""
    pinned = ctx.catalog.graph_versions
    lines: dict[str, str] = {}
    for node in walk(plan):
        if isinstance(node, GRAPH_READS):
            version = pinned.get(graph_key(node.graph))
            if version is not None:
                lines[node.graph.name] = (
                    f"graph {node.graph.name} read at version {version} "
                    f"(USE GRAPH {node.graph.name} VERSION {version})"
                )
    return list(lines.values())
