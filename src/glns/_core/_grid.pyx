# Neighbour lists from coordinates in O(n log n)-ish time and O(n * K) memory, each equal,
# entry for entry, to its plain-Python reference in glns.neighbours.
#
# The routable points are bucketed into a uniform grid of about two points per cell. For each
# node the cells are visited in square rings around its cell; after each ring every point not
# yet seen is at least R away (R: the distance from the node to the border of the visited
# block, minus a margin for rounding), so its key (distance, as _distance.dist computes it,
# then node id) ranks after every key below rounded(R). Keys are the core's own distances, so
# rankings (ties by node id included) are exactly the dense ones.
#
# coordinate_neighbours: the K nearest (the search stops once the K-th key is below R).
# quadrant_candidates: the nearest few in each quadrant around the node, within a reach (the
# search stops once every quadrant's last one is below R, or R is beyond the reach).
import numpy as np

from libc.math cimport floor, sqrt, fabs, INFINITY
from libc.stdlib cimport malloc, realloc, free, qsort

from glns._core._keyed cimport Keyed, keyed_cmp, keyed_before

from glns._core._distance cimport round_distance

cdef double MARGIN = 1e-9    # relative slack on R: never trusts the last bits of a border


cdef inline double key_of(const double *xy, int a, int b, int nint) noexcept nogil:
    # the same expression as _distance.dist (no Inst exists yet when lists are built); nint is
    # the rounding (_distance.ROUND_*: 0 exact, 1 nint, 2 tenths)
    cdef double dx = xy[2 * a] - xy[2 * b]
    cdef double dy = xy[2 * a + 1] - xy[2 * b + 1]
    cdef double d = sqrt(dx * dx + dy * dy)
    return round_distance(d, nint)


cdef inline double rounded(double d, int nint) noexcept nogil:
    return round_distance(d, nint)


ctypedef struct Grid:
    const double *xy
    int nint
    double xmin, ymin, h, slack
    int gx, gy
    int *start          # points of cell c: items[start[c]:start[c + 1]], ascending ids
    int *items


cdef int _grid_build(Grid *g, const double *xy, int n, int first, int nint) except -1:
    """Bucket the routable points (ids >= first, at least one) into about two per cell."""
    cdef int m = n - first
    cdef double xmin = xy[2 * first], xmax = xmin, ymin = xy[2 * first + 1], ymax = ymin
    cdef int v, c
    cdef int *cell_of
    for v in range(first, n):
        xmin = min(xmin, xy[2 * v]); xmax = max(xmax, xy[2 * v])
        ymin = min(ymin, xy[2 * v + 1]); ymax = max(ymax, xy[2 * v + 1])
    cdef double span = max(xmax - xmin, ymax - ymin)
    # about two points per cell; a flat cloud gets cells as long as a 2/m share of its span
    cdef double h = max(sqrt((xmax - xmin) * (ymax - ymin) * 2.0 / m), span * 2.0 / m)
    if not h > 0:      # every routable point at one place
        h = 1.0
    g.xy = xy
    g.nint = nint
    g.xmin = xmin
    g.ymin = ymin
    g.h = h
    g.gx = min(<int> ((xmax - xmin) / h) + 1, 1 << 15)
    g.gy = min(<int> ((ymax - ymin) / h) + 1, 1 << 15)
    g.slack = MARGIN * (span + fabs(xmin) + fabs(ymin) + 1.0)
    g.start = <int *> malloc((g.gx * g.gy + 1) * sizeof(int))
    g.items = <int *> malloc(max(m, 1) * sizeof(int))
    cell_of = <int *> malloc(n * sizeof(int))
    if g.start == NULL or g.items == NULL or cell_of == NULL:
        free(cell_of)
        raise MemoryError()
    for c in range(g.gx * g.gy + 1):
        g.start[c] = 0
    for v in range(first, n):
        cell_of[v] = (_clamp(<int> ((xy[2 * v + 1] - ymin) / h), g.gy) * g.gx
                      + _clamp(<int> ((xy[2 * v] - xmin) / h), g.gx))
        g.start[cell_of[v] + 1] += 1
    for c in range(g.gx * g.gy):
        g.start[c + 1] += g.start[c]
    for v in range(first, n):       # counting sort: ascending ids inside a cell
        g.items[g.start[cell_of[v]]] = v
        g.start[cell_of[v]] += 1
    for c in range(g.gx * g.gy, 0, -1):
        g.start[c] = g.start[c - 1]
    g.start[0] = 0
    free(cell_of)
    return 0


cdef void _grid_free(Grid *g) noexcept nogil:
    free(g.start)
    free(g.items)


cdef inline int _clamp(int c, int g) noexcept nogil:
    return 0 if c < 0 else (g - 1 if c >= g else c)


cdef inline void _home(const Grid *g, int q, int *cx, int *cy) noexcept nogil:
    """The cell of node q (clamped: the depot may lie outside the routable points' box)."""
    cx[0] = _clamp(<int> floor((g.xy[2 * q] - g.xmin) / g.h), g.gx)
    cy[0] = _clamp(<int> floor((g.xy[2 * q + 1] - g.ymin) / g.h), g.gy)


cdef int _ring(const Grid *g, int q, int cx, int cy, int r, Keyed **cand, int *cap,
               int count) noexcept nogil:
    """Append the points (other than q) of the cells at Chebyshev distance r from (cx, cy)
    inside the grid: the rows cy - r and cy + r, then the columns cx - r and cx + r between
    them. The new count, or -1 when memory ran out."""
    cdef int x, y, step
    for y in range(max(cy - r, 0), min(cy + r, g.gy - 1) + 1):
        step = 1 if (y == cy - r or y == cy + r) else 2 * r
        x = cx - r
        while x <= cx + r:
            if 0 <= x < g.gx:
                count = _collect(g, q, y * g.gx + x, cand, cap, count)
                if count < 0:
                    return -1
            x += step
    return count


cdef double _proven(const Grid *g, int q, int cx, int cy, int r) noexcept nogil:
    """After rings 0..r: every unseen point has a key of at least the returned value
    (INFINITY: the block covers the grid, nothing is unseen; 0: nothing proven yet)."""
    cdef int x0 = cx - r, x1 = cx + r + 1, y0 = cy - r, y1 = cy + r + 1
    cdef double R = INFINITY
    if x0 <= 0 and y0 <= 0 and x1 >= g.gx and y1 >= g.gy:
        return INFINITY
    # every unseen point lies beyond a border of the block that is not at the grid's edge
    if x0 > 0:
        R = min(R, max(g.xy[2 * q] - (g.xmin + x0 * g.h), 0.0))
    if x1 < g.gx:
        R = min(R, max((g.xmin + x1 * g.h) - g.xy[2 * q], 0.0))
    if y0 > 0:
        R = min(R, max(g.xy[2 * q + 1] - (g.ymin + y0 * g.h), 0.0))
    if y1 < g.gy:
        R = min(R, max((g.ymin + y1 * g.h) - g.xy[2 * q + 1], 0.0))
    R -= g.slack
    return rounded(R, g.nint) if R > 0 else 0.0


cdef double _grow(const Grid *g, int q, int cx, int cy, int r, Keyed **cand, int *cap,
                  int *count) except? -1.0 nogil:
    """Collect ring r around q (_ring) into the candidates; what is proven after it (_proven)."""
    count[0] = _ring(g, q, cx, cy, r, cand, cap, count[0])
    if count[0] < 0:
        with gil:
            raise MemoryError()
    return _proven(g, q, cx, cy, r)


cdef int _collect(const Grid *g, int q, int cell, Keyed **cand, int *cap, int count) noexcept nogil:
    """Append the points of `cell` other than q to the candidates (growing the buffer);
    the new count, or -1 when memory ran out."""
    cdef int i, v
    cdef Keyed *grown
    for i in range(g.start[cell], g.start[cell + 1]):
        v = g.items[i]
        if v == q:
            continue
        if count == cap[0]:
            grown = <Keyed *> realloc(cand[0], 2 * cap[0] * sizeof(Keyed))
            if grown == NULL:
                return -1
            cand[0] = grown
            cap[0] *= 2
        cand[0][count].key = key_of(g.xy, q, v, g.nint)
        cand[0][count].node = v
        count += 1
    return count


cdef inline void _swap(Keyed *a, int i, int j) noexcept nogil:
    cdef Keyed t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void _select(Keyed *a, int count, int k) noexcept nogil:
    """Reorder a[0:count] so that a[0:k] holds its k first entries in keyed order, the k-th of
    them last (a[k - 1]); 1 <= k <= count. Quickselect, O(count) expected: a full sort of
    every candidate was most of the nearest-neighbour search."""
    cdef int lo = 0, hi = count - 1, want = k - 1, i, j, mid
    cdef Keyed pivot
    while lo < hi:
        mid = lo + (hi - lo) // 2       # median of three as the pivot, moved to hi
        if keyed_before(&a[mid], &a[lo]):
            _swap(a, mid, lo)
        if keyed_before(&a[hi], &a[lo]):
            _swap(a, hi, lo)
        if keyed_before(&a[mid], &a[hi]):
            _swap(a, mid, hi)
        pivot = a[hi]
        i = lo
        for j in range(lo, hi):
            if keyed_before(&a[j], &pivot):
                _swap(a, i, j)
                i += 1
        _swap(a, i, hi)                 # a[lo:i] < pivot = a[i] < a[i + 1:hi + 1]
        if i == want:
            return
        if i < want:
            lo = i + 1
        else:
            hi = i - 1


def coordinate_neighbours(coords, int first, int max_neighbours, int nint) -> np.ndarray:
    """For every node, the routable nodes (ids >= first) other than itself, nearest first
    (ties by node id), at most `max_neighbours` of them: the same (n, K) int32 table as
    ``glns.neighbours.nearest_neighbours`` on the matrix of on-demand distances."""
    xy_arr = np.ascontiguousarray(coords, dtype=np.float64)
    cdef const double[:, ::1] xyv = xy_arr
    cdef int n = xyv.shape[0]
    cdef int K = max(0, min(max_neighbours, n - first - 1))
    out = np.empty((n, K), dtype=np.int32)
    if K == 0 or n == 0:
        return out
    cdef int[:, ::1] ov = out
    cdef Grid g
    g.start = g.items = NULL
    cdef int cap = 4 * K + 64
    cdef Keyed *cand = <Keyed *> malloc(cap * sizeof(Keyed))
    cdef int q, i, cx, cy, r, count
    cdef double R
    try:
        if cand == NULL:
            raise MemoryError()
        _grid_build(&g, &xyv[0, 0], n, first, nint)
        with nogil:
            for q in range(n):
                _home(&g, q, &cx, &cy)
                count = 0
                r = 0
                while True:
                    R = _grow(&g, q, cx, cy, r, &cand, &cap, &count)
                    if R == INFINITY or (count >= K and R > 0):
                        _select(cand, count, K)     # the K nearest so far go first
                        count = K                   # the rest come after them: never needed
                        if R == INFINITY or cand[K - 1].key < R:
                            break
                    r += 1
                qsort(cand, K, sizeof(Keyed), keyed_cmp)
                for i in range(K):
                    ov[q, i] = cand[i].node
    finally:
        _grid_free(&g)
        free(cand)
    return out


cdef inline int _quadrant(const double *xy, int q, int v) noexcept nogil:
    """Quadrant of v around q, counter-clockwise from east: 0 (dx > 0, dy >= 0), 1 (dx <= 0,
    dy > 0), 2 (dx < 0, dy <= 0), 3 (dx >= 0, dy < 0); -1 when v is at q's place."""
    cdef double dx = xy[2 * v] - xy[2 * q]
    cdef double dy = xy[2 * v + 1] - xy[2 * q + 1]
    if dx > 0 and dy >= 0:
        return 0
    if dx <= 0 and dy > 0:
        return 1
    if dx < 0 and dy <= 0:
        return 2
    if dx >= 0 and dy < 0:
        return 3
    return -1


cdef inline void _offer(Keyed *best, int *count, int size, Keyed x) noexcept nogil:
    """Keep the `size` smallest entries offered, ascending in keyed order, in best[0:count]."""
    cdef int j = count[0]
    if j == size:
        if not keyed_before(&x, &best[size - 1]):
            return
        j -= 1
    else:
        count[0] += 1
    while j > 0 and keyed_before(&x, &best[j - 1]):
        best[j] = best[j - 1]
        j -= 1
    best[j] = x


def quadrant_candidates(coords, nearest, int first, int columns, int per_quadrant, double reach,
                        int nint) -> np.ndarray:
    """Candidate lists with neighbours on every side: the same (n, C) int32 table as
    ``glns.neighbours.quadrant_candidates`` (see there), from the nearest-neighbour table.

    Each ring's points go straight into their quadrant's `per_quadrant` nearest (kept sorted),
    so a ring costs O(its points): a node with a quadrant that holds fewer than that many
    points (on the hull, or every node of a line) searches the whole grid once, in O(n)."""
    xy_arr = np.ascontiguousarray(coords, dtype=np.float64)
    near_arr = np.ascontiguousarray(nearest, dtype=np.int32)
    cdef const double[:, ::1] xyv = xy_arr
    cdef const int[:, ::1] nv = near_arr
    cdef int n = xyv.shape[0]
    cdef int K = nv.shape[1]
    cdef int C = max(0, min(columns, K))
    out = np.empty((n, C), dtype=np.int32)
    if C == 0 or n == 0:
        return out
    cdef int[:, ::1] ov = out
    cdef const double *xy = &xyv[0, 0]
    cdef Grid g
    g.start = g.items = NULL
    cdef int P = max(per_quadrant, 0)
    cdef int cap = 4 * K + 64
    cdef Keyed *cand = <Keyed *> malloc(cap * sizeof(Keyed))
    cdef Keyed *best = <Keyed *> malloc((4 * P + 1) * sizeof(Keyed))   # 4 x P, quadrant-major
    cdef Keyed *pick = <Keyed *> malloc((4 * P + C) * sizeof(Keyed))
    cdef char *taken = <char *> malloc(n * sizeof(char))
    cdef int q, i, j, cx, cy, r, count, np_, quad, settled
    cdef int have[4]
    cdef double R, limit
    try:
        if cand == NULL or best == NULL or pick == NULL or taken == NULL:
            raise MemoryError()
        _grid_build(&g, xy, n, first, nint)
        with nogil:
            for i in range(n):
                taken[i] = 0
            for q in range(n):
                limit = INFINITY if reach == INFINITY else reach * key_of(xy, q, nv[q, K - 1], nint)
                _home(&g, q, &cx, &cy)
                have[0] = have[1] = have[2] = have[3] = 0
                r = 0
                while True:
                    count = 0       # `cand` holds one ring at a time
                    R = _grow(&g, q, cx, cy, r, &cand, &cap, &count)
                    for i in range(count):
                        quad = _quadrant(xy, q, cand[i].node)
                        if quad >= 0 and P > 0:
                            _offer(&best[quad * P], &have[quad], P, cand[i])
                    if R == INFINITY or R > limit:  # nothing unseen can be picked
                        break
                    if R > 0:
                        # a quadrant is settled once its P-th nearest so far is below R:
                        # every point not seen yet lies at R or beyond
                        settled = 0
                        for j in range(4):
                            settled += have[j] >= P and (P == 0 or best[j * P + P - 1].key < R)
                        if settled == 4:
                            break
                    r += 1
                np_ = 0
                for quad in range(4):
                    for i in range(have[quad]):
                        if best[quad * P + i].key > limit:
                            break
                        pick[np_] = best[quad * P + i]
                        taken[pick[np_].node] = 1
                        np_ += 1
                # fill with the nearest not picked, then the C smallest keys, in key order
                j = 0
                while np_ < C and j < K:
                    if not taken[nv[q, j]]:
                        pick[np_].node = nv[q, j]
                        pick[np_].key = key_of(xy, q, nv[q, j], nint)
                        taken[nv[q, j]] = 1
                        np_ += 1
                    j += 1
                qsort(pick, np_, sizeof(Keyed), keyed_cmp)
                for i in range(np_):
                    taken[pick[i].node] = 0
                    if i < C:
                        ov[q, i] = pick[i].node
    finally:
        _grid_free(&g)
        free(cand)
        free(best)
        free(pick)
        free(taken)
    return out
