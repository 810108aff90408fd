"""Nearest-neighbour lists: the candidate lists of related removal, string removal, granular
insertion and local search. The core keeps one (n, K) table per instance."""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_NEIGHBOURS", "nearest_neighbours", "quadrant_candidates"]

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


def quadrant_candidates(coords: np.ndarray, dist: np.ndarray, nearest: np.ndarray, first: int,
                        columns: int, per_quadrant: int, reach: float) -> np.ndarray:
    """Candidate lists with neighbours on every side (LKH's quadrant candidates), the plain
    reference of the core's builder.

    For node v: in each of the four quadrants around it (counter-clockwise from east: dx > 0
    and dy >= 0; dx <= 0 and dy > 0; dx < 0 and dy <= 0; dx >= 0 and dy < 0) the
    `per_quadrant` routable nodes nearest to v, among those at most `reach` times as far as
    v's last listed nearest neighbour (``nearest[v, -1]``); then v's nearest neighbours not
    picked yet, until there are `columns`; the row lists them nearest first (ties by id).
    On a clustered instance the nearest neighbours of a city all lie in its own cluster;
    these lists also hold the nearest cities towards the other clusters.
    """
    n, k = nearest.shape
    c = max(0, min(columns, k))
    out = np.empty((n, c), dtype=np.int32)
    ids = np.arange(n)
    for v in range(n):
        if c == 0:
            break
        d = dist[v]
        dx = coords[:, 0] - coords[v, 0]
        dy = coords[:, 1] - coords[v, 1]
        quadrant = np.select([(dx > 0) & (dy >= 0), (dx <= 0) & (dy > 0), (dx < 0) & (dy <= 0),
                              (dx >= 0) & (dy < 0)], [0, 1, 2, 3], -1)
        limit = np.inf if reach == np.inf else reach * d[nearest[v, -1]]   # inf * 0 is not a reach
        order = np.lexsort((ids, d))
        order = order[(order >= first) & (order != v) & (d[order] <= limit)]
        picked = [int(w) for q in range(4) for w in order[quadrant[order] == q][:per_quadrant]]
        for w in nearest[v]:
            if len(picked) >= c:
                break
            if int(w) not in picked:
                picked.append(int(w))
        picked.sort(key=lambda w: (d[w], w))
        out[v] = picked[:c]
    return out
