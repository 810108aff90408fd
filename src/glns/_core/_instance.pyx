# The core's private copy of an instance. Validation happens in glns.problems before this.
import numpy as np
from libc.stdint cimport int64_t
from glns._core._kind cimport kind_init
from glns._core._types cimport Inst, NEAR_COLUMNS
from glns._core._distance cimport dist
from glns._core._grid import coordinate_neighbours, quadrant_candidates

from glns.neighbours import MAX_NEIGHBOURS, nearest_neighbours

QUADRANT_PICKS = 5      # per quadrant, of NEAR_COLUMNS candidates


cdef void _store_near_distances(const Inst *inst, double *out) noexcept nogil:
    """out[v * n_near + c] = dist(v, near[v][c]) (Inst.near_d)."""
    cdef Py_ssize_t k
    cdef int v, c, u
    for v in range(inst.n):
        for c in range(inst.n_near):
            k = <Py_ssize_t> v * inst.n_near + c
            u = inst.near[k]
            out[k] = dist(inst, v, u) if u >= 0 else 0.0


cdef class CoreInstance:
    """Arrays of a validated problem, owned by the core (never shared with operators)."""

    def __init__(self, int kind, distances=None, demands=None, capacity=0,
                 int max_neighbours=MAX_NEIGHBOURS, *, coords=None, rounding="exact",
                 bint quadrant=False):
        """Either `distances` (a dense matrix) or `coords` with `rounding` ("exact" or "nint":
        distances computed on demand, memory O(n * max_neighbours)).

        quadrant (with coords only): the candidate table `near` holds neighbours in every
        quadrant (glns.neighbours.quadrant_candidates, QUADRANT_PICKS per quadrant) instead of
        the NEAR_COLUMNS nearest; the local search and granular insertion read it."""
        if kind_init(&self.c, kind) < 0:
            raise ValueError(f"unknown problem kind {kind}")
        if (distances is None) == (coords is None):
            raise ValueError("give exactly one of distances and coords")
        if rounding not in ("exact", "nint"):
            raise ValueError(f"rounding must be 'exact' or 'nint', got {rounding!r}")
        first = self.c.first
        cdef const double[:, ::1] dv
        cdef const double[:, ::1] xv
        if distances is not None:
            dist = np.array(distances, dtype=np.float64, order="C", copy=True)
            dist.flags.writeable = False
            n = dist.shape[0]
            neigh = nearest_neighbours(dist, first, max_neighbours)
            self.symmetric = bool(np.array_equal(dist, dist.T))
            dv = dist
            self.c.dist = &dv[0, 0]
            self.c.xy = NULL
        else:
            xy = np.array(coords, dtype=np.float64, order="C", copy=True)
            if xy.ndim != 2 or xy.shape[1] != 2:
                raise ValueError(f"coords must have shape (n, 2), got {xy.shape}")
            xy.flags.writeable = False
            n = xy.shape[0]
            neigh = coordinate_neighbours(xy, first, max_neighbours, rounding == "nint")
            self.symmetric = True
            xv = xy
            self.c.dist = NULL
            self.c.xy = &xv[0, 0]
            self.coords = xy
            dist = None
        self.c.nint = rounding == "nint"
        if demands is None:
            demand = np.zeros(n, dtype=np.int64)
        else:
            demand = np.array(demands, dtype=np.int64, copy=True)
        demand.flags.writeable = False
        neigh.flags.writeable = False
        self.dist = dist
        self.demand = demand
        self.neighbours = neigh
        self.kind = kind
        self.n = n
        self.n_customers = n - first
        cdef const int[:, ::1] nv = neigh
        cdef const int64_t[::1] qv = demand
        self.c.n = n
        self.c.demand = &qv[0]
        if self.c.capacitated:
            self.c.capacity = capacity
            self.c.max_route_len = _max_route_len(demand[first:], capacity)
        else:
            self.c.capacity = 0
            self.c.max_route_len = n - first
        self.c.symmetric = self.symmetric
        self.c.n_neigh = neigh.shape[1]
        self.c.neigh = &nv[0, 0] if neigh.size else NULL
        if quadrant and coords is not None:
            # candidates on every side (glns.neighbours.quadrant_candidates)
            near = quadrant_candidates(xy, neigh, first, NEAR_COLUMNS, QUADRANT_PICKS, np.inf,
                                       rounding == "nint")
        else:
            near = np.ascontiguousarray(neigh[:, :NEAR_COLUMNS])
        near.flags.writeable = False
        self.near = near
        cdef const int[:, ::1] mv = near
        self.c.n_near = near.shape[1]
        self.c.near = &mv[0, 0] if near.size else NULL
        near_d = np.empty(near.shape, dtype=np.float64)     # every entry written below
        cdef double[:, ::1] ndv = near_d
        if near_d.size:
            with nogil:
                _store_near_distances(&self.c, &ndv[0, 0])
        near_d.flags.writeable = False
        self.near_distances = near_d
        self.c.near_d = &ndv[0, 0] if near_d.size else NULL

    @property
    def on_demand(self) -> bool:
        """Distances are computed from coordinates when needed (no dense matrix)."""
        return self.c.dist == NULL

    def distance(self, int a, int b) -> float:
        """The core's distance a -> b (for tests: the same value whichever way it is stored)."""
        if not (0 <= a < self.n and 0 <= b < self.n):
            raise IndexError(f"node out of range 0..{self.n - 1}: {a}, {b}")
        return dist(&self.c, a, b)

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
