"""What a statement did, and a query's rows convertible to Arrow, pandas, rows.

The runtime returns these; every front end hands them on as they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .connectors.text_format import observed_bad_rows
from .profile import Profile, phase, recording
from .spark_adapter import to_arrow


def python_values(column: Any, zone: str | None = None) -> list[Any]:
    """An Arrow column as Python values.  A TIMESTAMP (an instant, which SQL
    shows in the statement's time zone ``zone``; Arrow's own label when None)
    becomes a naive ``datetime`` holding that wall-clock time: what a naive
    value bound as a parameter comes back as, and what SQL prints."""
    import pyarrow as pa

    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        import pyarrow.compute as pc

        if zone and zone != column.type.tz:
            column = column.cast(pa.timestamp(column.type.unit, tz=zone))
        column = pc.local_timestamp(column)
    values: list[Any] = column.to_pylist()
    return values


class QueryResult:
    """The rows of a query.  Fetched from Spark once, on first use, as Arrow
    (or already Arrow: a query the local engine ran, ``arrow``; its
    ``dataframe`` is then made from those rows on ``spark``)."""

    def __init__(
        self,
        df: Any,
        names: list[str],
        types: list[Any],
        on_error: Any = None,
        time_zone: str | None = None,
        arrow: Any = None,
        spark: Any = None,
    ) -> None:
        self._df = df
        self._spark = spark
        # The zone the statement ran in: its timestamps' wall clock (python_values).
        self.time_zone = time_zone
        self.columns = list(names)
        self.types = list(types)
        self._arrow: Any = arrow
        # What a failure to fetch the rows becomes (the statement's error,
        # placed at it: ``ScriptRun`` sets it).
        self.on_error = on_error
        # (table, pyspark Observation) of text scans that skip bad rows.
        self.bad_row_observations: list[tuple[str, Any]] = []
        # The statement's profile, charged with the fetch (geaflow.dsl.profile).
        self.profile: Profile | None = None

    @property
    def dataframe(self) -> Any:
        """The Spark DataFrame, with the query's column names."""
        if self._df is None:
            self._df = self._spark.createDataFrame(self._arrow)
            return self._df
        return self._df.toDF(*self.columns) if self.columns else self._df

    def to_arrow(self) -> Any:
        if self._arrow is None:
            self._arrow = self._fetch(self._df)
        return self._arrow

    def to_pandas(self) -> Any:
        return self.to_arrow().to_pandas()

    def head_arrow(self, n: int) -> Any:
        """At most ``n`` rows, as Arrow: fetched whole already (or made on the
        driver), a slice of them; else only the first ``n`` are fetched."""
        if self._arrow is not None or self._df is None:
            return self.to_arrow().slice(0, n)
        return self._fetch(self._df.limit(n))

    def _fetch(self, df: Any) -> Any:
        """``df``'s rows as Arrow, with the query's column names."""
        import pyarrow as pa

        try:
            with recording(self.profile), phase("spark"):
                table = to_arrow(df)
        except Exception as err:
            if self.on_error is not None:
                raise self.on_error(err) from None
            raise
        if table.num_columns == len(self.columns):
            return table.rename_columns(self.columns)
        return pa.table({}) if not self.columns else table

    @property
    def bad_rows_skipped(self) -> dict[str, int]:
        """Malformed text rows skipped per table (``geaflow.dsl.file.bad.rows = 'skip'``).

        Fetches the rows first: the counts are gathered while they are read.
        """
        self.to_arrow()
        counts: dict[str, int] = {}
        for table, observation in self.bad_row_observations:
            counts[table] = counts.get(table, 0) + observed_bad_rows(observation)
        return counts

    def collect(self) -> list[tuple[Any, ...]]:
        table = self.to_arrow()
        cols = [python_values(c, self.time_zone) for c in table.columns]
        return list(zip(*cols, strict=True)) if cols else []

    def __len__(self) -> int:
        return self.to_arrow().num_rows

    def __repr__(self) -> str:
        return f"QueryResult(columns={self.columns})"


@dataclass
class StatementResult:
    """What one statement of a script did."""

    kind: str  # ddl | set | use | insert | query | explain | info
    statement: str = ""
    message: str = ""
    rows_written: int | None = None
    query: QueryResult | None = None
    text: str | None = None  # EXPLAIN / SHOW / DESCRIBE output
    seconds: float = 0.0
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    # Things the user should know about what the statement did (front ends
    # show them even when quiet; DB-API cursors list them in ``messages``).
    warnings: list[str] = field(default_factory=list)
    # Where the statement's time went (``geaflow.dsl.profile``; a query's
    # ``spark`` phase fills in when its rows are fetched).
    profile: Profile | None = None

    def to_arrow(self) -> Any:
        if self.query is None:
            raise ValueError(f"a {self.kind} statement has no rows")
        return self.query.to_arrow()

    def to_pandas(self) -> Any:
        if self.query is None:
            raise ValueError(f"a {self.kind} statement has no rows")
        return self.query.to_pandas()

    def collect(self) -> list[tuple[Any, ...]]:
        if self.query is None:
            raise ValueError(f"a {self.kind} statement has no rows")
        return self.query.collect()
