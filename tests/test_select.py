"""The full SELECT on real tables, each case run with the optimizer on and off
(rules must never change an answer)."""

from __future__ import annotations

import pytest

from geaflow_sql.core.errors import UnsupportedError, ValidationError
from tests.conftest import write

USERS = "1,jim,20,bj\n2,kate,31,sh\n3,lucy,45,bj\n4,bob,18,\n5,tom,31,gz\n"
ORDERS = "10,1,5.5,paid\n11,1,20.0,open\n12,2,7.25,paid\n13,9,1.0,paid\n14,3,,open\n"


@pytest.fixture(params=["rules_on", "rules_off"])
def db(request, spark, tmp_path):
    from geaflow_sql import Session

    conf = {"geaflow.dsl.optimizer.enabled": "false"} if request.param == "rules_off" else {}
    session = Session(spark=spark, conf=conf, base_dir=str(tmp_path))
    users = write(tmp_path / "users.txt", USERS)
    orders = write(tmp_path / "orders.txt", ORDERS)
    session.execute(
        f"CREATE TABLE users (id bigint, name varchar, age int, city varchar) "
        f"WITH (type='file', geaflow.dsl.file.path='{users}');"
        f"CREATE TABLE orders (oid bigint, uid bigint, amount double, status varchar) "
        f"WITH (type='file', geaflow.dsl.file.path='{orders}');"
    )
    return session


def q(db, sql: str) -> list[tuple]:
    return db.sql(sql).collect()


def qs(db, sql: str) -> list[tuple]:
    """Rows in a fixed order: by each value's text, nulls first."""
    return sorted(q(db, sql), key=lambda r: tuple((v is not None, str(v)) for v in r))


# ----------------------------------------------------------------- joins


def test_inner_join(db):
    assert qs(db, "SELECT u.name, o.oid FROM users u JOIN orders o ON u.id = o.uid") == [
        ("jim", 10),
        ("jim", 11),
        ("kate", 12),
        ("lucy", 14),
    ]


def test_left_join_keeps_unmatched_left_rows(db):
    rows = qs(
        db, "SELECT u.name, o.oid FROM users u LEFT JOIN orders o ON u.id = o.uid WHERE u.age < 21"
    )
    assert rows == [("bob", None), ("jim", 10), ("jim", 11)]


def test_right_join_keeps_unmatched_right_rows(db):
    rows = qs(
        db, "SELECT u.name, o.oid FROM users u RIGHT JOIN orders o ON u.id = o.uid AND u.age > 25"
    )
    assert rows == [(None, 10), (None, 11), (None, 13), ("kate", 12), ("lucy", 14)]


def test_full_join(db):
    rows = qs(
        db,
        "SELECT u.id, o.oid FROM users u FULL JOIN orders o ON u.id = o.uid WHERE u.id IS NULL OR u.id > 3",
    )
    assert rows == [(None, 13), (4, None), (5, None)]


def test_cross_and_comma_joins(db):
    assert q(db, "SELECT count(*) FROM users CROSS JOIN orders") == [(25,)]
    rows = qs(
        db,
        "SELECT u.name, o.amount FROM users u, orders o WHERE u.id = o.uid AND o.status = 'paid'",
    )
    assert rows == [("jim", 5.5), ("kate", 7.25)]


def test_join_of_a_subquery_with_values(db):
    rows = qs(
        db,
        "SELECT t.label, s.n FROM (SELECT city, count(*) AS n FROM users GROUP BY city) AS s "
        "JOIN (VALUES ('bj', 'Beijing'), ('sh', 'Shanghai')) AS t(code, label) ON s.city = t.code",
    )
    assert rows == [("Beijing", 2), ("Shanghai", 1)]


# ------------------------------------------------------------- set operations


def test_union_and_union_all(db):
    # An empty text field of a VARCHAR column is '' (only non-string columns read it as null).
    assert qs(
        db, "SELECT city FROM users WHERE age > 30 UNION ALL SELECT city FROM users WHERE age < 19"
    ) == [("",), ("bj",), ("gz",), ("sh",)]
    assert qs(db, "SELECT age FROM users UNION SELECT 31") == [(18,), (20,), (31,), (45,)]
    assert len(q(db, "SELECT age FROM users UNION ALL SELECT age FROM users")) == 10


def test_union_coerces_column_types(db):
    assert qs(db, "SELECT id FROM users WHERE id = 1 UNION ALL SELECT 2.5") == [(1.0,), (2.5,)]


# ----------------------------------------------------------------- subqueries


def test_uncorrelated_in_exists_and_scalar_subqueries(db):
    assert qs(
        db, "SELECT name FROM users WHERE id IN (SELECT uid FROM orders WHERE status = 'paid')"
    ) == [("jim",), ("kate",)]
    assert qs(
        db, "SELECT name FROM users WHERE id NOT IN (SELECT uid FROM orders) AND age < 40"
    ) == [("bob",), ("tom",)]
    assert (
        len(q(db, "SELECT name FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE amount > 100)"))
        == 0
    )
    assert qs(
        db, "SELECT name, (SELECT max(amount) FROM orders) AS top FROM users WHERE id = 1"
    ) == [("jim", 20.0)]


def test_correlated_exists_and_not_exists(db):
    rows = qs(
        db,
        "SELECT u.name FROM users u WHERE EXISTS "
        "(SELECT 1 FROM orders o WHERE o.uid = u.id AND o.status = 'paid')",
    )
    assert rows == [("jim",), ("kate",)]
    rows = qs(
        db,
        "SELECT name FROM users u WHERE NOT EXISTS (SELECT oid FROM orders o WHERE u.id = o.uid)",
    )
    assert rows == [("bob",), ("tom",)]


def test_correlated_in(db):
    rows = qs(
        db,
        "SELECT u.name FROM users u WHERE 'open' IN (SELECT o.status FROM orders o WHERE o.uid = u.id)",
    )
    assert rows == [("jim",), ("lucy",)]


def test_correlated_scalar_aggregate(db):
    rows = qs(
        db,
        "SELECT u.name, (SELECT count(*) FROM orders o WHERE o.uid = u.id) AS n, "
        "(SELECT sum(o.amount) FROM orders o WHERE o.uid = u.id AND o.amount > 6) AS big "
        "FROM users u WHERE u.id < 5",
    )
    # A correlated subquery without matching rows is its aggregate over no rows:
    # count 0 and, GeaFlow's SUM starting from 0, sum 0 (as uncorrelated).
    assert rows == [("bob", 0, 0.0), ("jim", 2, 20.0), ("kate", 1, 7.25), ("lucy", 1, 0.0)]
    uncorrelated = qs(db, "SELECT (SELECT sum(o.amount) FROM orders o WHERE o.uid < 0) AS s")
    assert uncorrelated == [(0.0,)]


def test_non_equality_correlation_is_unsupported_with_a_position(db):
    with pytest.raises(UnsupportedError) as info:
        db.sql("SELECT name FROM users u\nWHERE EXISTS (SELECT 1 FROM orders o WHERE o.uid > u.id)")
    assert info.value.line == 2
    assert "equalities" in info.value.message


def test_subquery_in_from(db):
    rows = qs(
        db,
        "SELECT t.c, t.n FROM (SELECT city AS c, count(*) AS n FROM users GROUP BY city) AS t WHERE t.n > 1",
    )
    assert rows == [("bj", 2)]


# ----------------------------------------------------- grouping and ordering


def test_group_by_alias_and_ordinal_with_having(db):
    by_alias = qs(
        db,
        "SELECT age / 10 AS decade, count(*) AS n FROM users GROUP BY decade HAVING count(*) > 1",
    )
    by_ordinal = qs(
        db, "SELECT age / 10 AS decade, count(*) AS n FROM users GROUP BY 1 HAVING count(*) > 1"
    )
    having_alias = qs(
        db, "SELECT age / 10 AS decade, count(*) AS n FROM users GROUP BY 1 HAVING n > 1"
    )
    assert by_alias == by_ordinal == having_alias == [(3, 2)]


def test_order_by_limit_offset(db):
    assert q(db, "SELECT name FROM users ORDER BY age DESC, name LIMIT 2 OFFSET 1") == [
        ("kate",),
        ("tom",),
    ]
    assert q(db, "SELECT name, age FROM users ORDER BY 2, 1 LIMIT 2") == [("bob", 18), ("jim", 20)]
    assert q(db, "SELECT id FROM users ORDER BY age + id DESC LIMIT 1") == [(3,)]


def test_distinct(db):
    assert qs(db, "SELECT DISTINCT age FROM users WHERE age > 25") == [(31,), (45,)]
    assert q(db, "SELECT count(DISTINCT age), count(age) FROM users") == [(4, 5)]


def test_values_with_aliases(db):
    assert qs(db, "SELECT b, a FROM (VALUES (1, 'x'), (2, null)) AS t(a, b)") == [
        (None, 2),
        ("x", 1),
    ]


def test_lateral_table_split(db):
    rows = qs(
        db,
        "SELECT u.name, t.tag FROM users u, LATERAL TABLE(split(u.city || ',x')) AS t(tag) WHERE u.id <= 2",
    )
    assert rows == [("jim", "bj"), ("jim", "x"), ("kate", "sh"), ("kate", "x")]


# -------------------------------------------------------------- expressions


def test_case_cast_if_and_concat(db):
    rows = q(
        db,
        "SELECT CASE WHEN age < 20 THEN 'teen' WHEN age < 40 THEN 'adult' ELSE 'senior' END, "
        "CASE city WHEN 'bj' THEN 1 ELSE 0 END, CAST(age AS varchar) || '!', "
        "IF(age > 30, name, NULL), CAST('12' AS bigint) + id FROM users ORDER BY id",
    )
    assert rows[0] == ("adult", 1, "20!", None, 13)
    assert rows[3] == ("teen", 0, "18!", None, 16)
    assert rows[4] == ("adult", 0, "31!", "tom", 17)


def test_java_integer_division_and_precedence(db):
    assert q(db, "SELECT 7 / 2, -7 / 2, 7 % 3, 7 / 2.0, 2 + 3 * 4") == [(3, -3, 1, 3.5, 14)]
    # An inlined projection keeps its parentheses: (age + 1) * 2, not age + 1 * 2.
    assert q(db, "SELECT a * 2 FROM (SELECT age + 1 AS a FROM users) AS t WHERE a * 2 > 90") == [
        (92,)
    ]


def test_ambiguous_column_is_an_error(db):
    with pytest.raises(ValidationError) as info:
        db.sql("SELECT uid FROM orders a, orders b")
    assert "ambiguous" in info.value.message


def test_in_subquery_is_three_valued(db):
    # A null in the subquery makes NOT IN unknown for every non-matching row.
    assert q(db, "SELECT count(*) FROM users WHERE id NOT IN (SELECT amount FROM orders)") == [(0,)]
    assert q(
        db, "SELECT count(*) FROM users WHERE id NOT IN (SELECT uid FROM orders WHERE uid > 100)"
    ) == [(5,)]
    rows = qs(
        db, "SELECT id, id IN (SELECT CAST(amount AS BIGINT) FROM orders) FROM users WHERE id < 3"
    )
    assert rows == [(1, True), (2, None)]


def test_is_distinct_from_treats_nulls_as_equal(db):
    rows = q(
        db,
        "SELECT x IS DISTINCT FROM y, x IS NOT DISTINCT FROM y FROM "
        "(VALUES (1, 1), (1, 2), (1, null), (CAST(null AS INT), null)) AS t(x, y)",
    )
    assert rows == [(False, True), (True, False), (True, False), (False, True)]
    assert qs(db, "SELECT name FROM users WHERE city IS NOT DISTINCT FROM 'bj'") == [
        ("jim",),
        ("lucy",),
    ]
