"""Nearest-neighbour lists: the candidate lists of related removal, string removal, granular
insertion and local search. The core keeps one (n, K) table per instance."""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_NEIGHBOURS", "nearest_neighbours"]

#: neighbours kept per node; enough for related/string removal and granular insertion
MAX_NEIGHBOURS = 100


def nearest_neighbours(dist: np.ndarray, first: int, max_neighbours: int = MAX_NEIGHBOURS) -> np.ndarray:
    """For every node, the routable nodes (ids >= first) other than itself, nearest first.

    Ties are broken by node id (a stable sort), so the lists are deterministic. At most
    `max_neighbours` columns; a (n, 0) array when there is only one routable node.
    """
    n = dist.shape[0]
    m = n - first
    k = max(0, min(max_neighbours, m - 1))
    keyed = np.array(dist[:, first:], dtype=np.float64, copy=True)
    own = np.arange(first, n)
    keyed[own, own - first] = np.inf     # a node is not its own neighbour
    order = np.argsort(keyed, axis=1, kind="stable")[:, :k] + first
    return np.ascontiguousarray(order, dtype=np.int32)
