"""``IncMST`` and ``incremental_kcore`` against independent restatements.

Neither algorithm computes what its name says (GeaFlow's ``IncMST`` rows are
(v, v, weight) and are not a spanning tree; ``incremental_kcore`` reports the
degree as the core value), so networkx's minimum spanning tree and core
numbers are not oracles here.  Instead each kernel is held to a literal,
message-by-message simulation of GeaFlow's vertex program on random graphs
with self-loops, parallel edges, edges to ids without a vertex, repeated
weights (0.0 and -0.0 among them) and vertices with more than 50 out-edges;
the k-core statuses are also checked against a brute-force greatest fixed
point, and degrees against networkx.  Both engines must give the same rows.
"""

from __future__ import annotations

import itertools
import random
import struct
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import networkx as nx
import numpy as np
import pytest

from geaflow_sql.core import types as T
from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import ValidationError
from planner.algorithms import builtin_signature
from runtime.algorithms.base import AlgorithmGraph
from runtime.algorithms.local_graph import LocalGraph
from runtime.algorithms.registry import algorithm_named

Edge = tuple[int, int, float]


def random_graph(seed: int, n: int = 9, m: int = 40) -> tuple[list[int], list[Edge]]:
    rng = random.Random(seed)
    vertices = list(range(n))
    rng.shuffle(vertices)  # storage order is not id order
    weights = [0.1, 0.2, 0.5, 0.5, 1.0, 0.0, -0.0, 2.5]
    targets = [*range(n), 100, 101]  # 100, 101: ids without a vertex
    edges: list[Edge] = []
    for _ in range(m):
        src = rng.choice([*range(n), 100])
        dst = src if rng.random() < 0.1 else rng.choice(targets)
        edges.append((src, dst, rng.choice(weights)))
    edges += edges[: m // 8]  # parallel edges
    return vertices, edges


def hub_graph() -> tuple[list[int], list[Edge]]:
    """Vertex 0 has 70 out-edges: only the first 50 are proposed."""
    vertices = list(range(80))
    edges = [(0, i, round(0.01 * i, 2)) for i in range(1, 71)] + [(5, 6, 0.3), (6, 5, 0.3)]
    return vertices, edges


def algorithm(name: str) -> Any:
    found = algorithm_named(name)
    assert found is not None, name
    return found


def java_bits(w: float) -> int:
    """``Double.doubleToLongBits``."""
    return struct.unpack(">q", struct.pack(">d", float("nan") if w != w else w))[0]


# ---------------------------------------------------------------------------
# Literal simulations of GeaFlow's vertex programs
# ---------------------------------------------------------------------------


def simulate_inc_mst(vertices: list[int], edges: list[Edge], bound: int = 64) -> set[Any]:
    exists = set(vertices)
    out_edges: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for src, dst, w in edges:
        out_edges[src].append((dst, w))
    component = {v: v for v in vertices}
    proposals: dict[int, list[tuple[int, float, int]]] = defaultdict(list)
    for v in vertices:  # superstep 1
        for dst, w in out_edges[v][:50]:
            if dst in exists:  # messages to ids without a vertex are dropped
                proposals[dst].append((v, w, component[v]))
    acceptances: dict[int, list[float]] = defaultdict(list)
    for target, messages in proposals.items():  # superstep 2
        for src, w, comp in messages:
            if comp != component[target]:
                acceptances[src].append(w)
    if bound < 3:
        return set()
    rows = set()
    for v, ws in acceptances.items():  # superstep 3: a HashSet of MSTEdge(v, v, w)
        for w in ws:
            rows.add((v, v, java_bits(w)))
    return rows


class GeaFlowKCore:
    """GeaFlow's IncrementalKCore, message by message, keeping its per-vertex
    state between runs (as one task does); every vertex of the current graph
    takes part in a run."""

    def __init__(self, k: int, max_iterations: int) -> None:
        self.k, self.max_iterations = k, max_iterations
        self.core: dict[int, int] = {}
        self.status: dict[int, str] = {}
        self.initial = True

    def run(
        self, vertices: list[int], edges: list[tuple[int, int]]
    ) -> tuple[dict[int, tuple[int, int, str]], dict[int, int]]:
        """Rows per vertex, and the round (superstep - 1) each dropped vertex dropped in."""
        exists = set(vertices)
        out_list: dict[int, list[int]] = defaultdict(list)
        in_list: dict[int, list[int]] = defaultdict(list)
        for src, dst in edges:
            out_list[src].append(dst)
            in_list[dst].append(dst)  # getSrcId() of an IN edge is its owner
        degree = {v: len(out_list[v]) + len(in_list[v]) for v in vertices}
        active = dict.fromkeys(vertices, True)
        dropped_in: dict[int, int] = {}
        inbox: dict[int, list[int]] = defaultdict(list)

        def send_all(v: int, box: dict[int, list[int]]) -> None:
            for other in out_list[v] + in_list[v]:
                if other in exists:
                    box[other].append(1)

        for v in vertices:  # iteration 1
            if v in self.core:
                self.status[v] = "UNCHANGED"
            else:
                self.core[v] = degree[v]
                self.status[v] = "INIT" if self.initial else "UNCHANGED"
            send_all(v, inbox)
            inbox[v].append(0)
        for iteration in range(2, self.max_iterations + 1):
            if not inbox:
                break
            nxt: dict[int, list[int]] = defaultdict(list)
            for v, messages in inbox.items():
                if not active[v]:
                    continue
                count = sum(m for m in messages if m > 0)
                remove = count < self.k
                new = 0 if remove else count
                if new != self.core[v] and remove and self.status[v] != "REMOVED":
                    self.status[v] = "REMOVED"
                self.core[v] = new
                active[v] = not remove
                if remove:
                    dropped_in[v] = iteration - 1
                else:
                    send_all(v, nxt)
                nxt[v].append(0)
            inbox = nxt
        self.initial = False
        return {v: (degree[v], degree[v], self.status[v]) for v in vertices}, dropped_in


def simulate_kcore(
    vertices: list[int], edges: list[Edge], k: int, max_iterations: int, bound: int = 64
) -> dict[int, tuple[int, int, str]]:
    first_run = GeaFlowKCore(k, min(max_iterations, bound))
    rows, _ = first_run.run(vertices, [(src, dst) for src, dst, _ in edges])
    return rows


def greatest_fixed_point(vertices: list[int], edges: list[Edge], k: int) -> set[int]:
    """Largest S with in_degree(v) + #(edges u -> v, u in S) >= k for every v in S."""
    in_degree = {v: sum(1 for _, d, _ in edges if d == v) for v in vertices}

    def holds(s: set[int]) -> bool:
        return all(in_degree[v] + sum(1 for a, d, _ in edges if d == v and a in s) >= k for v in s)

    for size in range(len(vertices), -1, -1):
        for subset in itertools.combinations(vertices, size):
            if holds(set(subset)):
                return set(subset)
    return set()


# ---------------------------------------------------------------------------
# Kernels (numpy, no Spark)
# ---------------------------------------------------------------------------


def mst_kernel(vertices: list[int], edges: list[Edge], bound: int = 64) -> set[Any]:
    g = LocalGraph.from_lists(vertices, edges)
    inc_mst = algorithm("IncMST")
    p = {**inc_mst.bind([], None), "weight_column": "weight"}
    src, dst, w = inc_mst.local(g, p, bound)
    rows = [(int(a), int(b), java_bits(float(x))) for a, b, x in zip(src, dst, w, strict=True)]
    assert len(rows) == len(set(rows)), "a vertex lists a weight twice"
    return set(rows)


def kcore_kernel(
    vertices: list[int], edges: list[Edge], k: int, max_iterations: int, bound: int = 64
) -> dict[int, tuple[int, int, str]]:
    g = LocalGraph.from_lists(vertices, edges)
    kcore = algorithm("incremental_kcore")
    p = kcore.bind([k, max_iterations], None)
    vid, core, degree, status = kcore.local(g, p, bound)
    return {
        int(v): (int(c), int(d), str(s))
        for v, c, d, s in zip(vid, core, degree, status, strict=True)
    }


@pytest.mark.parametrize("seed", range(12))
def test_inc_mst_matches_the_vertex_program(seed: int) -> None:
    vertices, edges = random_graph(seed)
    assert mst_kernel(vertices, edges) == simulate_inc_mst(vertices, edges)


def test_inc_mst_proposes_at_most_fifty_edges_per_vertex() -> None:
    vertices, edges = hub_graph()
    rows = mst_kernel(vertices, edges)
    assert rows == simulate_inc_mst(vertices, edges)
    assert sum(1 for v, _, _ in rows if v == 0) == 50
    assert {(5, 5, java_bits(0.3)), (6, 6, java_bits(0.3))} <= rows


def test_inc_mst_rows_name_their_vertex_twice_and_only_real_edges() -> None:
    vertices, edges = random_graph(3)
    rows = mst_kernel(vertices, edges)
    exists = set(vertices)
    for src, dst, bits in rows:
        assert src == dst and src in exists
        assert any(
            s == src and d != s and d in exists and java_bits(w) == bits for s, d, w in edges
        )


def test_inc_mst_needs_three_supersteps() -> None:
    vertices, edges = random_graph(4)
    assert mst_kernel(vertices, edges, bound=2) == set()
    assert mst_kernel(vertices, edges, bound=3) == mst_kernel(vertices, edges)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_kcore_matches_the_vertex_program(seed: int, k: int) -> None:
    vertices, edges = random_graph(seed, n=8, m=14)
    assert kcore_kernel(vertices, edges, k, 100) == simulate_kcore(vertices, edges, k, 100)


@pytest.mark.parametrize("max_iterations", [1, 2, 3, 4])
def test_kcore_stops_at_max_iterations(max_iterations: int) -> None:
    # A path 0 -> 1 -> ... -> 7 peels one vertex per round from its start.
    vertices = list(range(8))
    edges = [(i, i + 1, 1.0) for i in range(7)]
    got = kcore_kernel(vertices, edges, 2, max_iterations)
    assert got == simulate_kcore(vertices, edges, 2, max_iterations)
    assert sum(s == "REMOVED" for _, _, s in got.values()) == min(max_iterations - 1, 8)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [2, 3])
def test_kcore_init_vertices_are_the_greatest_fixed_point(seed: int, k: int) -> None:
    vertices, edges = random_graph(seed, n=7, m=12)
    exists = set(vertices)
    got = kcore_kernel(vertices, edges, k, 100)
    kept = {v for v, (_, _, s) in got.items() if s == "INIT"}
    isolated = {v for v in vertices if got[v][1] == 0}  # never change value, stay INIT
    real = [e for e in edges if e[1] in exists]
    assert kept - isolated == greatest_fixed_point(vertices, real, k) - isolated


@pytest.mark.parametrize("seed", range(6))
def test_kcore_degree_is_networkx_degree(seed: int) -> None:
    vertices, edges = random_graph(seed)
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(vertices)
    graph.add_edges_from((s, d) for s, d, _ in edges)
    got = kcore_kernel(vertices, edges, 2, 100)
    for v in vertices:
        assert got[v][0] == got[v][1] == graph.degree(v)


# ---------------------------------------------------------------------------
# Through Spark: both engines, the traversal bound, argument checks
# ---------------------------------------------------------------------------


def spark_graph(spark: Any, vertices: list[int], edges: list[Edge]) -> AlgorithmGraph:
    vframe = spark.createDataFrame([(v, "v") for v in vertices], "id long, label string")
    eframe = spark.createDataFrame(
        [(s, d, "e", w) for s, d, w in edges], "src long, dst long, label string, weight double"
    )
    return AlgorithmGraph(vframe, eframe, T.BIGINT, {}, {"weight": T.DOUBLE}, "g")


def run_rows(spark: Any, graph: AlgorithmGraph, name: str, args: list[Any], **conf: Any) -> Any:
    ctx = SimpleNamespace(spark=spark, config=Config(conf), catalog=None)
    return sorted(tuple(r) for r in algorithm(name).run(ctx, graph, args).collect())


def test_engines_agree(spark: Any) -> None:
    vertices, edges = random_graph(7, n=10, m=45)
    hub_vertices, hub_edges = hub_graph()
    vertices += [v + 1000 for v in hub_vertices]
    edges += [(s + 1000, d + 1000, w) for s, d, w in hub_edges]
    graph = spark_graph(spark, vertices, edges)
    calls: list[tuple[str, list[Any]]] = [
        ("IncMST", [60, 0.01, "f"]),
        ("incremental_kcore", [2, 50]),
    ]
    for name, args in calls:
        local = run_rows(spark, graph, name, args, **{"geaflow.dsl.algorithm.engine": "local"})
        dist = run_rows(spark, graph, name, args, **{"geaflow.dsl.algorithm.engine": "distributed"})
        assert local == dist, name
    expected = simulate_kcore(vertices, edges, 2, 50)
    assert local == sorted((v, *expected[v]) for v in vertices)


def test_inc_mst_respects_the_traversal_bound(spark: Any) -> None:
    vertices, edges = random_graph(2)
    graph = spark_graph(spark, vertices, edges)
    for engine in ("local", "distributed"):
        conf = {"geaflow.dsl.algorithm.engine": engine, "geaflow.dsl.max.traversal": 2}
        assert run_rows(spark, graph, "IncMST", [], **conf) == []


@pytest.mark.parametrize("args", [[0], [10, 1.5], [10, -0.1], [10, 0.1, " "], [1, 0.1, "f", 4]])
def test_inc_mst_rejects_bad_arguments(args: list[Any]) -> None:
    with pytest.raises(ValidationError):
        builtin_signature("IncMST").bind(args)


def test_rows_keep_float_weights_exact() -> None:
    vertices, edges = [1, 2], [(1, 2, 0.1), (1, 2, -0.0), (1, 2, 0.0)]
    g = LocalGraph.from_lists(vertices, edges)
    inc_mst = algorithm("IncMST")
    _, _, w = inc_mst.local(g, {**inc_mst.bind([], None), "weight_column": "weight"}, 64)
    assert sorted(np.signbit(w).tolist()) == [False, False, True]
