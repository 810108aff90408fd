# The statistics of one run in memory that does not grow with its length: every new best
# (iteration, seconds, cost), and a trace of the best and current cost and the time of every
# iteration, evenly thinned whenever it fills (every second sample goes, the stride doubles).
# See _trace.pyx.
from libc.stdint cimport int64_t

cdef enum:
    TRACE_NOTHING = 0       # Trace.limit: record nothing at all
    TRACE_EVERYTHING = -1   # Trace.limit: every iteration, without bound


cdef struct Column:
    double *data
    int64_t size
    int64_t cap


cdef struct Trace:
    int64_t limit       # most samples kept (> 0), or TRACE_NOTHING / TRACE_EVERYTHING
    int64_t stride      # a sample is taken after every stride-th iteration: sample j is
                        # iteration (j + 1) * stride (1-based)
    Column best         # per sample: the best cost,
    Column current      # the current cost,
    Column took         # the seconds that iteration took,
    Column at           # and the seconds since the run started
    Column best_it      # per new best (and the start, iteration 0): its iteration,
    Column best_at      # seconds since the start,
    Column best_cost    # and cost


cdef void trace_init(Trace *t, int64_t limit) noexcept nogil
cdef void trace_free(Trace *t) noexcept nogil
cdef int trace_iteration(Trace *t, int64_t it, double best, double current, double took,
                         double at) except -1 nogil
cdef int trace_best(Trace *t, int64_t it, double at, double cost) except -1 nogil
cdef dict trace_arrays(Trace *t)
