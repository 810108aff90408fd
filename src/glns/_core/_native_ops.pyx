# Dispatch from operator codes to the native destroy and repair operators, and small entry
# points that run one operator on a Python solution (for tests and the plain-Python twins).
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.stdint cimport uint64_t

from glns._core._types cimport Inst, Sol, KIND_TSP
from glns._core._instance cimport CoreInstance
from glns._core._solution cimport Solution, sol_drop_empty, sol_cost
from glns._core._destroy cimport random_removal, worst_removal
from glns._core._destroy cimport string_removal, related_removal, route_removal, segment_removal
from glns._core._repair cimport greedy_insertion
from glns._core._repair cimport blink_insertion
from glns._core._repair cimport regret_insertion
from glns._core._local_search cimport local_search

NATIVE_DESTROY = {"random_removal": OP_RANDOM_REMOVAL, "worst_removal": OP_WORST_REMOVAL}
NATIVE_DESTROY["string_removal"] = OP_STRING_REMOVAL
NATIVE_DESTROY["related_removal"] = OP_RELATED_REMOVAL
NATIVE_DESTROY["route_removal"] = OP_ROUTE_REMOVAL
NATIVE_DESTROY["segment_removal"] = OP_SEGMENT_REMOVAL
NATIVE_REPAIR = {"greedy_insertion": OP_GREEDY_INSERTION}
NATIVE_REPAIR["blink_insertion"] = OP_BLINK_INSERTION
NATIVE_REPAIR["regret_insertion"] = OP_REGRET_INSERTION
PARAMS_PER_OPERATOR = N_PARAMS


cdef int native_destroy(int code, const double *params, Sol *s, const Inst *inst, int k,
                        int *removed, int *n_removed, uint64_t *rng) except -1 nogil:
    """Remove about k nodes from the complete solution s (in place); empty routes are dropped."""
    if code == OP_RANDOM_REMOVAL:
        random_removal(s, inst, k, removed, n_removed, rng)
    elif code == OP_WORST_REMOVAL:
        worst_removal(s, inst, k, params[0], removed, n_removed, rng)
    elif code == OP_STRING_REMOVAL:
        string_removal(s, inst, k, params[0], params[1], params[2], removed, n_removed, rng)
    elif code == OP_RELATED_REMOVAL:
        related_removal(s, inst, k, params[0], removed, n_removed, rng)
    elif code == OP_ROUTE_REMOVAL:
        route_removal(s, inst, k, removed, n_removed, rng)
    elif code == OP_SEGMENT_REMOVAL:
        segment_removal(s, inst, k, params[0], removed, n_removed, rng)
    else:
        with gil:
            raise ValueError(f"unknown native destroy operator {code}")
    if inst.kind != KIND_TSP:
        sol_drop_empty(s)
    return 0


cdef int native_repair(int code, const double *params, Sol *s, const Inst *inst,
                       const int *removed, int n_removed, uint64_t *rng) except -1 nogil:
    """Insert the removed nodes into the partial solution s (in place) and update its cost."""
    if code == OP_GREEDY_INSERTION:
        greedy_insertion(s, inst, removed, n_removed)
    elif code == OP_BLINK_INSERTION:
        blink_insertion(s, inst, removed, n_removed, params[0], params[1], params[2], rng)
    elif code == OP_REGRET_INSERTION:
        regret_insertion(s, inst, removed, n_removed, params[0], params[1], NULL)
    else:
        with gil:
            raise ValueError(f"unknown native repair operator {code}")
    s.cost = sol_cost(s, inst)
    # params[3] of every repair operator: end with the local search from the reinserted nodes
    # (it starts from s.cost and leaves the recomputed cost of its result there)
    if params[3] != 0:
        local_search(s, inst, removed, n_removed)
    return 0


cdef int _fill_params(double *out, str name, object params) except -1:
    """Parameters as the core gets them: None = the defaults, a dict = named overrides."""
    from glns.operators.natives import native_params
    if params is None or isinstance(params, dict):
        params = native_params(name, params or {})
    values = list(params)
    if len(values) > N_PARAMS:
        raise ValueError(f"at most {N_PARAMS} parameters, got {len(values)}")
    for i in range(N_PARAMS):
        out[i] = float(values[i]) if i < len(values) else 0.0
    return 0


def apply_destroy(str name, CoreInstance inst not None, routes, int k, uint64_t seed,
                  params=None):
    """Run one native destroy operator on a copy of `routes` (for tests and twins).

    Returns (removed, partial, rng_state_after).
    """
    cdef Solution sol = Solution(inst)
    sol.load(routes)
    cdef uint64_t state = seed
    cdef int n_removed = 0
    cdef double p[N_PARAMS]
    _fill_params(p, name, params)
    cdef int *buf = <int *> PyMem_Malloc(max(inst.n, 1) * sizeof(int))
    try:
        native_destroy(NATIVE_DESTROY[name], p, &sol.s, &inst.c, k, buf, &n_removed, &state)
        removed = [buf[i] for i in range(n_removed)]
    finally:
        PyMem_Free(buf)
    return removed, sol.routes(), state


def apply_repair(str name, CoreInstance inst not None, partial, removed, uint64_t seed,
                 params=None):
    """Run one native repair operator (for tests and twins). Returns (complete, rng_state_after)."""
    cdef Solution sol = Solution(inst)
    sol.load(partial, list(removed))
    cdef uint64_t state = seed
    cdef int n = len(removed)
    cdef double p[N_PARAMS]
    _fill_params(p, name, params)
    cdef int *buf = <int *> PyMem_Malloc(max(n, 1) * sizeof(int))
    try:
        for i in range(n):
            buf[i] = removed[i]
        native_repair(NATIVE_REPAIR[name], p, &sol.s, &inst.c, buf, n, &state)
    finally:
        PyMem_Free(buf)
    return sol.routes(), state
