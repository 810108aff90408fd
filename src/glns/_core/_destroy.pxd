# Native destroy operators; see _destroy.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef int random_removal(Sol *s, const Inst *inst, int k, int *removed, int *n_removed,
                        uint64_t *rng) except -1 nogil
cdef int worst_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                       int *n_removed, uint64_t *rng) except -1 nogil
