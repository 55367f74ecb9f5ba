"""``type='file'``: text files in GeaFlow's format, or csv/json/parquet/orc.

Options (table ``WITH`` overrides job config):
  geaflow.dsl.file.path          a file or a directory (local path, resource:///,
                                 or any Hadoop-style URI Spark can read)
  geaflow.dsl.file.name.regex    only files whose name matches (directories)
  geaflow.dsl.column.separator   field separator of the text format (',')
  format                         text (default) | csv | json | parquet | orc
  geaflow.dsl.file.bad.rows      fail (default) | skip: what a malformed text, csv or
                                 json row does (skipped rows are counted)
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import ConfigError, DataError
from runtime.context import RuntimeContext
from runtime.expressions import cast_as, spark_ident
from runtime.held import local_frame
from runtime.spark_adapter import collects_locally, is_connect, select_sql

from .base import Connector, ReadRequest, WriteRequest
from .scan_cache import SCANS
from .text_format import (
    driver_lines,
    driver_prints,
    field_parser,
    line_sql,
    separator_regex,
    sql_string,
)

SEPARATOR = "geaflow.dsl.column.separator"
PATH = "geaflow.dsl.file.path"
NAME_REGEX = "geaflow.dsl.file.name.regex"
BAD_ROWS = "geaflow.dsl.file.bad.rows"
IGNORE_EXCEPTION = "geaflow.dsl.ignore.exception"
# The column Spark's csv/json readers put a malformed record's text in.
BAD_RECORD = "__geaflow_bad_record"
FORMATS = ("text", "csv", "json", "parquet", "orc")
# The options a scan is built from (``option`` below reads no others when
# reading): the kept scan's key holds these, not the whole job configuration,
# so a SET of an unrelated key (the profile, the query engine) keeps the scan.
READ_OPTIONS = frozenset(
    k.lower() for k in ("format", PATH, NAME_REGEX, SEPARATOR, "header", BAD_ROWS, IGNORE_EXCEPTION)
)


def option(options: dict[str, Any], key: str, default: Any = None) -> Any:
    if key in options:
        return options[key]
    lowered = key.lower()
    for k, v in options.items():
        if k.lower() == lowered:
            return v
    return default


def _format(options: dict[str, Any]) -> str:
    fmt = str(option(options, "format", "text")).lower()
    if fmt not in FORMATS:
        raise ConfigError(f"unknown file format {fmt!r} (known: {', '.join(FORMATS)})")
    return fmt


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def _local_path(path: str) -> str:
    """A local path or ``file://`` URI as a path of this machine."""
    return path[len("file://") :] if path.startswith("file://") else path


def file_stamps(files: list[str]) -> tuple[tuple[str, int, int], ...] | None:
    """(path, size, mtime in ns) of local files, or None when one cannot be
    looked at (a remote URI, a file gone): such a scan is not kept."""
    out = []
    for f in files:
        if not _is_local(f):
            return None
        try:
            st = os.stat(_local_path(f))
        except OSError:
            return None
        out.append((f, st.st_size, st.st_mtime_ns))
    return tuple(out)


def list_files(path: str, name_regex: str | None) -> list[str]:
    """The files a local table path stands for, in name order."""
    p = Path(_local_path(path))
    if not p.exists():
        raise DataError(f"file table path {str(p)!r} does not exist")
    if p.is_file():
        files = [p]
    else:
        files = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith((".", "_")))
    if name_regex:
        pattern = re.compile(name_regex)
        files = [f for f in files if pattern.search(f.name)]
    return [str(f) for f in files]


class FileConnector(Connector):
    name = "file"

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        _format(options)
        if option(options, PATH) in (None, ""):
            raise ConfigError(f"file table {table.name!r} needs {PATH}")

    # ----------------------------------------------------------------- reads
    def _paths(self, ctx: RuntimeContext, options: dict[str, Any]) -> list[str]:
        raw = option(options, PATH)
        if raw in (None, ""):
            raise ConfigError(f"a file table needs {PATH}")
        path = ctx.resolve_path(str(raw))
        regex = option(options, NAME_REGEX)
        if _is_local(path):
            return list_files(path, str(regex) if regex else None)
        return [path]

    def lines(
        self,
        ctx: RuntimeContext,
        req: ReadRequest,
        files: list[str] | None = None,
        positions: bool = False,
    ) -> Any:
        """DataFrame(file, line_no, line, __fields[, __block, __seq]) of the
        lines (``parse`` drops the blank ones), each split into its fields.

        Spark's line reader reads the files in parallel splits, one row per
        line (ended by LF, CRLF or CR), so a scan looks at Spark's kill flag
        after every line (a whole file read as one row let a cancelled join run
        on through all of it).  ``line_no`` is null: a bad row's number is found
        on the driver when the error is reported (``locate_bad_line``).  With
        ``positions``, ``__block`` (the split's offset in its file) and
        ``__seq`` (increasing within a split) put the lines of each file back
        in order (``numbered_rows``).
        """
        spark = ctx.spark
        if files is None:
            files = self._paths(ctx, req.options)
        kept = ["__block long", "__seq long"] if positions else []
        if not files:
            schema = ", ".join(
                ["file string", "line_no int", "line string", "__fields array<string>", *kept]
            )
            return spark.createDataFrame([], schema)
        # SQL text throughout the scan: a selectExpr costs a py4j round trip
        # per item (py4j builds the Java list item by item), where a tree of
        # Column calls took one per function (~100 ms a statement).
        # The split is made in the projection that reads input_file_name():
        # Spark pushes no filter below a projection holding a nondeterministic
        # expression, so the checks above read the fields, not split again.
        lines = spark.read.text(files).selectExpr(
            "input_file_name() AS file",
            "CAST(NULL AS INT) AS line_no",
            "value AS line",
            f"{fields_of('value', req.options)} AS __fields",
            *(
                ["_metadata.file_block_start AS __block", "monotonically_increasing_id() AS __seq"]
                if positions
                else []
            ),
        )
        regex = option(req.options, NAME_REGEX)
        if regex and not _is_local(files[0]):
            lines = lines.where(
                f"regexp_extract(file, '([^/]*)$', 1) RLIKE {sql_string(str(regex))}"
            )
        return lines

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        fmt = _format(req.options)
        if skips_bad_rows(req.options):
            # Each statement counts its own skipped rows (an Observation of its own).
            return self._build_scan(ctx, req, fmt, None)
        files = self._paths(ctx, req.options)
        stamps = file_stamps(files)
        if stamps is None:
            return self._build_scan(ctx, req, fmt, files)
        key = (
            fmt,
            stamps,
            tuple(
                sorted(
                    (k.lower(), str(v)) for k, v in req.options.items() if k.lower() in READ_OPTIONS
                )
            ),
            req.table.name,
            tuple((c.name, str(c.type)) for c in req.table.columns),
            tuple(req.projection),
        )
        size = sum(st[1] for st in stamps)
        return SCANS.get(ctx.spark, key, lambda: self._build_scan(ctx, req, fmt, files), size)

    def _build_scan(
        self, ctx: RuntimeContext, req: ReadRequest, fmt: str, files: list[str] | None
    ) -> Any:
        if fmt != "text":
            return self._read_spark_format(ctx, req, fmt)
        return self.parse(ctx, req, self.lines(ctx, req, files))

    def parse(
        self, ctx: RuntimeContext, req: ReadRequest, lines: Any, keep_position: bool = False
    ) -> Any:
        """The table's rows (c0..cN of ``req.projection``) from ``lines``
        (as ``lines`` gives them; with ``keep_position``, the file and the
        positions too), checked as the text format requires."""
        columns = req.table.columns
        kept_columns = ["__block", "__seq"] if keep_position else []
        fields, parsed, bad_flags = [], [], []
        for out_idx, col_idx in enumerate(req.projection):
            field = f"__f{out_idx}"
            fields.append(f"trim(element_at(__fields, {col_idx + 1})) AS {field}")
            value, bad = field_parser(field, columns[col_idx].type)
            parsed.append(f"{value} AS c{out_idx}")
            bad_flags.append(bad)
        # A line has exactly one field per column, as GeaFlow's text
        # deserializer requires: a short or long line is malformed, never
        # padded with NULLs or cut.  A blank line is no row at all.
        bad_flags.append(f"__width != {len(columns)}")
        any_bad = " OR ".join(f"coalesce({b}, false)" for b in bad_flags)
        steps = [
            ["file", "line_no", "line", *kept_columns, "size(__fields) AS __width", *fields],
            [*parsed, "trim(line) = '' AS __blank"],
            [f"NOT __blank AND ({any_bad}) AS __bad"],
        ]
        if is_connect(lines.sparkSession):
            # Spark Connect analyses the whole plan at once, and lateral
            # aliases inside it can fail there (an internal error under a
            # union of two reads of a table): a projection per step.
            checked = lines.selectExpr(*steps[0])
            for step in steps[1:]:
                checked = checked.selectExpr("*", *step)
        else:
            # One projection, later items naming earlier ones (lateral aliases).
            checked = select_sql(lines, [item for step in steps for item in step])
        # The message a failing row raises (the runtime makes it a DataError).
        row = _row_text(req.table)
        where = (
            "concat('in ', file, ' line ', coalesce(CAST(line_no + 1 AS STRING), '?'), "
            f"CASE WHEN __width != {len(columns)} THEN concat(': the line has ', "
            f"CAST(__width AS STRING), {sql_string(f' fields, {row} has {len(columns)}: ')}) "
            f"ELSE {sql_string(f': cannot read {row} from ')} END, line)"
        )
        kept = self._check_rows(ctx, req, checked, where)
        names = [f"c{i}" for i in range(len(parsed))]
        return kept.select(*names, *(["file", *kept_columns] if keep_position else []))

    def _check_rows(self, ctx: RuntimeContext, req: ReadRequest, checked: Any, where: str) -> Any:
        """``checked`` (rows with a ``__bad`` flag, and ``__blank`` for a blank
        text line, dropped here) without its bad rows, counted
        (``geaflow.dsl.file.bad.rows = 'skip'``), or failing the job at the
        first one with the message ``where`` (SQL text; the default)."""
        if skips_bad_rows(req.options):
            # Skipped rows are counted, never silently lost: an Observation
            # sums them as the scan runs, with no extra pass over the data.
            checked = checked.where("NOT __blank")
            return self._count_bad_rows(ctx, req, checked).where("NOT __bad")
        # Blank lines are dropped in the same filter, so the scan is one
        # projection and one filter.
        return checked.where(
            "CASE WHEN __blank THEN false "
            f"WHEN __bad THEN raise_error(concat('GEAFLOW_BAD_ROW: ', {where})) "
            "ELSE true END"
        )

    @staticmethod
    def _count_bad_rows(ctx: RuntimeContext, req: ReadRequest, checked: Any) -> Any:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        observations = ctx.bad_row_observations
        observation = Observation(f"geaflow_bad_rows_{uuid.uuid4().hex[:12]}")
        observations.append((req.table.name, observation))
        bad = F.sum(F.when(F.col("__bad"), 1).otherwise(0)).alias("bad_rows")
        return checked.observe(observation, bad)

    def _read_spark_format(self, ctx: RuntimeContext, req: ReadRequest, fmt: str) -> Any:
        from pyspark.sql import types as ST

        files = self._paths(ctx, req.options)
        schema = ST.StructType(
            [ST.StructField(c.name, T.to_spark_type(c.type)) for c in req.table.columns]
        )
        reader = ctx.spark.read.format(fmt)
        checks = fmt in ("csv", "json")
        if checks:
            # Spark's permissive mode keeps a malformed record's text in this
            # column (and NULLs in its fields): the rows are checked like a
            # text table's (``parse``), not read as NULLs without a word.
            schema = schema.add(ST.StructField(BAD_RECORD, ST.StringType()))
            reader = (
                reader.schema(schema)
                .option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", BAD_RECORD)
            )
        if fmt == "csv":
            reader = reader.option("sep", str(option(req.options, SEPARATOR, ",")))
            header = option(req.options, "header")
            if header is not None:
                reader = reader.option("header", str(header).lower())
        df = reader.load(files if len(files) > 1 else files[0])
        names = {c.lower(): c for c in df.columns}
        # SQL text: a Column per function would be py4j round trips each.
        cols = []
        for out_idx, col_idx in enumerate(req.projection):
            column = req.table.columns[col_idx]
            src = names.get(column.name.lower())
            cols.append(cast_as(src, T.spark_sql_type(column.type), f"c{out_idx}"))
        if not checks:
            return select_sql(df, cols)
        record = spark_ident(BAD_RECORD)
        # Spark refuses a scan that reads the record column alone (as
        # ``count(*)`` would once the optimizer drops the unused columns), so
        # the check also reads the first column, in a test that is never true
        # (no text has a negative length) and that the optimizer cannot fold.
        first = spark_ident(req.table.columns[0].name)
        never = f"coalesce(length(CAST({first} AS STRING)) < 0, false)"
        checked = select_sql(
            df,
            [
                *cols,
                f"{record} IS NOT NULL OR {never} AS __bad",
                "false AS __blank",
                "input_file_name() AS file",
                f"{record} AS line",
            ],
        )
        shown = (
            "CASE WHEN length(line) > 200 THEN concat(substring(line, 1, 200), '...') ELSE line END"
        )
        what = sql_string(f": cannot read {_row_text(req.table)} from the {fmt} record ")
        control = sql_string("[\\x00-\\x1f\\x7f]")
        where = f"concat('in ', file, {what}, regexp_replace({shown}, {control}, '?'))"
        kept = self._check_rows(ctx, req, checked, where)
        return select_sql(kept, [f"c{i}" for i in range(len(cols))])

    def numbered_rows(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        """Rows in file and line order, numbered (text files; other formats in
        the order Spark reads them)."""
        if _format(req.options) != "text":
            return super().numbered_rows(ctx, req)
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        rows = self.parse(ctx, req, self.lines(ctx, req, positions=True), keep_position=True)
        order = Window.orderBy(F.col("file"), F.col("__block"), F.col("__seq"))
        numbered = rows.withColumn("__pos", F.row_number().over(order) - 1)
        return numbered.drop("file", "__block", "__seq")

    def reads_in_order(self, ctx: RuntimeContext, req: ReadRequest) -> bool:
        """A text table's scan reads its lines in order when it is one local
        file (Spark keeps the splits of one file in offset order); files of
        other formats are numbered in the order Spark reads them."""
        if _format(req.options) != "text":
            return True
        files = self._paths(ctx, req.options)
        return len(files) == 1 and _is_local(files[0])

    # ---------------------------------------------------------------- writes
    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        table, options = req.table, req.options
        raw = option(options, PATH)
        if raw in (None, ""):
            raise ConfigError(f"file table {table.name!r} needs {PATH}")
        path = ctx.resolve_path(str(raw))
        fmt = _format(options)
        if fmt != "text":
            out = df.toDF(*[c.name for c in table.columns])
            out.write.mode("append").format(fmt).save(path)
            return -1
        sep = str(option(options, SEPARATOR, ","))
        text = df.selectExpr(f"{line_sql(req.types, sep)} AS line")
        if not _is_local(path):
            text.write.mode("append").text(path)
            return -1
        lines = collect_lines(text)
        write_lines(ctx, path, lines, options, req.windowed)
        return len(lines)

    def rows_writer(self, ctx: RuntimeContext, req: WriteRequest) -> Any | None:
        """Text rows of types the driver prints as Spark does, to a local path:
        formatted and written on the driver (``write_lines``)."""
        raw = option(req.options, PATH)
        if raw in (None, "") or _format(req.options) != "text":
            return None
        path = ctx.resolve_path(str(raw))
        prints, numbers = driver_prints(ctx.spark, req.types)
        if not _is_local(path) or not prints:
            return None
        sep = str(option(req.options, SEPARATOR, ","))

        def write(rows: Any) -> int:
            lines = driver_lines(rows, req.types, sep, numbers)
            write_lines(ctx, path, lines, req.options, req.windowed)
            return len(lines)

        return write


def fields_of(line: str, options: dict[str, Any]) -> str:
    """SQL splitting the text ``line`` into its fields by the table's separator."""
    sep = str(option(options, SEPARATOR, ","))
    return f"split({line}, {sql_string(separator_regex(sep))}, -1)"


def lines_frame(
    ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], source: str, lines: list[str]
) -> Any:
    """A stream's text lines (one row each, ``source`` naming them in errors)
    as the table's rows c0..cN, parsed and checked as a text file's are."""
    rows = [(source, k, line) for k, line in enumerate(lines)]
    return _parsed_lines(ctx, table, options, rows)


def _line_schema(keep_position: bool) -> Any:
    """The Spark schema of the rows ``_parsed_lines`` parses."""
    from pyspark.sql import types as ST

    fields = [
        ST.StructField("file", ST.StringType()),
        ST.StructField("line_no", ST.IntegerType()),
        ST.StructField("line", ST.StringType()),
    ]
    if keep_position:
        fields += [ST.StructField("__block", ST.LongType()), ST.StructField("__seq", ST.LongType())]
    return ST.StructType(fields)


def _parsed_lines(
    ctx: RuntimeContext,
    table: TableInfo,
    options: dict[str, Any],
    rows: list[tuple[Any, ...]],
    keep_position: bool = False,
) -> Any:
    """Rows of a line (``file``, ``line_no``, ``line``, and with
    ``keep_position`` ``__block`` and ``__seq``) made on the driver (a local
    relation: ``local_frame``), split into fields and parsed as a text
    file's lines are (``parse``)."""
    df = local_frame(ctx.spark, rows, _line_schema(keep_position)).selectExpr(
        "*", f"{fields_of('line', options)} AS __fields"
    )
    req = ReadRequest(table, options, tuple(range(len(table.columns))))
    return FileConnector().parse(ctx, req, df, keep_position=keep_position)


def parse_windows(
    ctx: RuntimeContext,
    table: TableInfo,
    options: dict[str, Any],
    source: str,
    windows: list[list[str]],
) -> tuple[Any, list[Any]]:
    """Several windows of a stream's lines parsed as ``lines_frame`` parses
    each (lines numbered within their window), by one Spark job: the rows'
    Spark schema and each window's rows as an Arrow table."""
    import pyarrow.compute as pc

    rows = [
        (source, k, line, w, k) for w, lines in enumerate(windows) for k, line in enumerate(lines)
    ]
    parsed = _parsed_lines(ctx, table, options, rows, keep_position=True)
    names = [f"c{i}" for i in range(len(table.columns))]
    rows = parsed.toArrow()
    tables = [
        rows.filter(pc.equal(rows.column("__block"), w)).select(names) for w in range(len(windows))
    ]
    return parsed.select(*names).schema, tables


def skips_bad_rows(options: dict[str, Any]) -> bool:
    """Are bad rows skipped and counted (else the read fails at the first)?"""
    policy = str(option(options, BAD_ROWS, "fail")).lower()
    return policy == "skip" or Config(options).get_bool(IGNORE_EXCEPTION, False)


def _row_text(table: TableInfo) -> str:
    return f"a row of {table.name} ({', '.join(f'{c.name} {c.type}' for c in table.columns)})"


def collect_lines(text_df: Any) -> list[str]:
    """The lines of a one-column frame of text, on the driver.

    A frame over rows made on the driver (a window's emission merged there,
    kept_state.py) is a local relation Spark collects without a job, while
    ``toArrow`` always runs one; other frames come as Arrow, which is faster
    than Python rows for many lines."""
    if collects_locally(text_df):
        return [row[0] for row in text_df.collect()]
    return text_df.toArrow().column(0).to_pylist()


def write_lines(
    ctx: RuntimeContext,
    path: str,
    lines: list[str],
    options: dict[str, Any],
    windowed: bool = False,
) -> None:
    """Write lines to a local file: the first write of a job replaces, later ones append.

    In a windowed job (``windowed``) the split line closes every window's
    output, even an empty one, so readers can tell the windows apart."""
    target = Path(path)
    if target.is_dir():
        target = target / "part-00000"
    target.parent.mkdir(parents=True, exist_ok=True)
    key = str(target.resolve())
    written = ctx.files_written
    mode = "a" if key in written else "w"
    written.add(key)
    split_line = option(options, "geaflow.dsl.table.sink.split.line")
    with open(target, mode, encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
        if split_line is not None and (lines or windowed):
            fh.write(str(split_line))
            fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
