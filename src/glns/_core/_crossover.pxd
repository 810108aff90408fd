# Route-exchange crossover of two solutions (glns.params.Epochs.crossover); see _crossover.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef int route_crossover(Sol *child, const Sol *a, const Sol *b, const Inst *inst, int level,
                         double deadline, uint64_t *rng) except -1 nogil
