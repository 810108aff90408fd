# The outcome of one run of the loop, typed. See _result.pyx.
from libc.stdint cimport int64_t


cdef class OperatorRecord:
    cdef readonly object calls
    cdef readonly object outcomes
    cdef readonly object failures
    cdef readonly object seconds
    cdef readonly object weights
    cdef readonly object fitness
    cdef readonly tuple last_error


cdef class RunResult:
    cdef readonly object best
    cdef readonly double best_cost
    cdef readonly int64_t iterations
    cdef readonly double runtime
    cdef readonly object best_curve
    cdef readonly object current_curve
    cdef readonly object iteration_seconds
    cdef readonly OperatorRecord destroy
    cdef readonly OperatorRecord repair
    cdef readonly object synergy
    cdef readonly double initial_temperature
    cdef readonly int64_t restarts
    cdef readonly str stop_reason
    cdef readonly object curve_iterations
    cdef readonly object curve_seconds
    cdef readonly object improvements
    cdef readonly object load_penalty
