# Lower bounds on a node's cheapest insertion into a whole route, from the route's bounding box.
# A VRP repair that already holds an option of cost t can skip every route whose bound exceeds
# t without scanning its positions: at n = 10,000 most routes are far from the node, and the
# scan of every route with room was the largest part of a repair. Exact: a route is skipped
# only when every one of its positions is provably dearer than t, so the choices (and the
# floats) are those of the full scan. See _route_bounds.pyx for the geometry.
from libc.math cimport sqrt, fabs
from glns._core._types cimport Inst, Sol
from glns._core._windows cimport WIN_END, win_fresh, win_may_take, win_bounded

ctypedef struct RouteBounds:
    bint on             # bounds apply: a depot and distances on demand from coordinates
    int slots           # route slots covered
    char *boxed         # the route has a box (else it is never skipped)
    double *box         # 4 per route: min x, min y, max x, max y of its customers
    double *diag        # the box's diagonal: the longest edge between two of its points
    double *reach       # the farthest point of the box from the depot
    double slack        # what rounding takes off an insertion delta at most (nint: 3 x 0.5;
                        # tenths: 3 x 0.1)
    bint timed          # on, with time windows whose travel times are these distances
                        # (_windows.win_bounded): route_untimely applies
    double travel_slack # what rounding takes off one distance at most (nint 0.5, tenths 0.1)


cdef int bounds_init(RouteBounds *b, const Sol *s, const Inst *inst, const int *routes,
                     int n_listed, int slots) except -1 nogil
cdef void bounds_free(RouteBounds *b) noexcept nogil


cdef inline double depot_gap(const Inst *inst, int v) noexcept nogil:
    """The exact Euclidean distance from the depot to v (unrounded, whatever the instance's
    rounding: the bounds are geometric)."""
    cdef double dx = inst.xy[2 * v] - inst.xy[0]
    cdef double dy = inst.xy[2 * v + 1] - inst.xy[1]
    return sqrt(dx * dx + dy * dy)


cdef inline void _refresh(RouteBounds *b, const Inst *inst, int r) noexcept nogil:
    cdef double *q = &b.box[4 * r]
    cdef double w = q[2] - q[0], h = q[3] - q[1]
    cdef double fx = fabs(q[0] - inst.xy[0]), fy = fabs(q[1] - inst.xy[1])
    b.diag[r] = sqrt(w * w + h * h)
    fx = max(fx, fabs(q[2] - inst.xy[0]))
    fy = max(fy, fabs(q[3] - inst.xy[1]))
    b.reach[r] = sqrt(fx * fx + fy * fy)


cdef inline void _grow(RouteBounds *b, const Inst *inst, int r, int v) noexcept nogil:
    """Route r's box takes in node v (its diagonal and reach are then stale: _refresh)."""
    cdef double *q = &b.box[4 * r]
    cdef double x = inst.xy[2 * v], y = inst.xy[2 * v + 1]
    q[0] = min(q[0], x)
    q[1] = min(q[1], y)
    q[2] = max(q[2], x)
    q[3] = max(q[3], y)


cdef inline void bounds_add(RouteBounds *b, const Inst *inst, int r, int v) noexcept nogil:
    """Node v went into route r (a route opened by this insertion included): grow its box."""
    if not b.on or not b.boxed[r]:
        return
    _grow(b, inst, r, v)
    _refresh(b, inst, r)


cdef inline bint route_beyond(const RouteBounds *b, const Sol *s, const Inst *inst, int r,
                              int v, double gap, double t) noexcept nogil:
    """Every insertion of v into route r costs more than t (gap: depot_gap(inst, v)).

    With D the distance from v to the route's box, an insertion between two customers a, b
    costs at least sqrt(d(a,b)^2 + 4 D^2) - d(a,b) >= sqrt(diag^2 + 4 D^2) - diag (v lies
    outside the ellipse with foci a, b through the box); one next to the depot at least
    d(0,v) + D - reach (triangle inequality); the open end of an OVRP route at least D. A
    route is skipped when all three exceed t plus the rounding slack and a relative margin
    for floating-point error. Compared squared: no square root per route.
    """
    cdef const double *q
    cdef double x, y, dx, dy, d2, u
    if not b.on or not b.boxed[r] or s.length[r] == 0:
        return False
    q = &b.box[4 * r]
    x = inst.xy[2 * v]
    y = inst.xy[2 * v + 1]
    dx = max(q[0] - x, x - q[2], 0.0)
    dy = max(q[1] - y, y - q[3], 0.0)
    d2 = dx * dx + dy * dy
    t = t + b.slack + 1e-9 * (fabs(t) + gap + b.reach[r] + b.diag[r] + 1.0)
    u = t + b.diag[r]                       # between customers: sqrt(diag^2 + 4 D^2) > u
    if u >= 0.0 and b.diag[r] * b.diag[r] + 4.0 * d2 <= u * u:
        return False
    u = t + b.reach[r] - gap                # next to the depot: D > u
    if u >= 0.0 and d2 <= u * u:
        return False
    if not inst.closed_routes and t >= 0.0 and d2 <= t * t:
        return False                        # the open end: D > t
    return True


cdef inline bint route_untimely(const RouteBounds *b, const Sol *s, const Inst *inst, int r,
                                int v) noexcept nogil:
    """No position of route r can take v without breaking a time window (only where b.timed):
    O(1) from the route's box and time data (made fresh), and exact as a filter, so a scan
    of the route would find no position either.

    Between two customers a, b of the route, v needs late[b] - (early[a] + service[a]) >=
    service[v] + t(a, v) + t(v, b) (waiting only adds), and both travel times are at least the
    distance D from v to the box less what rounding takes off: so no such position is open
    when the route's troom (the most time between two consecutive customers) is below
    service[v] + 2 (D - travel_slack). The two positions next to the depot are tried with
    lower bounds of their own travel times (win_may_take). Margins: time_eps for the float
    sums of the times, a relative 1e-12 for those of the distances."""
    cdef const double *q
    cdef const int *row
    cdef int L = s.length[r]
    cdef double x, y, dx, dy, need
    if L == 0 or not b.boxed[r]:
        return False
    win_fresh(s, inst, r)
    row = &s.nodes[r * s.stride]
    if win_may_take(s, inst, 0, v, row[0]) or win_may_take(s, inst, row[L - 1], v, WIN_END):
        return False
    if L == 1:
        return True
    need = 0.5 * (s.troom[r] - inst.win[v].service) + inst.time_eps + b.travel_slack + 1e-12
    if need < 0.0:
        return True                         # not even the service fits between two customers
    q = &b.box[4 * r]
    x = inst.xy[2 * v]
    y = inst.xy[2 * v + 1]
    dx = max(q[0] - x, x - q[2], 0.0)
    dy = max(q[1] - y, y - q[3], 0.0)
    return (dx * dx + dy * dy) * (1.0 - 4e-12) > need * need      # D (1 - 1e-12) > need
