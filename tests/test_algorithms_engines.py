"""Both engines (local in one task, distributed supersteps) give the same rows.

Also: lineage is cut so the plan of an iteration does not grow with its
rounds, reliable checkpoints go where they are told, the engine switch
follows ``geaflow.dsl.iteration.local.max.edges``, and the GraphFrames backend
fails clearly when its JVM package is missing.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from geaflow_sql.core import types as T
from geaflow_sql.core.config import Config
from geaflow_sql.core.errors import ConfigError
from runtime.algorithms.base import AlgorithmGraph
from runtime.algorithms.iteration import IterationTrace, iterate
from runtime.algorithms.options import CheckpointPolicy, RunOptions
from runtime.algorithms.registry import algorithm_named
from tests.spark_plans import plan_nodes


def ctx_for(spark: Any, **conf: Any) -> Any:
    return SimpleNamespace(spark=spark, config=Config(conf), catalog=None)


@pytest.fixture(scope="module")
def awkward(spark: Any) -> AlgorithmGraph:
    """Self-loops, parallel edges, an isolated vertex, two components, an edge to
    an id without a vertex (99), a vertex listed twice (the first row wins)."""
    vertices = spark.createDataFrame(
        [
            (1, "a", 1.0),
            (2, "a", 2.0),
            (3, "b", 3.0),
            (4, "a", 4.0),
            (5, "b", 5.0),
            (6, "a", 6.0),
            (7, "a", 7.0),
            (8, "b", 8.0),
            (10, "a", 10.0),
            (3, "a", 30.0),
        ],
        "id long, label string, score double",
    )
    edges = spark.createDataFrame(
        [
            (1, 2, "x", 1.0),
            (2, 3, "x", 2.0),
            (3, 1, "y", 1.0),
            (1, 3, "x", 0.5),
            (1, 3, "x", 0.5),
            (3, 4, "y", 1.0),
            (4, 4, "x", 1.0),
            (4, 5, "x", 3.0),
            (5, 6, "y", 1.0),
            (6, 4, "x", 1.0),
            (6, 99, "x", 1.0),
            (7, 8, "x", 1.0),
            (8, 7, "y", 2.0),
            (2, 4, "x", 1.0),
        ],
        "src long, dst long, label string, weight double",
    )
    return AlgorithmGraph(
        vertices, edges, T.BIGINT, {"score": T.DOUBLE}, {"weight": T.DOUBLE}, "awkward"
    )


@pytest.fixture(scope="module")
def modern(spark: Any) -> AlgorithmGraph:
    """GeaFlow's modern graph with string ids, persons stored first, two shards."""
    vertices = spark.createDataFrame(
        [
            ("1", "person"),
            ("2", "person"),
            ("4", "person"),
            ("6", "person"),
            ("3", "software"),
            ("5", "software"),
        ],
        "id string, label string",
    )
    edges = spark.createDataFrame(
        [
            ("1", "3", "created"),
            ("1", "2", "knows"),
            ("1", "4", "knows"),
            ("4", "3", "created"),
            ("4", "5", "created"),
            ("6", "3", "created"),
        ],
        "src string, dst string, label string",
    )
    return AlgorithmGraph(vertices, edges, T.VARCHAR, {}, {}, "modern", shard_count=2)


def rows(
    spark: Any, graph: AlgorithmGraph, name: str, args: list[Any], **conf: Any
) -> list[tuple[Any, ...]]:
    out = algorithm_named(name).run(ctx_for(spark, **conf), graph, args)
    assert out.columns == [f"c{i}" for i in range(len(out.columns))]
    return sorted((tuple(r) for r in out.collect()), key=repr)


def same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) and isinstance(v, float):
                if not (
                    math.isclose(u, v, rel_tol=1e-12, abs_tol=1e-15)
                    or (math.isnan(u) and math.isnan(v))
                ):
                    return False
            elif u != v:
                return False
    return True


CALLS = [
    ("sssp", [1]),
    ("sssp", [1, "x", "a"]),
    ("khop", [1, 2]),
    ("closeness_centrality", [1]),
    ("assp", []),
    ("page_rank", [0.85, 0.01, 20]),
    ("page_rank", [0.85, 0.0, 20]),  # threshold 0: the (id, rank) supersteps
    ("page_rank", [0.5, 0.0, 7]),
    ("wcc", []),
    ("cc", []),
    ("lpa", []),
    ("kcore", [2]),
    ("louvain", []),
    ("louvain", [20, 0.001, True]),
    ("triangle_count", []),
    ("triangle_count", ["a"]),
    ("cluster_coefficient", []),
    ("cluster_coefficient", ["a", 1]),
    ("common_neighbors", [1, 4]),
    ("jaccard_similarity", [1, 4]),
]


@pytest.mark.parametrize(("name", "args"), CALLS, ids=[f"{n}{a}" for n, a in CALLS])
def test_engines_agree(spark: Any, awkward: AlgorithmGraph, name: str, args: list[Any]) -> None:
    local = rows(spark, awkward, name, args, **{"geaflow.dsl.algorithm.engine": "local"})
    distributed = rows(
        spark, awkward, name, args, **{"geaflow.dsl.algorithm.engine": "distributed"}
    )
    assert local, f"{name} returned nothing"
    assert same(local, distributed), (local, distributed)


@pytest.mark.parametrize("threshold", [0.0, 0.01])
def test_page_rank_rounds_shuffle_only_their_sums(
    spark: Any, awkward: AlgorithmGraph, threshold: float, monkeypatch: Any
) -> None:
    """The distributed PageRank keeps its edges partitioned by source and its
    vertices by id, alike: a round's plan exchanges only the shares summed by
    vertex and sorts nothing (its joins hash the vertex side where it lies;
    sort-merge joins sorted the vertices' values and the sums every round)."""
    from runtime.algorithms import iteration

    plans: list[list[str]] = []
    cut = iteration.cut_lineage

    def recording_cut(df: Any, policy: Any) -> Any:
        plans.append(plan_nodes(df))  # the rounds since the last cut (one: each reads a checkpoint)
        return cut(df, policy)

    monkeypatch.setattr(iteration, "cut_lineage", recording_cut)
    args = [0.85, threshold, 6]
    broadcast = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # joins as on big graphs
    try:
        out = rows(
            spark, awkward, "page_rank", args, **{"geaflow.dsl.algorithm.engine": "distributed"}
        )
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", broadcast)
    assert plans
    for names in plans:
        assert names.count("Exchange") == 1, names
        assert "Sort" not in names, names
        assert names.count("ShuffledHashJoin") == 2, names
    assert same(out, rows(spark, awkward, "page_rank", args))


def test_page_rank_spreads_many_vertices_over_more_partitions(
    spark: Any, awkward: AlgorithmGraph, monkeypatch: Any
) -> None:
    """A round's joins hold one partition's vertices in a hash table, so a
    graph with more vertices than a partition may hold gets more partitions
    than the session's shuffle partitions; the ranks are the same."""
    from runtime.algorithms.library import ranking

    monkeypatch.setattr(ranking, "MAX_VERTICES_PER_PARTITION", 2)  # 9 vertices: 5 partitions
    conf = {"geaflow.dsl.algorithm.engine": "distributed"}
    out = algorithm_named("page_rank").run(ctx_for(spark, **conf), awkward, [0.85, 0.0, 6])
    assert int(spark.conf.get("spark.sql.shuffle.partitions")) < 5
    assert out.rdd.getNumPartitions() == 5
    got = sorted((tuple(r) for r in out.collect()), key=repr)
    assert same(got, rows(spark, awkward, "page_rank", [0.85, 0.0, 6]))


@pytest.mark.parametrize("name", ["cluster_coefficient", "triangle_count"])
def test_engines_agree_on_shard_local_filters(
    spark: Any, modern: AlgorithmGraph, name: str
) -> None:
    args = ["person", 1] if name == "cluster_coefficient" else ["person"]
    local = rows(spark, modern, name, args, **{"geaflow.dsl.algorithm.engine": "local"})
    distributed = rows(spark, modern, name, args, **{"geaflow.dsl.algorithm.engine": "distributed"})
    assert same(local, distributed)
    if name == "cluster_coefficient":
        assert local[0] == ("1", pytest.approx(1 / 6))


def test_engine_follows_the_edge_limit(spark: Any, awkward: AlgorithmGraph) -> None:
    sssp = algorithm_named("sssp")
    small = sssp.run(ctx_for(spark), awkward, [1])
    big = sssp.run(ctx_for(spark, **{"geaflow.dsl.iteration.local.max.edges": 5}), awkward, [1])
    assert "MapInArrow" in plan_text(small)
    assert "MapInArrow" not in plan_text(big)
    assert sorted(small.collect()) == sorted(big.collect())


def plan_text(df: Any) -> str:
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        df.explain()
    return buffer.getvalue()


def test_plan_size_does_not_grow(spark: Any) -> None:
    from pyspark.sql import functions as F

    from runtime.algorithms.dist_graph import with_self

    ids = spark.range(20)
    ring = spark.createDataFrame([(i, (i + 1) % 20) for i in range(20)], "a long, b long")
    links = with_self(ring, ids)
    start = ids.select(F.col("id"), F.lit(1.0).alias("pr"))

    def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
        state = frames["state"]
        nxt = (
            state.join(links, state["id"] == links["a"])
            .groupBy(F.col("b").alias("id"))
            .agg(F.sum(F.when(~F.col("own"), F.col("pr"))).alias("sum"))
            .select("id", (F.lit(0.15) + F.lit(0.85) * F.coalesce("sum", F.lit(0.0))).alias("pr"))
        )
        return {"state": nxt}, None

    cut = IterationTrace()
    result = iterate(
        {"state": start}, step, 50, RunOptions(checkpoint=CheckpointPolicy(5)), cut, measure="state"
    )
    assert cut.rounds == 50 and cut.checkpoints == 10
    assert max(cut.plan_sizes[40:]) <= max(cut.plan_sizes[:10])
    assert result["state"].count() == 20
    # the same iteration without cutting lineage grows every round
    uncut = IterationTrace()
    iterate(
        {"state": start},
        step,
        12,
        RunOptions(checkpoint=CheckpointPolicy(0)),
        uncut,
        measure="state",
    )
    assert all(b > a for a, b in zip(uncut.plan_sizes, uncut.plan_sizes[1:], strict=False))
    assert uncut.plan_sizes[-1] > max(cut.plan_sizes)


def test_reliable_checkpoints(spark: Any, awkward: AlgorithmGraph, tmp_path: Any) -> None:
    folder = tmp_path / "checkpoints"
    conf = {
        "geaflow.dsl.algorithm.engine": "distributed",
        "geaflow.dsl.iteration.checkpoint.mode": "reliable",
        "geaflow.dsl.iteration.checkpoint.dir": str(folder),
        "geaflow.dsl.iteration.checkpoint.interval": 2,
    }
    reliable = rows(spark, awkward, "wcc", [], **conf)
    assert reliable == rows(spark, awkward, "wcc", [], **{"geaflow.dsl.algorithm.engine": "local"})
    assert any(folder.rglob("*")), "no checkpoint files written"


def test_options_are_checked(spark: Any, awkward: AlgorithmGraph) -> None:
    with pytest.raises(ConfigError, match="needs a folder"):
        rows(spark, awkward, "wcc", [], **{"geaflow.dsl.iteration.checkpoint.mode": "reliable"})
    with pytest.raises(ConfigError, match="local, distributed"):
        rows(spark, awkward, "wcc", [], **{"geaflow.dsl.algorithm.engine": "fast"})


def test_graphframes_backend(spark: Any, awkward: AlgorithmGraph) -> None:
    from runtime.spark_adapter import graphframes_available

    if graphframes_available(spark):
        for name, args in [
            ("sssp", [1]),
            ("page_rank", []),
            ("wcc", []),
            ("cc", []),
            ("khop", [1, 2]),
        ]:
            assert same(
                rows(
                    spark, awkward, name, args, **{"geaflow.dsl.algorithm.backend": "graphframes"}
                ),
                rows(spark, awkward, name, args, **{"geaflow.dsl.algorithm.backend": "builtin"}),
            )
        return
    with pytest.raises(ConfigError, match="--packages io.graphframes:graphframes"):
        rows(spark, awkward, "sssp", [1], **{"geaflow.dsl.algorithm.backend": "graphframes"})
    assert rows(spark, awkward, "sssp", [1], **{"geaflow.dsl.algorithm.backend": "auto"}) == rows(
        spark, awkward, "sssp", [1], **{"geaflow.dsl.algorithm.backend": "builtin"}
    )
