# The core's private copy of an instance. Validation happens in glns.problems before this.
import numpy as np
from libc.stdint cimport int64_t
from glns._core._types cimport KIND_TSP, KIND_CVRP, KIND_OVRP

from glns.neighbours import MAX_NEIGHBOURS, nearest_neighbours


cdef class CoreInstance:
    """Arrays of a validated problem, owned by the core (never shared with operators)."""

    def __init__(self, int kind, distances, demands=None, capacity=0,
                 int max_neighbours=MAX_NEIGHBOURS):
        if kind not in (KIND_TSP, KIND_CVRP, KIND_OVRP):
            raise ValueError(f"unknown problem kind {kind}")
        dist = np.array(distances, dtype=np.float64, order="C", copy=True)
        n = dist.shape[0]
        if demands is None:
            demand = np.zeros(n, dtype=np.int64)
        else:
            demand = np.array(demands, dtype=np.int64, copy=True)
        dist.flags.writeable = False
        demand.flags.writeable = False
        self.dist = dist
        self.demand = demand
        self.kind = kind
        self.n = n
        self.n_customers = n if kind == KIND_TSP else n - 1
        first = 0 if kind == KIND_TSP else 1
        neigh = nearest_neighbours(dist, first, max_neighbours)
        neigh.flags.writeable = False
        self.neighbours = neigh
        cdef const double[:, ::1] dv = dist
        cdef const int[:, ::1] nv = neigh
        cdef const int64_t[::1] qv = demand
        self.c.kind = kind
        self.c.n = n
        self.c.first = 0 if kind == KIND_TSP else 1
        self.c.dist = &dv[0, 0]
        self.c.demand = &qv[0]
        self.c.capacity = capacity if kind != KIND_TSP else 0
        self.c.max_route_len = n if kind == KIND_TSP else _max_route_len(demand[1:], capacity)
        self.symmetric = bool(np.array_equal(dist, dist.T))
        self.c.symmetric = self.symmetric
        self.c.n_neigh = neigh.shape[1]
        self.c.neigh = &nv[0, 0] if neigh.size else NULL


def _max_route_len(demands, capacity) -> int:
    """Most customers that fit in one vehicle: the count of the smallest demands within capacity."""
    if len(demands) == 0:
        return 1
    fits = int(np.searchsorted(np.cumsum(np.sort(demands)), capacity, side="right"))
    return max(1, fits)
