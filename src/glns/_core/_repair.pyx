# Native repair operators. Each inserts every node of `removed` into a partial solution so that
# it is complete and feasible. Each has a plain-Python twin that makes the same choices
# (glns.operators.seeds for greedy_insertion, glns.operators.library.repair for the others).
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, calloc, free, qsort

from glns._core._types cimport Inst, Sol
from glns._core._kind cimport is_tour, last_position, fits, close_cost
from glns._core._distance cimport dist, near_dists, distance_below
from glns._core._rng cimport rng_below, rng_uniform, rng_after
from glns._core._route_bounds cimport (RouteBounds, bounds_init, bounds_free, bounds_add,
                                       route_beyond, route_untimely, depot_gap)
from glns._core._solution cimport (sol_insert, sol_new_route, insertion_delta, new_route_cost,
                                   sol_to_py, sol_pos, sol_slot_end, Solution, arc, END)
from glns._core._instance cimport CoreInstance
from glns._core._keyed cimport Keyed, keyed_cmp
from glns._core._windows cimport (win_insert_ok, win_fresh, win_between_known, win_bounded,
                                  win_may_take, win_may_between, win_may_join)


cdef inline bint _in_time(const Sol *s, const Inst *inst, int v, int r, int pos) noexcept nogil:
    """Node v at index pos of route r keeps every time window (always without windows). The
    repairs price a position first and check it only when it would be kept: O(1) either way."""
    return not inst.timed or win_insert_ok(s, inst, v, r, pos)


cdef inline bint _blinks(double rate, uint64_t *rng) noexcept nogil:
    """A candidate is skipped with probability `rate`; no number is drawn when rate <= 0."""
    return rate > 0.0 and rng_uniform(rng) < rate


cdef void _route_scan(const Sol *s, const Inst *inst, int v, int r, double rate, uint64_t *rng,
                      double *c, int *p) noexcept nogil:
    """v's cheapest insertion into route r: (cost, position), first position on ties, over
    the positions that do not blink (one draw per position, in order, when rate > 0);
    (INFINITY, -1) when all blink. Room is the caller's check.

    The same floats as insertion_delta position by position, in fewer distances: with
    symmetric distances d(v, x) at one position is d(x, v) at the next. This scan dominates a
    VRP repair at n = 10,000. (Caching the edges' own costs per repair call was measured
    slower: building the cache costs as much as it saves.)
    """
    cdef int L = s.length[r]
    cdef int last = last_position(inst, L)
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int pos, a, b
    cdef double delta, av, vb
    c[0] = INFINITY
    p[0] = -1
    if L == 0:
        if not _blinks(rate, rng):
            c[0] = insertion_delta(s, inst, v, r, 0)
            p[0] = 0
        return
    cdef int first
    if inst.timed:
        win_fresh(s, inst, r)
        first = 0
        _time_span(s, inst, v, r, &first, &last)
        if rate > 0.0:      # the draws of the positions skipped before the span
            rng[0] = rng_after(rng[0], <uint64_t> first)
        _timed_positions(s, inst, v, r, first, last, rate, rng, c, p)
        if rate > 0.0:      # and those of the positions skipped after it
            rng[0] = rng_after(rng[0], <uint64_t> (last_position(inst, L) - last))
        return
    a = row[L - 1] if is_tour(inst) else 0
    av = dist(inst, a, v)
    for pos in range(last + 1):
        if pos < L:
            b = row[pos]
            vb = dist(inst, v, b)
        else:                                   # the end of a depot route
            b = END
            vb = close_cost(inst, v)
        if not _blinks(rate, rng):
            if not inst.symmetric:
                av = dist(inst, a, v)
            delta = av + vb - arc(inst, a, b)
            if delta < c[0]:
                c[0] = delta
                p[0] = pos
        av = vb                                 # d(v, b) is d(b, v) when symmetric
        a = b


cdef void _timed_positions(const Sol *s, const Inst *inst, int v, int r, int first, int last,
                           double rate, uint64_t *rng, double *c, int *p) noexcept nogil:
    """_route_scan over the positions first..last of timed route r (fresh, not empty; its time
    span, _time_span): the same draws, floats and choice as pricing each position and checking
    its windows.

    Where the travel times are distances from coordinates, a position is first tried with
    lower bounds of them (win_may_take), while the last one priced broke a window: on
    Solomon's clustered files most positions left break one (four in five of the routes a
    repair scans have none that keeps them), and this tells without the two square roots;
    where windows are wide (class 2), one that keeps them is mostly followed by more, and the
    bounds would only add to their pricing."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef bint bounded = win_bounded(inst)
    cdef bint known = False         # av is d(a, v) (d(v, a): the last position's vb)
    cdef bint tight = True          # the last position priced broke a window (or none was)
    cdef int pos, b
    cdef int a = row[first - 1] if first > 0 else 0
    cdef double delta, av = 0.0, vb
    for pos in range(first, last + 1):
        b = row[pos] if pos < L else END
        if _blinks(rate, rng) or (bounded and tight and not win_may_take(s, inst, a, v, b)):
            known = False
            a = b
            continue
        if not inst.symmetric:
            av = dist(inst, a, v)
        elif not known:                 # the same float from v's row: one row stays in cache
            av = dist(inst, v, a)
        vb = dist(inst, v, b) if b != END else close_cost(inst, v)
        delta = av + vb - arc(inst, a, b)
        tight = False
        if delta < c[0]:
            if win_between_known(s, inst, a, v, b, av, vb):
                c[0] = delta
                p[0] = pos
            else:
                tight = True
        av = vb
        known = True
        a = b


cdef inline void _time_span(const Sol *s, const Inst *inst, int v, int r, int *first,
                            int *last) noexcept nogil:
    """Narrow [first, last] (the positions of fresh route r) to those where v can keep its
    window, with two exact bounds: v leaves no earlier than ready + service, so a position
    before a node whose latest start is earlier cannot be taken (the latest starts increase
    along the route); and v starts no earlier than the departure from the node before it, so
    once that departure is past v's due time no later position can be taken (the earliest
    departures increase along the route). Only comparisons: both ends by bisection, O(log
    route) (a route of Solomon's class 2 holds up to 50 customers), after a look at the
    route's ends."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef double leave = inst.win[v].leave - inst.time_eps
    cdef double due = inst.win[v].due + inst.time_eps
    cdef int a, mid, lo = first[0], hi = last[0], top = L
    # lo: the first position >= first[0] whose node's latest start is >= leave (L: none). Where
    # windows are tight v's often lies before or after the route's, and the ends tell at once.
    if lo < L and s.times[row[lo]].late < leave:
        if s.times[row[L - 1]].late < leave:
            lo = L
        else:                           # lo < answer <= L - 1
            lo += 1
            top = L - 1
            while lo < top:
                mid = (lo + top) >> 1
                if s.times[row[mid]].late < leave:
                    lo = mid + 1
                else:
                    top = mid
    # hi: the last position in [lo, last[0]] after a node that v can still follow by its due
    # time (or lo itself; last[0] when it is below lo)
    if hi > lo:
        a = row[hi - 1]
        if s.times[a].leave > due:          # not every position up to last[0]
            a = row[lo]
            if s.times[a].leave > due:      # not even lo + 1
                hi = lo
            else:                                       # lo + 1 <= answer < last[0]
                top = hi - 1
                hi = lo + 1
                while hi < top:
                    mid = (hi + top + 1) >> 1
                    a = row[mid - 1]
                    if s.times[a].leave <= due:
                        hi = mid
                    else:
                        top = mid - 1
    first[0] = lo
    last[0] = hi


cdef inline double _tour_delta(const Sol *s, const Inst *inst, int a, int b, double av,
                               double vb) noexcept nogil:
    """insertion_delta of a city v between the tour neighbours a and b, given d(a, v) and d(v, b):
    the same float, with d(a, b) read from b's owned cost (its incoming arc) when cached. With
    d(v, x) shared by the positions before and after a city x, this halves the distances of
    the TSP regret and blink repairs, which dominate their time (and d is computed from
    coordinates on large instances)."""
    return av + vb - (s.own[b] if s.own_ok[b] else dist(inst, a, b))


cdef inline double _reverse(const Inst *inst, double ab, int a, int b) noexcept nogil:
    """d(b, a), given ab = d(a, b): no second distance when they are symmetric."""
    return ab if inst.symmetric else dist(inst, b, a)


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


ctypedef struct Scan:
    # What a repair call needs to scan "every route with room" for a node in O(routes that
    # can take a removed node), not O(routes), with routes skipped by their bounds
    # (_route_bounds) when those apply, and still in the order and with the random draws of
    # the plain scan.
    int *room           # the routes with room for the lightest removed node, ascending (no
                        # other route can take any node of the call; it only loses room, so
                        # the list stays a superset), then the routes the call opens
    int n_room
    RouteBounds bounds
    int *seen           # route -> stamp of the node whose scan covered it already
    int stamp
    int *first_draw     # route -> how many blink draws the plain scan makes before it


cdef int scan_init(Scan *sc, const Sol *s, const Inst *inst, const int *removed,
                   int n_removed) except -1 nogil:
    """For a repair call that inserts `removed` (each insertion opens at most one route).
    Frees what it took if it fails."""
    cdef int slots = sol_slot_end(s) + n_removed    # the call opens slots below this
    cdef int k, r, i, lightest = -1
    sc.room = NULL
    sc.n_room = 0
    sc.seen = NULL
    sc.first_draw = NULL
    sc.stamp = 0
    sc.bounds.on = False
    sc.bounds.timed = False
    sc.room = <int *> malloc(max(slots, 1) * sizeof(int))
    if sc.room == NULL:
        with gil:
            raise MemoryError()
    for i in range(n_removed):
        if lightest < 0 or inst.demand[removed[i]] < inst.demand[lightest]:
            lightest = removed[i]
    if lightest >= 0:
        for k in range(s.n_routes):
            r = s.order[k]
            if _fits(s, inst, lightest, r):
                sc.room[sc.n_room] = r
                sc.n_room += 1
    cdef bint ok = False
    try:
        bounds_init(&sc.bounds, s, inst, sc.room, sc.n_room, slots)
        ok = True
    finally:
        if not ok:
            free(sc.room)
            sc.room = NULL
    if not sc.bounds.on:
        return 0
    sc.seen = <int *> calloc(max(slots, 1), sizeof(int))
    sc.first_draw = <int *> malloc(max(slots, 1) * sizeof(int))
    if sc.seen == NULL or sc.first_draw == NULL:
        scan_free(sc)
        with gil:
            raise MemoryError()
    return 0


cdef void scan_free(Scan *sc) noexcept nogil:
    bounds_free(&sc.bounds)
    free(sc.room)
    free(sc.seen)
    free(sc.first_draw)
    sc.room = NULL
    sc.seen = NULL
    sc.first_draw = NULL


cdef inline void scan_inserted(Scan *sc, const Inst *inst, int r, int v, bint opened) noexcept nogil:
    """Node v went into route r (opened: a route this insertion opened)."""
    if opened:
        sc.room[sc.n_room] = r
        sc.n_room += 1
    bounds_add(&sc.bounds, inst, r, v)


cdef inline int _draws(const Sol *s, const Inst *inst, int r) noexcept nogil:
    """Blink draws of _route_scan over route r: one per position (an empty route has one)."""
    return 1 if s.length[r] == 0 else last_position(inst, s.length[r]) + 1


cdef inline void _route_scan_into(const Sol *s, const Inst *inst, int v, int r, double rate,
                                  uint64_t *rng, Best *best) noexcept nogil:
    """_route_scan of route r, offered to `best`."""
    cdef double c
    cdef int pos
    _route_scan(s, inst, v, r, rate, rng, &c, &pos)
    if pos >= 0:
        _consider(best, c, r, pos)


cdef inline void _scan_one(const Sol *s, const Inst *inst, int v, int r, double rate,
                           const uint64_t *rng, const Scan *sc, Best *best) noexcept nogil:
    """_route_scan of route r with the draws the plain scan would make there."""
    cdef uint64_t state = 0
    if rate > 0.0:
        state = rng_after(rng[0], <uint64_t> sc.first_draw[r])
    _route_scan_into(s, inst, v, r, rate, &state, best)


cdef enum:
    # Neighbours of a node whose routes are scanned first, so that the bound skips early.
    SEED_NEIGHBOURS = 10


cdef int _seed_routes(Scan *sc, const Sol *s, const Inst *inst, int v, int *out) noexcept nogil:
    """The distinct routes with room for v of v's SEED_NEIGHBOURS nearest neighbours, into
    `out`; they are marked seen for v's scan (a new stamp). Returns how many."""
    cdef const int *nb = &inst.near[v * inst.n_near]
    cdef int j, r, n = 0
    sc.stamp += 1
    for j in range(min(<int> SEED_NEIGHBOURS, inst.n_near)):
        r = s.route_of[nb[j]]
        if r < 0 or sc.seen[r] == sc.stamp or not _fits(s, inst, v, r):
            continue
        sc.seen[r] = sc.stamp
        out[n] = r
        n += 1
    return n


cdef void _scan_routes(const Sol *s, const Inst *inst, int v, double rate, uint64_t *rng,
                       Best *best, Scan *sc) noexcept nogil:
    """Every position of every route with room for v (blinking at `rate`), into `best`.

    The result, and the random stream afterwards, are those of scanning the routes in order:
    with bounds, the routes of v's nearest neighbours go first, a route whose bound exceeds
    the best so far is skipped, and each scanned route takes the draws it would take in order
    (the stream is counter-based: rng_after); at the end the stream skips every draw.
    `_consider`'s tie rule makes the order of the scans irrelevant.
    """
    cdef int r, j, t, draws = 0
    cdef int seeds[SEED_NEIGHBOURS]
    cdef double gap
    if not sc.bounds.on:
        for t in range(sc.n_room):
            r = sc.room[t]
            if _fits(s, inst, v, r):
                _route_scan_into(s, inst, v, r, rate, rng, best)
        return
    if rate > 0.0:
        for t in range(sc.n_room):
            r = sc.room[t]
            sc.first_draw[r] = draws
            if _fits(s, inst, v, r):
                draws += _draws(s, inst, r)
    for j in range(_seed_routes(sc, s, inst, v, seeds)):
        _scan_one(s, inst, v, seeds[j], rate, rng, sc, best)
    gap = depot_gap(inst, v)
    for t in range(sc.n_room):
        r = sc.room[t]
        if sc.seen[r] == sc.stamp or not _fits(s, inst, v, r):
            continue
        if best.route >= 0 and route_beyond(&sc.bounds, s, inst, r, v, gap, best.cost):
            continue
        if sc.bounds.timed and route_untimely(&sc.bounds, s, inst, r, v):
            continue                    # its scan would find no position either
        _scan_one(s, inst, v, r, rate, rng, sc, best)
    if rate > 0.0:
        rng[0] = rng_after(rng[0], <uint64_t> draws)


cdef inline bint _vehicle_left(const Sol *s, const Inst *inst) noexcept nogil:
    """Another route may be opened within the fleet (always when the fleet is unlimited)."""
    return inst.fleet <= 0 or s.n_routes < inst.fleet


cdef int _place(Sol *s, const Inst *inst, int v, Best *best, Scan *sc) except -1 nogil:
    """Insert v at `best`, or in a new route: a new route wins when it is strictly cheaper (it
    can be in an open VRP; with metric distances never in a CVRP) and the fleet has a vehicle
    left, or when nothing else is left."""
    cdef bint opened = not is_tour(inst) and (best.route < 0 or (
        new_route_cost(inst, v) < best.cost and _vehicle_left(s, inst)))
    if opened:
        best.route = sol_new_route(s)
        best.pos = 0
    sol_insert(s, inst, v, best.route, best.pos)
    scan_inserted(sc, inst, best.route, v, opened)
    return 0


cdef int greedy_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed) except -1 nogil:
    """Insert each removed node, in the given order, at its cheapest feasible position.

    Ties go to the first route, then the first position. In a VRP a new route is opened when
    it is strictly cheaper than every feasible position, or when the node fits nowhere.
    """
    cdef int i, v
    cdef Best best
    cdef Scan sc
    scan_init(&sc, s, inst, removed, n_removed)
    try:
        for i in range(n_removed):
            v = removed[i]
            best.cost = INFINITY
            best.route = -1
            best.pos = 0
            _scan_routes(s, inst, v, 0.0, NULL, &best, &sc)
            _place(s, inst, v, &best, &sc)
    finally:
        scan_free(&sc)
    return 0


cdef inline const int *_row(const Inst *inst, int v, int g) noexcept nogil:
    """v's neighbour list for a scan of its first g entries: the compact table when it has
    them (it stays in cache), else the full one."""
    if g <= inst.n_near:
        return &inst.near[v * inst.n_near]
    return &inst.neigh[v * inst.n_neigh]


cdef inline const double *_row_dists(const Inst *inst, int v, int g) noexcept nogil:
    """dist(v, x) for the entries x of _row(inst, v, g) when that is the candidate table (whose
    distances the instance stored), else NULL."""
    if g <= inst.n_near:
        return near_dists(inst, v)
    return NULL


cdef inline bint _fits(const Sol *s, const Inst *inst, int v, int r) noexcept nogil:
    """Route r has room for node v (always true in a tour)."""
    return fits(inst, s.load[r], v)


cdef inline const int *_wide_row(const Inst *inst, int v) noexcept nogil:
    """v's whole neighbour list (inst.n_neigh entries, nearest first)."""
    return &inst.neigh[v * inst.n_neigh]


cdef inline int _wide(const Inst *inst, int g) noexcept nogil:
    """How many neighbours a granular repair (g > 0) of a tour tries when none of the g
    nearest is routed, before it falls back to every position: the whole neighbour list, or 0
    when that is no wider. A destroyed stretch of tour often holds all g nearest neighbours
    of a city in its middle, and every position of a large tour costs O(n)."""
    if g > 0 and is_tour(inst) and inst.n_neigh > g:
        return inst.n_neigh
    return 0


cdef inline void _near(const int *nb, int g, int a, int u, int b,
                       bint *near_a, bint *near_u, bint *near_b) noexcept nogil:
    """Which of a, u, b are among the first g entries of the neighbour list nb."""
    cdef int j
    near_a[0] = near_u[0] = near_b[0] = False
    for j in range(g):
        near_a[0] = near_a[0] or nb[j] == a
        near_u[0] = near_u[0] or nb[j] == u
        near_b[0] = near_b[0] or nb[j] == b


cdef inline int _after(const Sol *s, const Inst *inst, int r, int p, int *next_node) noexcept nogil:
    """The position right after index p of route r, and the node now there (-1: route end).

    In a tour the position after the last node is 0 (the closing edge).
    """
    cdef int q = p + 1
    cdef int L = s.length[r]
    if is_tour(inst):
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

cdef int _insertion_order(const Inst *inst, const int *removed, int m, int order, int *out,
                          uint64_t *rng) except -1 nogil:
    """Write the removed nodes to `out` in the order given by `order` (ORDER_*)."""
    cdef int i, j, t, v
    cdef Keyed *keyed
    if order == ORDER_SISR:
        order = rng_below(rng, 4)
    if order == ORDER_DEMAND and not inst.capacitated:
        order = ORDER_RANDOM       # no capacity, no demands to order by
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
            keyed[i].key = -dist(inst, 0, v)    # from the depot: from the depot (TSP: node 0)
        else:
            keyed[i].key = dist(inst, 0, v)
    qsort(keyed, m, sizeof(Keyed), keyed_cmp)
    for i in range(m):
        out[i] = keyed[i].node
    free(keyed)
    return 0


cdef void _blink_scan_granular(const Sol *s, const Inst *inst, int v, const int *nb,
                               const double *nd, int g, int *mark, int stamp, double rate,
                               uint64_t *rng, Best *best) noexcept nogil:
    """The positions directly before and after each of the g neighbours nb[0:g] of v, each once
    (nd: their distances from v, or NULL).

    Neighbours are visited nearest first. The position after neighbour x is skipped when the
    node following x is itself one of the g neighbours: that position is the one before it
    (so it is offered, and may blink, only once). `mark[w] == stamp` flags the neighbours.
    """
    cdef int j, x, r, p, q, nxt, a
    cdef bint tour = is_tour(inst)
    cdef double vx = 0.0
    for j in range(g):
        mark[nb[j]] = stamp
    for j in range(g):
        x = nb[j]
        r = s.route_of[x]
        if r < 0 or not _fits(s, inst, v, r):
            continue
        p = sol_pos(s, x)
        if tour:
            vx = nd[j] if nd != NULL else dist(inst, v, x)
        if not _blinks(rate, rng):
            if tour:
                a = s.nodes[p - 1] if p > 0 else s.nodes[s.length[0] - 1]
                _consider(best, _tour_delta(s, inst, a, x, dist(inst, a, v), vx), r, p)
            elif _in_time(s, inst, v, r, p):
                _consider(best, insertion_delta(s, inst, v, r, p), r, p)
        q = _after(s, inst, r, p, &nxt)
        if nxt >= 0 and mark[nxt] == stamp:
            continue
        if not _blinks(rate, rng):
            if tour:
                _consider(best, _tour_delta(s, inst, x, nxt, _reverse(inst, vx, v, x),
                                            dist(inst, v, nxt)), r, q)
            elif _in_time(s, inst, v, r, q):
                _consider(best, insertion_delta(s, inst, v, r, q), r, q)


cdef int blink_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed,
                         double order, double blink_rate, double neighbours,
                         uint64_t *rng) except -1 nogil:
    """Greedy insertion in a chosen order, each candidate position skipped with some probability.

    order: ORDER_* (ORDER_SISR draws one of the other four per call, one rng_below(4)).
    blink_rate: each evaluated position is skipped with this probability (one rng_uniform per
    evaluated position, none when the rate is 0; the new-route option never blinks).
    neighbours: g > 0 restricts v to the positions next to its g nearest neighbours (granular);
    when none of those is available (no room, unrouted, or all blinked) a tour tries next to
    its whole neighbour list (_wide), and then the full scan runs.
    If every position blinked, a VRP node opens a new route and a TSP city takes its cheapest
    position without blinks. Ties: first route, first position, as greedy_insertion.
    """
    cdef int g = _granularity(inst, neighbours)
    cdef int wide = _wide(inst, g)
    cdef int code = <int> order if (order >= 0.0 and order <= ORDER_SISR) else -1
    cdef int i, v
    cdef Best best
    if code < 0 or code != order:
        with gil:
            raise ValueError(f"blink_insertion: order must be an integer in 0..{ORDER_SISR}, got {order}")
    cdef Scan sc
    scan_init(&sc, s, inst, removed, n_removed)     # frees what it took if it fails
    cdef int *todo = NULL
    cdef int *mark = NULL
    try:
        todo = <int *> malloc(max(n_removed, 1) * sizeof(int))
        mark = <int *> calloc(inst.n, sizeof(int)) if g > 0 else NULL
        if todo == NULL or (g > 0 and mark == NULL):
            with gil:
                raise MemoryError()
        _insertion_order(inst, removed, n_removed, code, todo, rng)
        for i in range(n_removed):
            v = todo[i]
            if is_tour(inst) and s.length[0] == 0:
                sol_insert(s, inst, v, 0, 0)       # the only position: no choice, no draw
                continue
            best.cost = INFINITY
            best.route = -1
            best.pos = 0
            if g > 0:       # (stamps 2i + 1 and 2i + 2: each scan marks its own list)
                _blink_scan_granular(s, inst, v, _row(inst, v, g), _row_dists(inst, v, g), g,
                                     mark, 2 * i + 1, blink_rate, rng, &best)
                if best.route < 0 and wide > 0:
                    _blink_scan_granular(s, inst, v, _wide_row(inst, v), NULL, wide, mark,
                                         2 * i + 2, blink_rate, rng, &best)
            if best.route < 0:
                _scan_routes(s, inst, v, blink_rate, rng, &best, &sc)
            if best.route < 0 and is_tour(inst):
                _scan_routes(s, inst, v, 0.0, rng, &best, &sc)
            _place(s, inst, v, &best, &sc)
    finally:
        free(todo)
        free(mark)
        scan_free(&sc)
    return 0


# ---------------------------------------------------------------------------------------------
# regret_insertion: regret-k with cached insertion costs
#
# A VRP node's options are its cheapest feasible insertion into each route (one per route) and
# a new route. Its regret is sum_{j=2..k} (c_j - c_1) over its options sorted by cost; a missing
# option (fewer than k) counts as a constant M larger than any cost, i.e. regrets compare first
# by the number of missing options (more first) and then by the remaining finite sum. The node
# with the largest regret goes first (ties: smaller c_1, then smaller node id) to its cheapest
# option (ties: first route, first position; a new route only when strictly cheaper or when
# nothing else fits). A tour has one route: there the options are the k cheapest positions.
#
# Caches. VRP: per (node, route) the best cost and position, and per node its three cheapest
# options. After u goes into route r between a and b only column r can change, and only a node
# whose best position in r was edge (a, b) rescans r; the others compare their old best with
# the two new edges (a new route adds a column). The three cheapest are rescanned over the
# routes only when one of them got dearer. TSP: per node its k cheapest edges, kept by start
# node (positions shift, edges do not); again only nodes that cached edge (a, b) rescan.
# So an insertion usually costs O(1) per pending node (O(g) with granular lists).
# Granular (g > 0): a node's candidates are the positions next to its g nearest neighbours;
# when it has none (no routed neighbour with room) its cache holds all positions instead. A
# tour city first widens to the positions next to its routed neighbours among its whole list
# (_wide); its cache says which of the three it holds (Regret.granular).

cdef enum:
    CAND_ALL = 0        # every position
    CAND_NEAR = 1       # next to the g nearest neighbours
    CAND_WIDE = 2       # (tours) next to the neighbours of the whole list

cdef enum:
    # A VRP cache entry not computed: the route was skipped by its bound (_route_bounds), and
    # its cost entry holds a value its cheapest insertion is known to exceed.
    LAZY = -2

cdef enum:
    # Cheapest options held per VRP slot. Only the k cheapest are scored; holding more means a
    # held option that gets dearer is usually replaced from the others held, not by an O(routes)
    # rescan of the slot's row. The scores are the same whatever this is (>= 3).
    TOP_HELD = 8


ctypedef struct Regret:
    int k               # regret degree (2 or 3)
    int g               # granular neighbours per node (0: all positions)
    int wide            # TSP: the whole list's neighbours, tried when no g nearest is routed
    int alive           # nodes still to insert: their slots are todo[0:alive]
    int *todo
    int *node           # slot -> node id
    int cols            # cache columns per slot: route slots (VRP) or k (TSP)
    double *cost        # slot x cols. VRP: best insertion cost into each route (INFINITY: no
                        # option there); TSP: the k cheapest insertion costs, cheapest first
    int *where          # VRP: position of that insertion (-1: none); TSP: start node of the
                        # edge (-1: the one position of an empty tour)
    int *count          # TSP: edges cached per slot
    char *granular      # which candidates the slot caches: CAND_* (VRP: ALL or NEAR)
    double *top         # VRP: slot x TOP_HELD, the cheapest options (ascending), new route included
    int *top_route      # their routes (-1: the new route)
    int *n_top          # options held (0..TOP_HELD)
    char *top_all       # the held options are all the slot's options (else: every option not
                        # held costs at least as much as the dearest held one)
    int *missing        # options missing among the k best (each worth M)
    double *regret      # the regret without the M terms
    double *first       # the cheapest option
    Scan *scan          # VRP without granular lists: the call's room list, which the rows
                        # cover, and the route bounds (entries may be LAZY, never held);
                        # see _vrp_fill_listed


cdef inline void _keep_first(double *c, int *p, double cost, int pos) noexcept nogil:
    """Keep the cheaper of (c, p) and (cost, pos); ties go to the first position."""
    if cost < c[0] or (cost == c[0] and pos < p[0]):
        c[0] = cost
        p[0] = pos


cdef inline void _keep_timed(const Sol *s, const Inst *inst, int v, int r, double *c, int *p,
                             int pos) noexcept nogil:
    """_keep_first of v's insertion at index pos of route r, if it keeps the time windows."""
    cdef double cost = insertion_delta(s, inst, v, r, pos)
    if (cost < c[0] or (cost == c[0] and pos < p[0])) and _in_time(s, inst, v, r, pos):
        c[0] = cost
        p[0] = pos


cdef void _score(Regret *st, int i, const double *best, int n_opt) noexcept nogil:
    """Regret of slot i from its cheapest options best[0..] (n_opt of them, at least one)."""
    cdef double acc = 0.0
    cdef int j, missing = 0
    for j in range(1, st.k):
        if j < n_opt:
            acc += best[j] - best[0]
        else:           # M - c_1: M is kept apart as a count
            missing += 1
            acc -= best[0]
    st.missing[i] = missing
    st.regret[i] = acc
    st.first[i] = best[0]


cdef inline bint _goes_before(const Regret *st, int i, int j) noexcept nogil:
    """Slot i is inserted before slot j: larger regret, then smaller cheapest cost, then id."""
    if st.missing[i] != st.missing[j]:
        return st.missing[i] > st.missing[j]
    if st.regret[i] != st.regret[j]:
        return st.regret[i] > st.regret[j]
    if st.first[i] != st.first[j]:
        return st.first[i] < st.first[j]
    return st.node[i] < st.node[j]


# -- VRP: one cache entry per (node, route) ---------------------------------------------------

cdef void _vrp_route_full(const Sol *s, const Inst *inst, int v, int r, double *c,
                          int *p) noexcept nogil:
    """v's cheapest position in route r (first on ties); none when r lacks room."""
    if _fits(s, inst, v, r):
        _route_scan(s, inst, v, r, 0.0, NULL, c, p)
    else:
        c[0] = INFINITY
        p[0] = -1


cdef void _vrp_route_granular(const Sol *s, const Inst *inst, int v, int r, int g, double *c,
                              int *p) noexcept nogil:
    """As _vrp_route_full, over the positions next to v's g nearest neighbours in route r."""
    cdef const int *nb = _row(inst, v, g)
    cdef int j, q
    c[0] = INFINITY
    p[0] = -1
    if not _fits(s, inst, v, r):
        return
    for j in range(g):
        if s.route_of[nb[j]] != r:
            continue
        q = sol_pos(s, nb[j])
        _keep_timed(s, inst, v, r, c, p, q)
        _keep_timed(s, inst, v, r, c, p, q + 1)


cdef void _vrp_fill_listed(Regret *st, const Sol *s, const Inst *inst, int i) noexcept nogil:
    """Slot i's entries and held options (as _vrp_fill + _top_rebuild) over the routes of the
    call's room list (the entries of other routes are never read: they have no room).

    With route bounds, the routes of v's nearest neighbours go first; once k options are held,
    a route whose bound exceeds the dearest held option is not scanned: its entry is LAZY with
    that option's cost. From then on the held options are not all the options, so the dearest
    held option never gets dearer, and every LAZY entry stays above it (the invariant
    _top_rebuild and _vrp_update keep): the held options are still the cheapest, as the
    scores need.
    """
    cdef int v = st.node[i]
    cdef double *c = &st.cost[i * st.cols]
    cdef int *p = &st.where[i * st.cols]
    cdef Scan *sc = st.scan
    cdef int seeds[SEED_NEIGHBOURS]
    cdef int r, j, t
    cdef double gap = 0.0, dearest
    st.granular[i] = CAND_ALL
    st.n_top[i] = 0
    st.top_all[i] = True
    _top_offer(st, i, new_route_cost(inst, v), -1)
    if sc.bounds.on:
        for j in range(_seed_routes(sc, s, inst, v, seeds)):
            r = seeds[j]
            _vrp_route_full(s, inst, v, r, &c[r], &p[r])
            if p[r] >= 0:
                _top_offer(st, i, c[r], r)
        gap = depot_gap(inst, v)
    for t in range(sc.n_room):
        r = sc.room[t]
        if sc.bounds.on and sc.seen[r] == sc.stamp:
            continue
        if not _fits(s, inst, v, r):
            c[r] = INFINITY
            p[r] = -1
            continue
        if sc.bounds.on and st.n_top[i] >= st.k:
            dearest = st.top[TOP_HELD * i + st.n_top[i] - 1]
            if route_beyond(&sc.bounds, s, inst, r, v, gap, dearest):
                c[r] = dearest
                p[r] = LAZY
                st.top_all[i] = False
                continue
        if sc.bounds.timed and route_untimely(&sc.bounds, s, inst, r, v):
            c[r] = INFINITY             # what its scan would find: no position
            p[r] = -1
            continue
        _vrp_route_full(s, inst, v, r, &c[r], &p[r])
        if p[r] >= 0:
            _top_offer(st, i, c[r], r)
    _vrp_score(st, i)


cdef inline void _clear_row(Regret *st, const Sol *s, int i) noexcept nogil:
    """Slot i has no option in any route yet."""
    cdef int t
    for t in range(s.n_routes):
        st.cost[i * st.cols + s.order[t]] = INFINITY
        st.where[i * st.cols + s.order[t]] = -1


cdef void _vrp_fill(Regret *st, const Sol *s, const Inst *inst, int i) noexcept nogil:
    """All route entries of slot i: granular candidates if it has any, else all positions."""
    cdef int v = st.node[i]
    cdef double *c = &st.cost[i * st.cols]
    cdef int *p = &st.where[i * st.cols]
    cdef const int *nb
    cdef int r, j, q
    cdef bint found = False
    _clear_row(st, s, i)
    if st.g > 0:
        nb = _row(inst, v, st.g)
        for j in range(st.g):      # O(g): each neighbour feeds its own route's entry
            r = s.route_of[nb[j]]
            if r < 0 or not _fits(s, inst, v, r):
                continue
            q = sol_pos(s, nb[j])
            _keep_timed(s, inst, v, r, &c[r], &p[r], q)
            _keep_timed(s, inst, v, r, &c[r], &p[r], q + 1)
            found = True
    st.granular[i] = CAND_NEAR if found else CAND_ALL
    if not found:
        for j in range(s.n_routes):
            r = s.order[j]
            _vrp_route_full(s, inst, v, r, &c[r], &p[r])


cdef void _top_offer(Regret *st, int i, double c, int r) noexcept nogil:
    """Option (cost c, route r; -1 = a new route), not held, is new or got cheaper: hold it when
    it is among slot i's cheapest (the dearest held option drops out when all are taken)."""
    cdef double *tc = &st.top[TOP_HELD * i]
    cdef int *tr = &st.top_route[TOP_HELD * i]
    cdef int n = st.n_top[i]
    cdef int j = n, t
    if not st.top_all[i] and (n == 0 or c >= tc[n - 1]):
        return              # options not held may be cheaper than c: leave it out
    while j > 0 and c < tc[j - 1]:
        j -= 1
    if n == TOP_HELD:       # the dearest drops out (c itself when it is that): from now on
        st.top_all[i] = False   # not every option is held
        if j == TOP_HELD:
            return
        n -= 1
    for t in range(n, j, -1):
        tc[t] = tc[t - 1]
        tr[t] = tr[t - 1]
    tc[j] = c
    tr[j] = r
    st.n_top[i] = n + 1


cdef inline void _vrp_score(Regret *st, int i) noexcept nogil:
    _score(st, i, &st.top[TOP_HELD * i], st.n_top[i])


cdef inline int _listed(const Regret *st, const Sol *s) noexcept nogil:
    """How many routes a VRP slot's row covers: the room list, or every route (granular)."""
    return st.scan.n_room if st.scan != NULL else s.n_routes


cdef inline int _listed_route(const Regret *st, const Sol *s, int t) noexcept nogil:
    """The t-th of those routes."""
    return st.scan.room[t] if st.scan != NULL else s.order[t]


cdef void _top_rebuild(Regret *st, const Sol *s, const Inst *inst, int i) noexcept nogil:
    """Slot i's cheapest options (and its score) from its whole cache row. O(routes).

    A LAZY entry is scanned when it could be among the cheapest: while fewer than k options
    are held, or when its bound is below the dearest held option. The others stay LAZY, and
    the held options are then not all the options (so the dearest held one cannot rise).
    """
    cdef double *c = &st.cost[i * st.cols]
    cdef int *p = &st.where[i * st.cols]
    cdef int r, n, t
    st.n_top[i] = 0
    st.top_all[i] = True
    _top_offer(st, i, new_route_cost(inst, st.node[i]), -1)
    for t in range(_listed(st, s)):
        r = _listed_route(st, s, t)
        if p[r] >= 0:
            _top_offer(st, i, c[r], r)
    if st.scan == NULL or not st.scan.bounds.on:
        _vrp_score(st, i)
        return                  # no LAZY entries
    for t in range(st.scan.n_room):
        r = st.scan.room[t]
        if p[r] != LAZY:
            continue
        n = st.n_top[i]
        if n >= st.k and c[r] >= st.top[TOP_HELD * i + n - 1]:
            st.top_all[i] = False
            continue
        _vrp_route_full(s, inst, st.node[i], r, &c[r], &p[r])
        if p[r] >= 0:
            _top_offer(st, i, c[r], r)
    _vrp_score(st, i)


cdef void _top_change(Regret *st, const Sol *s, const Inst *inst, int i, int r, double old_c,
                      double new_c, int new_p) noexcept nogil:
    """Route r's entry of slot i went from old_c to new_c (new_p < 0: no option any more).

    The held options stay the cheapest ones: a held option that disappears is dropped, one
    that gets dearer is dropped and offered again. The row is rescanned only when fewer than
    k options are left held and others exist.
    """
    cdef double *tc = &st.top[TOP_HELD * i]
    cdef int *tr = &st.top_route[TOP_HELD * i]
    cdef int n = st.n_top[i]
    cdef int j = 0, t
    while j < n and tr[j] != r:
        j += 1
    if j < n:
        if new_p < 0 or new_c > old_c:
            for t in range(j, n - 1):
                tc[t] = tc[t + 1]
                tr[t] = tr[t + 1]
            st.n_top[i] = n - 1
            if new_p >= 0:
                _top_offer(st, i, new_c, r)
        else:
            tc[j] = new_c
            while j > 0 and tc[j] < tc[j - 1]:
                tc[j], tc[j - 1] = tc[j - 1], tc[j]
                tr[j], tr[j - 1] = tr[j - 1], tr[j]
                j -= 1
    elif new_p >= 0:
        _top_offer(st, i, new_c, r)
    if not st.top_all[i] and st.n_top[i] < st.k:
        _top_rebuild(st, s, inst, i)
        return
    _vrp_score(st, i)


cdef inline int _shifted(int p, int pu) noexcept nogil:
    """Position p of a route after a node went to index pu (p itself when p <= pu, or p < 0)."""
    return p + 1 if p > pu else p


cdef void _vrp_update(Regret *st, const Sol *s, const Inst *inst, int i, int r, int pu,
                      bint opened) noexcept nogil:
    """Refresh slot i after node u went to index pu of route r (opened: r is a new route).

    Only entry r can change. Edge (a, b) became (a, u), (u, b); every other position of r
    keeps its cost, so unless v's best position in r was edge (a, b) (then r is rescanned) the
    new best is the old one (shifted) or one of the two new edges: O(1) (plus O(g) to see
    which of a, u, b are v's neighbours in the granular case).
    """
    cdef int v = st.node[i]
    cdef double *c = &st.cost[i * st.cols]
    cdef int *p = &st.where[i * st.cols]
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int u = row[pu]
    cdef int a = row[pu - 1] if pu > 0 else 0       # 0: the depot, never a neighbour
    cdef int b = row[pu + 1] if pu + 1 < L else -1  # -1: the route end
    cdef double old_c = INFINITY if opened else c[r]
    cdef int old_p = -1 if opened else p[r]
    cdef double new_c
    cdef int new_p, j, t
    cdef bint near_a = True, near_u = True, near_b = True
    if st.g > 0:
        _near(_row(inst, v, st.g), st.g, a, u, b, &near_a, &near_u, &near_b)
        if not st.granular[i]:
            # No neighbour of v had a route with room, and r only lost room: u is the only
            # way a granular candidate can appear.
            if near_u and _fits(s, inst, v, r):
                _clear_row(st, s, i)
                _vrp_route_granular(s, inst, v, r, st.g, &c[r], &p[r])
                st.granular[i] = CAND_NEAR
                _top_rebuild(st, s, inst, i)
                return
            near_a = near_u = near_b = True         # all positions are candidates
    if not _fits(s, inst, v, r):
        new_c = INFINITY
        new_p = -1
    elif old_p == LAZY:
        # Every old position of r still costs more than old_c: only a new edge can be cheaper,
        # and then it is r's cheapest position.
        new_c = INFINITY
        new_p = -1
        _keep_timed(s, inst, v, r, &new_c, &new_p, pu)
        _keep_timed(s, inst, v, r, &new_c, &new_p, pu + 1)
        if new_c > old_c:
            new_c = old_c
            new_p = LAZY
    elif opened or old_p == pu or (old_p >= 0 and not _in_time(s, inst, v, r, _shifted(old_p, pu))):
        # (with time windows an insertion can close positions of r; only if it closed v's best
        # one must r be rescanned: it closes, and with the triangle inequality never opens, any)
        if st.granular[i]:
            _vrp_route_granular(s, inst, v, r, st.g, &new_c, &new_p)
        else:
            _vrp_route_full(s, inst, v, r, &new_c, &new_p)
    else:
        new_c = old_c
        new_p = _shifted(old_p, pu)
        if near_a or near_u:
            _keep_timed(s, inst, v, r, &new_c, &new_p, pu)
        if near_u or near_b:
            _keep_timed(s, inst, v, r, &new_c, &new_p, pu + 1)
    c[r] = new_c
    p[r] = new_p
    if st.granular[i] and new_p < 0:
        t = 0
        while t < s.n_routes and p[s.order[t]] < 0:
            t += 1
        if t == s.n_routes:                 # the last granular candidate is gone
            _vrp_fill(st, s, inst, i)
            _top_rebuild(st, s, inst, i)
            return
    _top_change(st, s, inst, i, r, old_c, new_c, new_p)


cdef int _vrp_insert(Regret *st, Sol *s, const Inst *inst, int i, int *pos,
                     bint *opened) except -1 nogil:
    """Insert slot i's node at its cheapest option; returns the route, sets its index `pos`."""
    cdef int v = st.node[i]
    cdef const double *c = &st.cost[i * st.cols]
    cdef const int *p = &st.where[i * st.cols]
    cdef int r, t, best_r = -1, best_pos = 0
    cdef double best = INFINITY
    for t in range(_listed(st, s)):
        r = _listed_route(st, s, t)
        if p[r] >= 0 and c[r] < best:         # (a LAZY entry is dearer than a held option)
            best = c[r]
            best_r = r
            best_pos = p[r]
    opened[0] = best_r < 0 or (new_route_cost(inst, v) < best and _vehicle_left(s, inst))
    if opened[0]:
        best_r = sol_new_route(s)
        best_pos = 0
    sol_insert(s, inst, v, best_r, best_pos)
    pos[0] = best_pos
    return best_r


# -- TSP: the k cheapest edges per node ---------------------------------------------------------

cdef inline int _edge_pos(const Sol *s, int start) noexcept nogil:
    """Tour position of the edge leaving `start` (-1: the empty tour's only position, 0)."""
    if start < 0:
        return 0
    cdef int q = sol_pos(s, start) + 1
    return 0 if q == s.length[0] else q


cdef void _tsp_offer(Regret *st, const Sol *s, int i, double c, int start) noexcept nogil:
    """Offer the edge leaving `start` at cost c to slot i's k cheapest (cost, position)."""
    cdef double *tc = &st.cost[i * st.cols]
    cdef int *ts = &st.where[i * st.cols]
    cdef int n = st.count[i]
    cdef int pos = -2           # the edge's position, read only to break a tie in cost
    cdef int j, t
    if n == st.k and c > tc[n - 1]:
        return                  # dearer than all k held (what the loops below would find)
    for j in range(n):
        if ts[j] == start:
            return
    j = n
    while j > 0:
        if c < tc[j - 1]:
            j -= 1
        elif c == tc[j - 1]:
            if pos == -2:
                pos = _edge_pos(s, start)
            if pos < _edge_pos(s, ts[j - 1]):
                j -= 1
            else:
                break
        else:
            break
    if j >= st.k:
        return
    if n == st.k:
        n -= 1              # the k-th drops out
    for t in range(n, j, -1):
        tc[t] = tc[t - 1]
        ts[t] = ts[t - 1]
    tc[j] = c
    ts[j] = start
    st.count[i] = n + 1


cdef void _tsp_fill_next_to(Regret *st, const Sol *s, const Inst *inst, int i, const int *nb,
                            const double *nd, int g) noexcept nogil:
    """Offer slot i the edges before and after each routed neighbour in nb[0:g] (nd: their
    distances from the slot's node, or NULL)."""
    cdef int v = st.node[i]
    cdef int L = s.length[0]
    cdef const int *row = s.nodes
    cdef int j, x, p, a, b
    cdef double vx
    for j in range(g):
        x = nb[j]
        if s.route_of[x] < 0:
            continue
        p = sol_pos(s, x)
        a = row[p - 1] if p > 0 else row[L - 1]
        b = row[p + 1] if p + 1 < L else row[0]
        vx = nd[j] if nd != NULL else dist(inst, v, x)
        _tsp_offer(st, s, i, _tour_delta(s, inst, a, x, dist(inst, a, v), vx), a)
        _tsp_offer(st, s, i, _tour_delta(s, inst, x, b, _reverse(inst, vx, v, x),
                                          dist(inst, v, b)), x)


cdef void _tsp_fill(Regret *st, const Sol *s, const Inst *inst, int i) noexcept nogil:
    """Slot i's k cheapest edges: next to its g nearest neighbours if any is routed, else next
    to the routed ones of its whole list (st.wide), else among all."""
    cdef int v = st.node[i]
    cdef int L = s.length[0]
    cdef const int *row = s.nodes
    cdef int pos, a, b
    cdef double av, vb
    st.count[i] = 0
    st.granular[i] = CAND_ALL
    if st.g > 0 and L > 0:
        _tsp_fill_next_to(st, s, inst, i, _row(inst, v, st.g), _row_dists(inst, v, st.g), st.g)
        if st.count[i] > 0:
            st.granular[i] = CAND_NEAR
            return
        if st.wide > 0:
            _tsp_fill_next_to(st, s, inst, i, _wide_row(inst, v), NULL, st.wide)
            if st.count[i] > 0:
                st.granular[i] = CAND_WIDE
                return
    if L == 0:
        _tsp_offer(st, s, i, insertion_delta(s, inst, v, 0, 0), -1)
        return
    # every edge (a, b), as insertion_delta position by position: d(v, b) is d(a, v) of the
    # next edge when symmetric, so one new distance per position (as _route_scan)
    a = row[L - 1]
    av = dist(inst, a, v)
    for pos in range(L):
        b = row[pos]
        vb = dist(inst, v, b)
        _tsp_offer(st, s, i, _tour_delta(s, inst, a, b, av, vb), a)
        av = _reverse(inst, vb, v, b)
        a = b


cdef void _tsp_update(Regret *st, const Sol *s, const Inst *inst, int i, int u, int a,
                      int b) noexcept nogil:
    """Refresh slot i after u went between a and b, its neighbours in the tour now (a = -1: the
    tour was empty)."""
    cdef int v = st.node[i]
    cdef const int *ts = &st.where[i * st.cols]
    cdef int j
    cdef double vu
    cdef bint near_a = True, near_u = True, near_b = True
    if a < 0:
        _tsp_fill(st, s, inst, i)
        return
    for j in range(st.count[i]):
        if ts[j] == a:          # edge (a, b) is gone: rescan
            _tsp_fill(st, s, inst, i)
            return
    if st.g > 0:
        _near(_row(inst, v, st.g), st.g, a, u, b, &near_a, &near_u, &near_b)
        if st.granular[i] != CAND_NEAR:
            if near_u:          # v has a routed near neighbour now: those candidates
                _tsp_fill(st, s, inst, i)
                return
            if st.wide > 0:
                _near(_wide_row(inst, v), st.wide, a, u, b, &near_a, &near_u, &near_b)
                if st.granular[i] == CAND_ALL and near_u:   # and now a routed wide one
                    _tsp_fill(st, s, inst, i)
                    return
            if st.granular[i] == CAND_ALL:
                near_a = near_u = near_b = True     # all positions: both new edges count
    # The cached edges are unchanged (same cost, same order): offer the two new ones, (a, u)
    # and (u, b) (a tour of one city had a = b).
    vu = dist(inst, v, u)
    if near_a or near_u:
        _tsp_offer(st, s, i, _tour_delta(s, inst, a, u, dist(inst, a, v), vu), a)
    if near_u or near_b:
        _tsp_offer(st, s, i, _tour_delta(s, inst, u, b, _reverse(inst, vu, v, u),
                                         dist(inst, v, b)), u)


cdef void _tsp_score(Regret *st, int i) noexcept nogil:
    _score(st, i, &st.cost[i * st.cols], st.count[i])


# -- the operator --------------------------------------------------------------------------------

cdef object _entry(const Regret *st, const Sol *s, const Inst *inst, int i, int r):
    """A VRP cache entry as the twin holds it: None or (cost, position); a LAZY entry is
    scanned here (the trace shows what the entry stands for, not how it is stored)."""
    cdef double c = st.cost[i * st.cols + r]
    cdef int p = st.where[i * st.cols + r]
    if not _fits(s, inst, st.node[i], r):
        return None             # (with a room list the entry is not even written)
    if p == LAZY:
        _vrp_route_full(s, inst, st.node[i], r, &c, &p)
    return None if p < 0 else (c, p)


cdef int _record(const Regret *st, const Sol *s, const Inst *inst, object out) except -1:
    """Append the cache of every node still to insert (regret_trace)."""
    cdef int t, i, j, w, r
    cache = {}
    granular = {}
    scores = {}
    for t in range(st.alive):
        i = st.todo[t]
        w = st.node[i]
        if is_tour(inst):
            cache[w] = [(st.cost[i * st.cols + j], _edge_pos(s, st.where[i * st.cols + j]))
                        for j in range(st.count[i])]
        else:
            cache[w] = [_entry(st, s, inst, i, s.order[r]) for r in range(s.n_routes)]
        granular[w] = st.granular[i]
        scores[w] = (st.missing[i], st.regret[i], st.first[i])
    out.append({"routes": sol_to_py(s, inst), "cache": cache, "granular": granular,
                "scores": scores})
    return 0


cdef int regret_insertion(Sol *s, const Inst *inst, const int *removed, int n_removed,
                          double k, double neighbours, void *trace) except -1 nogil:
    """Regret-k insertion (k = 2 or 3) with cached insertion costs; see the notes above.

    neighbours: g > 0 restricts each node to positions next to its g nearest neighbours (on a
    tour, when none is routed, next to the routed ones of its whole list; see the notes above).
    trace: NULL, or a Python list that receives the cache before every insertion (tests).
    """
    cdef Regret st
    cdef bint tour = is_tour(inst)
    cdef int m = n_removed
    cdef int i, t, bt, u, r, pos, L, a, b
    cdef bint opened
    if not (k == 2.0 or k == 3.0):
        with gil:
            raise ValueError(f"regret_insertion: k must be 2 or 3, got {k}")
    st.k = <int> k
    st.g = _granularity(inst, neighbours)
    st.wide = _wide(inst, st.g)
    cdef Scan sc
    st.scan = NULL
    if not tour and st.g == 0:
        scan_init(&sc, s, inst, removed, n_removed)     # frees what it took if it fails
        st.scan = &sc
    st.cols = st.k if tour else sol_slot_end(s) + m   # each insertion opens at most one route
    cdef int slots = max(m, 1)
    st.todo = <int *> malloc(slots * sizeof(int))
    st.node = <int *> malloc(slots * sizeof(int))
    st.cost = <double *> malloc(<size_t> slots * max(st.cols, 1) * sizeof(double))
    st.where = <int *> malloc(<size_t> slots * max(st.cols, 1) * sizeof(int))
    st.count = <int *> malloc(slots * sizeof(int))
    st.granular = <char *> malloc(slots * sizeof(char))
    st.missing = <int *> malloc(slots * sizeof(int))
    st.regret = <double *> malloc(slots * sizeof(double))
    st.first = <double *> malloc(slots * sizeof(double))
    st.top = <double *> malloc(TOP_HELD * slots * sizeof(double))
    st.top_route = <int *> malloc(TOP_HELD * slots * sizeof(int))
    st.n_top = <int *> malloc(slots * sizeof(int))
    st.top_all = <char *> malloc(slots * sizeof(char))
    try:
        if (st.todo == NULL or st.node == NULL or st.cost == NULL or st.where == NULL
                or st.count == NULL or st.granular == NULL or st.missing == NULL
                or st.regret == NULL or st.first == NULL or st.top == NULL
                or st.top_route == NULL or st.n_top == NULL or st.top_all == NULL):
            with gil:
                raise MemoryError()
        for i in range(m):
            st.node[i] = removed[i]
            st.todo[i] = i
            if tour:
                _tsp_fill(&st, s, inst, i)
                _tsp_score(&st, i)
            elif st.scan != NULL:
                _vrp_fill_listed(&st, s, inst, i)
            else:
                _vrp_fill(&st, s, inst, i)
                _top_rebuild(&st, s, inst, i)
        st.alive = m
        while st.alive > 0:
            if trace != NULL:
                with gil:
                    _record(&st, s, inst, <object> trace)
            bt = 0
            for t in range(1, st.alive):
                if _goes_before(&st, st.todo[t], st.todo[bt]):
                    bt = t
            i = st.todo[bt]
            st.alive -= 1
            st.todo[bt] = st.todo[st.alive]
            u = st.node[i]
            if tour:
                L = s.length[0]
                pos = _edge_pos(s, st.where[i * st.cols])
                a = (s.nodes[pos - 1] if pos > 0 else s.nodes[L - 1]) if L > 0 else -1
                b = s.nodes[pos] if L > 0 else -1
                sol_insert(s, inst, u, 0, pos)
                for t in range(st.alive):
                    _tsp_update(&st, s, inst, st.todo[t], u, a, b)
                    _tsp_score(&st, st.todo[t])
            else:
                r = _vrp_insert(&st, s, inst, i, &pos, &opened)
                if st.scan != NULL:
                    scan_inserted(st.scan, inst, r, u, opened)
                for t in range(st.alive):
                    _vrp_update(&st, s, inst, st.todo[t], r, pos, opened)
    finally:
        free(st.todo)
        free(st.node)
        free(st.cost)
        free(st.where)
        free(st.count)
        free(st.granular)
        free(st.missing)
        free(st.regret)
        free(st.first)
        free(st.top)
        free(st.top_route)
        free(st.n_top)
        free(st.top_all)
        if st.scan != NULL:
            scan_free(st.scan)
    return 0


def regret_trace(CoreInstance inst not None, partial, removed, double k=2, double neighbours=0):
    """Test hook: run regret_insertion on a copy of `partial` and return (snapshots, complete).

    Before every insertion a snapshot records the solution ("routes") and, for every node still
    to insert, its cache ("cache": VRP one (cost, position) or None per route; TSP the k
    cheapest (cost, position)), which candidates it holds ("granular": 0 all positions, 1 next
    to the g nearest, 2 next to the whole list's neighbours), and its score (missing, regret, c_1).
    """
    cdef Solution sol = Solution(inst)
    sol.load(partial, list(removed))
    cdef int n = len(removed), i
    cdef int *buf = <int *> malloc(max(n, 1) * sizeof(int))
    if buf == NULL:
        raise MemoryError()
    snapshots = []
    try:
        for i in range(n):
            buf[i] = removed[i]
        regret_insertion(&sol.s, &inst.c, buf, n, k, neighbours, <void *> snapshots)
    finally:
        free(buf)
    return snapshots, sol.routes()


cdef int _hook_scan(Solution sol, partial, removed, Scan *sc) except -1:
    """For the test hooks: load `partial` (with `removed` unrouted) into sol and set up the
    scan that a repair call inserting `removed` makes (scan_free it after)."""
    sol.load(partial, list(removed))
    cdef int n = len(removed), i
    cdef int *buf = <int *> malloc(max(n, 1) * sizeof(int))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            buf[i] = removed[i]
        scan_init(sc, &sol.s, &sol.inst.c, buf, n)
    finally:
        free(buf)
    return 0


def routes_beyond(CoreInstance inst not None, partial, removed, int v, double t):
    """Test hook: for each route of `partial` (with `removed` unrouted), whether a repair call
    inserting `removed` skips it for node v against an option of cost t (route_beyond over the
    call's room list; a route without room is never skipped, it is not scanned at all); None
    when the bounds do not apply."""
    cdef Solution sol = Solution(inst)
    cdef int r
    cdef Scan sc
    _hook_scan(sol, partial, removed, &sc)
    try:
        if not sc.bounds.on:
            return None
        gap = depot_gap(&inst.c, v)
        return [bool(route_beyond(&sc.bounds, &sol.s, &inst.c, sol.s.order[r], v, gap, t))
                for r in range(sol.s.n_routes)]
    finally:
        scan_free(&sc)


def routes_untimely(CoreInstance inst not None, partial, removed, int v):
    """Test hook: for each route of `partial` (with `removed` unrouted), whether a repair call
    inserting `removed` skips it for node v as unable to take v in time (route_untimely over
    the call's room list); None when that test does not apply (no route bounds, or travel times
    that are not the distances)."""
    cdef Solution sol = Solution(inst)
    cdef int r
    cdef Scan sc
    _hook_scan(sol, partial, removed, &sc)
    try:
        if not sc.bounds.timed:
            return None
        return [bool(route_untimely(&sc.bounds, &sol.s, &inst.c, sol.s.order[r], v))
                for r in range(sol.s.n_routes)]
    finally:
        scan_free(&sc)


def positions_may_take(CoreInstance inst not None, partial, removed, int v, bint times_only=False):
    """Test hook: for every position of every route of `partial` (`removed` unrouted, v among
    them), whether win_may_take (lower bounds of the travel times) admits v there, or with
    times_only win_may_between (the times alone); None when win_may_take's bounds do not
    apply (_windows.win_bounded)."""
    cdef Solution sol = Solution(inst)
    sol.load(partial, list(removed))
    cdef int r, k, L, a, b
    cdef const int *row
    if not inst.c.timed or not (times_only or win_bounded(&inst.c)):
        return None
    out = []
    for k in range(sol.s.n_routes):
        r = sol.s.order[k]
        win_fresh(&sol.s, &inst.c, r)
        row = &sol.s.nodes[r * sol.s.stride]
        L = sol.s.length[r]
        admits = []
        for pos in range(L + 1):
            a = row[pos - 1] if pos > 0 else 0
            b = row[pos] if pos < L else END
            admits.append(bool(win_may_between(&sol.s, &inst.c, a, v, b) if times_only
                               else win_may_take(&sol.s, &inst.c, a, v, b)))
        out.append(admits)
    return out


def joins_may(CoreInstance inst not None, routes, int a, int b):
    """Test hook: whether win_may_join admits customer a of one route of the complete solution
    `routes` followed directly by customer b of another (0: the depot; -1: a route's end)."""
    cdef Solution sol = Solution(inst)
    sol.load(routes, None)
    return bool(win_may_join(&sol.s, &inst.c, a, b))


def distances_below(CoreInstance inst not None, a, b):
    """Test hook: (distance_below, dist) of each pair (a[i], b[i]) of an instance whose
    distances are computed from its coordinates."""
    cdef int i
    if inst.c.xy == NULL:
        raise ValueError("the instance has no coordinates")
    return [(distance_below(&inst.c, a[i], b[i]), dist(&inst.c, a[i], b[i])) for i in range(len(a))]


def time_rooms(CoreInstance inst not None, routes):
    """Test hook: the troom of each route of the complete solution `routes` of a timed
    instance (the most time between two consecutive customers, -inf below two), as the core
    keeps it with the routes' times."""
    cdef Solution sol = Solution(inst)
    cdef int k, r
    if not inst.c.timed:
        raise ValueError("the instance has no time windows")
    sol.load(routes, None)
    out = []
    for k in range(sol.s.n_routes):
        r = sol.s.order[k]
        win_fresh(&sol.s, &inst.c, r)
        out.append(sol.s.troom[r])
    return out
