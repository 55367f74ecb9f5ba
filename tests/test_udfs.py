"""User-defined functions in Python, registered with CREATE FUNCTION and run by
Spark: row-at-a-time and vectorised scalars, aggregates (next to built-in
aggregates, with null keys), and table functions with LATERAL TABLE."""

from __future__ import annotations

import pytest

from geaflow_sql.core.errors import CatalogError, ExecutionError

FUNCTIONS = """
CREATE FUNCTION greet AS 'tests.udf_samples.Greet';
CREATE FUNCTION twice AS 'tests.udf_samples.Twice';
CREATE FUNCTION add_vec AS 'tests.udf_samples.AddVector';
CREATE FUNCTION fails AS 'tests.udf_samples.Fails';
CREATE FUNCTION spread AS 'tests.udf_samples.Spread';
CREATE FUNCTION join_names AS 'tests.udf_samples.JoinNames';
CREATE FUNCTION repeat_rows AS 'tests.udf_samples.Repeat';
CREATE FUNCTION words AS 'tests.udf_samples.Words';
"""

PEOPLE = "(VALUES (1, 'jim', 'a', 10.0), (2, 'kate', 'b', 4.0), (3, null, 'a', 1.5), (4, 'lucy', null, 2.0), (5, 'bob', 'a', null)) AS p(id, name, grp, score)"


@pytest.fixture
def s(session):
    session.execute(FUNCTIONS)
    return session


def test_row_scalar_function_sees_nulls_as_none(s):
    rows = s.sql(f"SELECT id, greet(name), greet(name, '?') FROM {PEOPLE} ORDER BY id").collect()
    assert rows[0] == (1, "hello jim!", "hello jim?")
    assert rows[2] == (3, "hello nobody!", "hello nobody?")


def test_scalar_result_type_follows_arguments(s):
    result = s.sql(f"SELECT twice(id) AS a, twice(score) AS b FROM {PEOPLE} ORDER BY id")
    assert [str(t) for t in result.types] == ["INTEGER", "DOUBLE"]
    assert result.collect()[:2] == [(2, 20.0), (4, 8.0)]


def test_vectorized_scalar_function(s):
    rows = s.sql(
        f"SELECT id, add_vec(id, score) FROM {PEOPLE} WHERE score IS NOT NULL ORDER BY id"
    ).collect()
    assert rows == [(1, 11.0), (2, 6.0), (3, 4.5), (4, 6.0)]


def test_user_scalar_in_where_and_group_by(s):
    rows = s.sql(
        f"SELECT twice(id) AS t, count(*) FROM {PEOPLE} WHERE greet(name) <> 'hello nobody!' "
        "GROUP BY twice(id) HAVING twice(id) > 2 ORDER BY t"
    ).collect()
    assert rows == [(4, 1), (8, 1), (10, 1)]


def test_aggregate_next_to_builtin_aggregates_with_null_keys(s):
    rows = s.sql(
        f"SELECT grp, spread(score), count(*), join_names(name, '+') FROM {PEOPLE} GROUP BY grp"
    ).collect()
    by_group = {r[0]: r[1:] for r in rows}
    assert by_group == {
        "a": (8.5, 3, "bob+jim"),
        "b": (0.0, 1, "kate"),
        None: (0.0, 1, "lucy"),
    }


def test_aggregate_without_group_by(s):
    assert s.sql(f"SELECT spread(score), max(id) FROM {PEOPLE}").collect() == [(8.5, 5)]


def test_table_function_yields_rows_and_columns(s):
    rows = s.sql(
        "SELECT p.id, t.i, t.txt FROM (VALUES (1, 'x', 2), (2, 'y', 0), (3, null, 1)) AS p(id, v, n), "
        "LATERAL TABLE(repeat_rows(p.v, p.n)) AS t(i, txt) ORDER BY p.id, t.i"
    ).collect()
    assert rows == [(1, 0, "x"), (1, 1, "x"), (3, 0, None)]


def test_table_function_in_a_join_with_filter(s):
    rows = s.sql(
        "SELECT w, count(*) AS n FROM (VALUES ('a b a'), ('b c')) AS d(text), "
        "LATERAL TABLE(words(d.text)) AS t(w) WHERE w <> 'c' GROUP BY w ORDER BY w"
    ).collect()
    assert rows == [("a", 2), ("b", 2)]


def test_a_failing_user_function_is_an_execution_error(s):
    with pytest.raises(ExecutionError) as info:
        s.sql(f"SELECT fails(id) FROM {PEOPLE}").collect()
    assert "a user function failed" in info.value.message
    assert "cannot handle" in info.value.message


def test_unknown_function_class_points_at_the_statement(session):
    with pytest.raises(CatalogError) as info:
        session.execute("SELECT 1;\nCREATE FUNCTION f AS 'tests.no_such_module.F';\nSELECT f(1);")
    assert "no_such_module" in info.value.message
    assert info.value.line == 2


def test_reference_test_helpers_are_registered_under_java_names(session):
    from tests.reference_functions import register

    register()
    session.execute(
        "CREATE FUNCTION mycount AS 'org.apache.geaflow.dsl.runtime.query.udf.MyCount';"
        "CREATE FUNCTION split2 AS 'org.apache.geaflow.dsl.runtime.query.udtf.Split2';"
    )
    total = session.sql("SELECT mycount(n, v) FROM (VALUES ('jim', 1), ('kate', 2)) AS t(n, v)")
    assert total.collect() == [(10003,)]
    rows = session.sql(
        "SELECT a, b FROM (VALUES ('1,2;3,4')) AS t(x), LATERAL TABLE(split2(t.x, ',', ';')) AS s(a, b)"
    ).collect()
    assert sorted(rows) == [("1", "2"), ("3", "4")]
