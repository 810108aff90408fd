# Native destroy operators; see _destroy.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef int random_removal(Sol *s, const Inst *inst, int k, int *removed, int *n_removed,
                        uint64_t *rng) except -1 nogil
cdef int worst_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                       int *n_removed, uint64_t *rng) except -1 nogil
cdef int string_removal(Sol *s, const Inst *inst, int k, double max_string_len, double split_rate,
                        double split_depth, int *removed, int *n_removed,
                        uint64_t *rng) except -1 nogil
cdef int related_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil
cdef int route_removal(Sol *s, const Inst *inst, int k, int *removed, int *n_removed,
                       uint64_t *rng) except -1 nogil
cdef int segment_removal(Sol *s, const Inst *inst, int k, double segments, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil
cdef int radial_removal(Sol *s, const Inst *inst, int k, double spread, int *removed,
                        int *n_removed, uint64_t *rng) except -1 nogil
