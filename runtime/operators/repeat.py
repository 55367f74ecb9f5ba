"""A quantified path pattern on Spark: rounds that chain walks of a sub-path.

``RepeatMatch`` (see ``planner.graph_nodes``) repeats a sub-path matched
alone.  Its walks are read once into a small table (the ids where each
starts and ends, the values its group variables collect, its edges and
vertices for a path value) and materialised; the walks of the repetitions
are built from the distinct vertices the paths stand at, one round of the
node's iteration cycle per repetition, and joined back to the paths at the
end, as ``graph._loop`` does for a variable-length edge.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from planner.graph_nodes import RepeatMatch
from runtime.env import Env

_ID = f"`{T.VERTEX_ID_FIELD}`"


def repeat_match(env: Env, node: RepeatMatch, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    path, body = inputs
    n = len(node.input.schema)
    names = [f"c{i}" for i in range(n)]
    groups = [f"__g{j}" for j in range(len(node.groups))]
    run = node.run
    # One row per walk of the sub-path: where it starts and ends, what a
    # repetition of it adds to each list, and where it leaves the walk.
    joins_at, moves_to = (node.first, node.last) if node.forward else (node.last, node.first)
    step_cols = [f"c{joins_at}.{_ID} AS __on", f"c{moves_to}.{_ID} AS __to"]
    step_cols += [f"c{i} AS {g}" for i, g in zip(node.groups, groups, strict=True)]
    if run is not None:
        step_cols.append(_array(run[0], node.edge_type, "__re"))
        step_cols.append(_array(run[1], node.vertex_type, "__rv"))
    step_cols.append(f"c{moves_to} AS __endv")
    steps = body.selectExpr(*step_cols).localCheckpoint(eager=True)

    at = f"c{node.source}.{_ID}"
    starts = (
        path.selectExpr(f"{at} AS __from")
        .where("__from IS NOT NULL")
        .distinct()
        .localCheckpoint(eager=True)
    )
    body_types = node.body.schema
    empty = [
        f"CAST(array() AS {T.spark_sql_type(T.ArrayType(body_types[i].type))}) AS {g}"
        for i, g in zip(node.groups, groups, strict=True)
    ]
    lists = list(groups)
    if run is not None:
        empty.append(f"CAST(array() AS {T.spark_sql_type(T.ArrayType(node.edge_type))}) AS __re")
        empty.append(f"CAST(array() AS {T.spark_sql_type(T.ArrayType(node.vertex_type))}) AS __rv")
        lists += ["__re", "__rv"]
    vertex_sql = T.spark_sql_type(node.vertex_type)
    walk0 = starts.selectExpr(
        "__from", "__from AS __at", "0 AS __hops", *empty, f"CAST(NULL AS {vertex_sql}) AS __endv"
    )
    levels = [walk0] if node.min_hops == 0 else []
    state = {"frontier": walk0}

    def grown(name: str) -> str:
        # A repetition adds a value to a group list, a run of values to the run's.
        added = f"s.{name}" if name in ("__re", "__rv") else f"array(s.{name})"
        parts = (f"w.{name}", added) if node.forward else (added, f"w.{name}")
        return f"concat({parts[0]}, {parts[1]}) AS {name}"

    def step(round_no: int) -> tuple[bool, Any]:
        hop = round_no + 1
        frontier = state["frontier"]
        reached = (
            frontier.alias("w")
            .join(steps.alias("s"), F.expr("w.__at = s.__on"), "inner")
            .selectExpr(
                "w.__from",
                "s.__to AS __at",
                f"{hop} AS __hops",
                *(grown(name) for name in lists),
                "s.__endv",
            )
        )
        state["frontier"] = reached
        if hop >= node.min_hops:
            levels.append(reached)
        return hop < node.max_hops, hop

    if node.max_hops > 0:
        env.iterate(node, step, node.max_hops)
    walks = levels[0] if levels else walk0.where("FALSE")
    for level in levels[1:]:
        walks = walks.unionByName(level)
    joined = path.join(walks, path[f"c{node.source}"][T.VERTEX_ID_FIELD] == walks["__from"])
    out = list(names) + [f"{g} AS c{n + j}" for j, g in enumerate(groups)]
    if run is not None:
        k = n + len(groups)
        # The run's vertices strictly between those before and after it: the
        # last one a repetition adds is the vertex after the pattern.
        out += [f"__re AS c{k}", f"slice(__rv, 1, greatest(size(__rv) - 1, 0)) AS c{k + 1}"]
    if node.target_bound is not None:
        joined = joined.where(f"__at = c{node.target_bound}.{_ID}")
        return joined.selectExpr(*out)
    end = f"CASE WHEN __hops = 0 THEN c{node.source} ELSE __endv END"
    return joined.selectExpr(*out, f"{end} AS c{node.target_index}")


def _array(fields: tuple[int, ...], element: Any, alias: str) -> str:
    """Body fields as one array column (typed when there are none)."""
    if not fields:
        return f"CAST(array() AS {T.spark_sql_type(T.ArrayType(element))}) AS {alias}"
    return f"array({', '.join(f'c{i}' for i in fields)}) AS {alias}"
