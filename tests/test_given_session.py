"""A SparkSession the user made is set up for GeaFlow's semantics and for
Spark's own faults, whatever it was set to."""

from __future__ import annotations

from collections import Counter

import pytest

# Two labels' vertices (a UNION in Spark's plan) in a cross join, then a
# shortest-path search over a graph with self-loops.
SCRIPT = """
CREATE GRAPH kg (Vertex A (id bigint ID, p bigint), Vertex B (id bigint ID, p bigint),
  Edge R (src bigint SOURCE ID, dst bigint DESTINATION ID, w bigint),
  Edge S (src bigint SOURCE ID, dst bigint DESTINATION ID, w bigint)) WITH (storeType='memory');
USE GRAPH kg;
INSERT INTO kg.A(id, p) VALUES (1, 2), (2, 2), (4, 1);
INSERT INTO kg.B(id, p) VALUES (3, 1), (5, 3), (6, 3);
INSERT INTO kg.R(src, dst, w) VALUES (1, 2, 2), (2, 5, 2), (4, 4, 2), (5, 2, 1);
INSERT INTO kg.S(src, dst, w) VALUES (1, 1, 2), (3, 4, 1), (3, 4, 3);
SET geaflow.dsl.query.engine = distributed;
"""


@pytest.fixture
def codegen_on(spark):
    """The test session with Spark's defaults for generated code (the suite
    turns it off for speed), union codegen included; restored after."""
    keys = {
        "spark.sql.codegen.wholeStage": "true",
        "spark.sql.codegen.factoryMode": "FALLBACK",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.codegen.wholeStage.union.enabled": "true",
    }
    before = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield spark
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def test_a_union_streamed_through_a_cross_join_runs_with_sparks_codegen(codegen_on, tmp_path):
    from geaflow_sql import Session

    session = Session(spark=codegen_on, base_dir=str(tmp_path))
    assert codegen_on.conf.get("spark.sql.codegen.wholeStage.union.enabled") == "false"
    session.execute(SCRIPT)
    (result,) = session.execute(
        "MATCH (a), (b WHERE b.id IN (3, 2)), p = ANY SHORTEST (a)-[e]->{0,}(b) "
        "RETURN a.id, b.id, length(p)"
    )
    # 3 is reached by nothing but itself (no edge ends there); 2 from 1, 5 and
    # itself (over 5: 2 -> 5 -> 2 is no shortest walk, the empty one is).
    assert Counter(result.collect()) == Counter(
        {(3, 3, 0): 1, (2, 2, 0): 1, (1, 2, 1): 1, (5, 2, 1): 1}
    )
