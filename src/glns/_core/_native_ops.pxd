# Dispatch to the native destroy and repair operators by code. See _native_ops.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

# Operator codes. Destroy codes are < 100, repair codes >= 100; glns.operators.natives maps
# names and parameters to them.
cdef enum:
    OP_RANDOM_REMOVAL = 0
    OP_WORST_REMOVAL = 1
    OP_STRING_REMOVAL = 2
    OP_RELATED_REMOVAL = 3
    OP_ROUTE_REMOVAL = 4
    OP_SEGMENT_REMOVAL = 5
    OP_GREEDY_INSERTION = 100
    OP_BLINK_INSERTION = 101
    OP_REGRET_INSERTION = 102

# Every native operator takes N_PARAMS doubles (unused ones are ignored).
cdef enum:
    N_PARAMS = 4

cdef int native_destroy(int code, const double *params, Sol *s, const Inst *inst, int k,
                        int *removed, int *n_removed, uint64_t *rng) except -1 nogil
cdef int native_repair(int code, const double *params, Sol *s, const Inst *inst,
                       const int *removed, int n_removed, uint64_t *rng) except -1 nogil
