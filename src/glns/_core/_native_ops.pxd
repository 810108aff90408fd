# Native destroy and repair operators. See _native_ops.pyx; each has a plain-Python twin in
# glns.operators.seeds that consumes the same random stream in the same order.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef enum:
    OP_RANDOM_REMOVAL = 0
    OP_WORST_REMOVAL = 1
    OP_GREEDY_INSERTION = 100

cdef int native_destroy(int code, double param, Sol *s, const Inst *inst, int k,
                        int *removed, int *n_removed, uint64_t *rng) except -1 nogil
cdef int native_repair(int code, double param, Sol *s, const Inst *inst,
                       const int *removed, int n_removed, uint64_t *rng) except -1 nogil
