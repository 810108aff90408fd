"""Nearest-neighbour lists: the candidate lists of related removal, string removal, granular
insertion and local search. The core keeps one (n, K) table per instance."""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_NEIGHBOURS", "nearest_neighbours", "quadrant_candidates", "time_neighbours", "euclidean_rows",
           "WAIT_WEIGHT", "WARP_WEIGHT"]

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


def euclidean_rows(coords: np.ndarray, lo: int, hi: int, rounding: str = "exact") -> np.ndarray:
    """Distance rows lo..hi-1 of an (n, 2) coordinate array, rounded as ``rounding`` says
    ("exact", "nint": floor(d + 0.5), "dimacs": floor(10 d) / 10): the floats the core computes
    on demand (``glns._core._distance``)."""
    diff = coords[lo:hi, None, :] - coords[None, :, :]
    with np.errstate(over="ignore"):  # huge coordinates give inf, which callers reject
        block = np.sqrt((diff * diff).sum(axis=-1))
    if rounding == "nint":
        return np.floor(block + 0.5)
    if rounding == "dimacs":
        return np.floor(block * 10.0) / 10.0
    return block


#: weights of time_neighbours' proximity: the wait before j when j follows i as early as
#: possible, and the lateness ("time warp") at j when j follows i as late as possible (the
#: correlation measure of Vidal et al.'s HGS-TW, with their weights)
WAIT_WEIGHT = 0.2
WARP_WEIGHT = 1.0
_ROWS_PER_BLOCK = 512


def time_neighbours(distance_rows, windows: np.ndarray, service: np.ndarray, first: int,
                    max_neighbours: int = MAX_NEIGHBOURS) -> np.ndarray:
    """For every node of a time-window instance, the routable nodes closest by a proximity that
    adds to the distance how badly their windows fit one after the other, closest first.

    For i followed directly by j (travel time = distance d): wait = max(ready_j - service_i -
    d - due_i, 0), warp = max(ready_i + service_i + d - due_j, 0), and proximity(i, j) = d +
    WAIT_WEIGHT * wait + WARP_WEIGHT * warp; the lists rank by min(proximity(i, j),
    proximity(j, i)), ties by node id. Two customers near each other whose windows exclude
    each other are no candidates of each other; a farther one that can be served right before
    or after is. distance_rows(lo, hi) gives the distance rows lo..hi-1 (dense or computed), so
    memory stays O(rows per block * n). The depot row (with first = 1) is by distance."""
    n = len(service)
    m = n - first
    k = max(0, min(max_neighbours, m - 1))
    ready, due = windows[:, 0], windows[:, 1]
    out = np.empty((n, k), dtype=np.int32)
    cols = np.arange(first, n)
    for lo in range(0, n, _ROWS_PER_BLOCK):
        hi = min(n, lo + _ROWS_PER_BLOCK)
        d = np.asarray(distance_rows(lo, hi), dtype=np.float64)[:, first:]
        i = np.arange(lo, hi)[:, None]
        j = cols[None, :]
        ahead = d + WAIT_WEIGHT * np.maximum(ready[j] - service[i] - d - due[i], 0.0) \
            + WARP_WEIGHT * np.maximum(ready[i] + service[i] + d - due[j], 0.0)
        behind = d + WAIT_WEIGHT * np.maximum(ready[i] - service[j] - d - due[j], 0.0) \
            + WARP_WEIGHT * np.maximum(ready[j] + service[j] + d - due[i], 0.0)
        keyed = np.minimum(ahead, behind)
        if first > 0 and lo == 0:
            keyed[0] = d[0]                       # the depot: by distance
        own = np.arange(lo, hi)
        mine = own >= first
        keyed[own[mine] - lo, own[mine] - first] = np.inf
        out[lo:hi] = np.argsort(keyed, axis=1, kind="stable")[:, :k] + first
    return np.ascontiguousarray(out)
