# A native operator as the loop runs it: the uniform C signature every native operator has
# (its adapter in the catalog, _native_ops.pyx), its bound form and the two calls the loop
# makes. See _operator.pyx for the declaration type and docs/dev/adding-a-native-operator.md.
from libc.stdint cimport uint64_t
from glns._core._types cimport Inst, Sol
from glns._core._kind cimport is_tour
from glns._core._solution cimport sol_drop_empty, sol_cost
from glns._core._local_search cimport local_search, LoadPenalty

# `params` points to the operator's parameter struct: one double per declared parameter, the
# fields named and ordered as the declaration's parameters.
ctypedef int (*DestroyFn)(const void *params, Sol *s, const Inst *inst, int k, int *removed,
                          int *n_removed, uint64_t *rng) except -1 nogil
ctypedef int (*RepairFn)(const void *params, Sol *s, const Inst *inst, const int *removed,
                         int n_removed, uint64_t *rng) except -1 nogil

cdef enum:
    MAX_PARAMS = 8      # doubles in one operator's parameter struct (checked when declared)

cdef struct NativeOp:
    DestroyFn destroy   # set for a destroy operator, else NULL
    RepairFn repair     # set for a repair operator, else NULL
    int local_search    # repair: 0, or end with the local search from the reinserted nodes
                        # (1; 2: with its 3-opt moves on a tour; 3: and SWAP* on VRP routes)
    double params[MAX_PARAMS]   # the operator's parameter struct


cdef class Adapter:
    cdef DestroyFn destroy
    cdef RepairFn repair


cdef Adapter destroy_adapter(DestroyFn fn)
cdef Adapter repair_adapter(RepairFn fn)


cdef class Declaration:
    cdef Adapter adapter
    cdef readonly str name
    cdef readonly str kind
    cdef readonly frozenset problems
    cdef readonly tuple params
    cdef readonly tuple common
    cdef readonly str removes
    cdef readonly str doc


cdef class NativeOperator:
    cdef NativeOp op
    cdef readonly Declaration declaration
    cdef readonly dict values



cdef inline int run_destroy(const NativeOp *op, Sol *s, const Inst *inst, int k, int *removed,
                            int *n_removed, uint64_t *rng) except -1 nogil:
    """Remove about k nodes from the complete solution s (in place); empty routes are dropped."""
    op.destroy(op.params, s, inst, k, removed, n_removed, rng)
    if not is_tour(inst):
        sol_drop_empty(s)
    return 0


cdef inline int run_repair(const NativeOp *op, Sol *s, const Inst *inst, const int *removed,
                           int n_removed, uint64_t *rng, double deadline,
                           LoadPenalty *pen) except -1 nogil:
    """Insert the removed nodes into the partial solution s (in place) and update its cost.
    deadline: when the local search stops (a _clock.now() time; 0: none). pen: the run's load
    penalty, or NULL. Returns 1 when the penalised local search left a route overloaded (s is
    then no solution), else 0."""
    op.repair(op.params, s, inst, removed, n_removed, rng)
    s.cost = sol_cost(s, inst)
    # the local search starts from s.cost and leaves the recomputed cost of its result there
    if op.local_search:
        return local_search(s, inst, removed, n_removed, deadline, op.local_search, pen)
    return 0
