"""The peeling of GeaFlow's ``incremental_kcore``, as drop rounds, in numpy.

Round t (1..R) counts, for every still-active vertex v, its in-degree (every
IN edge, whatever its source) plus one per edge u -> v from a vertex u that
was active after round t-1; a count below k deactivates v for good.  The
outcome of a run is the round each vertex dropped in (``NEVER`` when it
survives all R rounds).

Counts only grow when vertices or edges are added, so on a grown graph every
old vertex drops in the same round as before or later.  ``repeel`` uses that
to recompute only where the growth reaches: a vertex is looked at again only
in its old drop round, when one of its in-neighbours is active longer than
before or its own in-edges changed, and from then on every round until it
drops.  Everything else keeps its old drop round without being touched.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .deltas import csr, gather

# The drop round of a vertex that is never deactivated.
NEVER = np.iinfo(np.int64).max


def full_peel(
    is_vertex: np.ndarray,
    in_degree: np.ndarray,
    real_src: np.ndarray,
    real_dst: np.ndarray,
    k: int,
    rounds: int,
) -> np.ndarray:
    """Drop round of every node (0 for a node that is not a vertex).

    ``real_src -> real_dst``: the edges between vertices, one entry each.
    """
    n = len(is_vertex)
    incoming = sp.csr_matrix(
        (np.ones(len(real_src)), (real_dst, real_src)), shape=(n, n), dtype=np.float64
    )
    drop = np.where(is_vertex, NEVER, 0).astype(np.int64)
    active = is_vertex.copy()
    for t in range(1, rounds + 1):
        count = np.rint(incoming @ active.astype(np.float64)).astype(np.int64) + in_degree
        drops = active & (count < k)
        if not drops.any():
            break  # the same active set gives the same counts from now on
        drop[drops] = t
        active &= ~drops
    return drop


def repeel(
    old_drop: np.ndarray,
    fresh: np.ndarray,
    bumped: np.ndarray,
    is_vertex: np.ndarray,
    in_degree: np.ndarray,
    real_src: np.ndarray,
    real_dst: np.ndarray,
    k: int,
    rounds: int,
) -> np.ndarray:
    """The drop rounds on the grown graph, from those of the graph before.

    ``old_drop``: per node, its drop round before the growth (any value for a
    node that is new or was not a vertex).  ``fresh``: vertices that were not
    vertices before.  ``bumped``: old vertices whose IN edges changed (an edge
    into them is new, or its source just became a vertex).
    """
    n = len(is_vertex)
    old = np.where(fresh | ~is_vertex, 0, old_drop).astype(np.int64)
    drop = np.where(fresh, NEVER, old)
    # Old vertices that dropped and now have a larger count in every round:
    # each is looked at in its old drop round.
    waiting = np.flatnonzero(bumped & is_vertex & ~fresh & (old != NEVER) & (old > 0))
    # Vertices active longer than before whose drop round is not settled yet.
    open_ = np.flatnonzero(fresh)
    if not len(waiting) and not len(open_):
        return drop
    in_ptr, in_src = csr(real_dst, real_src, n)
    out_ptr, out_dst = csr(real_src, real_dst, n)
    finite = old[(old != NEVER) & (old > 0)]
    last_old = int(finite.max()) if len(finite) else 0
    for t in range(1, rounds + 1):
        # Who can count differently in round t: out-neighbours of the open
        # vertices (active after t-1 now, not before) and the bumped ones,
        # in their old drop round; plus every open vertex.
        _, reached = gather(out_ptr, out_dst, open_)
        due = np.concatenate([reached, waiting[old[waiting] == t]])
        due = due[(old[due] == t) & (drop[due] == t)]
        look = np.union1d(open_, due)
        owner, sources = gather(in_ptr, in_src, look)
        active_in = np.bincount(owner[drop[sources] > t - 1], minlength=len(look))
        count = in_degree[look] + active_in
        drops = count < k
        drop[look[drops]] = t
        drop[look[~drops]] = NEVER
        open_ = look[~drops]
        if t > last_old and not drops.any():
            break  # no vertex drops in round t, so none drops later
        if not len(open_) and not (old[waiting] > t).any():
            break  # from here on every vertex drops as it did before
    return drop
