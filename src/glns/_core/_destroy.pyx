# Native destroy operators. Each removes nodes from a complete solution, writes them to
# `removed` in removal order and may leave empty routes (the dispatcher drops them). Each has a
# plain-Python twin (glns.operators.seeds / glns.operators.library) that draws the same random
# numbers in the same order, so tests compare them move for move.
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memmove
from libc.math cimport pow
from libc.stdint cimport uint64_t

from glns._core._types cimport Inst, Sol, KIND_TSP
from glns._core._rng cimport rng_below, rng_uniform
from glns._core._solution cimport sol_remove, removal_delta


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
