# Native local search (2-opt, or-opt, relocate, swap, 2-opt*) with neighbour lists and
# don't-look bits. See _local_search.pyx for details.
from glns._core._types cimport Inst, Sol, NEAR_COLUMNS

cdef enum:
    # Candidate moves of a node pair only with the first LS_NEIGHBOURS columns of Inst.neigh
    # (read from Inst.near, which holds exactly those).
    LS_NEIGHBOURS = NEAR_COLUMNS

cdef int local_search(Sol *s, const Inst *inst, const int *touched, int n_touched) except -1 nogil
