# Native seed operators (SPEC §4 seeds): random removal, worst removal, greedy insertion.
# Destroy operators leave no empty route behind; repair operators route every removed node.
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memmove
from libc.math cimport pow, INFINITY
from libc.stdint cimport uint64_t, int64_t

from glns._core._types cimport Inst, Sol, KIND_TSP
from glns._core._rng cimport rng_below, rng_uniform
from glns._core._instance cimport CoreInstance
from glns._core._solution cimport (
    Solution, sol_remove, sol_insert, sol_drop_empty, sol_new_route, sol_cost,
    removal_delta, insertion_delta, new_route_cost,
)

NATIVE_DESTROY = {"random_removal": OP_RANDOM_REMOVAL, "worst_removal": OP_WORST_REMOVAL}
NATIVE_REPAIR = {"greedy_insertion": OP_GREEDY_INSERTION}

ctypedef struct Scored:
    double saving
    int node


cdef int _by_saving_desc(const void *a, const void *b) noexcept nogil:
    """Largest saving first; equal savings by ascending node id (a total order)."""
    cdef const Scored *x = <const Scored *> a
    cdef const Scored *y = <const Scored *> b
    if x.saving > y.saving:
        return -1
    if x.saving < y.saving:
        return 1
    return x.node - y.node


cdef int random_removal(Sol *s, const Inst *inst, int k, int *removed, int *n_removed,
                        uint64_t *rng) except -1 nogil:
    """Remove k distinct nodes drawn uniformly (partial Fisher-Yates over node ids)."""
    cdef int m = inst.n - inst.first
    cdef int i, j, t
    cdef int *cand = <int *> malloc(max(m, 1) * sizeof(int))
    if cand == NULL:
        with gil:
            raise MemoryError()
    if k > m:
        k = m
    for i in range(m):
        cand[i] = inst.first + i
    for i in range(k):
        j = i + rng_below(rng, m - i)
        t = cand[i]
        cand[i] = cand[j]
        cand[j] = t
        removed[i] = cand[i]
        sol_remove(s, inst, cand[i])
    free(cand)
    n_removed[0] = k
    return 0


cdef inline bint _before(const Scored *x, const Scored *y) noexcept nogil:
    return x.saving > y.saving or (x.saving == y.saving and x.node < y.node)


cdef int _rescore(Sol *s, const Inst *inst, Scored *scored, int count, int u) noexcept nogil:
    """Recompute node u's saving and move its entry to keep `scored` sorted. O(count)."""
    cdef int i = 0, j
    cdef Scored e
    while scored[i].node != u:
        i += 1
    e.node = u
    e.saving = -removal_delta(s, inst, u)
    memmove(&scored[i], &scored[i + 1], (count - i - 1) * sizeof(Scored))
    j = 0
    while j < count - 1 and _before(&scored[j], &e):
        j += 1
    memmove(&scored[j + 1], &scored[j], (count - 1 - j) * sizeof(Scored))
    scored[j] = e
    return 0


cdef int worst_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                       int *n_removed, uint64_t *rng) except -1 nogil:
    """Remove k nodes one by one, each time the node of rank floor(y^p * m) by saving.

    y is uniform in [0, 1) and p = randomness >= 1 (Ropke & Pisinger 2006): large p almost
    always takes the node whose removal saves most. The ranking (saving descending, node id
    ascending) is sorted once; after a removal only the two neighbours' savings change, so
    each step costs O(m) rather than a full re-sort.
    """
    cdef int m = inst.n - inst.first
    cdef int step, v, count = 0, idx, r, p, a, b
    cdef int *row
    cdef Scored *scored = <Scored *> malloc(max(m, 1) * sizeof(Scored))
    if scored == NULL:
        with gil:
            raise MemoryError()
    if k > m:
        k = m
    for v in range(inst.first, inst.n):
        if s.route_of[v] >= 0:
            scored[count].saving = -removal_delta(s, inst, v)
            scored[count].node = v
            count += 1
    qsort(scored, count, sizeof(Scored), _by_saving_desc)
    for step in range(k):
        idx = <int>(pow(rng_uniform(rng), randomness) * count)
        if idx >= count:
            idx = count - 1
        v = scored[idx].node
        r = s.route_of[v]
        p = s.pos_of[v]
        row = &s.nodes[r * s.stride]
        if inst.kind == KIND_TSP:
            a = row[(p - 1 + s.length[r]) % s.length[r]]
            b = row[(p + 1) % s.length[r]]
        else:
            a = row[p - 1] if p > 0 else -1
            b = row[p + 1] if p < s.length[r] - 1 else -1
        removed[step] = v
        sol_remove(s, inst, v)
        memmove(&scored[idx], &scored[idx + 1], (count - idx - 1) * sizeof(Scored))
        count -= 1
        if a >= 0 and a != v:
            _rescore(s, inst, scored, count, a)
        if b >= 0 and b != v and b != a:
            _rescore(s, inst, scored, count, b)
    free(scored)
    n_removed[0] = k
    return 0


cdef int greedy_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed) except -1 nogil:
    """Insert each removed node, in the given order, at its cheapest feasible position.

    Ties go to the first route, then the first position. In a VRP a new route is opened when
    it is strictly cheaper than every feasible position, or when the node fits nowhere.
    """
    cdef int i, v, r, pos, best_r, best_pos, L, last_pos
    cdef double best, delta
    for i in range(n_removed):
        v = removed[i]
        best = INFINITY
        best_r = -1
        best_pos = 0
        for r in range(s.n_routes):
            if inst.kind != KIND_TSP and s.load[r] + inst.demand[v] > inst.capacity:
                continue
            L = s.length[r]
            # In a tour, position L closes the same edge as position 0.
            last_pos = L - 1 if (inst.kind == KIND_TSP and L > 0) else L
            for pos in range(last_pos + 1):
                delta = insertion_delta(s, inst, v, r, pos)
                if delta < best:
                    best = delta
                    best_r = r
                    best_pos = pos
        # Vehicles are unlimited: a new route is a candidate too (it can be the cheapest in
        # an open VRP; with metric distances never in a CVRP, where it is the fallback).
        if inst.kind != KIND_TSP and (best_r < 0 or new_route_cost(inst, v) < best):
            best_r = sol_new_route(s)
            best_pos = 0
        sol_insert(s, inst, v, best_r, best_pos)
    return 0


cdef int native_destroy(int code, double param, Sol *s, const Inst *inst, int k,
                        int *removed, int *n_removed, uint64_t *rng) except -1 nogil:
    if code == OP_RANDOM_REMOVAL:
        random_removal(s, inst, k, removed, n_removed, rng)
    elif code == OP_WORST_REMOVAL:
        worst_removal(s, inst, k, param, removed, n_removed, rng)
    else:
        with gil:
            raise ValueError(f"unknown native destroy operator {code}")
    if inst.kind != KIND_TSP:
        sol_drop_empty(s)
    return 0


cdef int native_repair(int code, double param, Sol *s, const Inst *inst,
                       const int *removed, int n_removed, uint64_t *rng) except -1 nogil:
    if code == OP_GREEDY_INSERTION:
        greedy_insertion(s, inst, removed, n_removed)
    else:
        with gil:
            raise ValueError(f"unknown native repair operator {code}")
    s.cost = sol_cost(s, inst)
    return 0


def apply_destroy(str name, CoreInstance inst not None, routes, int k, uint64_t seed,
                  double param=3.0):
    """Run one native destroy operator on a copy of `routes` (for tests and twins).

    Returns (removed, partial, rng_state_after).
    """
    cdef Solution sol = Solution(inst)
    sol.load(routes)
    cdef uint64_t state = seed
    cdef int n_removed = 0
    cdef int *buf = <int *> PyMem_Malloc(max(inst.n, 1) * sizeof(int))
    try:
        native_destroy(NATIVE_DESTROY[name], param, &sol.s, &inst.c, k, buf, &n_removed, &state)
        removed = [buf[i] for i in range(n_removed)]
    finally:
        PyMem_Free(buf)
    return removed, sol.routes(), state


def apply_repair(str name, CoreInstance inst not None, partial, removed, uint64_t seed,
                 double param=0.0):
    """Run one native repair operator (for tests and twins). Returns (complete, rng_state_after)."""
    cdef Solution sol = Solution(inst)
    sol.load(partial, list(removed))
    cdef uint64_t state = seed
    cdef int n = len(removed)
    cdef int *buf = <int *> PyMem_Malloc(max(n, 1) * sizeof(int))
    try:
        for i in range(n):
            buf[i] = removed[i]
        native_repair(NATIVE_REPAIR[name], param, &sol.s, &inst.c, buf, n, &state)
    finally:
        PyMem_Free(buf)
    return sol.routes(), state
