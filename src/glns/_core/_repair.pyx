# Native repair operators. Each inserts every node of `removed` into a partial solution so that
# it is complete and feasible. Each has a plain-Python twin that makes the same choices
# (glns.operators.seeds for greedy_insertion, glns.operators.library.repair for the others).
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, calloc, free, qsort

from glns._core._types cimport Inst, Sol, KIND_TSP
from glns._core._rng cimport rng_below, rng_uniform
from glns._core._solution cimport sol_insert, sol_new_route, insertion_delta, new_route_cost


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


# ---------------------------------------------------------------------------------------------
# Shared helpers of the library repair operators

ctypedef struct Best:
    double cost     # insertion delta of the best candidate so far (INFINITY: none yet)
    int route       # its route (-1: none yet)
    int pos         # its position in the route


cdef inline void _consider(Best *b, double cost, int r, int pos) noexcept nogil:
    """Keep the cheapest candidate; ties go to the first route, then the first position.

    The explicit tie rule makes the result independent of the order candidates are offered
    in (granular scans visit them in neighbour order).
    """
    if cost < b.cost or (cost == b.cost and (r < b.route or (r == b.route and pos < b.pos))):
        b.cost = cost
        b.route = r
        b.pos = pos


cdef inline bint _fits(const Sol *s, const Inst *inst, int v, int r) noexcept nogil:
    """Route r has room for node v (always true in a tour)."""
    return inst.kind == KIND_TSP or s.load[r] + inst.demand[v] <= inst.capacity


cdef inline int _after(const Sol *s, const Inst *inst, int r, int p, int *next_node) noexcept nogil:
    """The position right after index p of route r, and the node now there (-1: route end).

    In a tour the position after the last node is 0 (the closing edge).
    """
    cdef int q = p + 1
    cdef int L = s.length[r]
    if inst.kind == KIND_TSP:
        if q == L:
            q = 0
        next_node[0] = s.nodes[r * s.stride + q]
    else:
        next_node[0] = s.nodes[r * s.stride + q] if q < L else -1
    return q


cdef int _granularity(const Inst *inst, double neighbours) noexcept nogil:
    """The `neighbours` parameter as a count of nearest neighbours, clamped to the table."""
    if not neighbours > 0.0:      # also NaN
        return 0
    if neighbours >= inst.n_neigh:
        return inst.n_neigh
    return <int>neighbours


# ---------------------------------------------------------------------------------------------
# blink_insertion: the recreate step of SISR (Christiaens & Vanden Berghe, 2020)

ctypedef struct Keyed:
    double key
    int node


cdef int _by_key(const void *a, const void *b) noexcept nogil:
    """Smallest key first; equal keys by ascending node id (a total order)."""
    cdef const Keyed *x = <const Keyed *> a
    cdef const Keyed *y = <const Keyed *> b
    if x.key < y.key:
        return -1
    if x.key > y.key:
        return 1
    return x.node - y.node


cdef int _insertion_order(const Inst *inst, const int *removed, int m, int order, int *out,
                          uint64_t *rng) except -1 nogil:
    """Write the removed nodes to `out` in the order given by `order` (ORDER_*)."""
    cdef int i, j, t, v
    cdef Keyed *keyed
    if order == ORDER_SISR:
        order = rng_below(rng, 4)
    if order == ORDER_DEMAND and inst.kind == KIND_TSP:
        order = ORDER_RANDOM       # cities have no demand
    for i in range(m):
        out[i] = removed[i]
    if order == ORDER_RANDOM:
        for i in range(m - 1, 0, -1):
            j = rng_below(rng, i + 1)
            t = out[i]
            out[i] = out[j]
            out[j] = t
        return 0
    keyed = <Keyed *> malloc(max(m, 1) * sizeof(Keyed))
    if keyed == NULL:
        with gil:
            raise MemoryError()
    for i in range(m):
        v = removed[i]
        keyed[i].node = v
        if order == ORDER_DEMAND:
            keyed[i].key = -<double> inst.demand[v]
        elif order == ORDER_FAR:
            keyed[i].key = -inst.dist[v]       # row 0: from the depot (TSP: node 0)
        else:
            keyed[i].key = inst.dist[v]
    qsort(keyed, m, sizeof(Keyed), _by_key)
    for i in range(m):
        out[i] = keyed[i].node
    free(keyed)
    return 0


cdef inline bint _blinks(double rate, uint64_t *rng) noexcept nogil:
    """A candidate is skipped with probability `rate`; no number is drawn when rate <= 0."""
    return rate > 0.0 and rng_uniform(rng) < rate


cdef void _blink_scan_all(const Sol *s, const Inst *inst, int v, double rate, uint64_t *rng,
                          Best *best) noexcept nogil:
    """Every position of every route with room for v, routes and positions in order."""
    cdef int r, pos, L, last_pos
    for r in range(s.n_routes):
        if not _fits(s, inst, v, r):
            continue
        L = s.length[r]
        # In a tour, position L closes the same edge as position 0.
        last_pos = L - 1 if (inst.kind == KIND_TSP and L > 0) else L
        for pos in range(last_pos + 1):
            if not _blinks(rate, rng):
                _consider(best, insertion_delta(s, inst, v, r, pos), r, pos)


cdef void _blink_scan_granular(const Sol *s, const Inst *inst, int v, int g, int *mark, int stamp,
                               double rate, uint64_t *rng, Best *best) noexcept nogil:
    """The positions directly before and after each of v's g nearest neighbours, each once.

    Neighbours are visited nearest first. The position after neighbour x is skipped when the
    node following x is itself one of the g neighbours: that position is the one before it
    (so it is offered, and may blink, only once). `mark[w] == stamp` flags the neighbours.
    """
    cdef const int *nb = &inst.neigh[v * inst.n_neigh]
    cdef int j, x, r, p, q, nxt
    for j in range(g):
        mark[nb[j]] = stamp
    for j in range(g):
        x = nb[j]
        r = s.route_of[x]
        if r < 0 or not _fits(s, inst, v, r):
            continue
        p = s.pos_of[x]
        if not _blinks(rate, rng):
            _consider(best, insertion_delta(s, inst, v, r, p), r, p)
        q = _after(s, inst, r, p, &nxt)
        if nxt >= 0 and mark[nxt] == stamp:
            continue
        if not _blinks(rate, rng):
            _consider(best, insertion_delta(s, inst, v, r, q), r, q)


cdef int blink_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed,
                         double order, double blink_rate, double neighbours,
                         uint64_t *rng) except -1 nogil:
    """Greedy insertion in a chosen order, each candidate position skipped with some probability.

    order: ORDER_* (ORDER_SISR draws one of the other four per call, one rng_below(4)).
    blink_rate: each evaluated position is skipped with this probability (one rng_uniform per
    evaluated position, none when the rate is 0; the new-route option never blinks).
    neighbours: g > 0 restricts v to the positions next to its g nearest neighbours (granular);
    when none of those is available (no room, unrouted, or all blinked) the full scan runs.
    If every position blinked, a VRP node opens a new route and a TSP city takes its cheapest
    position without blinks. Ties: first route, first position, as greedy_insertion.
    """
    cdef int g = _granularity(inst, neighbours)
    cdef int code = <int> order if (order >= 0.0 and order <= ORDER_SISR) else -1
    cdef int i, v
    cdef Best best
    if code < 0 or code != order:
        with gil:
            raise ValueError(f"blink_insertion: order must be an integer in 0..{ORDER_SISR}, got {order}")
    cdef int *todo = <int *> malloc(max(n_removed, 1) * sizeof(int))
    cdef int *mark = <int *> calloc(inst.n, sizeof(int)) if g > 0 else NULL
    try:
        if todo == NULL or (g > 0 and mark == NULL):
            with gil:
                raise MemoryError()
        _insertion_order(inst, removed, n_removed, code, todo, rng)
        for i in range(n_removed):
            v = todo[i]
            if inst.kind == KIND_TSP and s.length[0] == 0:
                sol_insert(s, inst, v, 0, 0)       # the only position: no choice, no draw
                continue
            best.cost = INFINITY
            best.route = -1
            best.pos = 0
            if g > 0:
                _blink_scan_granular(s, inst, v, g, mark, i + 1, blink_rate, rng, &best)
            if best.route < 0:
                _blink_scan_all(s, inst, v, blink_rate, rng, &best)
            if best.route < 0 and inst.kind == KIND_TSP:
                _blink_scan_all(s, inst, v, 0.0, rng, &best)
            # Vehicles are unlimited: a new route wins when strictly cheaper or nothing is left.
            if inst.kind != KIND_TSP and (best.route < 0 or new_route_cost(inst, v) < best.cost):
                best.route = sol_new_route(s)
                best.pos = 0
            sol_insert(s, inst, v, best.route, best.pos)
    finally:
        free(todo)
        free(mark)
    return 0
