"""Connectors on real files and a real SparkSession: file (text, csv, json,
parquet, orc; a file or a directory filtered by a name regex; resource:///
paths), console, and the generic ``type='spark'`` source.  Bad text rows fail
naming the file and line, or are skipped and counted."""

from __future__ import annotations

import pytest

from geaflow_sql.core.errors import ConfigError, DataError
from tests.conftest import write


def rows(session, query: str) -> list[tuple]:
    return sorted(session.sql(query).collect(), key=repr)


def test_text_file_with_a_separator(session, tmp_path):
    path = write(tmp_path / "users.txt", "1|jim|20\n2|kate|\n\n3| bob |31\n")
    session.execute(
        "CREATE TABLE u (id bigint, name varchar, age int) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}', geaflow.dsl.column.separator='|')"
    )
    # Fields are trimmed, an empty non-string field is null, blank lines are skipped.
    assert rows(session, "SELECT id, name, age FROM u") == [
        (1, "jim", 20),
        (2, "kate", None),
        (3, "bob", 31),
    ]


def test_directory_filtered_by_name_regex(session, tmp_path):
    write(tmp_path / "d" / "part-1.txt", "1,a\n")
    write(tmp_path / "d" / "part-2.txt", "2,b\n")
    write(tmp_path / "d" / "other.csv", "3,c\n")
    write(tmp_path / "d" / ".hidden.txt", "4,d\n")
    session.execute(
        "CREATE TABLE t (id bigint, v varchar) WITH (type='file', "
        f"geaflow.dsl.file.path='{tmp_path / 'd'}', geaflow.dsl.file.name.regex='^part-.*')"
    )
    assert rows(session, "SELECT id, v FROM t") == [(1, "a"), (2, "b")]


def test_resource_paths_are_relative_to_the_resource_root(spark, tmp_path):
    from geaflow_sql import Session

    write(tmp_path / "res" / "data" / "x.txt", "7,seven\n")
    session = Session(spark=spark, conf={"geaflow.dsl.resource.root": str(tmp_path / "res")})
    session.execute(
        "CREATE TABLE t (id bigint, v varchar) "
        "WITH (type='file', geaflow.dsl.file.path='resource:///data/x.txt')"
    )
    assert rows(session, "SELECT * FROM t") == [(7, "seven")]


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "orc"])
def test_spark_file_formats_round_trip(session, tmp_path, fmt):
    out = tmp_path / f"out-{fmt}"
    session.execute(
        f"CREATE TABLE w (id bigint, name varchar, score double) WITH (type='file', format='{fmt}', "
        f"geaflow.dsl.file.path='{out}');"
        "INSERT INTO w VALUES (1, 'a', 1.5), (2, 'b', null);"
        f"CREATE TABLE r (id bigint, name varchar, score double) WITH (type='file', format='{fmt}', "
        f"geaflow.dsl.file.path='{out}');"
    )
    assert rows(session, "SELECT id, name, score FROM r") == [(1, "a", 1.5), (2, "b", None)]


def test_text_sink_prints_values_as_java_does(session, tmp_path):
    out = tmp_path / "out.txt"
    session.execute(
        "CREATE TABLE o (i int, b bigint, d double, s varchar, f boolean, n varchar, t timestamp) "
        f"WITH (type='file', geaflow.dsl.file.path='{out}');"
        "INSERT INTO o VALUES (1, 10000000000, 0.0001, 'x', true, null, "
        "CAST('2020-01-02 03:04:05' AS TIMESTAMP)), (2, 2, 12345678.0, 'y', false, 'z', null);"
    )
    lines = sorted(out.read_text().splitlines())
    assert lines == [
        "1,10000000000,1.0E-4,x,true,null,2020-01-02 03:04:05.0",
        "2,2,1.2345678E7,y,false,z,null",
    ]


def test_a_bad_row_fails_naming_file_and_line(session, tmp_path):
    path = write(tmp_path / "bad.txt", "1,ok\n2,ok\nthree,bad\n")
    session.execute(
        f"CREATE TABLE t (id bigint, v varchar) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    with pytest.raises(DataError) as info:
        session.sql("SELECT id FROM t").collect()
    message = info.value.message
    assert "bad.txt" in message and "line 3" in message and "three,bad" in message


@pytest.mark.parametrize("line", ["5", "5,ok,extra", "5,ok,"])
def test_a_line_with_fewer_or_more_fields_than_the_table_fails(session, tmp_path, line):
    # GeaFlow's text deserializer rejects a line whose field count is not
    # the table's (TextDeserializer.deserialize); nothing is padded or cut.
    path = write(tmp_path / "short.txt", f"1,ok\n{line}\n3,ok\n")
    session.execute(
        f"CREATE TABLE t (id bigint, v varchar) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    with pytest.raises(DataError) as info:
        session.sql("SELECT id FROM t").collect()
    message = info.value.message
    fields = len(line.split(","))
    assert "short.txt line 2" in message
    assert f"the line has {fields} fields" in message and "has 2" in message


def test_field_counts_on_generated_lines(session, tmp_path):
    import random

    rng = random.Random(7)
    lines, good = [], []
    for i in range(300):
        width = rng.choice([1, 2, 3, 3, 3, 4])
        lines.append(",".join([str(i)] + [f"v{i}"] * (width - 1)))
        if width == 3:
            good.append(i)
    path = write(tmp_path / "gen.txt", "\n".join(lines) + "\n")
    session.execute(
        "CREATE TABLE t (id bigint, a varchar, b varchar) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}', geaflow.dsl.file.bad.rows='skip')"
    )
    query = session.sql("SELECT id FROM t")
    assert sorted(r[0] for r in query.collect()) == good
    assert query.bad_rows_skipped == {"t": len(lines) - len(good)}


def test_bad_rows_are_skipped_and_counted_where_the_table_says_so(session, tmp_path):
    path = write(tmp_path / "bad.txt", "1,ok\nx,bad\n3,ok\n4.5,bad\n")
    out = tmp_path / "out.txt"
    session.execute(
        "CREATE TABLE t (id bigint, v varchar) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}', geaflow.dsl.file.bad.rows='skip');"
        f"CREATE TABLE o (id bigint) WITH (type='file', geaflow.dsl.file.path='{out}');"
    )
    (insert,) = session.execute("INSERT INTO o SELECT id FROM t")
    assert sorted(out.read_text().split()) == ["1", "3"]
    assert insert.extra["bad_rows_skipped"] == {"t": 2}
    assert "skipped bad rows: 2 in t" in insert.message
    query = session.sql("SELECT id FROM t")
    assert sorted(r[0] for r in query.collect()) == [1, 3]
    assert query.bad_rows_skipped == {"t": 2}


def test_ignore_exception_also_skips(session, tmp_path):
    path = write(tmp_path / "bad.txt", "1\nnope\n")
    session.execute(
        "CREATE TABLE t (id int) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}', geaflow.dsl.ignore.exception='true')"
    )
    query = session.sql("SELECT id FROM t")
    assert query.collect() == [(1,)]
    assert query.bad_rows_skipped == {"t": 1}


def _generated_records(fmt: str, seed: int) -> tuple[str, dict[str, set[int]]]:
    """Rows ``id,name,age`` in ``fmt`` with some broken on purpose, and the
    ids of the good rows per query: the rule is the text format's (a record
    that does not parse, or has the wrong number of fields, is bad whatever
    is read; a value is checked when its column is read)."""
    import json
    import random

    rng = random.Random(seed)
    lines: list[str] = []
    good_all: set[int] = set()
    good_id: set[int] = set()
    for i in range(60):
        kind = rng.choice(["ok", "ok", "ok", "bad_age", "broken"])
        age: object = rng.randrange(1, 90) if kind != "bad_age" else f"x{i}"
        if fmt == "csv":
            fields = [str(i), f"n{i}", str(age)]
            if kind == "broken":
                fields = fields[: rng.choice([1, 2])] if rng.random() < 0.5 else [*fields, "extra"]
            lines.append(",".join(fields))
        else:
            text = json.dumps({"id": i, "name": f"n{i}", "age": age})
            lines.append(text[: rng.randrange(1, len(text) - 1)] if kind == "broken" else text)
        if kind != "broken":
            good_id.add(i)
            if kind == "ok":
                good_all.add(i)
    return "\n".join(lines) + "\n", {"all": good_all, "id": good_id}


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_bad_records_are_skipped_and_counted_like_text(session, tmp_path, fmt):
    for seed in range(3):
        text, good = _generated_records(fmt, seed)
        path = write(tmp_path / f"gen{seed}.{fmt}", text)
        name = f"t{seed}"
        session.execute(
            f"CREATE TABLE {name} (id bigint, name varchar, age int) WITH (type='file', "
            f"format='{fmt}', geaflow.dsl.file.path='{path}', geaflow.dsl.file.bad.rows='skip')"
        )
        total = len(text.splitlines())
        for query, wanted in [
            (f"SELECT id, name, age FROM {name}", good["all"]),
            (f"SELECT id FROM {name}", good["id"]),
        ]:
            result = session.sql(query)
            assert sorted(r[0] for r in result.collect()) == sorted(wanted), (seed, query)
            assert result.bad_rows_skipped == {name: total - len(wanted)}, (seed, query)
            # One counter, the one of the scan that ran: a scan built while the
            # local engine was tried and then not run left a counter that no
            # job filled, and reading the counts waited for it.
            assert len(result.bad_row_observations) == 1, (seed, query)
        counted = session.sql(f"SELECT count(*) FROM {name}")
        assert counted.collect() == [(len(good["id"]),)]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_bad_records_fail_naming_the_file(session, tmp_path, fmt):
    text, _ = _generated_records(fmt, 1)
    path = write(tmp_path / f"bad.{fmt}", text)
    binary = tmp_path / f"binary.{fmt}"
    binary.write_bytes(bytes(range(256)) * 12)
    session.execute(
        f"CREATE TABLE t (id bigint, name varchar, age int) WITH (type='file', "
        f"format='{fmt}', geaflow.dsl.file.path='{path}');"
        f"CREATE TABLE b (id bigint, name varchar, age int) WITH (type='file', "
        f"format='{fmt}', geaflow.dsl.file.path='{binary}')"
    )
    for query in ("SELECT * FROM t", "SELECT count(*) FROM t"):
        with pytest.raises(DataError) as info:
            session.sql(query).collect()
        assert f"bad.{fmt}" in info.value.message and f"the {fmt} record" in info.value.message
    # A binary file is not read as rows of NULLs: it fails, naming the file,
    # with the record's control characters shown as '?'.
    with pytest.raises(DataError) as info:
        session.sql("SELECT count(*) FROM b").collect()
    assert f"binary.{fmt}" in info.value.message
    assert "\x00" not in info.value.message and len(info.value.message) < 600


def test_console_sink_prints_each_row(session, capsys):
    session.execute(
        "CREATE TABLE c (a int, b varchar) WITH (type='console');"
        "INSERT INTO c VALUES (1, 'x'), (2, null);"
    )
    printed = sorted(line for line in capsys.readouterr().out.splitlines() if line)
    assert printed == ["1,x", "2,null"]


def test_generic_spark_source_passes_options_through(session, spark, tmp_path):
    src = tmp_path / "src.parquet"
    spark.createDataFrame([(1, "a"), (2, "b")], "ID long, Name string").write.parquet(str(src))
    session.execute(
        "CREATE TABLE t (id bigint, name varchar) "
        f"WITH (type='spark', format='parquet', path='{src}')"
    )
    # Columns are matched by name, case-insensitively.
    assert rows(session, "SELECT name, id FROM t WHERE id > 1") == [("b", 2)]
    out = tmp_path / "out.json"
    session.execute(
        "CREATE TABLE o (id bigint, name varchar) "
        f"WITH (type='spark', format='json', path='{out}', mode='overwrite');"
        "INSERT INTO o SELECT id, name FROM t"
    )
    assert sorted(r["name"] for r in spark.read.json(str(out)).collect()) == ["a", "b"]


def test_spark_source_without_format_is_a_config_error(session):
    with pytest.raises(ConfigError) as info:
        session.execute("CREATE TABLE t (id bigint) WITH (type='spark', path='/x')")
    assert "format" in info.value.message


def test_unknown_connector_type_names_the_known_ones(session):
    with pytest.raises(ConfigError) as info:
        session.execute("CREATE TABLE t (id bigint) WITH (type='kafkaa')")
    assert "unknown type 'kafkaa'" in info.value.message and "file" in info.value.message


def test_missing_file_is_a_data_error(session, tmp_path):
    session.execute(
        f"CREATE TABLE t (id bigint) WITH (type='file', geaflow.dsl.file.path='{tmp_path / 'none.txt'}')"
    )
    with pytest.raises(DataError) as info:
        session.sql("SELECT id FROM t").collect()
    assert "does not exist" in info.value.message


def test_counting_never_blocks_when_spark_skips_the_scan(session, tmp_path):
    path = write(tmp_path / "bad.txt", "1\nnope\n")
    out = tmp_path / "out.txt"
    session.execute(
        "CREATE TABLE t (id int) WITH (type='file', "
        f"geaflow.dsl.file.path='{path}', geaflow.dsl.file.bad.rows='skip');"
        f"CREATE TABLE o (id int) WITH (type='file', geaflow.dsl.file.path='{out}');"
    )
    # WHERE false lets Spark drop the scan: nothing is read, nothing counted.
    (insert,) = session.execute("INSERT INTO o SELECT id FROM t WHERE 1 = 2")
    assert insert.extra["bad_rows_skipped"] in ({"t": 0}, {"t": 1})


def test_files_are_read_by_lines_and_still_name_the_bad_line(session, tmp_path):
    # Lines are read by Spark's splitting reader without numbers; the error
    # finds the bad line's number in the file.
    path = write(tmp_path / "big.txt", "".join(f"{i},v{i}\n" for i in range(200)) + "x,bad\n1,ok\n")
    session.execute(
        f"CREATE TABLE t (id bigint, v varchar) WITH (type='file', geaflow.dsl.file.path='{path}')"
    )
    with pytest.raises(DataError) as info:
        session.sql("SELECT count(*) FROM t").collect()
    assert "big.txt line 201: cannot read" in info.value.message
    wide = write(tmp_path / "wide.txt", "".join(f"{i},v{i}\n" for i in range(200)) + "7,a,b\n")
    session.execute(
        f"CREATE TABLE w (id bigint, v varchar) WITH (type='file', geaflow.dsl.file.path='{wide}')"
    )
    with pytest.raises(DataError) as info:
        session.sql("SELECT count(*) FROM w").collect()
    assert "wide.txt line 201: the line has 3 fields" in info.value.message
    session.execute(
        f"CREATE TABLE ok (id bigint, v varchar) WITH (type='file', geaflow.dsl.file.path='{path}', "
        "geaflow.dsl.file.bad.rows='skip')"
    )
    assert session.sql("SELECT count(*), sum(id) FROM ok").collect() == [(201, sum(range(200)) + 1)]


@pytest.mark.skipif(
    not __import__("os").path.exists("/usr/share/java/h2.jar"),
    reason="the H2 JDBC driver is not installed (apt-get install -y libh2-java)",
)
def test_in_memory_h2_databases_close_between_jobs(spark, tmp_path):
    from geaflow_sql import Session
    from runtime.connectors.jdbc import close_memory_databases

    ddl = (
        "CREATE TABLE h (id bigint, name varchar) WITH (type='jdbc', "
        "geaflow.dsl.jdbc.driver='org.h2.Driver', "
        "geaflow.dsl.jdbc.url='jdbc:h2:mem:closing_test;DB_CLOSE_DELAY=-1', "
        "geaflow.dsl.jdbc.username='u', geaflow.dsl.jdbc.password='p', "
        "geaflow.dsl.jdbc.table.name='people');"
    )

    def job() -> tuple[list[tuple], Session]:
        s = Session(spark=spark, base_dir=str(tmp_path))
        s.execute(ddl + "INSERT INTO h VALUES (1, 'ann'), (2, 'bob');")
        got = sorted(s.sql("SELECT id, name FROM h").collect())
        return got, s

    first, s1 = job()
    assert first == [(1, "ann"), (2, "bob")]
    # The database outlives the job: a second job appends to the same rows ...
    second, s2 = job()
    assert len(second) == 4
    # ... until it is closed; then the next job starts from an empty database.
    closed = close_memory_databases(spark, list(s2.catalog.tables.values()))
    assert closed == ["jdbc:h2:mem:closing_test;DB_CLOSE_DELAY=-1"]
    third, _ = job()
    assert third == [(1, "ann"), (2, "bob")]


def test_a_scan_is_built_once_while_its_files_and_settings_stay_the_same(
    session, tmp_path, monkeypatch
):
    """runtime.connectors.scan_cache: repeated statements reuse the built scan;
    a file that changes (even to the same size), a new file in the folder, or
    a new time zone builds it again, so no statement sees stale rows."""
    import os

    from runtime.connectors.file import FileConnector

    builds: list[str] = []
    real = FileConnector._build_scan

    def counting(self, ctx, req, fmt, files):
        builds.append(req.table.name)
        return real(self, ctx, req, fmt, files)

    monkeypatch.setattr(FileConnector, "_build_scan", counting)
    folder = tmp_path / "d"
    write(folder / "a.txt", "1,2020-01-01 00:00:00\n2,2020-01-01 00:00:00\n")
    session.execute(
        "CREATE TABLE t (id bigint, ts timestamp) WITH (type='file', geaflow.dsl.file.path='d')"
    )
    query = "SELECT id, CAST(unix_timestamp(ts) AS bigint) FROM t ORDER BY id"
    first = session.sql(query).collect()
    assert session.sql(query).collect() == first
    assert builds == ["t"]  # the same scan, two statements
    assert session.sql("SELECT sum(id) FROM t").collect() == [(3,)]
    assert session.sql("SELECT max(id) FROM t").collect() == [(2,)]
    assert len(builds) == 2  # the scan of column id alone, once

    # Same size, new content and a new modification time.
    path = folder / "a.txt"
    write(path, "7,2020-01-01 00:00:00\n8,2020-01-01 00:00:00\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert [r[0] for r in session.sql(query).collect()] == [7, 8]
    write(folder / "b.txt", "9,2020-01-01 00:00:00\n")
    assert [r[0] for r in session.sql(query).collect()] == [7, 8, 9]
    assert len(builds) == 4

    # Timestamps are read in the statement's time zone.
    session.execute("SET geaflow.dsl.time.zone = '+08:00'")
    shifted = session.sql(query).collect()
    assert len(builds) == 5
    assert [r[1] for r in shifted] == [r[1] - 8 * 3600 for r in first[:1]] * 3

    # A setting the read does not depend on keeps the scan; one it does builds it again.
    session.execute("SET geaflow.dsl.profile = true; SET geaflow.dsl.query.engine = distributed")
    assert session.sql(query).collect() == shifted
    assert len(builds) == 5
    session.execute("SET geaflow.dsl.column.separator = ';'")
    with pytest.raises(DataError):
        session.sql(query).collect()  # each line is now one field: a bad row
    assert len(builds) == 6


def test_the_driver_prints_text_lines_as_spark_does(spark):
    """``driver_lines`` (a text sink written from the driver) against Spark's
    ``line_sql`` on the types the driver prints, with nulls, extremes,
    empty strings, separators and non-ASCII text; doubles and floats through
    the JVM's printer, on values whose Java digits are not the shortest, edge
    values and random bit patterns."""
    import datetime as dt
    import math
    import random
    import struct

    import pyarrow as pa

    from geaflow_sql.core import types as T
    from runtime.connectors.text_format import driver_lines, line_sql, prints_on_driver
    from runtime.spark_adapter import jvm_number_printer

    rng = random.Random(5)

    def random_double() -> float:
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        return value if not math.isnan(value) else 0.5

    def random_float() -> float:
        return struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0]

    doubles = [0.0, -0.0, 0.1, 1e-3, 9.999e-4, 1e7, 9999999.0, 2e23, 2.82879384806159e17]
    doubles += [5e-324, 1.7976931348623157e308, math.inf, -math.inf, math.nan, 100.0, -1.5]
    doubles += [random_double() for _ in range(40)] + [rng.uniform(-1e4, 1e4) for _ in range(40)]
    floats = [0.1, 1e10, 3.4028235e38, 1e-45, -2.5, math.nan, math.inf]
    floats += [random_float() for _ in range(40)]
    columns = {
        "b": (T.SqlType("BIGINT"), pa.int64(), [-(2**63), 2**63 - 1, 0, -1]),
        "i": (T.SqlType("INTEGER"), pa.int32(), [-(2**31), 2**31 - 1, 7]),
        "s": (T.SqlType("SMALLINT"), pa.int16(), [-32768, 32767, 3]),
        "v": (T.SqlType("VARCHAR"), pa.string(), ["", "a,b", "ünï ✓", " x ", "null"]),
        "t": (T.SqlType("BOOLEAN"), pa.bool_(), [True, False]),
        "d": (T.SqlType("DATE"), pa.date32(), [dt.date(1970, 1, 1), dt.date(2024, 2, 29)]),
        "x": (T.SqlType("DOUBLE"), pa.float64(), doubles),
        "f": (T.SqlType("FLOAT"), pa.float32(), floats),
    }
    numbers = jvm_number_printer(spark)
    assert numbers is not None
    assert all(prints_on_driver(t, numbers) for t, _, _ in columns.values())
    assert not prints_on_driver(T.SqlType("DOUBLE"))  # no JVM to print them (Connect)
    assert not prints_on_driver(T.SqlType("TIMESTAMP"), numbers)
    n = 200
    every = max(len(values) for _, _, values in columns.values())  # each listed value once
    table = pa.table(
        {
            name: pa.array(
                [values[k % len(values)] for k in range(every)]
                + [rng.choice([*values, None]) for _ in range(n)],
                arrow_type,
            )
            for name, (_, arrow_type, values) in columns.items()
        }
    )
    types = [t for t, _, _ in columns.values()]
    mine = driver_lines(table, types, "|", numbers)
    df = spark.createDataFrame(table.rename_columns([f"c{i}" for i in range(len(types))]))
    theirs = [r[0] for r in df.selectExpr(line_sql(types, "|")).collect()]
    assert mine == theirs
    assert "1.9999999999999998E23" in "\n".join(theirs)  # Java 17's digits, not the shortest


def test_an_insert_into_a_text_table_is_written_from_the_driver(session, tmp_path):
    """Rows the local engine computes go straight into a local text table, the
    same lines the Spark path writes."""
    write(tmp_path / "src.txt", "1,a,true\n2,,false\n3,c,\n-4,d d,true\n")
    session.execute(
        "CREATE TABLE src (id bigint, name varchar, ok boolean) "
        "WITH (type='file', geaflow.dsl.file.path='src.txt');"
        "CREATE TABLE out_local (id bigint, name varchar, ok boolean) "
        "WITH (type='file', geaflow.dsl.file.path='local.txt');"
        "CREATE TABLE out_spark (id bigint, name varchar, ok boolean) "
        "WITH (type='file', geaflow.dsl.file.path='spark.txt');"
    )
    (local,) = session.execute(
        "INSERT INTO out_local SELECT id * 2, name, ok FROM src WHERE id < 3"
    )
    assert local.extra["engine"] == "local" and local.rows_written == 3
    session.execute("SET geaflow.dsl.query.engine = distributed")
    (far,) = session.execute("INSERT INTO out_spark SELECT id * 2, name, ok FROM src WHERE id < 3")
    assert far.rows_written == 3
    mine = (tmp_path / "local.txt").read_text(encoding="utf-8").splitlines()
    theirs = (tmp_path / "spark.txt").read_text(encoding="utf-8").splitlines()
    assert sorted(mine) == sorted(theirs) == sorted(["2,a,true", "4,,false", "-8,d d,true"])


def test_a_jdbc_failure_names_the_url_as_written_without_its_password():
    from geaflow_sql.core.catalog import TableInfo
    from runtime.connectors.jdbc import failure

    def table(url: str) -> TableInfo:
        options = (
            ("type", "jdbc"),
            ("geaflow.dsl.jdbc.url", url),
            ("geaflow.dsl.jdbc.table.name", "people"),
        )
        return TableInfo("t", (), options)

    message = failure("read", table("jdbc:h2:mem:db1"), "boom")
    assert message == "cannot read jdbc table 't' (people at jdbc:h2:mem:db1): boom"
    hidden = failure("write", table("jdbc:postgresql://h/db?user=u&password=s3cret&ssl=true"), "x")
    assert "s3cret" not in hidden
    assert "jdbc:postgresql://h/db?user=u&password=***&ssl=true" in hidden
    h2 = failure("read", table("jdbc:h2:tcp://h/db;USER=sa;PASSWORD=pw;MODE=MySQL"), "x")
    assert "pw" not in h2.replace("PASSWORD", "") and "MODE=MySQL" in h2
