# Native local search (2-opt, or-opt, 3-opt, relocate, swap, 2-opt*, SWAP*) with neighbour lists and
# don't-look bits. See _local_search.pyx for details.
from libc.stdint cimport int64_t
from glns._core._types cimport Inst, Sol, NEAR_COLUMNS

cdef enum:
    # A node's moves only go next to its LS_NEIGHBOURS candidates (Inst.near: its nearest,
    # or the quadrant candidates on a tour from coordinates).
    LS_NEIGHBOURS = NEAR_COLUMNS

cdef enum:
    # The search reads the clock every LS_CLOCK_EVERY nodes it takes from its queue (when it
    # has a deadline): often enough to stop within about a millisecond of it.
    LS_CLOCK_EVERY = 64

cdef struct LoadPenalty:
    # A run's penalised capacity (_local_search.pyx, "Penalised loads"): the search may overload
    # routes at `weight` per unit of excess, then repairs them at 10x and 100x that weight.
    double target       # share of searches that should end feasible before a repair (0: off)
    double weight       # cost per unit of load above the capacity, adapted towards target
    double low          # bounds of weight
    double high
    int64_t calls       # searches in the current adaptation window
    int64_t feasible    # of them, the ones that ended feasible before any repair
    int64_t searches    # statistics over the run: searches,
    int64_t first_feasible  # the ones that ended feasible before any repair,
    int64_t repaired    # the ones a repair pass made feasible,
    int64_t lost        # and the ones left overloaded (their candidate is dropped)

cdef int local_search(Sol *s, const Inst *inst, const int *touched, int n_touched,
                      double deadline, int level, LoadPenalty *pen) except -1 nogil
