# The one way the core reads a distance: from the dense matrix when the instance has one, else
# computed on demand from the coordinates (memory O(n) instead of O(n^2)).
#
# The on-demand value is the same float as glns.problems.euclidean_distances (then its
# rounding) gives
# for the pair: (xa - xb)^2 + (ya - yb)^2 in that order, one correctly rounded sqrt, and
# floor(d + 0.5) for nint. The build turns off FMA contraction (CMakeLists.txt) so that the C
# compiler keeps the two roundings numpy makes. Header only: `inline`, so a hot loop pays a
# predictable branch, never a call.
from libc.math cimport sqrt, floor, fabs
from glns._core._types cimport Inst

cdef enum:
    # Inst.rounding: how a distance computed from coordinates is rounded
    ROUND_EXACT = 0     # not at all
    ROUND_NINT = 1      # TSPLIB: floor(d + 0.5)
    ROUND_TENTHS = 2    # DIMACS: truncated to one decimal, floor(10 d) / 10
    ROUND_MASK = 3      # the rounding part of Inst.rounding
    # Inst.rounding flag: arcs from or to the depot add Inst.depot_fee (a route cost). A flag
    # of the rounding rather than a test of its own, so that instances without it take the
    # branches they took before it existed.
    DEPOT_FEE = 4


cdef inline double round_distance(double d, int rounding) noexcept nogil:
    """d rounded as `rounding` (ROUND_*) says."""
    if rounding == ROUND_NINT:
        return floor(d + 0.5)
    if rounding == ROUND_TENTHS:
        return floor(d * 10.0) / 10.0
    return d


cdef inline double coordinate_distance(const Inst *inst, int a, int b) noexcept nogil:
    """Distance a -> b computed from the coordinates (rounded), without the depot fee."""
    cdef double dx, dy, d
    dx = inst.xy[2 * a] - inst.xy[2 * b]
    dy = inst.xy[2 * a + 1] - inst.xy[2 * b + 1]
    d = sqrt(dx * dx + dy * dy)
    if inst.rounding & ROUND_MASK:
        return round_distance(d, inst.rounding & ROUND_MASK)
    return d


cdef inline double distance_below(const Inst *inst, int a, int b) noexcept nogil:
    """A lower bound of coordinate_distance(inst, a, b) without a square root: the larger of
    the two coordinate differences (no Euclidean distance is shorter), less what the rounding
    can take off (nint 0.5, tenths 0.1) and a margin for the float errors of the square-root
    path, so that it is below the float that function returns, not only below the exact
    distance."""
    cdef double dx = fabs(inst.xy[2 * a] - inst.xy[2 * b])
    cdef double dy = fabs(inst.xy[2 * a + 1] - inst.xy[2 * b + 1])
    cdef double m = dx if dx > dy else dy
    cdef int rounding = inst.rounding & ROUND_MASK
    m = m * (1.0 - 1e-12) - 1e-12
    if rounding == ROUND_NINT:
        return m - 0.5
    if rounding == ROUND_TENTHS:
        return m - 0.1
    return m


cdef extern from *:
    """
    /* The depot fee's rounding and sum, kept out of line (and marked cold) so that dist(),
       inlined in every hot loop, stays as small as it was without it. */
    #if defined(__GNUC__)
    __attribute__((noinline, cold))
    #endif
    static double glns_fee_distance(double d, int rounding, double fee, int a, int b) {
        if ((rounding & 3) == 1) d = floor(d + 0.5);
        else if ((rounding & 3) == 2) d = floor(d * 10.0) / 10.0;
        return ((a == 0) != (b == 0)) ? d + fee : d;
    }
    """
    double glns_fee_distance(double d, int rounding, double fee, int a, int b) noexcept nogil


cdef inline double dist(const Inst *inst, int a, int b) noexcept nogil:
    """Cost of the arc a -> b: the distance, plus Inst.depot_fee on an arc from or to the
    depot (a dense matrix holds it already)."""
    cdef double dx, dy, d
    if inst.dist != NULL:
        return inst.dist[<Py_ssize_t> a * inst.n + b]
    dx = inst.xy[2 * a] - inst.xy[2 * b]
    dy = inst.xy[2 * a + 1] - inst.xy[2 * b + 1]
    d = sqrt(dx * dx + dy * dy)
    if inst.rounding:
        if inst.rounding & DEPOT_FEE:
            return glns_fee_distance(d, inst.rounding, inst.depot_fee, a, b)
        return round_distance(d, inst.rounding)
    return d


cdef inline const double *near_dists(const Inst *inst, int v) noexcept nogil:
    """v's row of Inst.near_d: entry c is dist(v, near[v][c]), the same float, stored when the
    instance was built (a candidate scan then reads no matrix row or coordinates)."""
    return &inst.near_d[<Py_ssize_t> v * inst.n_near]
