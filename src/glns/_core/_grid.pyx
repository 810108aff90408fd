# Nearest-neighbour lists from coordinates in O(n log n)-ish time and O(n * K) memory, with
# the result of glns.neighbours.nearest_neighbours on the dense matrix, entry for entry.
#
# The routable points are bucketed into a uniform grid of about two points per cell. For each
# node the cells are visited in square rings around its cell; after each ring every point not
# yet seen is at least R away (R: the distance from the node to the border of the visited
# block, minus a margin for rounding). The search stops once K candidates are known and the
# K-th smallest key (distance, as _distance.dist computes it, then node id) is below the key
# of R: every unseen point then ranks after it. Keys are the core's own distances, so the
# ranking (ties by node id included) is exactly the dense one.
import numpy as np

from libc.math cimport floor, sqrt, fabs
from libc.stdlib cimport malloc, realloc, free, qsort

from glns._core._keyed cimport Keyed, keyed_cmp

cdef double MARGIN = 1e-9    # relative slack on R: never trusts the last bits of a border


cdef inline double key_of(const double *xy, int a, int b, bint nint) noexcept nogil:
    # the same expression as _distance.dist (no Inst exists yet when lists are built)
    cdef double dx = xy[2 * a] - xy[2 * b]
    cdef double dy = xy[2 * a + 1] - xy[2 * b + 1]
    cdef double d = sqrt(dx * dx + dy * dy)
    return floor(d + 0.5) if nint else d


cdef inline double rounded(double d, bint nint) noexcept nogil:
    return floor(d + 0.5) if nint else d


def coordinate_neighbours(coords, int first, int max_neighbours, bint nint) -> np.ndarray:
    """For every node, the routable nodes (ids >= first) other than itself, nearest first
    (ties by node id), at most `max_neighbours` of them: the same (n, K) int32 table as
    ``glns.neighbours.nearest_neighbours`` on the matrix of on-demand distances."""
    xy_arr = np.ascontiguousarray(coords, dtype=np.float64)
    cdef const double[:, ::1] xyv = xy_arr
    cdef int n = xyv.shape[0]
    cdef int m = n - first
    cdef int K = max(0, min(max_neighbours, m - 1))
    out = np.empty((n, K), dtype=np.int32)
    if K == 0 or n == 0:
        return out
    cdef int[:, ::1] ov = out
    cdef const double *xy = &xyv[0, 0]
    cdef double xmin = xy[2 * first], xmax = xmin, ymin = xy[2 * first + 1], ymax = ymin
    cdef int v
    for v in range(first, n):
        xmin = min(xmin, xy[2 * v]); xmax = max(xmax, xy[2 * v])
        ymin = min(ymin, xy[2 * v + 1]); ymax = max(ymax, xy[2 * v + 1])
    cdef double span = max(xmax - xmin, ymax - ymin)
    # about two points per cell; a flat cloud gets cells as long as a 2/m share of its span
    cdef double h = max(sqrt((xmax - xmin) * (ymax - ymin) * 2.0 / m), span * 2.0 / m)
    if not h > 0:      # every routable point at one place
        h = 1.0
    cdef int gx = min(<int> ((xmax - xmin) / h) + 1, 1 << 15)
    cdef int gy = min(<int> ((ymax - ymin) / h) + 1, 1 << 15)
    cdef double slack = MARGIN * (span + fabs(xmin) + fabs(ymin) + 1.0)
    cdef int *cell_of = <int *> malloc(n * sizeof(int))
    cdef int *start = <int *> malloc((gx * gy + 1) * sizeof(int))
    cdef int *items = <int *> malloc(max(m, 1) * sizeof(int))
    cdef int cap = 4 * K + 64
    cdef Keyed *cand = <Keyed *> malloc(cap * sizeof(Keyed))
    cdef int q, c, i, cx, cy, x, y, r, count, x0, x1, y0, y1, step
    cdef double R, side
    cdef bint whole
    try:
        if cell_of == NULL or start == NULL or items == NULL or cand == NULL:
            raise MemoryError()
        with nogil:
            for c in range(gx * gy + 1):
                start[c] = 0
            for v in range(first, n):
                cx = _clamp(<int> ((xy[2 * v] - xmin) / h), gx)
                cy = _clamp(<int> ((xy[2 * v + 1] - ymin) / h), gy)
                cell_of[v] = cy * gx + cx
                start[cell_of[v] + 1] += 1
            for c in range(gx * gy):
                start[c + 1] += start[c]
            for v in range(first, n):       # counting sort: ascending ids inside a cell
                items[start[cell_of[v]]] = v
                start[cell_of[v]] += 1
            for c in range(gx * gy, 0, -1):
                start[c] = start[c - 1]
            start[0] = 0
            for q in range(n):
                cx = _clamp(<int> floor((xy[2 * q] - xmin) / h), gx)
                cy = _clamp(<int> floor((xy[2 * q + 1] - ymin) / h), gy)
                count = 0
                r = 0
                while True:
                    # the cells at Chebyshev distance r from (cx, cy), inside the grid: the
                    # rows cy - r and cy + r, then the columns cx - r and cx + r between them
                    for y in range(max(cy - r, 0), min(cy + r, gy - 1) + 1):
                        step = 1 if (y == cy - r or y == cy + r) else 2 * r
                        x = cx - r
                        while x <= cx + r:
                            if 0 <= x < gx:
                                count = _collect(xy, q, start, items, y * gx + x, &cand, &cap,
                                                 count, nint)
                                if count < 0:
                                    with gil:
                                        raise MemoryError()
                            x += step
                    x0, x1, y0, y1 = cx - r, cx + r + 1, cy - r, cy + r + 1
                    whole = x0 <= 0 and y0 <= 0 and x1 >= gx and y1 >= gy
                    if whole:
                        qsort(cand, count, sizeof(Keyed), keyed_cmp)
                        break
                    if count >= K:
                        # every unseen point lies beyond a border of the block not at the grid's edge
                        R = 1e308
                        if x0 > 0:
                            side = xy[2 * q] - (xmin + x0 * h)
                            R = min(R, max(side, 0.0))
                        if x1 < gx:
                            side = (xmin + x1 * h) - xy[2 * q]
                            R = min(R, max(side, 0.0))
                        if y0 > 0:
                            side = xy[2 * q + 1] - (ymin + y0 * h)
                            R = min(R, max(side, 0.0))
                        if y1 < gy:
                            side = (ymin + y1 * h) - xy[2 * q + 1]
                            R = min(R, max(side, 0.0))
                        R -= slack
                        if R > 0:
                            qsort(cand, count, sizeof(Keyed), keyed_cmp)
                            if cand[K - 1].key < rounded(R, nint):
                                break
                    r += 1
                # cand is sorted here: by the ring that stopped the search
                for i in range(K):
                    ov[q, i] = cand[i].node
    finally:
        free(cell_of)
        free(start)
        free(items)
        free(cand)
    return out


cdef inline int _clamp(int c, int g) noexcept nogil:
    return 0 if c < 0 else (g - 1 if c >= g else c)



cdef int _collect(const double *xy, int q, const int *start, const int *items, int cell,
                  Keyed **cand, int *cap, int count, bint nint) noexcept nogil:
    """Append the points of `cell` other than q to the candidates (growing the buffer);
    the new count, or -1 when memory ran out."""
    cdef int i, v
    cdef Keyed *grown
    for i in range(start[cell], start[cell + 1]):
        v = items[i]
        if v == q:
            continue
        if count == cap[0]:
            grown = <Keyed *> realloc(cand[0], 2 * cap[0] * sizeof(Keyed))
            if grown == NULL:
                return -1
            cand[0] = grown
            cap[0] *= 2
        cand[0][count].key = key_of(xy, q, v, nint)
        cand[0][count].node = v
        count += 1
    return count
