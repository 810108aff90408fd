# Native local search (2-opt, or-opt, 3-opt, relocate, swap, 2-opt*, SWAP*) with neighbour lists and
# don't-look bits. See _local_search.pyx for details.
from glns._core._types cimport Inst, Sol, NEAR_COLUMNS

cdef enum:
    # A node's moves only go next to its LS_NEIGHBOURS candidates (Inst.near: its nearest,
    # or the quadrant candidates on a tour from coordinates).
    LS_NEIGHBOURS = NEAR_COLUMNS

cdef enum:
    # The search reads the clock every LS_CLOCK_EVERY nodes it takes from its queue (when it
    # has a deadline): often enough to stop within about a millisecond of it.
    LS_CLOCK_EVERY = 64

cdef int local_search(Sol *s, const Inst *inst, const int *touched, int n_touched,
                      double deadline, int level) except -1 nogil
