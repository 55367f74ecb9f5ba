"""The Python API: a Session runs GeaFlow DSL scripts on a SparkSession.

    >>> from geaflow_sql import Session
    >>> s = Session()                        # local Spark
    >>> s.execute("CREATE TABLE t (a int) WITH (type='file', geaflow.dsl.file.path='/tmp/t.txt')")
    >>> rows = s.sql("SELECT a FROM t").collect()

A script is parsed whole first (a syntax error anywhere stops it before it
runs); then each statement is bound once, against the catalog as the
statements before it left it, and handed to the runtime
(``runtime.engine.ScriptRun``), which decides how it runs.  The Session
itself keeps the catalog, the configuration (``SET``), the current graph
(``USE GRAPH``) and answers SHOW and DESCRIBE.  Threads that share a
session's catalog and graphs each take a ``scope()`` of it, with their own
current graph and settings.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

from grammar import syntax as s
from grammar.parser import parse as parse_script
from planner.binder import BindContext, StatementBinder
from planner.statements import BoundStatement, InfoStatement, PlanStatement, SessionChange
from runtime.context import RuntimeContext
from runtime.engine import ScriptRun
from runtime.jobs import JobTags
from runtime.profile import Profile, phase, recording
from runtime.reads import graph_key
from runtime.results import QueryResult, StatementResult
from runtime.spark_adapter import (
    acquire_session,
    choose_master,
    prepare_session,
    release_session,
)
from runtime.stores import GraphStores
from runtime.stores.versions import pin, release_lease, vacuum
from runtime.streaming.progress import WindowControl

from .core.catalog import Catalog, GraphInfo
from .core.config import PROFILE, Config
from .core.errors import ConfigError, GeaflowError, ValidationError
from .info import describe, show


class Session:
    """A GeaFlow DSL session: its own catalog and configuration on a SparkSession.

    ``master``: Spark master URL (``local[*]`` by default, ``spark://...``,
    ``yarn``, ``k8s://...``); ``remote``: a Spark Connect server
    (``sc://host:port``) instead.
    ``conf``: job configuration (``geaflow.*`` keys) and Spark settings
    (``spark.*`` keys, used when this session starts Spark).
    ``spark``: an existing SparkSession to use instead of starting one.
    """

    def __init__(
        self,
        master: str | None = None,
        conf: Mapping[str, Any] | None = None,
        *,
        remote: str | None = None,
        spark: Any = None,
        base_dir: str | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        self.master = choose_master(master, remote)
        self.config = Config(conf or {})
        self._spark = spark
        self._acquired = False
        self._spark_conf = {k: v for k, v in (conf or {}).items() if str(k).startswith("spark.")}
        self.catalog = catalog if catalog is not None else Catalog()
        self.base_dir = base_dir or os.getcwd()
        self.stores = GraphStores()
        self._jobs = JobTags()
        # The windowed job running now: its per-window reports go to
        # ``windows.listener``; ``stop_after_window`` ends it.
        self.windows = WindowControl()
        self._closed = False
        # This session's name on the leases it holds on graph versions it
        # reads, and those leases (by graph key).
        self._lease_holder = uuid.uuid4().hex
        self._leases: dict[str, Any] = {}
        self._parent: Session | None = None
        if spark is not None:
            prepare_session(spark)

    def scope(self) -> Session:
        """A session for another user of this one (a pooled DB-API connection,
        another thread): the same tables, views, graphs and their data, and
        Spark; its own current graph, instance and ``SET`` values, starting
        from this session's.  Definitions made in either show in both."""
        child = Session(self.master, base_dir=self.base_dir, catalog=self.catalog.scope())
        child.config = self.config
        child._spark_conf = self._spark_conf
        child._spark = self._spark
        child.stores = self.stores
        child._parent = self
        return child

    # ------------------------------------------------------------------ spark
    @property
    def spark(self) -> Any:
        if self._spark is None:
            if self._parent is not None:
                self._spark = self._parent.spark
            else:
                self._spark = acquire_session(self.master, self._spark_conf)
                self._acquired = True
        return self._spark

    def close(self) -> None:
        """Forget this session's catalog.  Spark stops only if geaflow-sql
        started it for this session and no other open session uses it."""
        if self._closed:
            return
        self._closed = True
        self._release_leases()
        self.catalog = Catalog()
        if self._acquired:
            release_session(self._spark)

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
        parse_seconds: float = 0.0,
    ) -> Iterator[StatementResult]:
        """Run a script statement by statement, yielding each result as it is done.

        The whole script is parsed before anything runs.  ``explain`` turns each
        INSERT and query into its EXPLAIN (DDL still runs, so later statements
        can be planned).  Statements of a windowed job report when the job ends.
        ``parse_seconds``: how long a script given parsed took to parse (the
        first statement's profile counts it, ``geaflow.dsl.profile``).
        """
        if not isinstance(script, s.Script):
            started = time.perf_counter()
            script = parse_script(script, source)
            parse_seconds = time.perf_counter() - started
        parsed = script
        run = self._start(parsed, check_only)
        for st in parsed.statements:
            if explain and isinstance(st, (s.Insert, s.QueryStatement)):
                st = s.Explain(st, span=st.span)
            yield from self._submit(run, parsed, st, parameters, parse_seconds)
            parse_seconds = 0.0
        yield from run.finish(self.config)

    def execute_many(
        self, script: str, parameter_sets: Iterable[Any], source: str = "<script>"
    ) -> list[StatementResult]:
        """Run ``script`` once per parameter set, all as one job.

        One job (one runtime context) matters for sinks that replace their
        output on a job's first write, as GeaFlow's file tables do: the rows of
        every parameter set are kept, not only the last set's.
        """
        parsed = parse_script(script, source)
        run = self._start(parsed, False)
        results = [
            result
            for parameters in parameter_sets
            for st in parsed.statements
            for result in self._submit(run, parsed, st, parameters)
        ]
        return results + run.finish(self.config)

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

    def columns_of(self, query: str) -> list[tuple[str, Any]]:
        """The columns (name, GeaFlow type) a query returns, planned, not run."""
        parsed = parse_script(query, "<query>")
        if len(parsed.statements) != 1:
            raise ValidationError("columns_of takes one query")
        bound = self._bind(parsed, parsed.statements[0], None)
        if not isinstance(bound, PlanStatement) or bound.kind != "query" or bound.root is None:
            raise ValidationError("columns_of takes a query")
        return [(f.name, f.type) for f in bound.root.schema]

    # --------------------------------------------------------------- cancel
    def cancellable(self) -> AbstractContextManager[None]:
        """Tag every Spark job this thread starts inside the block, for ``cancel()``.

        A statement tags its own jobs, but a query's rows are fetched lazily,
        after the statement has returned; callers that fetch (the shell, the
        DB-API) wrap statement and fetch in this block so both can be cancelled.
        """
        return self._jobs.tagged(self.spark, "scope")

    def stop_after_window(self) -> bool:
        """Stop the windowed job running now once its current window is done
        (from another thread or a signal handler).  Its checkpoint then holds
        that window, and running the script again goes on from the next one.
        False when no windowed job is running."""
        return self.windows.request_stop()

    def cancel(self) -> None:
        """Cancel the Spark jobs of the statement running now (from another thread)."""
        if self._spark is not None:
            self._jobs.cancel(self._spark)

    def progress(self) -> tuple[int, int]:
        """(completed tasks, total tasks) of the Spark stages this session's
        statement runs now (from another thread); (0, 0) when none runs."""
        if self._spark is None:
            return 0, 0
        return self._jobs.progress(self._spark)

    # -------------------------------------------------------------- internals
    def runtime_context(self, start_spark: bool = False) -> RuntimeContext:
        """What the runtime reads of this session now (Spark, if it has not
        started, only when ``start_spark``)."""
        return RuntimeContext(
            spark=self.spark if start_spark else self._spark,
            config=self.config,
            catalog=self.catalog,
            stores=self.stores,
            base_dir=self.base_dir,
        )

    def _start(self, parsed: s.Script, check_only: bool) -> ScriptRun:
        if self._closed:
            raise ConfigError("the session is closed")
        ctx = self.runtime_context()
        return ScriptRun(
            ctx,
            parsed,
            self._jobs,
            spark=lambda: self.spark,
            check_only=check_only,
            windows=self.windows,
        )

    def _bind(self, parsed: s.Script, st: s.Statement, parameters: Any) -> BoundStatement:
        ctx = BindContext(self.catalog, self.config, parsed.text, parsed.source, parameters)
        try:
            return StatementBinder(ctx).bind(st)
        except GeaflowError as err:
            raise err.at(st.span).with_context(text=parsed.text, source=parsed.source) from None

    def _submit(
        self,
        run: ScriptRun,
        parsed: s.Script,
        st: s.Statement,
        parameters: Any,
        parse_seconds: float = 0.0,
    ) -> list[StatementResult]:
        profile = Profile() if self.config.get_bool(PROFILE) else None
        if profile is not None:
            profile.add("parse", parse_seconds)
        try:
            with recording(profile):
                results = self._submit_one(run, parsed, st, parameters)
        except RecursionError:
            # The parser bounds a statement's depth (grammar.depth); this is
            # the net under that bound, so that no input crashes a front end.
            err = ValidationError("this statement nests too deeply to plan; split it")
            raise err.at(st.span).with_context(text=parsed.text, source=parsed.source) from None
        for result in results:
            result.profile = profile
            if result.query is not None:
                result.query.profile = profile
        return results

    def _submit_one(
        self, run: ScriptRun, parsed: s.Script, st: s.Statement, parameters: Any
    ) -> list[StatementResult]:
        start = time.perf_counter()
        with phase("bind"):
            bound = self._bind(parsed, st, parameters)
        if isinstance(bound, (SessionChange, InfoStatement)):
            try:
                result = self._session_statement(bound)
            except GeaflowError as err:
                raise err.at(st.span).with_context(text=parsed.text, source=parsed.source) from None
            result.statement = parsed.statement_text(st)
            result.line = st.span.line
            result.seconds = time.perf_counter() - start
            return [result]
        return run.submit(bound, self.config, start)

    def _session_statement(self, bound: SessionChange | InfoStatement) -> StatementResult:
        if isinstance(bound, InfoStatement):
            return describe(self, bound) if bound.kind == "describe" else show(self, bound)
        if bound.kind == "set":
            assert bound.key is not None
            self.config = self.config.with_values({bound.key: bound.value})
            return StatementResult("set", message=f"{bound.key} = {bound.value}")
        if bound.kind == "use_graph":
            graph: GraphInfo = bound.value
            version = bound.version
            key = graph_key(graph)
            if version is None:
                self.catalog.current_graph = graph.name
                self.catalog.graph_versions.pop(key, None)
                if key in self._leases:
                    release_lease(self._leases.pop(key))
                return StatementResult("use", message=f"using graph {graph.name}")
            ctx = self.runtime_context(start_spark=True)
            self._leases[key] = pin(ctx, graph, version, self._lease_holder)
            self.catalog.current_graph = graph.name
            self.catalog.graph_versions[key] = version
            return StatementResult(
                "use",
                message=f"using graph {graph.name} as of version {version} (reads only: "
                "writes go to its current version)",
            )
        if bound.kind == "vacuum":
            assert bound.version is not None
            message = vacuum(self.runtime_context(start_spark=True), bound.value, bound.version)
            return StatementResult("ddl", message=message)
        self.catalog.instance = str(bound.key)
        return StatementResult("use", message=f"using instance {bound.key}")

    def _release_leases(self) -> None:
        """Let VACUUM remove the versions this session was reading."""
        for lease in self._leases.values():
            release_lease(lease)
        self._leases.clear()
        self.catalog.graph_versions.clear()
