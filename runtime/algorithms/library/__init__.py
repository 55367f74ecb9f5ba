"""GeaFlow's built-in graph algorithms, one module per family.

Importing this package registers them (``runtime.algorithms.registry``).
"""

from . import community, components, cores, paths, ranking, similarity, triangles

__all__ = ["community", "components", "cores", "paths", "ranking", "similarity", "triangles"]
