"""The Python API: a Session runs GeaFlow DSL scripts on a SparkSession.

    >>> from geaflow_sql import Session
    >>> s = Session()                        # local Spark
    >>> s.execute("CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='/tmp/t.txt')")
    >>> rows = s.sql("SELECT a FROM t").collect()

A script is parsed whole first (a syntax error anywhere stops it before it
runs), then its statements run in order against the session's catalog.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from grammar import syntax as s
from grammar.parser import parse as parse_script
from planner.binder import BindContext, StatementBinder
from planner.statements import (
    BoundStatement,
    CatalogChange,
    ExplainStatement,
    InfoStatement,
    PlanStatement,
    SessionChange,
)

from .core.catalog import Catalog, GraphInfo, TableInfo
from .core.config import Config
from .core.errors import ConfigError, GeaflowError, ValidationError
from .results import QueryResult, StatementResult


class Session:
    """A GeaFlow DSL session: its own catalog and configuration on a SparkSession.

    ``master``: Spark master URL (``local[*]`` by default, ``spark://...``,
    ``yarn``, ``k8s://...`` or ``sc://host:port`` for Spark Connect).
    ``conf``: job configuration (``geaflow.*`` keys) and Spark settings
    (``spark.*`` keys, used when this session starts Spark).
    ``spark``: an existing SparkSession to use instead of starting one.
    """

    def __init__(
        self,
        master: str | None = None,
        conf: Mapping[str, Any] | None = None,
        *,
        spark: Any = None,
        base_dir: str | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        self.master = master
        self.config = Config(conf or {})
        self._spark = spark
        self._spark_conf = {k: v for k, v in (conf or {}).items() if str(k).startswith("spark.")}
        self.catalog = catalog if catalog is not None else Catalog()
        self.base_dir = base_dir or os.getcwd()
        from runtime.stores import GraphStores

        self.stores = GraphStores()
        self._closed = False
        self._tag_lock = threading.Lock()
        self.current_tag: str | None = None
        self._scope_tags: set[str] = set()
        if spark is not None:
            from runtime.spark_adapter import prepare_session

            prepare_session(spark)

    # ------------------------------------------------------------------ spark
    @property
    def spark(self) -> Any:
        if self._spark is None:
            from runtime.spark_adapter import create_session

            self._spark = create_session(self.master, self._spark_conf)
        return self._spark

    def close(self) -> None:
        """Forget this session's catalog; stop Spark only if this session started it."""
        self._closed = True
        self.catalog = Catalog()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ parse
    @staticmethod
    def parse(text: str, source: str = "<script>") -> s.Script:
        return parse_script(text, source)

    # ---------------------------------------------------------------- execute
    def execute(
        self,
        script: str,
        source: str = "<script>",
        *,
        parameters: Any = None,
        check_only: bool = False,
    ) -> list[StatementResult]:
        """Run every statement of ``script``; one result per statement."""
        return list(self.iter_execute(script, source, parameters=parameters, check_only=check_only))

    def iter_execute(
        self,
        script: str | s.Script,
        source: str = "<script>",
        *,
        parameters: Any = None,
        check_only: bool = False,
        explain: bool = False,
    ) -> Iterator[StatementResult]:
        """Run a script statement by statement, yielding each result as it is done.

        The whole script is parsed before anything runs.  ``explain`` turns each
        INSERT and query into its EXPLAIN (DDL still runs, so later statements
        can be planned).
        """
        if self._closed:
            raise ConfigError("the session is closed")
        parsed = script if isinstance(script, s.Script) else parse_script(script, source)
        runtime_ctx = self._runtime_context()
        # Statements reading windowed sources run together, one round per window,
        # once the script's other statements have run (see runtime.streaming.job).
        windowed: list[tuple[s.Statement, Any, Any]] = []
        for st in parsed.statements:
            if explain and isinstance(st, (s.Insert, s.QueryStatement)):
                st = s.Explain(st, span=st.span)
            if not check_only and isinstance(st, (s.Insert, s.QueryStatement)):
                deferred = self._windowed_statement(
                    st, parsed, runtime_ctx, parameters, bool(windowed)
                )
                if deferred is not None:
                    windowed.append((st, *deferred))
                    continue
            yield self._run_statement(st, parsed, runtime_ctx, parameters, check_only)
        if windowed:
            yield from self._run_windowed(windowed, parsed, runtime_ctx)

    def _windowed_statement(
        self, st: s.Statement, parsed: s.Script, rctx: Any, parameters: Any, job_started: bool
    ) -> tuple[Any, Any] | None:
        """(bound, prepared) when ``st`` belongs to the script's windowed job, else None."""
        from runtime.executor import prepare
        from runtime.streaming.job import is_windowed_plan

        try:
            bound = StatementBinder(self._bind_context(parsed, parameters)).bind(st)
        except GeaflowError as err:
            err.at(st.span)
            err.with_context(text=parsed.text, source=parsed.source)
            raise
        if not isinstance(bound, PlanStatement) or bound.root is None:
            return None
        rctx.config = self.config
        if not (job_started or is_windowed_plan(rctx, bound.root)):
            return None
        return bound, prepare(bound.root, self.config, windowed=True, udfs=bound.udfs)

    def _run_windowed(
        self, items: list[tuple[s.Statement, Any, Any]], parsed: s.Script, rctx: Any
    ) -> Iterator[StatementResult]:
        from runtime.errors import translate
        from runtime.spark_adapter import tag_jobs, untag_jobs
        from runtime.streaming.job import WindowedJob
        from runtime.udfs import ensure_registered

        start = time.perf_counter()
        rctx.spark = self.spark
        rctx.config = self.config
        for _, _, prepared in items:
            ensure_registered(rctx.spark, prepared.udfs)
        job = WindowedJob(rctx, [(b, p) for _, b, p in items], parsed.text)
        tag = f"geaflow-sql-{uuid.uuid4().hex[:12]}"
        with self._tag_lock:
            self.current_tag = tag
        tag_jobs(rctx.spark, tag)
        try:
            statements = job.run()
        except GeaflowError as err:
            err.with_context(text=parsed.text, source=parsed.source)
            raise
        except Exception as err:  # Spark / Java / user code
            raise translate(err).with_context(text=parsed.text, source=parsed.source) from None
        finally:
            untag_jobs(rctx.spark, tag)
            with self._tag_lock:
                self.current_tag = None
        elapsed = time.perf_counter() - start
        for (st, bound, prepared), done in zip(items, statements, strict=True):
            if bound.kind == "query":
                schema = prepared.plan.schema
                frames = done.collected
                df = frames[0]
                for f in frames[1:]:
                    df = df.unionByName(f)
                result = StatementResult(
                    "query",
                    query=QueryResult(
                        df, [f.name for f in schema], [f.type for f in schema], translate
                    ),
                )
            else:
                result = StatementResult(
                    "insert",
                    rows_written=done.written,
                    message=f"inserted {done.written} rows into {bound.target} over windows",
                )
            result.statement = parsed.statement_text(st)
            result.seconds = elapsed
            result.line = st.span.line
            yield result

    def execute_many(
        self, script: str, parameter_sets: Iterable[Any], source: str = "<script>"
    ) -> list[StatementResult]:
        """Run ``script`` once per parameter set, all as one job.

        One job (one runtime context) matters for sinks that replace their
        output on a job's first write, as GeaFlow's file tables do: the rows of
        every parameter set are kept, not only the last set's.
        """
        if self._closed:
            raise ConfigError("the session is closed")
        parsed = parse_script(script, source)
        runtime_ctx = self._runtime_context()
        return [
            self._run_statement(st, parsed, runtime_ctx, parameters, False)
            for parameters in parameter_sets
            for st in parsed.statements
        ]

    def sql(self, statement: str, *, parameters: Any = None) -> QueryResult | StatementResult:
        """Run one statement (or a script); return the last query's rows if it has any."""
        results = self.execute(statement, "<sql>", parameters=parameters)
        if not results:
            raise ValidationError("no statement to run")
        last = results[-1]
        return last.query if last.query is not None else last

    def explain(self, statement: str) -> str:
        """EXPLAIN text (logical plans before/after rules, PipelineGraph, cycles, Spark plan)."""
        text = statement.strip().rstrip(";")
        results = self.execute(f"EXPLAIN {text}", "<explain>")
        return results[-1].text or ""

    def check(self, script: str, source: str = "<script>") -> list[StatementResult]:
        """Parse and plan every statement without running Spark jobs."""
        return self.execute(script, source, check_only=True)

    # -------------------------------------------------------------- internals
    def _runtime_context(self) -> Any:
        from runtime.context import RuntimeContext

        return RuntimeContext(
            spark=None,
            config=self.config,
            catalog=self.catalog,
            stores=self.stores,
            base_dir=self.base_dir,
        )

    def _bind_context(self, parsed: s.Script, parameters: Any) -> BindContext:
        return BindContext(
            self.catalog,
            self.config,
            parsed.text,
            parsed.source,
            parameters,
        )

    def _run_statement(
        self,
        st: s.Statement,
        parsed: s.Script,
        rctx: Any,
        parameters: Any,
        check_only: bool,
    ) -> StatementResult:
        start = time.perf_counter()
        text = parsed.statement_text(st)
        # An earlier statement may have written a table a graph reads USING it.
        rctx.table_frames.clear()
        try:
            bound = StatementBinder(self._bind_context(parsed, parameters)).bind(st)
            result = self._apply(bound, rctx, check_only)
        except GeaflowError as err:
            err.at(st.span)
            err.with_context(text=parsed.text, source=parsed.source)
            raise
        result.statement = text
        result.seconds = time.perf_counter() - start
        result.line = st.span.line
        return result

    def _apply(self, bound: BoundStatement, rctx: Any, check_only: bool) -> StatementResult:
        if isinstance(bound, CatalogChange):
            return self._catalog_change(bound, rctx)
        if isinstance(bound, SessionChange):
            return self._session_change(bound)
        if isinstance(bound, InfoStatement):
            from .info import describe, show

            if bound.kind == "show":
                return show(self, bound)
            if bound.kind == "set":
                return show(self, bound)
            return describe(self, bound)
        if isinstance(bound, ExplainStatement):
            return self._explain(bound, rctx)
        if isinstance(bound, PlanStatement):
            return self._run_plan(bound, rctx, check_only)
        raise ValidationError(f"cannot run {type(bound).__name__}")  # pragma: no cover

    def _catalog_change(self, change: CatalogChange, rctx: Any) -> StatementResult:
        catalog = self.catalog
        kind = change.kind
        if change.action == "drop":
            dropped = catalog.drop(kind.upper(), change.name)
            if not dropped and not change.if_not_exists:
                from .core.errors import CatalogError

                raise CatalogError(f"unknown {kind} {'.'.join(change.name)!r}")
            if kind == "graph":
                self.stores.drop(change.name[-1])
            return StatementResult("ddl", message=f"dropped {kind} {'.'.join(change.name)}")
        record = change.record
        if kind == "table":
            self._validate_table(record, rctx)
            created = catalog.add_table(record, if_not_exists=change.if_not_exists)
        elif kind == "view":
            created = catalog.add_view(
                record, if_not_exists=change.if_not_exists, replace=change.replace
            )
        elif kind == "graph":
            created = catalog.add_graph(record, if_not_exists=change.if_not_exists)
            if created:
                rctx.spark = self.spark if rctx.spark is None else rctx.spark
                self.stores.create(rctx, record)
        else:
            created = catalog.add_function(record, if_not_exists=change.if_not_exists)
        verb = "created" if created else "exists"
        return StatementResult("ddl", message=f"{kind} {record.name} {verb}")

    def _validate_table(self, table: TableInfo, rctx: Any) -> None:
        from runtime.connectors.base import connector_for, merged_options

        connector = connector_for(table)
        connector.validate(table, merged_options(rctx, table))

    def _session_change(self, change: SessionChange) -> StatementResult:
        if change.kind == "set":
            assert change.key is not None
            self.config = self.config.with_values({change.key: change.value})
            return StatementResult("set", message=f"{change.key} = {change.value}")
        if change.kind == "use_graph":
            graph: GraphInfo = change.value
            self.catalog.current_graph = graph.name
            return StatementResult("use", message=f"using graph {graph.name}")
        self.catalog.instance = str(change.key)
        return StatementResult("use", message=f"using instance {change.key}")

    def _prepare(self, bound: PlanStatement, rctx: Any) -> Any:
        from runtime.executor import prepare

        assert bound.root is not None
        return prepare(bound.root, self.config, udfs=bound.udfs)

    def _explain(self, bound: ExplainStatement, rctx: Any) -> StatementResult:
        from runtime.executor import explain_prepared

        inner = bound.inner
        if not isinstance(inner, PlanStatement):
            return StatementResult(
                "explain", text=f"{type(inner).__name__}: runs in the catalog, no plan"
            )
        prepared = self._prepare(inner, rctx)
        rctx.spark = self.spark
        rctx.config = self.config
        return StatementResult("explain", text=explain_prepared(rctx, prepared))

    def _run_plan(self, bound: PlanStatement, rctx: Any, check_only: bool) -> StatementResult:
        from runtime.errors import translate
        from runtime.executor import run_prepared
        from runtime.spark_adapter import tag_jobs, untag_jobs

        prepared = self._prepare(bound, rctx)
        if check_only:
            return StatementResult(bound.kind, message="planned (not run)")
        rctx.spark = self.spark
        rctx.config = self.config
        tag = f"geaflow-sql-{uuid.uuid4().hex[:12]}"
        with self._tag_lock:
            self.current_tag = tag
        tag_jobs(rctx.spark, tag)
        try:
            result = run_prepared(rctx, prepared)
        finally:
            untag_jobs(rctx.spark, tag)
            with self._tag_lock:
                self.current_tag = None
        if bound.kind == "query":
            schema = prepared.plan.schema
            query = QueryResult(
                result, [f.name for f in schema], [f.type for f in schema], translate
            )
            # Rows are fetched later, so bad-row counts are read then.
            query.bad_row_observations = list(rctx.bad_row_observations)
            rctx.bad_row_observations.clear()
            return StatementResult("query", query=query)
        rows = result if isinstance(result, int) and result >= 0 else None
        message = (
            f"inserted {rows} rows into {bound.target}"
            if rows is not None
            else f"inserted into {bound.target}"
        )
        # Text rows skipped as bad (geaflow.dsl.file.bad.rows = 'skip') are reported.
        skipped = rctx.bad_rows_skipped()
        if any(skipped.values()):
            message += "; skipped bad rows: " + ", ".join(
                f"{n} in {table}" for table, n in skipped.items() if n
            )
        return StatementResult(
            "insert",
            rows_written=rows,
            message=message,
            extra={"bad_rows_skipped": skipped},
        )

    @contextlib.contextmanager
    def cancellable(self) -> Iterator[None]:
        """Tag every Spark job this thread starts inside the block, for ``cancel()``.

        A statement tags its own jobs, but a query's rows are fetched lazily,
        after the statement has returned; callers that fetch (the shell, the
        DB-API) wrap statement and fetch in this block so both can be cancelled.
        """
        from runtime.spark_adapter import tag_jobs, untag_jobs

        spark = self.spark
        tag = f"geaflow-sql-scope-{uuid.uuid4().hex[:12]}"
        with self._tag_lock:
            self._scope_tags.add(tag)
        tag_jobs(spark, tag)
        try:
            yield
        finally:
            untag_jobs(spark, tag)
            with self._tag_lock:
                self._scope_tags.discard(tag)

    def cancel(self) -> None:
        """Cancel the Spark jobs of the statement running now (from another thread)."""
        from runtime.spark_adapter import cancel_jobs

        with self._tag_lock:
            tags = [self.current_tag, *self._scope_tags]
        for tag in tags:
            if tag is not None and self._spark is not None:
                cancel_jobs(self._spark, tag)
