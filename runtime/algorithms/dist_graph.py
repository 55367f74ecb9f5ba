"""The graph as DataFrames for supersteps, with the pieces algorithms share.

GeaFlow runs a vertex program only on vertices; a message to an id without
a vertex is dropped, but edges to such ids still belong to their source's
edge list.  ``pairs`` therefore keep both kinds of endpoint, and algorithms
join with ``vertices`` where only real vertices may act.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from geaflow_sql.core import types as T

from .local_graph import EDGE_PROP, KIND, LABEL, VERTEX_PROP, A, B


@dataclass
class Needs:
    """What of the graph an algorithm reads (everything else is projected away)."""

    vertex_labels: bool = False
    edge_labels: bool = False
    vertex_props: tuple[str, ...] = ()
    edge_props: tuple[str, ...] = ()


@dataclass
class DistGraph:
    vertices: Any  # id, label, props — one row per id
    edges: Any  # src, dst, label, props — no null endpoints
    id_type: Any

    @classmethod
    def of(cls, graph: Any, needs: Needs) -> DistGraph:
        from pyspark.sql import functions as F

        # Keep the first row of an id, as GeaFlow's state (keyed by id) and the
        # local engine do; ``pos`` is the vertex's place in storage order.
        vcols = [F.col("label").cast("string").alias("label")]
        vcols += [F.col(f"`{p}`").alias(p) for p in needs.vertex_props]
        first = (
            graph.vertices.where(F.col("id").isNotNull())
            .withColumn("pos", F.monotonically_increasing_id())
            .groupBy("id")
            .agg(F.min(F.struct(F.col("pos"), *vcols)).alias("first"))
        )
        vertices = first.select("id", "first.*")
        ecols = [F.col("src"), F.col("dst"), F.col("label").cast("string").alias("label")]
        ecols += [F.col(f"`{p}`").alias(p) for p in needs.edge_props]
        edges = graph.edges.where(F.col("src").isNotNull() & F.col("dst").isNotNull()).select(
            *ecols
        )
        return cls(vertices, edges, graph.id_type)

    @property
    def spark(self) -> Any:
        return self.vertices.sparkSession

    def pairs(self, direction: str, *extra: str) -> Any:
        """(a, b, extra...): for every entry of a's edge list, its other end b.

        ``OUT``: an edge u -> v gives (u, v); ``IN`` gives (v, u); ``BOTH``
        gives both, so a self-loop gives (v, v) twice.
        """
        from pyspark.sql import functions as F

        keep = [F.col(f"`{c}`") for c in extra]
        out = self.edges.select(F.col("src").alias("a"), F.col("dst").alias("b"), *keep)
        back = self.edges.select(F.col("dst").alias("a"), F.col("src").alias("b"), *keep)
        if direction == "OUT":
            return out
        if direction == "IN":
            return back
        return out.unionByName(back)

    def vertex_ids(self, label: str | None = None) -> Any:
        """Ids of the vertices that run the program (all, or those with ``label``)."""
        from pyspark.sql import functions as F

        v = self.vertices if label is None else self.vertices.where(F.col("label") == F.lit(label))
        return v.select("id")


def with_self(pairs: Any, ids: Any) -> Any:
    """``pairs`` (a, b, ...) with ``own`` = False, plus one (v, v, own = True) row per vertex.

    A superstep joins the vertex state with these once: the ``own`` row brings
    each vertex its own state, the others bring its senders'.  Reading the
    previous round's state a single time keeps the plan of a round linear in
    the number of rounds (a frame used twice would double the plan each round).
    """
    from pyspark.sql import functions as F

    extra = [c for c in pairs.columns if c not in ("a", "b")]
    mine = ids.select(
        F.col("id").alias("a"),
        F.col("id").alias("b"),
        *[F.lit(None).cast(pairs.schema[c].dataType).alias(c) for c in extra],
    )
    both = pairs.withColumn("own", F.lit(False)).unionByName(mine.withColumn("own", F.lit(True)))
    # Partitioned by sender, like the state (grouped by vertex id) it is joined
    # with each round, so a cached copy is not shuffled again every round.
    return both.repartition("a")


def union_frame(graph: Any, needs: Needs) -> Any:
    """Vertices and edges of ``graph`` as one frame, to carry a graph into one task.

    The vertices come first, in the order the store gives them: GeaFlow
    visits vertices in storage order and a few results depend on it.
    """
    from pyspark.sql import functions as F

    id_sql = T.spark_sql_type(graph.id_type)
    vcols = [
        F.lit(0).cast("tinyint").alias(KIND),
        F.col("id").cast(id_sql).alias(A),
        F.lit(None).cast(id_sql).alias(B),
        (
            F.col("label").cast("string") if needs.vertex_labels else F.lit(None).cast("string")
        ).alias(LABEL),
    ]
    vcols += [F.col(f"`{p}`").alias(VERTEX_PROP + p) for p in needs.vertex_props]
    ecols = [
        F.lit(1).cast("tinyint").alias(KIND),
        F.col("src").cast(id_sql).alias(A),
        F.col("dst").cast(id_sql).alias(B),
        (F.col("label").cast("string") if needs.edge_labels else F.lit(None).cast("string")).alias(
            LABEL
        ),
    ]
    ecols += [F.col(f"`{p}`").alias(EDGE_PROP + p) for p in needs.edge_props]
    vertices = graph.vertices.select(*vcols)
    edges = graph.edges.select(*ecols)
    return vertices.unionByName(edges, allowMissingColumns=True)
