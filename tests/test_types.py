"""GeaFlow's types end to end: read from text, computed with GeaFlow's (Calcite's)
coercions, and printed the way Java's ``String.valueOf`` prints them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from geaflow_sql.core.errors import TypeMismatchError
from tests.conftest import write

COLUMNS = (
    "b boolean, ti tinyint, si smallint, i int, l bigint, f float, d double, "
    "m decimal(10, 2), s varchar, bin binary, dd date, ts timestamp"
)
ROW = "true|-7|300|2147483647|9223372036854775807|1.5|0.0001|12.345|text|abc|2020-02-29|2020-02-29 23:59:58.5"
NULLS = "|||||||||||"


@pytest.fixture
def typed_table(session, tmp_path):
    path = write(tmp_path / "types.txt", f"{ROW}\n{NULLS}\n")
    session.execute(
        f"CREATE TABLE ty ({COLUMNS}) WITH (type='file', geaflow.dsl.file.path='{path}', "
        "geaflow.dsl.column.separator='|')"
    )
    return session


def test_every_type_reads_from_text(typed_table):
    result = typed_table.sql("SELECT * FROM ty WHERE b IS NOT NULL")
    assert [str(t) for t in result.types] == [
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL(10, 2)",
        "VARCHAR",
        "BINARY",
        "DATE",
        "TIMESTAMP",
    ]
    (row,) = result.collect()
    assert row[:8] == (
        True,
        -7,
        300,
        2147483647,
        9223372036854775807,
        1.5,
        0.0001,
        Decimal("12.35"),
    )
    assert row[8:11] == ("text", b"abc", dt.date(2020, 2, 29))
    # A TIMESTAMP comes back as the wall-clock time of the statement's zone, naive.
    assert row[11] == dt.datetime(2020, 2, 29, 23, 59, 58, 500000)


def test_empty_fields_of_non_string_columns_are_null(typed_table):
    (row,) = typed_table.sql("SELECT * FROM ty WHERE b IS NULL").collect()
    assert row[:8] == (None,) * 8 and row[9:] == (None, None, None)
    assert row[8] == ""  # an empty VARCHAR field is the empty string


def test_values_print_as_java_string_value_of(typed_table, tmp_path):
    out = tmp_path / "out.txt"
    typed_table.execute(
        f"CREATE TABLE o ({COLUMNS}) WITH (type='file', geaflow.dsl.file.path='{out}');"
        "INSERT INTO o SELECT * FROM ty;"
    )
    lines = sorted(out.read_text().splitlines())
    assert lines == [
        "null,null,null,null,null,null,null,null,,null,null,null",
        "true,-7,300,2147483647,9223372036854775807,1.5,1.0E-4,12.35,text,abc,2020-02-29,2020-02-29 23:59:58.5",
    ]


def test_doubles_print_like_java(session, tmp_path):
    out = tmp_path / "d.txt"
    session.execute(
        f"CREATE TABLE o (d double) WITH (type='file', geaflow.dsl.file.path='{out}');"
        "INSERT INTO o VALUES (1.0), (0.5), (12345678.0), (1.0E-4), (100.0), (-0.0), (1.0E21);"
    )
    assert sorted(out.read_text().split()) == sorted(
        ["1.0", "0.5", "1.2345678E7", "1.0E-4", "100.0", "-0.0", "1.0E21"]
    )


@pytest.mark.parametrize(
    "expr, type_name, value",
    [
        ("1 + 2", "INTEGER", 3),
        ("CAST(1 AS TINYINT) + CAST(1 AS TINYINT)", "INTEGER", 2),  # small ints widen to INTEGER
        ("1 + CAST(2 AS BIGINT)", "BIGINT", 3),
        ("1 + 2.5", "DOUBLE", 3.5),
        ("CAST(1 AS FLOAT) * 2", "FLOAT", 2.0),
        ("7 / 2", "INTEGER", 3),  # Java integer division
        ("CAST(7 AS BIGINT) / 2", "BIGINT", 3),
        ("7 / 2.0", "DOUBLE", 3.5),
        ("'3' + 4", "DOUBLE", 7.0),  # text in arithmetic is read as a number
        ("'10' > 9", "BOOLEAN", True),  # and compared as one (not as text: '10' < '9')
        ("CAST('2020-01-01' AS DATE) < '2020-01-02'", "BOOLEAN", True),
        ("2147483647 + 1", "INTEGER", -2147483648),  # Java int overflow wraps
        ("CASE WHEN true THEN 1 ELSE 2.5 END", "DOUBLE", 1.0),
        ("COALESCE(null, 2, CAST(3 AS BIGINT))", "BIGINT", 2),
        ("'a' || 1 || true", "VARCHAR", "a1true"),
        ("CAST(12.345 AS DECIMAL(10, 1))", "DECIMAL(10, 1)", Decimal("12.3")),
        ("CAST('abc' AS BINARY)", "BINARY", b"abc"),
        (
            "CAST('2020-01-02 03:04:05' AS TIMESTAMP)",
            "TIMESTAMP",
            dt.datetime(2020, 1, 2, 3, 4, 5),
        ),
    ],
)
def test_result_types_and_implicit_coercions(session, expr, type_name, value):
    result = session.sql(f"SELECT {expr} AS x")
    assert str(result.types[0]) == type_name
    assert result.collect() == [(value,)]


def test_union_and_in_list_meet_at_a_common_type(session):
    result = session.sql("SELECT 1 AS x UNION ALL SELECT CAST(2 AS BIGINT) UNION ALL SELECT 2.5")
    assert str(result.types[0]) == "DOUBLE"
    assert sorted(result.collect()) == [(1.0,), (2.0,), (2.5,)]
    assert session.sql("SELECT 2 IN (1, 2.0, '3')").collect() == [(True,)]


def test_insert_writes_values_as_computed(session, tmp_path):
    # GeaFlow's file sink prints each value with the type the query computed
    # (an INT into a DOUBLE column prints 2, an AVG into an INT column 18.8):
    # the conformance corpus expects exactly that.
    out = tmp_path / "o.txt"
    session.execute(
        f"CREATE TABLE o (l bigint, d double, s varchar) WITH (type='file', geaflow.dsl.file.path='{out}');"
        "INSERT INTO o VALUES (1, 2, 3);"
        "INSERT INTO o VALUES ('4', '5.5', true);"
    )
    assert sorted(out.read_text().splitlines()) == ["1,2,3", "4,5.5,true"]


@pytest.mark.parametrize(
    "expr",
    [
        "1 + true",
        "CAST('2020-01-01' AS DATE) * 2",
        "true > 1",
        "CASE WHEN true THEN 1 ELSE true END",
    ],
)
def test_impossible_combinations_are_type_errors(session, expr):
    with pytest.raises(TypeMismatchError) as info:
        session.sql(f"SELECT {expr}")
    assert info.value.line == 1
