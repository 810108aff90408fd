# Native destroy operators. Each removes nodes from a complete solution, writes them to
# `removed` in removal order and may leave empty routes (the dispatcher drops them). Each has a
# plain-Python twin (glns.operators.seeds / glns.operators.library) that draws the same random
# numbers in the same order, so tests compare them move for move.
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memmove
from libc.math cimport pow, ceil
from libc.stdint cimport uint64_t

from glns._core._types cimport Inst, Sol
from glns._core._kind cimport is_tour
from glns._core._distance cimport dist
from glns._core._rng cimport rng_below, rng_uniform
from glns._core._solution cimport (sol_remove, removal_delta, sol_touch_at, sol_mark, sol_pos,
                                   sol_moved, sol_slot_end, sol_set_length)
from glns._core._keyed cimport Keyed, keyed_before, keyed_cmp


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


cdef int _rescore(Sol *s, const Inst *inst, Keyed *scored, int count, int u) noexcept nogil:
    """Recompute node u's removal delta and move its entry to keep `scored` sorted. O(count)."""
    cdef int i = 0, j
    cdef Keyed e
    while scored[i].node != u:
        i += 1
    e.node = u
    e.key = removal_delta(s, inst, u)
    memmove(&scored[i], &scored[i + 1], (count - i - 1) * sizeof(Keyed))
    j = 0
    while j < count - 1 and keyed_before(&scored[j], &e):
        j += 1
    memmove(&scored[j + 1], &scored[j], (count - 1 - j) * sizeof(Keyed))
    scored[j] = e
    return 0


cdef int worst_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                       int *n_removed, uint64_t *rng) except -1 nogil:
    """Remove k nodes one by one, each time the node of rank floor(y^p * m) by saving.

    y is uniform in [0, 1) and p = randomness >= 1 (Ropke & Pisinger 2006): large p almost
    always takes the node whose removal saves most. The ranking (removal delta ascending, i.e.
    saving descending; node id ascending) is sorted once; after a removal only the two
    neighbours' deltas change, so each step costs O(m) rather than a full re-sort.
    """
    cdef int m = inst.n - inst.first
    cdef int step, v, count = 0, idx, r, p, a, b
    cdef int *row
    cdef Keyed *scored = <Keyed *> malloc(max(m, 1) * sizeof(Keyed))
    if scored == NULL:
        with gil:
            raise MemoryError()
    if k > m:
        k = m
    for v in range(inst.first, inst.n):
        if s.route_of[v] >= 0:
            scored[count].key = removal_delta(s, inst, v)
            scored[count].node = v
            count += 1
    qsort(scored, count, sizeof(Keyed), keyed_cmp)
    for step in range(k):
        idx = <int>(pow(rng_uniform(rng), randomness) * count)
        if idx >= count:
            idx = count - 1
        v = scored[idx].node
        r = s.route_of[v]
        p = sol_pos(s, v)
        row = &s.nodes[r * s.stride]
        if is_tour(inst):
            a = row[(p - 1 + s.length[r]) % s.length[r]]
            b = row[(p + 1) % s.length[r]]
        else:
            a = row[p - 1] if p > 0 else -1
            b = row[p + 1] if p < s.length[r] - 1 else -1
        removed[step] = v
        sol_remove(s, inst, v)
        memmove(&scored[idx], &scored[idx + 1], (count - idx - 1) * sizeof(Keyed))
        count -= 1
        if a >= 0 and a != v:
            _rescore(s, inst, scored, count, a)
        if b >= 0 and b != v and b != a:
            _rescore(s, inst, scored, count, b)
    free(scored)
    n_removed[0] = k
    return 0


# ---------------------------------------------------------------------------------------------
# The operator library: string (SISR), related, route and segment removal.
#
# Helpers shared by them. Nodes of one route are "taken" (unrouted and recorded) one by one
# while the route row is left untouched, then the row is compacted once: cutting a string of
# any shape (cyclic, split) costs O(route length) instead of one memmove per node.

cdef inline int _clamp_k(int k, int m) noexcept nogil:
    """The number of nodes to remove: k within [1, m] (a destroy always removes something)."""
    if k > m:
        k = m
    if k < 1:
        k = 1
    return k


cdef inline int _count_param(double x, int cap) noexcept nogil:
    """A count parameter as an int in [1, cap] (a huge double must not overflow the cast)."""
    if x >= cap:
        return cap
    if x < 1.0:
        return 1
    return <int>x


cdef inline void _take_at(Sol *s, const Inst *inst, int r, int p, int *removed,
                          int *n_removed) noexcept nogil:
    """Unroute the node at index p of route r and record it; the row is compacted later by
    _compact (until then the indices of the others stay valid)."""
    cdef int v = s.nodes[r * s.stride + p]
    sol_touch_at(s, inst, r, p - 1)     # its neighbours get new arcs (see sol_cost)
    sol_touch_at(s, inst, r, p)
    sol_touch_at(s, inst, r, p + 1)
    sol_mark(s, r)
    s.load[r] -= inst.demand[v]
    s.route_of[v] = -1
    s.pos_of[v] = -1
    removed[n_removed[0]] = v
    n_removed[0] += 1


cdef inline void _take(Sol *s, const Inst *inst, int v, int *removed, int *n_removed) noexcept nogil:
    """_take_at for routed node v, wherever it is."""
    _take_at(s, inst, s.route_of[v], sol_pos(s, v), removed, n_removed)


cdef void _compact(Sol *s, int r, int lo, int hi) noexcept nogil:
    """Drop the taken (unrouted) nodes from route r's row, keeping the order of the others;
    all taken ones lie in [lo, hi). The row after hi moves back in one memmove (sol_moved)."""
    cdef int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int i, v, w = lo, d
    for i in range(lo, hi):
        v = row[i]
        if s.route_of[v] == r:
            row[w] = v
            s.pos_of[v] = w
            w += 1
    d = hi - w
    if d == 0:
        return
    memmove(&row[w], &row[hi], (L - hi) * sizeof(int))
    sol_set_length(s, r, L - d)
    sol_moved(s, r, w, d)


cdef void _compact_window(Sol *s, int r, int start, int w) noexcept nogil:
    """_compact when the taken nodes lie in the w indices from `start` on, cyclically (only a
    tour's window wraps past the end)."""
    cdef int L = s.length[r]
    if start + w <= L:
        _compact(s, r, start, start + w)
    else:
        _compact(s, r, start, L)
        _compact(s, r, 0, start + w - L)


cdef int _cut_string(Sol *s, const Inst *inst, int c, int lsmax, int limit, double split_rate,
                     double split_depth, int *removed, int *n_removed,
                     uint64_t *rng) noexcept nogil:
    """Cut one SISR string containing node c from its route; returns the number removed.

    Draws, in order: the length l in 1..min(|t|, lsmax, limit); u < split_rate for the split
    variant; for a split, the preserved count m (see string_removal); the start of the window
    of l + m nodes that contains c; for a split, the offset of the preserved block.
    """
    cdef bint tour = is_tour(inst)
    cdef int r = s.route_of[c]
    cdef int p = sol_pos(s, c)
    cdef int L = s.length[r]
    cdef int lt = L, l, mm = 0, mmax, w, start, lo, hi, q, i, before = n_removed[0]
    if lsmax < lt:
        lt = lsmax
    if limit < lt:
        lt = limit
    l = 1 + rng_below(rng, lt)
    if rng_uniform(rng) < split_rate and l >= 2:
        mmax = L - l
        if lsmax < mmax:
            mmax = lsmax
        if mmax >= 1:
            mm = 1
            while mm < mmax and rng_uniform(rng) >= split_depth:
                mm += 1
    w = l + mm
    if tour:   # a tour is a cycle: every placement of the window around c is valid
        start = p - rng_below(rng, w)
        if start < 0:
            start += L
    else:     # a route is a path: the window must fit between its ends
        lo = p - w + 1 if p - w + 1 > 0 else 0
        hi = p if p < L - w else L - w
        start = lo + rng_below(rng, hi - lo + 1)
    # preserved block [q, q + mm) strictly inside the window (q = l: no block)
    q = 1 + rng_below(rng, l - 1) if mm > 0 else l
    for i in range(w):
        if q <= i < q + mm:
            continue
        _take_at(s, inst, r, (start + i) % L, removed, n_removed)
    _compact_window(s, r, start, w)
    return n_removed[0] - before


cdef int string_removal(Sol *s, const Inst *inst, int k, double max_string_len, double split_rate,
                        double split_depth, int *removed, int *n_removed,
                        uint64_t *rng) except -1 nogil:
    """SISR ruin (Christiaens & Vanden Berghe 2020) with average removal k.

    l_max = min(max_string_len, floor(mean route length)) (at least 1); the number of strings
    k_s is uniform on 1..max(1, floor(4k / (1 + l_max)) - 1) (the paper's floor(U(1, k_s_max + 1))
    with integer bounds). A seed node is drawn uniformly; its neighbour list (the seed first)
    is walked and each node still routed whose route is not ruined yet gets a string of
    l = 1 + below(min(|t|, l_max)) nodes around it, placed uniformly among the windows that
    contain it. With probability split_rate (when l >= 2) the split variant keeps m >= 1
    nodes in the middle of an l + m window: m starts at 1 and grows while a uniform draw is
    >= split_depth, up to min(|t| - l, l_max). VRP: one string per route, stop after k_s
    routes. TSP (one cyclic route): every string is its own unit; stop after k_s strings or
    k nodes, the last string clipped so that at most k are removed. When the neighbour list
    runs out, strings are cut around uniformly drawn routed nodes of unruined routes.
    """
    cdef int m = inst.n - inst.first
    cdef bint tour = is_tour(inst)
    cdef int r, routes = 0, lsmax, kmax, ks, strings = 0, seed, c, j = -1, total, t, q
    cdef int limit = inst.n
    cdef char *ruined = NULL
    k = _clamp_k(k, m)
    n_removed[0] = 0
    for q in range(s.n_routes):
        if s.length[s.order[q]] > 0:
            routes += 1
    lsmax = m // routes if routes > 0 else 1
    if _count_param(max_string_len, inst.n) < lsmax:
        lsmax = _count_param(max_string_len, inst.n)
    if lsmax < 1:
        lsmax = 1
    kmax = (4 * k) // (1 + lsmax) - 1
    ks = 1 + rng_below(rng, kmax if kmax > 1 else 1)
    if not tour:
        ruined = <char *> calloc(max(sol_slot_end(s), 1), sizeof(char))
        if ruined == NULL:
            with gil:
                raise MemoryError()
    seed = inst.first + rng_below(rng, m)
    while strings < ks and (not tour or n_removed[0] < k):
        if j < inst.n_neigh:
            c = seed if j < 0 else inst.neigh[seed * inst.n_neigh + j]
            j += 1
            if s.route_of[c] < 0 or (not tour and ruined[s.route_of[c]]):
                continue
        elif tour:
            c = s.nodes[rng_below(rng, s.length[0])]
        else:
            total = 0
            for q in range(s.n_routes):
                r = s.order[q]
                if not ruined[r]:
                    total += s.length[r]
            if total == 0:
                break
            t = rng_below(rng, total)
            q = 0
            while ruined[s.order[q]] or t >= s.length[s.order[q]]:
                if not ruined[s.order[q]]:
                    t -= s.length[s.order[q]]
                q += 1
            r = s.order[q]
            c = s.nodes[r * s.stride + t]
        if tour:
            limit = k - n_removed[0]
        else:
            ruined[s.route_of[c]] = 1
        _cut_string(s, inst, c, lsmax, limit, split_rate, split_depth, removed, n_removed, rng)
        strings += 1
    free(ruined)
    return 0


cdef int related_removal(Sol *s, const Inst *inst, int k, double randomness, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil:
    """Shaw removal by distance only (no demand term): a uniform first node, then k - 1 times
    a uniformly drawn removed node r and the still-routed neighbour of rank
    floor(y^randomness * a) among the a routed nodes of r's neighbour list (nearest first);
    a uniform routed node when none of r's listed neighbours is routed. Only route_of is read
    while choosing, so nodes are taken and each touched route is compacted once at the end:
    O(k * n_neigh + touched route lengths)."""
    cdef int m = inst.n - inst.first
    cdef int count = 0, r, j, avail, idx, v, t
    cdef const int *row
    cdef char *touched = <char *> calloc(max(sol_slot_end(s), 1), sizeof(char))
    if touched == NULL:
        with gil:
            raise MemoryError()
    k = _clamp_k(k, m)
    v = inst.first + rng_below(rng, m)
    touched[s.route_of[v]] = 1
    _take(s, inst, v, removed, &count)
    while count < k:
        r = removed[rng_below(rng, count)]
        row = &inst.neigh[r * inst.n_neigh]
        avail = 0
        for j in range(inst.n_neigh):
            if s.route_of[row[j]] >= 0:
                avail += 1
        if avail > 0:
            idx = <int>(pow(rng_uniform(rng), randomness) * avail)
            if idx >= avail:
                idx = avail - 1
            j = 0
            while True:
                if s.route_of[row[j]] >= 0:
                    if idx == 0:
                        break
                    idx -= 1
                j += 1
            v = row[j]
        else:   # rare: only when the list is shorter than the instance (n > n_neigh + 1)
            t = rng_below(rng, m - count)
            v = inst.first
            while True:
                if s.route_of[v] >= 0:
                    if t == 0:
                        break
                    t -= 1
                v += 1
        touched[s.route_of[v]] = 1
        _take(s, inst, v, removed, &count)
    for j in range(s.n_routes):
        r = s.order[j]
        if touched[r]:
            _compact(s, r, 0, s.length[r])
    free(touched)
    n_removed[0] = count
    return 0


cdef int route_removal(Sol *s, const Inst *inst, int k, int *removed, int *n_removed,
                       uint64_t *rng) except -1 nogil:
    """VRP only: remove every customer of uniformly drawn routes (each customer in route
    order) until at least k are removed; the last route may overshoot k."""
    if is_tour(inst):
        with gil:
            raise ValueError("route_removal needs a CVRP or OVRP: a TSP tour is a single route")
    cdef int m = inst.n - inst.first
    cdef int r, i, j, nr = 0
    cdef int *ids = <int *> malloc(max(s.n_routes, 1) * sizeof(int))
    if ids == NULL:
        with gil:
            raise MemoryError()
    k = _clamp_k(k, m)
    n_removed[0] = 0
    for j in range(s.n_routes):
        r = s.order[j]
        if s.length[r] > 0:
            ids[nr] = r
            nr += 1
    while n_removed[0] < k and nr > 0:
        j = rng_below(rng, nr)
        r = ids[j]
        nr -= 1
        ids[j] = ids[nr]
        for i in range(s.length[r]):
            _take_at(s, inst, r, i, removed, n_removed)
        sol_set_length(s, r, 0)
    free(ids)
    return 0


cdef int segment_removal(Sol *s, const Inst *inst, int k, double segments, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil:
    """Remove exactly k nodes as g = min(segments, k) contiguous segments; segment i has
    k // g nodes, one more for i < k % g. TSP: a segment starts at a uniform position of the
    current tour and runs forward cyclically. VRP: a segment is placed around a uniformly drawn
    routed node, as far forward as its route allows (start = min(pos, |t| - len)); a segment
    longer than its route takes the whole route and continues around a new uniformly drawn
    routed node (necessarily in another route)."""
    cdef int m = inst.n - inst.first
    cdef bint tour = is_tour(inst)
    cdef int g, i, need, r, p, L, t, start, x
    k = _clamp_k(k, m)
    g = _count_param(segments, k)
    n_removed[0] = 0
    for i in range(g):
        need = k // g + (1 if i < k % g else 0)
        while need > 0:
            if tour:
                r = 0
                L = s.length[0]
                t = need
                start = rng_below(rng, L)
            else:
                p = rng_below(rng, m - n_removed[0])
                x = 0
                while p >= s.length[s.order[x]]:
                    p -= s.length[s.order[x]]
                    x += 1
                r = s.order[x]
                L = s.length[r]
                t = need if need < L else L
                start = p if p < L - t else L - t
            for x in range(t):
                _take_at(s, inst, r, (start + x) % L, removed, n_removed)
            _compact_window(s, r, start, t)
            need -= t
    return 0


cdef int radial_removal(Sol *s, const Inst *inst, int k, double spread, int *removed,
                        int *n_removed, uint64_t *rng) except -1 nogil:
    """Radial ruin (Schrimpf et al. 2000): a uniformly drawn seed node, then k - 1 of the c
    routable nodes nearest to it, removed nearest first. c = ceil(spread * (k - 1)) within
    [k - 1, m - 1]; the k - 1 are drawn uniformly among the c by a partial Fisher-Yates over
    their ranks (no draws when c == k - 1: spread 1 takes exactly the nearest). Nearness is the
    seed's row of the distance matrix, ties by node id: the first c columns of the neighbour
    table when it has them, else a full sort (the same order). O(m log m) at worst."""
    cdef int m = inst.n - inst.first
    cdef int seed, c, i, j, t, v, count = 0
    cdef double x
    k = _clamp_k(k, m)
    seed = inst.first + rng_below(rng, m)
    x = spread * (k - 1)
    c = m - 1 if not x < m - 1 else <int> ceil(x)    # `not <`: a NaN takes every node
    if c < k - 1:
        c = k - 1
    cdef int *near = <int *> malloc((c if c > 0 else 1) * sizeof(int))
    cdef int *ranks = <int *> malloc((c if c > 0 else 1) * sizeof(int))
    cdef char *chosen = <char *> calloc(c if c > 0 else 1, sizeof(char))
    cdef char *touched = <char *> calloc(max(sol_slot_end(s), 1), sizeof(char))
    cdef Keyed *order = NULL
    if c > inst.n_neigh:
        order = <Keyed *> malloc(max(m, 1) * sizeof(Keyed))
    if near == NULL or ranks == NULL or chosen == NULL or touched == NULL or (
            c > inst.n_neigh and order == NULL):
        free(near)
        free(ranks)
        free(chosen)
        free(touched)
        free(order)
        with gil:
            raise MemoryError()
    if c <= inst.n_neigh:
        for i in range(c):
            near[i] = inst.neigh[seed * inst.n_neigh + i]
    else:
        for v in range(inst.first, inst.n):
            if v != seed:
                order[count].key = dist(inst, seed, v)
                order[count].node = v
                count += 1
        qsort(order, count, sizeof(Keyed), keyed_cmp)
        for i in range(c):
            near[i] = order[i].node
        free(order)
    for i in range(c):
        ranks[i] = i
    if c > k - 1:
        for i in range(k - 1):
            j = i + rng_below(rng, c - i)
            t = ranks[i]
            ranks[i] = ranks[j]
            ranks[j] = t
    for i in range(k - 1):
        chosen[ranks[i]] = 1
    n_removed[0] = 0
    touched[s.route_of[seed]] = 1
    _take(s, inst, seed, removed, n_removed)
    for i in range(c):
        if chosen[i]:
            touched[s.route_of[near[i]]] = 1
            _take(s, inst, near[i], removed, n_removed)
    for i in range(s.n_routes):
        t = s.order[i]
        if touched[t]:
            _compact(s, t, 0, s.length[t])
    free(near)
    free(ranks)
    free(chosen)
    free(touched)
    return 0
