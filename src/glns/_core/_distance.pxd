# The one way the core reads a distance: from the dense matrix when the instance has one, else
# computed on demand from the coordinates (memory O(n) instead of O(n^2)).
#
# The on-demand value is the same float as glns.problems.euclidean_distances (then its
# rounding) gives
# for the pair: (xa - xb)^2 + (ya - yb)^2 in that order, one correctly rounded sqrt, and
# floor(d + 0.5) for nint. The build turns off FMA contraction (CMakeLists.txt) so that the C
# compiler keeps the two roundings numpy makes. Header only: `inline`, so a hot loop pays a
# predictable branch, never a call.
from libc.math cimport sqrt, floor
from glns._core._types cimport Inst

cdef enum:
    # Inst.rounding: how a distance computed from coordinates is rounded
    ROUND_EXACT = 0     # not at all
    ROUND_NINT = 1      # TSPLIB: floor(d + 0.5)
    ROUND_TENTHS = 2    # DIMACS: truncated to one decimal, floor(10 d) / 10


cdef inline double round_distance(double d, int rounding) noexcept nogil:
    """d rounded as `rounding` (ROUND_*) says."""
    if rounding == ROUND_NINT:
        return floor(d + 0.5)
    if rounding == ROUND_TENTHS:
        return floor(d * 10.0) / 10.0
    return d


cdef inline double dist(const Inst *inst, int a, int b) noexcept nogil:
    """Distance a -> b."""
    cdef double dx, dy, d
    if inst.dist != NULL:
        return inst.dist[<Py_ssize_t> a * inst.n + b]
    dx = inst.xy[2 * a] - inst.xy[2 * b]
    dy = inst.xy[2 * a + 1] - inst.xy[2 * b + 1]
    d = sqrt(dx * dx + dy * dy)
    if inst.rounding:
        return round_distance(d, inst.rounding)
    return d


cdef inline const double *near_dists(const Inst *inst, int v) noexcept nogil:
    """v's row of Inst.near_d: entry c is dist(v, near[v][c]), the same float, stored when the
    instance was built (a candidate scan then reads no matrix row or coordinates)."""
    return &inst.near_d[<Py_ssize_t> v * inst.n_near]
