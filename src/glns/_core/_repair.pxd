# Native repair operators; see _repair.pyx.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol

cdef int greedy_insertion(Sol *s, const Inst *inst, const int *removed,
                          int n_removed) except -1 nogil
