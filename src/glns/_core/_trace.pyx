# The bounded statistics of a run (declared in _trace.pxd). glns.solve's `statistics`:
# "bounded" keeps at most limit samples, "full" every iteration, "none" nothing.
import numpy as np

from libc.stdlib cimport realloc, free
from libc.string cimport memset


cdef int _push(Column *c, double x) except -1 nogil:
    cdef double *p
    if c.size == c.cap:
        c.cap = c.cap * 2 if c.cap > 0 else 1024
        p = <double *> realloc(c.data, c.cap * sizeof(double))
        if p == NULL:
            with gil:
                raise MemoryError()
        c.data = p
    c.data[c.size] = x
    c.size += 1
    return 0


cdef void _keep_odd(Column *c) noexcept nogil:
    """Keep the samples at odd indices (iterations that are multiples of twice the stride)."""
    cdef int64_t i, n = c.size // 2
    for i in range(n):
        c.data[i] = c.data[2 * i + 1]
    c.size = n


cdef void trace_init(Trace *t, int64_t limit) noexcept nogil:
    memset(t, 0, sizeof(Trace))
    t.limit = limit
    t.stride = 1


cdef void trace_free(Trace *t) noexcept nogil:
    free(t.best.data)
    free(t.current.data)
    free(t.took.data)
    free(t.at.data)
    free(t.best_it.data)
    free(t.best_at.data)
    free(t.best_cost.data)
    trace_init(t, t.limit)


cdef int trace_iteration(Trace *t, int64_t it, double best, double current, double took,
                         double at) except -1 nogil:
    """Iteration `it` (1-based) ended: sample it when it falls on the stride; thin when full."""
    if t.limit == TRACE_NOTHING or it & (t.stride - 1):     # the stride is a power of two
        return 0
    _push(&t.best, best)
    _push(&t.current, current)
    _push(&t.took, took)
    _push(&t.at, at)
    if t.limit > 0 and t.best.size >= t.limit:
        _keep_odd(&t.best)
        _keep_odd(&t.current)
        _keep_odd(&t.took)
        _keep_odd(&t.at)
        t.stride *= 2
    return 0


cdef int trace_best(Trace *t, int64_t it, double at, double cost) except -1 nogil:
    """A new best at iteration `it` (0: the start)."""
    if t.limit == TRACE_NOTHING:
        return 0
    _push(&t.best_it, <double> it)
    _push(&t.best_at, at)
    _push(&t.best_cost, cost)
    return 0


cdef object _array(Column *c):
    out = np.empty(c.size, dtype=np.float64)
    cdef double[::1] view = out
    cdef int64_t i
    for i in range(c.size):
        view[i] = c.data[i]
    return out


cdef dict trace_arrays(Trace *t):
    """The trace as NumPy arrays: curve_iterations (int64), best_curve, current_curve,
    iteration_seconds, curve_seconds, and improvements ((k, 3): iteration, seconds, cost)."""
    improvements = np.column_stack([_array(&t.best_it), _array(&t.best_at), _array(&t.best_cost)])
    return {"curve_iterations": (np.arange(t.best.size, dtype=np.int64) + 1) * t.stride,
            "best_curve": _array(&t.best), "current_curve": _array(&t.current),
            "iteration_seconds": _array(&t.took), "curve_seconds": _array(&t.at),
            "improvements": improvements.reshape(-1, 3)}
