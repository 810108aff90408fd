# The settings of one run of the loop, typed: built once in Python from validated
# SolveParams and stop budgets (glns.params.SolveParams.to_core). See _settings.pyx.
from libc.stdint cimport int64_t


cdef class FixedSchedule:
    cdef readonly double t0
    cdef readonly double alpha


cdef class AutoSchedule:
    cdef readonly double worse
    cdef readonly double accept
    cdef readonly double end_ratio


cdef class RunSettings:
    cdef readonly int k_min
    cdef readonly int k_max
    cdef readonly double decay
    cdef double sigma[4]
    cdef readonly bint adaptive
    cdef readonly object temperature    # FixedSchedule or AutoSchedule
    cdef int64_t max_iterations         # -1: no iteration limit
    cdef double max_seconds             # <= 0: no time limit
    cdef int64_t max_no_improvement     # -1: no limit on iterations without a new best
    cdef readonly double restart_stall  # <= 0: no restarts; else the stall, a fraction of the budget
    cdef readonly double restart_temperature   # the temperature after a restart, times the start's
    cdef readonly int64_t epoch_iterations     # > 0: a time-only budget anneals in epochs, the first this many iterations
    cdef readonly double epoch_growth          # each epoch this many times longer than the one before
    cdef readonly double epoch_temperature     # a later epoch's start temperature, times T0
    cdef readonly int epoch_starts             # the first this many epochs are independent starts
    cdef readonly int epoch_elite              # > 1: later epochs start from a pool of this many epochs' ends and the best
    cdef readonly int epoch_crossover          # > 0: ... from a crossover of the best and a pool member, searched at this level
    cdef readonly double load_penalty   # > 0: penalised loads, the share of searches to end feasible
    cdef readonly int64_t trace_limit   # statistics: most samples kept (_trace.pxd); -1 all, 0 none
