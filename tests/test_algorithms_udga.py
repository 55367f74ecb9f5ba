"""Python vertex programs (``geaflow_sql.udga``): both engines, errors, and CALL from a script."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from geaflow_sql.core import types as T
from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import GeaflowError, ValidationError
from runtime.algorithms.base import AlgorithmGraph
from runtime.algorithms.udga_runner import user_algorithm
from tests import udga_samples
from tests.reference_functions import TestEdgeIteratorUdf

ENGINES = ("local", "distributed")


@pytest.fixture(scope="module")
def graph(spark: Any) -> AlgorithmGraph:
    vertices = spark.createDataFrame(
        [
            ("1", "p", 1.5),
            ("2", "p", 2.5),
            ("3", "q", 3.5),
            ("4", "p", 4.5),
            ("5", "q", 5.5),
            ("6", "p", 6.5),
        ],
        "id string, label string, score double",
    )
    edges = spark.createDataFrame(
        [
            ("1", "3", "e", 1.0),
            ("1", "5", "e", 2.0),
            ("1", "6", "e", 4.0),
            ("2", "3", "e", 8.0),
            ("3", "4", "e", 16.0),
            ("4", "1", "e", 32.0),
            ("4", "6", "e", 64.0),
            ("5", "4", "e", 128.0),
            ("5", "6", "e", 256.0),
            ("5", "77", "e", 512.0),
        ],
        "src string, dst string, label string, weight double",
    )
    return AlgorithmGraph(
        vertices, edges, T.VARCHAR, {"score": T.DOUBLE}, {"weight": T.DOUBLE}, "g"
    )


def run(
    spark: Any, graph: AlgorithmGraph, instance: Any, args: list[Any], engine: str
) -> list[tuple[Any, ...]]:
    ctx = SimpleNamespace(
        spark=spark, config=Config({"geaflow.dsl.algorithm.engine": engine}), catalog=None
    )
    return sorted(tuple(r) for r in user_algorithm(instance).run(ctx, graph, args).collect())


@pytest.mark.parametrize("engine", ENGINES)
def test_reach(spark: Any, graph: AlgorithmGraph, engine: str) -> None:
    assert run(spark, graph, udga_samples.Reach(), ["1"], engine) == [
        ("1", 0),
        ("3", 1),
        ("4", 2),
        ("5", 1),
        ("6", 1),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_combiner_edges_properties_and_rounds(
    spark: Any, graph: AlgorithmGraph, engine: str
) -> None:
    out = {r[0]: r[1:] for r in run(spark, graph, udga_samples.InWeight(), [], engine)}
    assert out["6"] == ("p", 6.5, 4.0 + 64.0 + 256.0, 2)
    assert out["2"] == ("p", 2.5, 0.0, 1)  # no IN edges: never ran after iteration 1
    assert "77" not in out  # an edge end without a vertex never runs


@pytest.mark.parametrize("engine", ENGINES)
def test_edge_iterator_reference_function(spark: Any, graph: AlgorithmGraph, engine: str) -> None:
    # finish() reads vertex.value before any update: the vertex's own properties
    assert run(spark, graph, TestEdgeIteratorUdf(), [3, 2], engine) == [
        (str(i), int(i + 0.5)) for i in range(1, 7)
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_errors_name_the_algorithm(spark: Any, graph: AlgorithmGraph, engine: str) -> None:
    with pytest.raises(Exception, match="cannot handle vertex"):
        run(spark, graph, udga_samples.Broken(), [], engine)
    with pytest.raises(Exception, match="has 1 values, expected 2"):
        run(spark, graph, udga_samples.WrongWidth(), [], engine)


def test_adapter_checks_the_class() -> None:
    with pytest.raises(ValidationError, match="needs init"):
        user_algorithm(object())
    algorithm = user_algorithm(udga_samples.Reach())
    assert algorithm.signature.output_names() == ["id", "hops"]
    assert algorithm.output_types(T.BIGINT) == [T.BIGINT, T.BIGINT]


def test_create_function_and_call(session: Any, tmp_path: Any) -> None:
    """The README example end to end: a script registers the class and CALLs it."""
    try:
        results = session.execute(
            """
            CREATE GRAPH g (
              Vertex v (id varchar ID, score double),
              Edge e (src varchar SOURCE ID, dst varchar DESTINATION ID, weight double)
            ) WITH (storeType = 'memory');
            INSERT INTO g.v VALUES ('a', 1.0), ('b', 2.0), ('c', 3.0), ('d', 4.0);
            INSERT INTO g.e VALUES ('a', 'b', 1.0), ('b', 'c', 1.0), ('a', 'c', 1.0);
            CREATE FUNCTION reach AS 'tests.udga_samples.Reach';
            USE GRAPH g;
            CALL reach('a') YIELD (id, hops) RETURN id, hops * 10 AS tens;
            """
        )
    except GeaflowError as err:  # pragma: no cover - reported with the statement that failed
        pytest.fail(err.format() if hasattr(err, "format") else str(err))
    rows = sorted(tuple(r) for r in results[-1].collect())
    assert rows == [("a", 0), ("b", 10), ("c", 10)]
