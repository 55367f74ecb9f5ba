"""The local kernels of the built-in algorithms on the corpus graphs, against the corpus results.

Each test builds the graph a GQLAlgorithmTest script builds (reading the same
data files) and checks the algorithm's rows against the case's expected file.
These run in numpy only; ``test_algorithms_engines`` runs them through Spark.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ValidationError
from geaflow_sql.core.values import java_double
from planner.algorithms import BUILTIN, builtin_signature, signature_for_class
from runtime.algorithms.local_graph import LocalGraph
from runtime.algorithms.registry import algorithm_named, builtin_implementations, implementation
from runtime.algorithms.udga_runner import run_in_memory

BOUND = 64  # GeaFlow's default geaflow.dsl.max.traversal


def lines(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_text().splitlines() if line.strip()]


def modern(corpus: Path) -> LocalGraph:
    vertices = lines(corpus / "data/modern_vertex.txt")
    edges = lines(corpus / "data/modern_edge.txt")
    g = LocalGraph.from_lists(
        [int(v[0]) for v in vertices],
        [(int(e[0]), int(e[1]), float(e[3])) for e in edges],
        vertex_labels=[v[1] for v in vertices],
        edge_labels=[e[2] for e in edges],
    )
    g.id_type = T.BIGINT
    return g


def string_graph(corpus: Path, vertex_file: str, edge_file: str) -> LocalGraph:
    g = LocalGraph.from_lists(
        [v[0] for v in lines(corpus / vertex_file)],
        [(e[0], e[1]) for e in lines(corpus / edge_file)],
    )
    g.id_type = T.VARCHAR
    return g


def run(name: str, g: LocalGraph, args: list[Any]) -> list[tuple[Any, ...]]:
    algorithm = algorithm_named(name)
    columns = algorithm.local(g, algorithm.bind(args, g.id_type), BOUND)
    return sorted(zip(*[np.asarray(c).tolist() for c in columns], strict=True))


def expected(corpus: Path, name: str) -> list[list[str]]:
    return sorted(lines(corpus / "expect" / f"{name}.txt"))


def java_text(rows: list[tuple[Any, ...]], round_to: int | None = None) -> list[list[str]]:
    out = []
    for row in rows:
        fields = []
        for v in row:
            if isinstance(v, float):
                if round_to is not None:
                    v = float(
                        Decimal(repr(v)).quantize(Decimal(1).scaleb(-round_to), ROUND_HALF_UP)
                    )
                fields.append(java_double(v))
            else:
                fields.append(str(v))
        out.append(fields)
    return sorted(out)


def test_sssp_modern(corpus: Path) -> None:
    assert java_text(run("sssp", modern(corpus), [1])) == expected(corpus, "gql_algorithm_001")


def test_page_rank_modern(corpus: Path) -> None:
    rows = run("page_rank", modern(corpus), [0.85, 0.01, 20])
    assert java_text(rows, round_to=3) == expected(corpus, "gql_algorithm_002")


def test_page_rank_small_graph(corpus: Path) -> None:
    # gql_algorithm_003's graph: 1 -> 2 and 3 -> 2.  Vertex 2 gets 0.15 + 0.85 * 0.3.
    g = LocalGraph.from_lists([1, 2, 3], [(1, 2), (3, 2)])
    rows = dict(run("page_rank", g, [0.85, 0.01, 20]))
    assert rows[2] == pytest.approx(0.405)
    assert rows[1] == pytest.approx(0.15)


def test_khop(corpus: Path) -> None:
    g = string_graph(corpus, "input/test_vertex", "input/test_edge")
    assert java_text(run("khop", g, ["1", 2])) == expected(corpus, "gql_algorithm_007")


def test_kcore(corpus: Path) -> None:
    g = string_graph(corpus, "input/test_vertex", "input/test_edge")
    assert java_text(run("kcore", g, [1])) == expected(corpus, "gql_algorithm_kcore")
    assert java_text(run("kcore", modern(corpus), [2])) == expected(
        corpus, "gql_algorithm_kcore_modern"
    )


def test_wcc_and_louvain(corpus: Path) -> None:
    g = string_graph(corpus, "input/test_vertex", "input/test_edge")
    assert java_text(run("wcc", g, [])) == expected(corpus, "gql_algorithm_wcc")
    assert java_text(run("louvain", g, [])) == expected(corpus, "gql_algorithm_louvain")


def test_lpa(corpus: Path) -> None:
    g = string_graph(corpus, "data/lpa_vertex.txt", "data/lpa_edges.txt")
    assert java_text(run("lpa", g, [])) == expected(corpus, "gql_algorithm_lpa")


def test_triangles_and_coefficients(corpus: Path) -> None:
    g = modern(corpus)
    assert java_text(run("triangle_count", g, ["person"])) == expected(corpus, "gql_algorithm_tc")
    assert java_text(run("cluster_coefficient", g, [])) == expected(
        corpus, "gql_algorithm_cluster_coefficient"
    )


def test_cluster_coefficient_medium(corpus: Path) -> None:
    vertices = [int(v[0]) for v in lines(corpus / "data/medium_graph_vertex.txt")]
    edges = [(int(e[0]), int(e[1])) for e in lines(corpus / "data/medium_graph_edge.txt")]
    g = LocalGraph.from_lists(vertices, edges)
    rows = run("cluster_coefficient", g, [2])
    assert java_text(rows) == expected(corpus, "gql_algorithm_cluster_coefficient_medium")


def test_similarity(corpus: Path) -> None:
    g = modern(corpus)
    assert java_text(run("common_neighbors", g, [1, 3])) == expected(
        corpus, "gql_algorithm_common_neighbors"
    )
    assert java_text(run("jaccard_similarity", g, [1, 3])) == expected(
        corpus, "gql_algorithm_jaccard_similarity"
    )


def test_edge_iterator_reference_function(corpus: Path) -> None:
    from tests.reference_functions import TestEdgeIteratorUdf

    vertices = lines(corpus / "input/test_vertex")
    g = LocalGraph.from_frames(
        __import__("pandas").DataFrame(
            {"id": [v[0] for v in vertices], "label": "v4", "vvalue": [int(v[1]) for v in vertices]}
        ),
        __import__("pandas").DataFrame(
            {
                "src": [e[0] for e in lines(corpus / "input/test_edge")],
                "dst": [e[1] for e in lines(corpus / "input/test_edge")],
                "label": "e4",
            }
        ),
    )
    rows = run_in_memory(TestEdgeIteratorUdf(), g, [3, 2], BOUND, T.VARCHAR, ["vvalue"], [])
    assert java_text(sorted(rows)) == expected(corpus, "gql_edge_iterator_test")


# ---------------------------------------------------------------------------
# Facts of GeaFlow's versions that the corpus does not show
# ---------------------------------------------------------------------------


def test_sssp_label_filters() -> None:
    # 1 -knows-> 2 -knows-> 3 and 1 -created-> 3; 4 is software and may not relay.
    g = LocalGraph.from_lists(
        [1, 2, 3, 4, 5],
        [(1, 2), (2, 3), (1, 3), (1, 4), (4, 5)],
        vertex_labels=["p", "p", "p", "s", "p"],
        edge_labels=["knows", "knows", "created", "knows", "knows"],
    )
    assert run("sssp", g, [1]) == [(1, 0), (2, 1), (3, 1), (4, 1), (5, 2)]
    assert run("sssp", g, [1, "knows"]) == [(1, 0), (2, 1), (3, 2), (4, 1), (5, 2)]
    assert run("sssp", g, [1, "knows", "p"]) == [(1, 0), (2, 1), (3, 2)]
    assert run("sssp", g, [9]) == []


def test_bounded_iterations() -> None:
    chain = LocalGraph.from_lists(list(range(100)), [(i, i + 1) for i in range(99)])
    algorithm = algorithm_named("sssp")
    ids, dist = algorithm.local(chain, algorithm.bind([0], T.BIGINT), 10)
    assert dist.max() == 9  # iteration 1 is the source; each further iteration one hop
    wcc = algorithm_named("wcc")
    ids, labels = wcc.local(chain, wcc.bind([5], T.BIGINT), BOUND)
    # wcc(5) updates in iterations 2..4: three rounds, so vertex 50 sees 47..53 and keeps "47"
    assert dict(zip(ids.tolist(), labels.tolist(), strict=True))[50] == "47"


def test_string_order_of_labels() -> None:
    # GeaFlow compares labels as strings: "10" < "9"
    g = LocalGraph.from_lists([9, 10], [(9, 10)])
    assert run("wcc", g, []) == [(9, "10"), (10, "10")]


def test_kcore_counts_parallel_edges() -> None:
    g = LocalGraph.from_lists([1, 2, 3], [(1, 2), (1, 2), (2, 3)])
    assert run("kcore", g, [2]) == [(1, 2), (2, 2), (3, 0)]


def test_phantom_endpoints_count_but_never_act() -> None:
    # 2 -> 99 where 99 has no vertex: 99 counts in 2's out-degree but gets no rank.
    g = LocalGraph.from_lists([1, 2], [(1, 2), (2, 99), (2, 1)])
    rows = dict(run("page_rank", g, [0.85, 0.0, 3]))
    assert set(rows) == {1, 2}
    assert rows[1] == pytest.approx(0.15 + 0.85 * 0.5)  # 2 splits its 1.0 between 1 and 99


def test_arguments_are_checked() -> None:
    with pytest.raises(ValidationError, match="at most 3"):
        builtin_signature("page_rank").bind([0.85, 0.01, 20, 1])
    with pytest.raises(ValidationError, match="needs source"):
        builtin_signature("sssp").bind([])
    with pytest.raises(ValidationError, match="integer"):
        builtin_signature("kcore").bind(["two"])
    # Ids take the graph's id type when the call runs.
    with pytest.raises(ValidationError, match="not a bigint"):
        algorithm_named("sssp").bind(["x"], T.BIGINT)
    assert algorithm_named("khop").bind(["7", 2], T.BIGINT) == {"source": 7, "k": 2}
    with pytest.raises(ValidationError, match="label"):
        builtin_signature("cluster_coefficient").bind([1.5])


def test_names_and_geaflow_classes() -> None:
    assert algorithm_named("SSSP") is algorithm_named("sssp")
    assert signature_for_class("org.apache.geaflow.dsl.udf.graph.PageRank").name == "page_rank"
    assert (
        signature_for_class("org.apache.geaflow.dsl.udf.graph.JaccardSimilarityAlgorithm").name
        == "jaccard_similarity"
    )
    assert builtin_signature("triangle_count").output_types(T.VARCHAR) == [T.VARCHAR, T.BIGINT]


def test_every_signature_has_an_implementation() -> None:
    """The planner binds against signatures; each built-in one runs a class of
    the runtime that was written for it (and no implementation is orphaned)."""
    implemented = {a.signature for a in builtin_implementations()}
    assert implemented == set(BUILTIN)
    for signature in BUILTIN:
        assert implementation(signature).signature is signature


def test_label_filter_is_local_to_a_shard(corpus: Path) -> None:
    """GeaFlow filters other-label vertices per task (one task per shard), as the
    modern graph's cluster_coefficient('person', 1) shows: with shardCount = 2,
    vertex 1 still counts software 3 (another shard) and sees triangle 1-3-4."""
    rows = {v[0]: v for v in lines(corpus / "data/modern_vertex.txt")}
    persons_first = [v for v in rows if rows[v][1] == "person"] + [
        v for v in rows if rows[v][1] != "person"
    ]
    g = LocalGraph.from_lists(
        [int(v) for v in persons_first],
        [(int(e[0]), int(e[1])) for e in lines(corpus / "data/modern_edge.txt")],
        vertex_labels=[rows[v][1] for v in persons_first],
    )
    g.id_type = T.BIGINT
    algorithm = algorithm_named("cluster_coefficient")

    def coefficients(shards: int) -> list[list[str]]:
        p = {**algorithm.bind(["person", 1], T.BIGINT), "shards": shards}
        return java_text(
            sorted(zip(*[c.tolist() for c in algorithm.local(g, p, BOUND)], strict=True))
        )

    assert coefficients(2) == expected(corpus, "gql_algorithm_cluster_coefficient_with_params")
    # one task: every software vertex is filtered before the second superstep
    assert coefficients(1) == [["1", "0.0"], ["2", "0.0"], ["4", "0.0"], ["6", "0.0"]]


def test_geaflow_shard_assignment() -> None:
    from runtime.algorithms.java_compat import murmur_hash, shard_of

    # Murmur3 (seed 0) of the int 1, negated into a non-negative int as GeaFlow does
    assert murmur_hash(np.array([1]))[0] == 68075478
    assert shard_of(np.arange(1, 7), T.BIGINT, 2).tolist() == [0, 1, 1, 1, 0, 0]
    assert shard_of(np.array(["a", "b"], dtype=object), T.VARCHAR, 1).tolist() == [0, 0]
