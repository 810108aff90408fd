# The core's private copy of an instance. Validation happens in glns.problems before this.
import numpy as np
from libc.stdint cimport int64_t
from glns._core._kind cimport kind_init
from glns._core._types cimport Window, Inst, NEAR_COLUMNS
from glns._core._distance cimport dist, ROUND_EXACT, ROUND_NINT, ROUND_TENTHS, DEPOT_FEE
from glns._core._windows cimport travel
from glns._core._grid import coordinate_neighbours, quadrant_candidates

from glns.neighbours import MAX_NEIGHBOURS, euclidean_rows, nearest_neighbours, time_neighbours

QUADRANT_PICKS = 5      # per quadrant, of NEAR_COLUMNS candidates
#: the core's code (_distance.ROUND_*) of each rounding of glns.problems.base.ROUNDINGS
_ROUNDING_CODES = {"exact": ROUND_EXACT, "nint": ROUND_NINT, "dimacs": ROUND_TENTHS}

# How far below zero an insertion cost can fall with distances rounded from coordinates:
# rounded distances miss the triangle inequality by at most this (nint: each of the three
# arcs is off by half a unit and the sum is an integer; DIMACS tenths: each is truncated by
# less than 0.1), plus float error (_FLOAT_SLACK times the largest coordinate or fee).
_ROUNDING_SLACK = {"exact": 0.0, "nint": 1.0, "dimacs": 0.2}
_FLOAT_SLACK = 1e-9
#: an explicit matrix of at most this many nodes gets its exact insertion floor (O(n^3));
#: a larger one has none (-inf): SWAP* then prices every pair
EXACT_FLOOR_NODES = 100


def coordinate_insertion_floor(coords, rounding: str, double route_cost=0.0) -> float:
    """The lowest an insertion cost arc(x, v) + arc(v, y) - arc(x, y) can be when distances are
    computed from `coords` with `rounding` (plus half of `route_cost` on depot arcs)."""
    xy = np.asarray(coords, dtype=np.float64)
    scale = 1.0 + 4.0 * float(np.abs(xy).max(initial=0.0)) + route_cost
    return -(_ROUNDING_SLACK[rounding] + _FLOAT_SLACK * scale)


def matrix_insertion_floor(dist) -> float:
    """The exact lowest insertion cost of a dense matrix, over every triple (x, v, y) and every
    arc alone (an open route's last arc costs nothing; the gap of an empty route is free), or
    -inf above EXACT_FLOOR_NODES nodes."""
    d = np.asarray(dist, dtype=np.float64)
    n = d.shape[0]
    if n > EXACT_FLOOR_NODES:
        return -np.inf
    low = min(0.0, 2.0 * float(d.min(initial=0.0)))
    for v in range(n):      # the same float expression as the search's, (a + b) - c
        low = min(low, float(((d[:, v, None] + d[None, v, :]) - d).min(initial=0.0)))
    return low


cdef void _store_near_distances(const Inst *inst, double *out) noexcept nogil:
    """out[v * n_near + c] = dist(v, near[v][c]) (Inst.near_d)."""
    cdef Py_ssize_t k
    cdef int v, c, u
    for v in range(inst.n):
        for c in range(inst.n_near):
            k = <Py_ssize_t> v * inst.n_near + c
            u = inst.near[k]
            out[k] = dist(inst, v, u) if u >= 0 else 0.0


def with_depot_fee(matrix, double fee):
    """A read-only copy of `matrix` with `fee` added to every arc from or to node 0 (the same
    floats as _distance.dist adds on demand)."""
    out = np.array(matrix, dtype=np.float64, order="C", copy=True)
    out[0, 1:] += fee
    out[1:, 0] += fee
    out.flags.writeable = False
    return out


cdef class CoreInstance:
    """Arrays of a validated problem, owned by the core (never shared with operators)."""

    def __init__(self, int kind, distances=None, demands=None, capacity=0,
                 int max_neighbours=MAX_NEIGHBOURS, *, coords=None, rounding="exact",
                 bint quadrant=False, windows=None, service=None, durations=None,
                 int fleet=0, bint time_candidates=True, double route_cost=0.0,
                 insertion_floor=None):
        """Either `distances` (a dense matrix) or `coords` with `rounding` ("exact" or "nint":
        distances computed on demand, memory O(n * max_neighbours)).

        quadrant (with coords only): the candidate table `near` holds neighbours in every
        quadrant (glns.neighbours.quadrant_candidates, QUADRANT_PICKS per quadrant) instead of
        the NEAR_COLUMNS nearest; the local search and granular insertion read it.

        A timed kind (VRPTW) takes windows ((n, 2) ready and due times), service ((n,)
        durations), optionally durations ((n, n) travel times; default: the distances) and
        fleet (most routes; 0: unlimited). Its candidate lists rank by time-aware proximity
        (glns.neighbours.time_neighbours) unless time_candidates is False (by distance, as
        the other kinds; for comparisons).

        route_cost (closed routes from a depot only): a fixed cost per route, added as half of
        it on every arc from or to the depot (Inst.depot_fee): the dense matrix holds it (the
        travel times then default to the matrix without it), on-demand distances add it.

        insertion_floor: a lower bound of every insertion cost (Inst.insert_floor) when the
        caller knows one (a matrix computed from coordinates:
        coordinate_insertion_floor); by default computed from the coordinates, or exactly from
        a small matrix (matrix_insertion_floor)."""
        if kind_init(&self.c, kind) < 0:
            raise ValueError(f"unknown problem kind {kind}")
        if route_cost != 0.0 and not (self.c.has_depot and self.c.closed_routes):
            raise ValueError("a route cost needs closed routes from a depot")
        if not route_cost >= 0.0:
            raise ValueError(f"route_cost must be >= 0, got {route_cost}")
        if (distances is None) == (coords is None):
            raise ValueError("give exactly one of distances and coords")
        if rounding not in _ROUNDING_CODES:
            raise ValueError(f"rounding must be one of {sorted(_ROUNDING_CODES)}, got {rounding!r}")
        first = self.c.first
        cdef const double[:, ::1] dv
        cdef const double[:, ::1] xv
        if distances is not None:
            dist = np.array(distances, dtype=np.float64, order="C", copy=True)
            dist.flags.writeable = False
            n = dist.shape[0]
            neigh = nearest_neighbours(dist, first, max_neighbours)
            self.symmetric = bool(np.array_equal(dist, dist.T))
            plain = dist
            if route_cost != 0.0:
                # the fee joins the matrix; the travel times stay the plain distances
                if durations is None:
                    durations = dist
                dist = with_depot_fee(dist, route_cost / 2.0)
            dv = dist
            self.c.dist = &dv[0, 0]
            self.c.xy = NULL
        else:
            xy = np.array(coords, dtype=np.float64, order="C", copy=True)
            if xy.ndim != 2 or xy.shape[1] != 2:
                raise ValueError(f"coords must have shape (n, 2), got {xy.shape}")
            xy.flags.writeable = False
            n = xy.shape[0]
            neigh = coordinate_neighbours(xy, first, max_neighbours, _ROUNDING_CODES[rounding])
            self.symmetric = True
            xv = xy
            self.c.dist = NULL
            self.c.xy = &xv[0, 0]
            self.coords = xy
            dist = plain = None
        self.c.rounding = _ROUNDING_CODES[rounding]
        if insertion_floor is None:
            insertion_floor = (coordinate_insertion_floor(xy, rounding, route_cost) if dist is None
                               else matrix_insertion_floor(dist))
        self.insertion_floor = float(insertion_floor)
        self.c.insert_floor = self.insertion_floor
        self.c.depot_fee = route_cost / 2.0
        if route_cost != 0.0 and coords is not None:
            self.c.rounding |= DEPOT_FEE        # on-demand distances add the fee
        self.route_cost = route_cost
        self._set_windows(n, windows, service, durations, fleet)
        if self.c.timed and time_candidates:
            # candidates whose windows fit next to each other (glns.neighbours.time_neighbours),
            # by the distances without the fee (a constant on the depot's row ranks alike)
            neigh = time_neighbours(self._distance_rows(plain, xy if coords is not None else None,
                                                        rounding),
                                    np.column_stack([self.ready, self.due]), self.service,
                                    first, max_neighbours)
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
                                       _ROUNDING_CODES[rounding])
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

    @staticmethod
    def _distance_rows(dist, xy, rounding):
        """rows(lo, hi): distance rows lo..hi-1, from the matrix or computed from coordinates."""
        if dist is not None:
            return lambda lo, hi: dist[lo:hi]
        return lambda lo, hi: euclidean_rows(xy, lo, hi, rounding)

    def _set_windows(self, int n, windows, service, durations, int fleet):
        """The time data of a timed kind (Inst.win, dur, fleet)."""
        cdef double[::1] wv
        cdef const double[:, ::1] tv
        self.c.win = NULL
        self.c.dur = NULL
        self.c.time_eps = 0.0
        self.c.fleet = max(fleet, 0)
        if not self.c.timed:
            return
        if windows is None or service is None:
            raise ValueError("a timed problem needs windows and service times")
        w = np.array(windows, dtype=np.float64, order="C", copy=True).reshape(n, 2)
        ready = np.ascontiguousarray(w[:, 0])
        due = np.ascontiguousarray(w[:, 1])
        serve = np.array(service, dtype=np.float64, copy=True).reshape(n)
        for a in (ready, due, serve):
            a.flags.writeable = False
        self.ready, self.due, self.service = ready, due, serve
        # Inst.win: one 32-byte Window per node, aligned so that none straddles a cache line
        block = np.empty(4 * n + 4, dtype=np.float64)
        start = (-block.ctypes.data % 32) // 8
        packed = block[start:start + 4 * n].reshape(n, 4)
        packed[:, 0], packed[:, 1], packed[:, 2] = ready, due, serve
        packed[:, 3] = ready + serve
        self._windows = block
        wv = block
        self.c.win = <const Window *> &wv[start]
        if durations is not None:
            dur = np.array(durations, dtype=np.float64, order="C", copy=True).reshape(n, n)
            dur.flags.writeable = False
            self.durations = dur
            tv = dur
            self.c.dur = &tv[0, 0]
        # float sums of decimal times (e.g. DIMACS tenths) err by far less than this
        horizon = float(np.abs(np.concatenate([ready, due])).max(initial=1.0))
        self.c.time_eps = 1e-9 * max(horizon, 1.0)

    @property
    def timed(self) -> bool:
        """Routes keep time windows."""
        return self.c.timed

    @property
    def fleet(self) -> int:
        """Most routes a solution may have (0: unlimited)."""
        return self.c.fleet

    @property
    def on_demand(self) -> bool:
        """Distances are computed from coordinates when needed (no dense matrix)."""
        return self.c.dist == NULL

    def distance(self, int a, int b) -> float:
        """The core's cost of the arc a -> b: the distance, plus half the route cost on an arc
        from or to the depot (for tests: the same value whichever way it is stored)."""
        if not (0 <= a < self.n and 0 <= b < self.n):
            raise IndexError(f"node out of range 0..{self.n - 1}: {a}, {b}")
        return dist(&self.c, a, b)

    def travel_time(self, int a, int b) -> float:
        """The core's travel time a -> b (a timed kind; for tests)."""
        if not (0 <= a < self.n and 0 <= b < self.n):
            raise IndexError(f"node out of range 0..{self.n - 1}: {a}, {b}")
        return travel(&self.c, a, b)

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
