"""Graph stores: where the vertices and edges of each graph live."""

from .registry import GraphStores

__all__ = ["GraphStores"]
