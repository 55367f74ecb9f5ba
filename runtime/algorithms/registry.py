"""Which implementation runs a bound CALL: signature name -> ``Algorithm``.

The planner binds a call against a signature (``planner.algorithms``); here a
built-in signature's name finds the class that computes it, and a user's
algorithm is adapted from its instance.
"""

from __future__ import annotations

from typing import Any

from planner.algorithms import AlgorithmSignature, signature_named

from .base import Algorithm
from .library.community import Louvain
from .library.components import ConnectedComponents, LabelPropagation, WeakConnectedComponents
from .library.cores import KCore
from .library.inc_kcore import IncrementalKCore
from .library.inc_mst import IncMinimumSpanningTree
from .library.incremental import IncAllSourceShortestPath, IncKHop, IncWeakConnectedComponents
from .library.ldbc import ldbc_algorithms
from .library.paths import ClosenessCentrality, KHop, SingleSourceShortestPath
from .library.ranking import PageRank
from .library.similarity import CommonNeighbors, JaccardSimilarity
from .library.triangles import ClusterCoefficient, TriangleCount
from .udga_runner import user_algorithm

_BUILTIN: dict[str, Algorithm] = {
    a.signature.name.lower(): a
    for a in (
        SingleSourceShortestPath(),
        KHop(),
        ClosenessCentrality(),
        IncAllSourceShortestPath(),
        PageRank(),
        WeakConnectedComponents(),
        ConnectedComponents(),
        LabelPropagation(),
        KCore(),
        Louvain(),
        TriangleCount(),
        ClusterCoefficient(),
        CommonNeighbors(),
        JaccardSimilarity(),
        IncWeakConnectedComponents(),
        IncKHop(),
        IncrementalKCore(),
        IncMinimumSpanningTree(),
        *ldbc_algorithms(),
    )
}


def implementation(signature: AlgorithmSignature, instance: Any = None) -> Algorithm:
    """The implementation of a bound call: a built-in by name, or the user's
    vertex program ``instance`` adapted to run like one."""
    if signature.user_defined:
        return user_algorithm(instance, signature.name)
    return _BUILTIN[signature.name.lower()]


def algorithm_named(name: str) -> Algorithm | None:
    """A built-in implementation by name or alias (any case)."""
    signature = signature_named(name)
    return None if signature is None else _BUILTIN.get(signature.name.lower())


def builtin_implementations() -> list[Algorithm]:
    return list(_BUILTIN.values())
