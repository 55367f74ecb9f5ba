"""The runtime's one entry: a script's bound statements, run in order.

The Session (and through it the CLI, shell, DB-API, SQLAlchemy dialect and
notebooks) parses a script, binds each statement once and hands it to
``ScriptRun.submit``, which decides how it runs:

* catalog changes update the catalog and the graph stores (a table's
  connector checks its options; a graph gets its store);
* a query or INSERT that reads no table in windows is a batch statement:
  prepared (rules, PipelineGraph, ExecutionGraph) and run as its root
  group's cycle, one round;
* the first statement that reads a table in windows starts the script's
  windowed job, and every query and INSERT after it joins the job; the job
  is prepared once and runs when the script ends (``finish``), a round per
  window, each statement once per window, in script order;
* EXPLAIN prepares the statement the same way and prints every level.

Errors come out as ``GeaflowError`` with the statement's location; Spark's
and user code's are translated here, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from geaflow_sql.core.catalog import GraphInfo, TableInfo
from geaflow_sql.core.config import TRACE_CYCLES, Config, table_options
from geaflow_sql.core.errors import CatalogError, GeaflowError
from grammar import syntax as s
from planner.explain_dot import explain_dot
from planner.statements import BoundStatement, CatalogChange, ExplainStatement, PlanStatement

from .batch import BatchCycle
from .connectors.registry import connector_for
from .context import RuntimeContext
from .errors import translate
from .evaluator import Evaluator
from .explain import explain_text
from .jobs import JobTags
from .local.runner import LocalCycle, engine_setting
from .local.runner import plan as plan_local
from .plans import PreparedPlan, prepare, reads_windows
from .profile import phase
from .results import QueryResult, StatementResult
from .scheduler import CycleScheduler
from .spark_adapter import ship_user_code, statement_time_zone, use_time_zone
from .streaming.job import WindowedJob
from .streaming.progress import WindowControl
from .udfs import ensure_registered, user_modules


class ScriptRun:
    """One script's statements on one runtime context (see the module doc)."""

    def __init__(
        self,
        ctx: RuntimeContext,
        script: s.Script,
        jobs: JobTags,
        *,
        spark: Callable[[], Any],
        check_only: bool = False,
        windows: WindowControl | None = None,
    ) -> None:
        self.ctx = ctx
        self.script = script
        self.jobs = jobs
        self.windows = windows if windows is not None else WindowControl()
        # Spark starts on first use (DDL of tables needs none).
        self._spark = spark
        self.check_only = check_only
        self.windowed: list[PlanStatement] = []

    # ------------------------------------------------------------- statements
    def submit(
        self, bound: BoundStatement, config: Config, started: float | None = None
    ) -> list[StatementResult]:
        """Run a statement now; [] when it joins the windowed job (``finish``).

        ``config`` is the job configuration as of this statement (SET changes
        it); ``started`` is when the statement's work began (its binding)."""
        self.ctx.config = config
        start = time.perf_counter() if started is None else started
        try:
            self.jobs.check()  # a cancel that came between two statements
            if isinstance(bound, PlanStatement) and not self.check_only:
                assert bound.root is not None
                if self.windowed or reads_windows(self.ctx.catalog, config, bound.root):
                    self.windowed.append(bound)
                    return []
            result = self._run(bound)
        except GeaflowError as err:
            raise err.at(bound.syntax.span).with_context(
                text=self.script.text, source=self.script.source
            ) from None
        except Exception as err:  # Spark, Java, user code
            raise (
                translate(err)
                .at(bound.syntax.span)
                .with_context(text=self.script.text, source=self.script.source)
            ) from None
        return [self._described(result, bound, time.perf_counter() - start)]

    def finish(self, config: Config) -> list[StatementResult]:
        """Run the script's windowed job, if it has one; its statements' results."""
        if not self.windowed:
            return []
        self.ctx.config = config
        start = time.perf_counter()
        try:
            prepared = prepare(self.windowed, config, windowed=True)
            job = WindowedJob(self.ctx, prepared, self.script.text, self._scheduler(), self.windows)
            with self.jobs.tagged(self._ready_spark(prepared)):
                self.windows.started()
                try:
                    done = job.run()
                finally:
                    self.windows.ended()
        except GeaflowError as err:
            # A statement's failure names that statement (WindowedJob.run_round);
            # the job's own (its sources, its checkpoint), the job's first one.
            raise err.at(self.windowed[0].syntax.span).with_context(
                text=self.script.text, source=self.script.source
            ) from None
        except Exception as err:  # Spark, Java, user code
            raise (
                translate(err)
                .at(self.windowed[0].syntax.span)
                .with_context(text=self.script.text, source=self.script.source)
            ) from None
        elapsed = time.perf_counter() - start
        results = []
        for st, outcome in zip(self.windowed, done, strict=True):
            if st.kind == "query":
                frame = outcome.collected[0]
                for f in outcome.collected[1:]:
                    frame = frame.unionByName(f)
                result = self._query(frame, st.root)
            else:
                result = StatementResult(
                    "insert",
                    rows_written=outcome.written,
                    message=f"inserted {outcome.written} rows into {st.target} over windows",
                )
            if job.trace is not None:
                result.extra["cycles"] = job.trace
            results.append(self._described(result, st, elapsed))
        if results:
            results[0].warnings = self._take_notices()
        return results

    # --------------------------------------------------------------- internals
    def _described(
        self, result: StatementResult, bound: BoundStatement, seconds: float
    ) -> StatementResult:
        result.statement = self.script.statement_text(bound.syntax)
        result.line = bound.syntax.span.line
        if result.query is not None:
            # Rows are fetched after the statement ran: a failure then (a bad
            # row Spark meets as it reads) names the statement too.
            span, script = bound.syntax.span, self.script
            result.query.on_error = lambda err: (
                translate(err).at(span).with_context(text=script.text, source=script.source)
            )
        result.seconds = seconds
        return result

    def _run(self, bound: BoundStatement) -> StatementResult:
        if isinstance(bound, CatalogChange):
            return self._catalog_change(bound)
        if isinstance(bound, ExplainStatement):
            return self._explain(bound)
        if isinstance(bound, PlanStatement):
            return self._batch(bound)
        raise TypeError(f"{type(bound).__name__} is not the runtime's to run")

    def _scheduler(self) -> CycleScheduler:
        return CycleScheduler(record=self.ctx.config.get_bool(TRACE_CYCLES), check=self.jobs.check)

    def _ready_spark(self, prepared: PreparedPlan) -> Any:
        """Spark, with the user functions the statements call registered,
        and the modules of the catalog's Python functions on the executors."""
        spark = self._spark()
        self.ctx.spark = spark
        ship_user_code(spark, user_modules(self.ctx.catalog))
        ensure_registered(spark, prepared.udfs)
        use_time_zone(spark, self.ctx.config.time_zone())
        return spark

    def _batch(self, bound: PlanStatement) -> StatementResult:
        prepared = prepare([bound], self.ctx.config, windowed=False)
        if self.check_only:
            return StatementResult(bound.kind, message="planned (not run)")
        why_distributed = ""
        if bound.kind in ("query", "insert"):
            local, why_distributed = self._local(prepared, bound)
            if local is not None:
                return local
        scheduler = self._scheduler()
        with self.jobs.tagged(self._ready_spark(prepared)), phase("build"):
            written = scheduler.run(BatchCycle(Evaluator(self.ctx, prepared, scheduler)))
        if bound.kind == "query":
            result = self._query(written, bound.root)
        else:
            result = self._insert(bound, written)
        if scheduler.record:
            result.extra["cycles"] = list(scheduler.trace.events)
        if why_distributed:
            result.extra["engine"] = f"distributed: {why_distributed}"
        return result

    def _local(
        self, prepared: PreparedPlan, bound: PlanStatement
    ) -> tuple[StatementResult | None, str]:
        """The statement's result from the local engine (a query, or an INSERT
        into a table the driver writes), or None and why it runs distributed."""
        if engine_setting(self.ctx.config) == "distributed":
            return None, "geaflow.dsl.query.engine = distributed"
        spark = self._ready_spark(prepared)
        scheduler = self._scheduler()
        env = Evaluator(self.ctx, prepared, scheduler).env()
        # Scans built while planning locally may register bad-row counters
        # (Observations) that no Spark action will fill: a statement that
        # goes to Spark forgets them, or reading its counts would wait for them.
        observed = len(self.ctx.bad_row_observations)
        with phase("local"):
            local = plan_local(env, prepared.plans[0])
            if isinstance(local, str):
                del self.ctx.bad_row_observations[observed:]
                return None, local
            with self.jobs.tagged(spark):
                cycle = LocalCycle(prepared.execution.root.id, local, self.jobs.local)
                outcome = scheduler.run(cycle)
        del self.ctx.bad_row_observations[observed:]
        if outcome.table is None:
            return None, outcome.reason
        if local.writer is not None:
            result = self._insert(bound, outcome.written)
            result.extra["engine"] = "local"
            if scheduler.record:
                result.extra["cycles"] = list(scheduler.trace.events)
            return result, ""
        schema = prepared.plans[0].schema
        query = QueryResult(
            None,
            [f.name for f in schema],
            [f.type for f in schema],
            time_zone=statement_time_zone(spark, self.ctx.config.time_zone()),
            arrow=outcome.table,
            spark=spark,
        )
        result = StatementResult("query", query=query, extra={"engine": "local"})
        if scheduler.record:
            result.extra["cycles"] = list(scheduler.trace.events)
        return result, ""

    def _query(self, frame: Any, root: Any) -> StatementResult:
        schema = root.schema
        query = QueryResult(
            frame,
            [f.name for f in schema],
            [f.type for f in schema],
            time_zone=statement_time_zone(self.ctx.spark, self.ctx.config.time_zone()),
        )
        # Rows are fetched later, so bad-row counts are read then.
        query.bad_row_observations = list(self.ctx.bad_row_observations)
        self.ctx.bad_row_observations.clear()
        return StatementResult("query", query=query)

    def _insert(self, bound: PlanStatement, written: Any) -> StatementResult:
        rows = written if isinstance(written, int) and written >= 0 else None
        message = (
            f"inserted {rows} rows into {bound.target}"
            if rows is not None
            else f"inserted into {bound.target}"
        )
        # Text rows skipped as bad (geaflow.dsl.file.bad.rows = 'skip') are reported.
        skipped = self.ctx.bad_rows_skipped()
        if any(skipped.values()):
            message += "; skipped bad rows: " + ", ".join(
                f"{n} in {table}" for table, n in skipped.items() if n
            )
        result = StatementResult(
            "insert", rows_written=rows, message=message, extra={"bad_rows_skipped": skipped}
        )
        result.warnings = self._take_notices()
        return result

    def _take_notices(self) -> list[str]:
        notices = list(self.ctx.notices)
        self.ctx.notices.clear()
        return notices

    def _explain(self, bound: ExplainStatement) -> StatementResult:
        inner = bound.inner
        if not isinstance(inner, PlanStatement):
            return StatementResult(
                "explain", text=f"{type(inner).__name__}: runs in the catalog, no plan"
            )
        assert inner.root is not None
        catalog, config = self.ctx.catalog, self.ctx.config
        windowed = bool(self.windowed) or reads_windows(catalog, config, inner.root)
        prepared = prepare([inner], self.ctx.config, windowed=windowed)
        spark = None if self.check_only or windowed else self._ready_spark(prepared)
        (optimized,) = prepared.optimized
        picture = explain_dot(optimized, prepared.pipeline, prepared.execution)
        return StatementResult(
            "explain", text=explain_text(self.ctx, prepared, spark), extra={"dot": picture}
        )

    def _catalog_change(self, change: CatalogChange) -> StatementResult:
        catalog = self.ctx.catalog
        kind = change.kind
        if change.action == "drop":
            dropped = catalog.drop(kind.upper(), change.name)
            if not dropped and not change.if_not_exists:
                raise CatalogError(f"unknown {kind} {'.'.join(change.name)!r}")
            if kind == "graph":
                self.ctx.stores.drop(change.name[-1])
            return StatementResult("ddl", message=f"dropped {kind} {'.'.join(change.name)}")
        record = change.record
        if kind == "table":
            table: TableInfo = record
            connector_for(table).validate(table, table_options(self.ctx.config, table))
            created = catalog.add_table(table, if_not_exists=change.if_not_exists)
        elif kind == "view":
            created = catalog.add_view(
                record, if_not_exists=change.if_not_exists, replace=change.replace
            )
        elif kind == "graph":
            graph: GraphInfo = record
            created = catalog.add_graph(graph, if_not_exists=change.if_not_exists)
            if created:
                self.ctx.spark = self._spark()
                self.ctx.stores.create(self.ctx, graph)
        else:
            created = catalog.add_function(record, if_not_exists=change.if_not_exists)
        verb = "created" if created else "exists"
        return StatementResult("ddl", message=f"{kind} {record.name} {verb}")
