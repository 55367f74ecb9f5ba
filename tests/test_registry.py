"""Every function and algorithm GeaFlow registers in code resolves here, by
its SQL name and by its Java class name in both packages (the list and where
it comes from: ``tests/geaflow_registry.py``); the ones GeaFlow ships outside
any release's table fail with a clear error, not a Python import error."""

from __future__ import annotations

import pytest

from geaflow_sql.core.errors import CatalogError
from planner.algorithms import signature_named
from planner.binder.graph_functions import GRAPH_FUNCTIONS
from planner.functions import builtin_aggregate, builtin_scalar, builtin_table_function
from tests.geaflow_registry import (
    ALGORITHMS,
    FUNCTION_TABLE,
    LDBC_ALGORITHMS,
    NOT_PROVIDED,
    PACKAGES,
    RUNTIME_AGGREGATES,
    TABLE_FUNCTIONS,
)
from tests.test_match_patterns import GRAPH


def _known(name: str) -> bool:
    return bool(
        builtin_scalar(name)
        or builtin_aggregate(name)
        or builtin_table_function(name)
        or name.lower() in GRAPH_FUNCTIONS
    )


def test_every_registered_function_name_resolves():
    names = FUNCTION_TABLE + RUNTIME_AGGREGATES + TABLE_FUNCTIONS
    missing = sorted({name for name, _ in names if not _known(name)})
    assert not missing, f"GeaFlow functions missing here: {missing}"


def test_every_registered_algorithm_name_resolves():
    missing = [name for name, _ in ALGORITHMS + LDBC_ALGORITHMS if signature_named(name) is None]
    assert not missing, f"GeaFlow algorithms missing here: {missing}"


def test_every_class_name_in_both_packages_resolves(session):
    entries = FUNCTION_TABLE + RUNTIME_AGGREGATES + TABLE_FUNCTIONS + ALGORITHMS + LDBC_ALGORITHMS
    failures = []
    for i, (_, path) in enumerate(entries):
        for k, package in enumerate(PACKAGES):
            try:
                session.execute(f"CREATE FUNCTION f{i}_{k} AS '{package}{path}'")
            except Exception as err:  # noqa: BLE001 - collected and reported
                failures.append(f"{package}{path}: {err}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name,path", NOT_PROVIDED)
def test_classes_not_provided_fail_clearly(session, name, path):
    for package in PACKAGES:
        with pytest.raises(CatalogError) as info:
            session.execute(f"CREATE FUNCTION x AS '{package}{path}'")
        message = str(info.value)
        assert "GeaFlow" in message and path.rsplit(".", 1)[1] in message
        assert "No module named" not in message


def test_year_under_geaflow_s_name(session):
    got = session.sql("SELECT _year('2020-05-01'), year('1999-12-31 10:00:00')").collect()
    assert got == [(2020, 1999)]


def test_graph_element_functions_by_class_and_by_name(session):
    session.execute(GRAPH)
    session.execute("CREATE FUNCTION lbl AS 'com.antgroup.geaflow.dsl.udf.table.other.Label'")
    session.execute(
        "CREATE FUNCTION has AS 'org.apache.geaflow.dsl.udf.table.other.PropertyExists'"
    )
    got = session.sql(
        "MATCH (a:person WHERE a.id = 1)-[e]->(b) "
        "RETURN b.id, lbl(b), is_labeled(b, 'person'), is_not_labeled(e, 'knows'), "
        "has(b, 'age'), property_exists(e, 'weight'), property_exists(b, 'nope')"
    ).collect()
    assert sorted(got) == [
        (2, "person", True, False, True, True, False),
        (3, "person", True, False, True, True, False),
        (10, "software", False, True, False, True, False),
    ]


def test_algorithms_by_old_class_name(session):
    session.execute(GRAPH)
    session.execute("CREATE FUNCTION pr AS 'com.antgroup.geaflow.dsl.udf.graph.PageRank'")
    session.execute("CREATE FUNCTION cn AS 'com.antgroup.geaflow.dsl.udf.graph.CommonNeighbors'")
    by_class = session.sql("CALL pr() YIELD (id, pr) RETURN id, pr").collect()
    by_name = session.sql("CALL page_rank() YIELD (id, pr) RETURN id, pr").collect()
    assert sorted(by_class) == sorted(by_name) and len(by_name) == 6
    assert session.sql("CALL cn(1, 4) YIELD (id) RETURN id").collect() == [(3,)]


def test_year_of_epoch_milliseconds(session):
    """GeaFlow's Year (``_year``) also takes a BIGINT: epoch milliseconds, in
    the session's time zone (LDBC BI 1 groups messages by it)."""
    got = session.sql(
        "SELECT _year(1696160399000), _year(CAST(0 AS BIGINT)), _year(CAST(NULL AS BIGINT))"
    ).collect()
    assert got == [(2023, 1970, None)]
