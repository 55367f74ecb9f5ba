"""GeaFlow's built-in graph algorithms, one module per family.

Importing this package registers them (``runtime.algorithms.registry``).
"""

from . import (
    community,
    components,
    cores,
    inc_kcore,
    inc_mst,
    incremental,
    paths,
    ranking,
    similarity,
    triangles,
)

__all__ = [
    "community",
    "components",
    "cores",
    "inc_kcore",
    "inc_mst",
    "incremental",
    "paths",
    "ranking",
    "similarity",
    "triangles",
]
