"""Graph algorithm signatures: what ``CALL name(args) YIELD (...)`` binds against.

The planner checks a call's arguments and types its output columns from a
signature alone; the runtime maps the signature's name to an implementation
(``runtime.algorithms.registry``).  A signature lists GeaFlow's parameters in
order (with defaults), its output columns (``ID``: the graph's vertex id
type), the Java class names that also name it, and whether a windowed job
runs it incrementally (the window's new vertices and edges plus state kept
between windows, instead of the whole graph).

A user's algorithm (``geaflow_sql.udga.AlgorithmUserFunction``) gets a
signature from its ``output`` declaration; its arguments are passed as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.errors import ValidationError

REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()
ID = "ID"  # an output column typed as the graph's vertex id
_PLAN = "org.apache.geaflow.dsl.udf.graph."
_LDBC = "org.apache.geaflow.dsl.udf.ldbc."


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # id | int | float | str | bool
    default: Any = REQUIRED


@dataclass(frozen=True, slots=True)
class Output:
    name: str
    type: Any  # a geaflow type, or ID


ArgumentRule = Callable[["AlgorithmSignature", list[Any]], dict[str, Any]]


@dataclass(frozen=True)
class AlgorithmSignature:
    name: str
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    java_classes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    incremental: bool = False
    # Arguments read some other way than by position (see cluster_coefficient).
    arguments: ArgumentRule | None = field(default=None, compare=False)
    # Checks of the bound arguments beyond their kinds (see IncMST).
    check: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False)
    user_defined: bool = False

    def usage(self) -> str:
        parts = [p.name if p.default is REQUIRED else f"[{p.name}]" for p in self.params]
        return f"{self.name}({', '.join(parts)})"

    def bind(self, args: list[Any]) -> dict[str, Any]:
        """The arguments by name, converted as GeaFlow converts them (ids are
        left as given: their type is the graph's, known when the call runs)."""
        if self.user_defined:
            return {"args": list(args)}
        if self.arguments is not None:
            values = self.arguments(self, list(args))
        else:
            if len(args) > len(self.params):
                raise ValidationError(
                    f"{self.name}() takes at most {len(self.params)} argument(s), got "
                    f"{len(args)}: usage {self.usage()}"
                )
            values = {}
            for i, param in enumerate(self.params):
                if i < len(args):
                    values[param.name] = convert_arg(self.name, param, args[i])
                elif param.default is REQUIRED:
                    raise ValidationError(f"{self.name}() needs {param.name}: usage {self.usage()}")
                else:
                    values[param.name] = param.default
        if self.check is not None:
            self.check(values)
        return values

    def output_names(self) -> list[str]:
        return [o.name for o in self.outputs]

    def output_types(self, id_type: Any) -> list[Any]:
        return [id_type if o.type == ID else o.type for o in self.outputs]


def convert_arg(algorithm: str, param: Param, value: Any) -> Any:
    """One CALL argument as the parameter's kind (GeaFlow parses the text of numbers)."""
    where = f"{algorithm}() argument {param.name}"
    if param.kind == "id":
        if value is None:
            raise ValidationError(f"{where} must not be null")
        return value
    if value is None:
        raise ValidationError(f"{where} must not be null")
    text = str(value).strip()
    try:
        if param.kind == "int":
            if isinstance(value, bool):
                raise ValueError
            return int(value) if isinstance(value, Integral) else int(text)
        if param.kind == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value) if isinstance(value, Real) else float(text)
        if param.kind == "bool":
            return value if isinstance(value, bool) else text.lower() == "true"
    except ValueError:
        raise ValidationError(
            f"{where} must be a{'n integer' if param.kind == 'int' else ' number'}, got {value!r}"
        ) from None
    return value if isinstance(value, str) else text


def _label_or_degree(sig: AlgorithmSignature, args: list[Any]) -> dict[str, Any]:
    """``(label)``, ``(label, min_degree)`` or ``(min_degree)``: the first argument's type decides."""
    if len(args) > 2:
        raise ValidationError(
            f"{sig.name}() takes at most 2 arguments, got {len(args)}: "
            f"usage {sig.name}([vertex_label], [min_degree])"
        )

    def degree(value: Any) -> int:
        if isinstance(value, Integral) and not isinstance(value, bool):
            return int(value)
        raise ValidationError(f"{sig.name}() minimum degree must be an integer, got {value!r}")

    label, min_degree = None, 2
    if args and args[0] is not None:
        first = args[0]
        if isinstance(first, str):
            label = first
            if len(args) > 1 and args[1] is not None:
                min_degree = degree(args[1])
        elif isinstance(first, Integral) and not isinstance(first, bool):
            min_degree = int(first)
        else:
            raise ValidationError(
                f"{sig.name}() argument must be a vertex label (string) or a minimum "
                f"degree (integer), got {first!r}"
            )
    return {"vertex_label": label, "min_degree": min_degree}


def _check_inc_mst(p: dict[str, Any]) -> None:
    if p["max_iterations"] <= 0:
        raise ValidationError("IncMST() maxIterations must be positive")
    if not 0.0 <= p["threshold"] <= 1.0:
        raise ValidationError("IncMST() convergenceThreshold must be between 0 and 1")
    if not str(p["field"]).strip():
        raise ValidationError("IncMST() keyFieldName cannot be empty")


_COMPONENT = (Output("id", ID), Output("component", T.VARCHAR))

BUILTIN: tuple[AlgorithmSignature, ...] = (
    AlgorithmSignature(
        "sssp",
        (
            Param("source", "id"),
            Param("edge_label", "str", None),
            Param("vertex_label", "str", None),
        ),
        (Output("id", ID), Output("distance", T.BIGINT)),
        (_PLAN + "SingleSourceShortestPath",),
        incremental=True,
    ),
    AlgorithmSignature(
        "khop",
        (Param("source", "id", None), Param("k", "int", 1)),
        (Output("id", ID), Output("k", T.INTEGER)),
        (_PLAN + "KHop",),
    ),
    AlgorithmSignature(
        "closeness_centrality",
        (Param("source", "id"),),
        (Output("id", ID), Output("cc", T.DOUBLE)),
        (_PLAN + "ClosenessCentrality",),
    ),
    AlgorithmSignature(
        "assp",
        (),
        (Output("res", T.VARCHAR),),
        (_PLAN + "AllSourceShortestPath",),
        incremental=True,
    ),
    AlgorithmSignature(
        "page_rank",
        (
            Param("damping", "float", 0.85),
            Param("threshold", "float", 0.01),
            Param("max_iter", "int", 20),
        ),
        (Output("id", ID), Output("pr", T.DOUBLE)),
        (_PLAN + "PageRank",),
    ),
    AlgorithmSignature(
        "wcc",
        (Param("iterations", "int", 20), Param("field", "str", "component")),
        _COMPONENT,
        (_PLAN + "WeakConnectedComponents",),
    ),
    AlgorithmSignature(
        "cc",
        (Param("iterations", "int", 1000), Param("field", "str", "component")),
        _COMPONENT,
        (_PLAN + "ConnectedComponents",),
    ),
    AlgorithmSignature(
        "lpa",
        (Param("iterations", "int", 100), Param("field", "str", "label")),
        (Output("id", ID), Output("label", ID)),
        (_PLAN + "LabelPropagation",),
    ),
    AlgorithmSignature(
        "kcore",
        (Param("k", "int", 1),),
        (Output("id", ID), Output("value", T.INTEGER)),
        (_PLAN + "KCore",),
    ),
    AlgorithmSignature(
        "louvain",
        (
            Param("max_iter", "int", 20),
            Param("modularity", "float", 0.001),
            Param("weighted", "bool", False),
            Param("min_size", "int", 1),
        ),
        (Output("id", ID), Output("community", ID)),
        (_PLAN + "Louvain",),
    ),
    AlgorithmSignature(
        "triangle_count",
        (Param("vertex_label", "str", None),),
        (Output("id", ID), Output("count", T.BIGINT)),
        (_PLAN + "TriangleCount",),
    ),
    AlgorithmSignature(
        "cluster_coefficient",
        (Param("vertex_label", "str", None), Param("min_degree", "int", 2)),
        (Output("vid", ID), Output("coefficient", T.DOUBLE)),
        (_PLAN + "ClusterCoefficient",),
        arguments=_label_or_degree,
    ),
    AlgorithmSignature(
        "common_neighbors",
        (Param("a", "id"), Param("b", "id")),
        (Output("id", ID),),
        (_PLAN + "CommonNeighbors",),
    ),
    AlgorithmSignature(
        "jaccard_similarity",
        (Param("a", "id"), Param("b", "id")),
        (Output("vertex_a", ID), Output("vertex_b", ID), Output("jaccard_coefficient", T.DOUBLE)),
        (_PLAN + "JaccardSimilarity", _PLAN + "JaccardSimilarityAlgorithm"),
    ),
    AlgorithmSignature(
        "inc_wcc",
        (Param("iterations", "int", 20), Param("field", "str", "component")),
        (Output("id", ID), Output("component", ID)),
        (_PLAN + "IncWeakConnectedComponents",),
        incremental=True,
    ),
    AlgorithmSignature(
        "inc_khop",
        (Param("k", "int"),),
        (Output("ret", T.VARCHAR),),
        (_PLAN + "IncKHopAlgorithm",),
        incremental=True,
    ),
    AlgorithmSignature(
        "incremental_kcore",
        (
            Param("k", "int", 3),
            Param("max_iterations", "int", 100),
            Param("threshold", "float", 0.001),
        ),
        (
            Output("vid", ID),
            Output("core_value", T.INTEGER),
            Output("degree", T.INTEGER),
            Output("change_status", T.VARCHAR),
        ),
        (_PLAN + "IncrementalKCore",),
        incremental=True,
    ),
    AlgorithmSignature(
        "IncMST",
        (
            Param("max_iterations", "int", 50),
            Param("threshold", "float", 0.001),
            Param("field", "str", "mst_edges"),
        ),
        (Output("srcId", ID), Output("targetId", ID), Output("weight", T.DOUBLE)),
        (_PLAN + "IncMinimumSpanningTree",),
        aliases=("inc_mst",),
        incremental=True,
        check=_check_inc_mst,
    ),
    # GeaFlow's LDBC BI vertex programs (runtime.algorithms.library.ldbc).
    AlgorithmSignature(
        "bi15_connection",
        (
            Param("person1", "id"),
            Param("person2", "id"),
            Param("start_date", "int"),
            Param("end_date", "int"),
        ),
        (Output("distance", T.DOUBLE),),
        (_LDBC + "BIConnectionPathAlgorithm",),
    ),
    AlgorithmSignature(
        "bi19_interaction",
        (Param("city1", "id"), Param("city2", "id")),
        (
            Output("person1Id", T.BIGINT),
            Output("person2Id", T.BIGINT),
            Output("totalWeight", T.BIGINT),
        ),
        (_LDBC + "BICityInteractionAlgorithm",),
    ),
    AlgorithmSignature(
        "bi20_recruitment",
        (Param("person", "id"),),
        (Output("id", T.BIGINT), Output("distance", T.BIGINT)),
        (_LDBC + "BIRecruitmentAlgorithm",),
    ),
)

_BY_NAME = {n.lower(): sig for sig in BUILTIN for n in (sig.name, *sig.aliases)}
# Apache GeaFlow's package, and TuGraph Analytics' older one (its docs use it).
_NEW_ROOT, _OLD_ROOT = "org.apache.geaflow.", "com.antgroup.geaflow."
_BY_CLASS = {
    name: sig
    for sig in BUILTIN
    for cls in sig.java_classes
    for name in (cls, cls.replace(_NEW_ROOT, _OLD_ROOT, 1))
}


def signature_named(name: str) -> AlgorithmSignature | None:
    """A built-in algorithm by name or alias (any case)."""
    return _BY_NAME.get(name.lower())


def signature_for_class(class_name: str) -> AlgorithmSignature | None:
    """A built-in algorithm by one of GeaFlow's Java class names."""
    return _BY_CLASS.get(class_name)


def algorithm_names() -> list[str]:
    return sorted(_BY_NAME)


def user_signature(name: str, instance: Any) -> AlgorithmSignature:
    """The signature of a user's ``AlgorithmUserFunction`` (outputs from its
    ``output`` declaration; ``ID`` there is the graph's vertex id type)."""
    outputs = tuple(Output(n, t) for n, t in instance.output_schema(ID))
    return AlgorithmSignature(name, (), outputs, user_defined=True)


def builtin_signature(name: str) -> AlgorithmSignature:
    """A built-in's signature (its implementation names it this way)."""
    found = signature_named(name)
    if found is None:
        raise KeyError(name)
    return found
