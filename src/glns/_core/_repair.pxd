# Native repair operators; see _repair.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef int greedy_insertion(Sol *s, const Inst *inst, const int *removed,
                          int n_removed) except -1 nogil

# Insertion orders of blink_insertion (its `order` parameter).
cdef enum:
    ORDER_RANDOM = 0    # a random shuffle
    ORDER_DEMAND = 1    # largest demand first (TSP: random)
    ORDER_FAR = 2       # farthest from the depot (TSP: node 0) first
    ORDER_CLOSE = 3     # closest to the depot first
    ORDER_SISR = 4      # one of the four above, drawn per call

cdef int blink_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed,
                         double order, double blink_rate, double neighbours,
                         uint64_t *rng) except -1 nogil

cdef int regret_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed,
                          double k, double neighbours, void *trace) except -1 nogil
