"""GeaFlow's built-in graph algorithms, one module per family.

``runtime.algorithms.registry`` maps each signature (``planner.algorithms``)
to its class here.
"""
