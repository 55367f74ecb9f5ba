"""Configuration: GeaFlow's keys (``geaflow.dsl.*``) and this engine's own.

Job configuration comes from ``Session(conf=...)``, ``--conf`` on the command
line and ``SET key = value`` statements; a table's ``WITH (...)`` options
override it for that table.  Values are kept as given (strings, numbers,
booleans) and read through typed getters that report bad values clearly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .catalog import TableInfo
from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    default: Any
    doc: str


# GeaFlow's own keys --------------------------------------------------------
WINDOW_SIZE = Key("geaflow.dsl.window.size", -1, "rows per source window; -1 reads all at once")
TIME_WINDOW_SIZE = Key("geaflow.dsl.time.window.size", -1, "seconds per time window")
TABLE_PARALLELISM = Key("geaflow.dsl.table.parallelism", 1, "parallelism of a table source")
COLUMN_SEPARATOR = Key("geaflow.dsl.column.separator", ",", "field separator of text files")
LINE_SEPARATOR = Key("geaflow.dsl.line.separator", "\n", "line separator of text files")
FILE_PATH = Key("geaflow.dsl.file.path", None, "path of a file table")
FILE_NAME_REGEX = Key("geaflow.dsl.file.name.regex", None, "only read files whose name matches")
PERSISTENT_ROOT = Key(
    "geaflow.file.persistent.root", None, "root folder of persistent graph stores"
)
BATCH_PER_CHECKPOINT = Key(
    "geaflow.batch.number.per.checkpoint", 1, "windows between two checkpoints"
)
IGNORE_EXCEPTION = Key("geaflow.dsl.ignore.exception", False, "skip rows that fail to parse")
MAX_TRAVERSAL = Key("geaflow.dsl.max.traversal", -1, "bound on traversal depth for algorithms")
INCR_TRAVERSAL = Key(
    "geaflow.dsl.graph.enable.incr.traversal",
    False,
    "MATCH on a growing graph re-emits every path rooted near the window's changes (GeaFlow's "
    "incremental traversal)",
)
INCR_TRAVERSAL_THRESHOLD = Key(
    "geaflow.dsl.incr.traversal.iteration.threshold",
    4,
    "incremental traversal only for patterns of at most this many iterations (hops + 1)",
)
INCR_TRAVERSAL_WINDOW = Key(
    "geaflow.dsl.graph.incr.traversal.window",
    -1,
    "incremental traversal from the window after this one (-1: from the second window)",
)
GRAPH_STORE_TYPE = Key(
    "geaflow.dsl.graph.store.type",
    "memory",
    "store type of a graph whose WITH (...) names none: memory, or a persistent type "
    "(rocksdb, paimon...)",
)
SINK_SPLIT_LINE = Key("geaflow.dsl.table.sink.split.line", None, "line written between windows")

# This engine's keys ---------------------------------------------------------
DISABLED_RULES = Key(
    "geaflow.dsl.optimizer.disabled.rules", "", "comma-separated optimizer rules to switch off"
)
OPTIMIZER_ENABLED = Key("geaflow.dsl.optimizer.enabled", True, "run the rule-based optimizer")
MAX_OPEN_HOPS = Key(
    "geaflow.dsl.match.max.hops", 10, "upper bound used for open variable-length edges {m,}"
)
MATCH_OFFSET = Key(
    "geaflow.dsl.match.apply.offset",
    False,
    "OFFSET after ORDER BY in MATCH/RETURN skips rows (GeaFlow's traversal sort keeps the top "
    "LIMIT rows and ignores OFFSET, so this is off by default)",
)
ALGORITHM_BACKEND = Key(
    "geaflow.dsl.algorithm.backend", "auto", "graph algorithms: builtin | graphframes | auto"
)
ALGORITHM_ENGINE = Key(
    "geaflow.dsl.algorithm.engine",
    "auto",
    "where built-in algorithms iterate: local (one task, vectorised) | distributed | auto",
)
LOCAL_ITERATION_LIMIT = Key(
    "geaflow.dsl.iteration.local.max.edges",
    5_000_000,
    "graphs with at most this many edges iterate inside one task (vectorised)",
)
QUERY_ENGINE = Key(
    "geaflow.dsl.query.engine",
    "auto",
    "where a query runs: local (on the driver, DuckDB over Arrow copies of its inputs) | "
    "distributed (Spark) | auto (local when it runs the query the same way and its inputs "
    "are small)",
)
LOCAL_QUERY_MAX_BYTES = Key(
    "geaflow.dsl.query.local.max.bytes",
    64 << 20,
    "auto runs a query locally when the files it reads hold at most this many bytes",
)
STORE_LOCAL_MAX_BYTES = Key(
    "geaflow.dsl.store.local.max.bytes",
    64 << 20,
    "a graph write Spark estimates at most this many bytes is collected to the driver once "
    "and kept there too, so the local engine reads the label with no Spark job (0: never)",
)
STREAM_OPERATOR_STATE = Key(
    "geaflow.dsl.stream.operator.state",
    True,
    "a windowed DISTINCT or GROUP BY (count, sum, min, max) keeps its groups between windows, "
    "so a window costs what its groups cost; false computes them over every row so far",
)
CHECKPOINT_EVERY = Key(
    "geaflow.dsl.iteration.checkpoint.interval", 5, "cut lineage every k rounds of an iteration"
)
CHECKPOINT_MODE = Key("geaflow.dsl.iteration.checkpoint.mode", "local", "local | reliable")
CHECKPOINT_DIR = Key(
    "geaflow.dsl.iteration.checkpoint.dir", None, "folder for reliable checkpoints"
)
RESOURCE_ROOT = Key("geaflow.dsl.resource.root", None, "where resource:/// paths point")
BAD_ROW_POLICY = Key("geaflow.dsl.file.bad.rows", "fail", "what a bad text row does: fail | skip")
JOB_CHECKPOINT_DIR = Key(
    "geaflow.dsl.checkpoint.dir", None, "durable folder for window checkpoints of a streaming job"
)

TIME_ZONE = Key(
    "geaflow.dsl.time.zone",
    None,
    "time zone of timestamps and date functions (default: spark.sql.session.timeZone, UTC)",
)
SPARK_TIME_ZONE = "spark.sql.session.timeZone"

TRACE_CYCLES = Key(
    "geaflow.dsl.trace.cycles",
    False,
    "keep the scheduler's events (cycle, event, round) in each statement's result",
)

EXACT_DOUBLE_SUM = Key(
    "geaflow.dsl.sum.exact",
    True,
    "SUM and AVG of DOUBLE/FLOAT give the same value on any partitioning "
    "(summed exactly; false: Spark's plain double sum, faster, order-dependent last bits)",
)
PROFILE = Key(
    "geaflow.dsl.profile",
    False,
    "time each statement's phases (parse, bind, optimize, build, spark) and count py4j calls",
)

KNOWN_KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        WINDOW_SIZE,
        TIME_WINDOW_SIZE,
        TABLE_PARALLELISM,
        COLUMN_SEPARATOR,
        LINE_SEPARATOR,
        FILE_PATH,
        FILE_NAME_REGEX,
        PERSISTENT_ROOT,
        BATCH_PER_CHECKPOINT,
        IGNORE_EXCEPTION,
        MAX_TRAVERSAL,
        INCR_TRAVERSAL,
        INCR_TRAVERSAL_THRESHOLD,
        INCR_TRAVERSAL_WINDOW,
        SINK_SPLIT_LINE,
        GRAPH_STORE_TYPE,
        DISABLED_RULES,
        OPTIMIZER_ENABLED,
        MAX_OPEN_HOPS,
        MATCH_OFFSET,
        ALGORITHM_BACKEND,
        ALGORITHM_ENGINE,
        LOCAL_ITERATION_LIMIT,
        QUERY_ENGINE,
        LOCAL_QUERY_MAX_BYTES,
        STORE_LOCAL_MAX_BYTES,
        CHECKPOINT_EVERY,
        CHECKPOINT_MODE,
        CHECKPOINT_DIR,
        RESOURCE_ROOT,
        BAD_ROW_POLICY,
        JOB_CHECKPOINT_DIR,
        TIME_ZONE,
        TRACE_CYCLES,
        EXACT_DOUBLE_SUM,
        PROFILE,
    )
}


class Config(Mapping[str, Any]):
    """An immutable layered mapping of configuration values."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = dict(values or {})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Config({self._values!r})"

    def with_values(self, overrides: Mapping[str, Any]) -> Config:
        merged = dict(self._values)
        merged.update(overrides)
        return Config(merged)

    # Typed getters -----------------------------------------------------------
    def raw(self, key: Key | str, default: Any = None) -> Any:
        name = key.name if isinstance(key, Key) else key
        if name in self._values:
            return self._values[name]
        if isinstance(key, Key):
            return key.default
        known = KNOWN_KEYS.get(name)
        return known.default if known is not None and default is None else default

    def get_str(self, key: Key | str, default: Any = None) -> str | None:
        value = self.raw(key, default)
        return None if value is None else str(value)

    def get_int(self, key: Key | str, default: Any = None) -> int:
        value = self.raw(key, default)
        try:
            return int(str(value).strip())
        except (TypeError, ValueError):
            name = key.name if isinstance(key, Key) else key
            raise ConfigError(f"configuration {name} must be an integer, got {value!r}") from None

    def get_float(self, key: Key | str, default: Any = None) -> float:
        value = self.raw(key, default)
        try:
            return float(str(value).strip())
        except (TypeError, ValueError):
            name = key.name if isinstance(key, Key) else key
            raise ConfigError(f"configuration {name} must be a number, got {value!r}") from None

    def get_bool(self, key: Key | str, default: Any = None) -> bool:
        value = self.raw(key, default)
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off", "none", ""):
            return False
        name = key.name if isinstance(key, Key) else key
        raise ConfigError(f"configuration {name} must be true or false, got {value!r}")

    def time_zone(self) -> str | None:
        """The zone set for this job (``geaflow.dsl.time.zone``, else Spark's
        key), or None to keep the Spark session's own."""
        zone = self.get_str(TIME_ZONE) or self.get_str(SPARK_TIME_ZONE)
        return zone.strip() if zone and zone.strip() else None

    def disabled_rules(self) -> frozenset[str]:
        text = self.get_str(DISABLED_RULES) or ""
        return frozenset(x.strip() for x in text.split(",") if x.strip())


def table_options(config: Mapping[str, Any], table: TableInfo) -> dict[str, Any]:
    """What a table is read and written with: the job configuration overlaid
    by the table's own ``WITH`` options (the table's option wins, as in GeaFlow).

    The one place that decides this precedence: scans, sinks, window sources
    and graphs defined USING a table all ask here."""
    out = dict(config.items())
    out.update(table.options)
    return out
