# The core's private copy of an instance. Validation happens in glns.problems before this.
import numpy as np
from libc.stdint cimport int64_t
from glns._core._kind cimport kind_init

from glns.neighbours import MAX_NEIGHBOURS, nearest_neighbours


cdef class CoreInstance:
    """Arrays of a validated problem, owned by the core (never shared with operators)."""

    def __init__(self, int kind, distances, demands=None, capacity=0,
                 int max_neighbours=MAX_NEIGHBOURS):
        if kind_init(&self.c, kind) < 0:
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
        first = self.c.first
        self.n_customers = n - first
        neigh = nearest_neighbours(dist, first, max_neighbours)
        neigh.flags.writeable = False
        self.neighbours = neigh
        cdef const double[:, ::1] dv = dist
        cdef const int[:, ::1] nv = neigh
        cdef const int64_t[::1] qv = demand
        self.c.n = n
        self.c.dist = &dv[0, 0]
        self.c.demand = &qv[0]
        if self.c.capacitated:
            self.c.capacity = capacity
            self.c.max_route_len = _max_route_len(demand[first:], capacity)
        else:
            self.c.capacity = 0
            self.c.max_route_len = n - first
        self.symmetric = bool(np.array_equal(dist, dist.T))
        self.c.symmetric = self.symmetric
        self.c.n_neigh = neigh.shape[1]
        self.c.neigh = &nv[0, 0] if neigh.size else NULL

    @property
    def has_depot(self) -> bool:
        """Routes leave depot 0 (False: the solution is one tour); set by _kind.kind_init."""
        return self.c.has_depot

    @property
    def closed_routes(self) -> bool:
        """A route ends back at its start."""
        return self.c.closed_routes

    @property
    def capacitated(self) -> bool:
        """Routes carry demands within the capacity."""
        return self.c.capacitated

    @property
    def first(self) -> int:
        """The first node that must be routed."""
        return self.c.first


def _max_route_len(demands, capacity) -> int:
    """Most customers that fit in one vehicle: the count of the smallest demands within capacity."""
    if len(demands) == 0:
        return 1
    fits = int(np.searchsorted(np.cumsum(np.sort(demands)), capacity, side="right"))
    return max(1, fits)
