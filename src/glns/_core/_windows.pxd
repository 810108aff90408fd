# Time windows in the core: the per-route time data of a timed instance (Inst.timed) and the
# constant-time feasibility checks built on it. See _windows.pyx.
#
# A route leaves the depot at ready[0], waits at a node it reaches before ready[v], must start
# service there no later than due[v], serves for service[v], and must be back at the depot by
# due[0] (Inst.win[v] holds a node's ready, due and service). For each routed node early[v] is
# the earliest start of service given the nodes before it (forward), and late[v] the latest
# start that keeps every node after it and the return in their windows (backward); a route is
# feasible exactly when early[v] <= late[v] at every node. A change that puts a chain of nodes
# between a routed node a (or the route's start) and a routed node b (or the route's end) is
# then feasible when the chain, started at a's earliest departure early[a] + service[a], stays
# in its windows and reaches b by late[b]: O(chain), and O(1) for the insertions and
# inter-route moves of the repairs and the local search (Savelsbergh's forward/backward times,
# the idea behind the duration segments of HGS-TW and PyVRP). Sol.times[v] keeps what the
# checks read, the earliest departure and late[v], side by side: one cache line per node.
#
# The data of a route is recomputed (win_refresh, O(route)) on the first check after a write:
# sol_mark, which every write to a route calls, sets Sol.tstale for it.
from glns._core._types cimport Inst, Sol
from glns._core._distance cimport dist, coordinate_distance, distance_below

cdef enum:
    WIN_END = -1    # the end of a route (the depot, as _solution.END)


cdef inline double travel(const Inst *inst, int a, int b) noexcept nogil:
    """Travel time a -> b: the duration matrix when the instance has one, else the distance
    (an instance with a depot fee always has the matrix when its distances are dense)."""
    if inst.dur != NULL:
        return inst.dur[<Py_ssize_t> a * inst.n + b]
    if inst.dist != NULL:
        return inst.dist[<Py_ssize_t> a * inst.n + b]
    return coordinate_distance(inst, a, b)


cdef void win_refresh(Sol *s, const Inst *inst, int r) noexcept nogil


cdef inline void win_fresh(const Sol *s, const Inst *inst, int r) noexcept nogil:
    """Make route r's time data valid (it is a cache: allowed through a const)."""
    if s.tstale[r]:
        win_refresh(<Sol *> s, inst, r)


cdef inline double win_leave(const Sol *s, const Inst *inst, int a) noexcept nogil:
    """Earliest departure from routed node a, or from the depot (a == 0) at a route's start.
    a's route must be fresh."""
    if a == 0:
        return inst.win[0].ready
    return s.times[a].leave


cdef inline double win_latest(const Sol *s, const Inst *inst, int b) noexcept nogil:
    """Latest start at routed node b (its route fresh), or at WIN_END the depot's closing."""
    return inst.win[0].due if b == WIN_END else s.times[b].late


cdef inline void win_fresh_ends(const Sol *s, const Inst *inst, int a, int b) noexcept nogil:
    """Make fresh the routes of a (a routed node, or 0: a route's start) and b (a routed node
    or WIN_END), the two ends of a change."""
    if a != 0:
        win_fresh(s, inst, s.route_of[a])
    if b != WIN_END:
        win_fresh(s, inst, s.route_of[b])


cdef inline double win_start(const Inst *inst, double t, int prev, int v) noexcept nogil:
    """Leaving prev (0: the depot) at t, the earliest start of service at v (after waiting for
    its window to open). The forward step of win_refresh and win_route_ok: the same floats."""
    cdef double start = t + travel(inst, prev, v)
    return start if start >= inst.win[v].ready else inst.win[v].ready


cdef inline bint win_visit(const Inst *inst, double *t, int v) noexcept nogil:
    """Arrive at v at t[0]: start service (after waiting) and leave; t[0] becomes the departure.
    False when the service would start after v's due time."""
    cdef double start = t[0]
    if start < inst.win[v].ready:
        start = inst.win[v].ready
    if start > inst.win[v].due + inst.time_eps:
        return False
    t[0] = start + inst.win[v].service
    return True


cdef inline bint win_reach(const Sol *s, const Inst *inst, int a, double t, int b) noexcept nogil:
    """Leaving node a (0: the depot) at t, the route can go on to b as it is: b routed (its route
    fresh) or WIN_END, the return to the depot."""
    return t + travel(inst, a, 0 if b == WIN_END else b) <= win_latest(s, inst, b) + inst.time_eps


cdef inline bint win_chain(const Sol *s, const Inst *inst, int a, const int *seq, int m,
                           int b) noexcept nogil:
    """The nodes seq[0:m] put between a (a routed node, or 0: the route's start) and b (a routed
    node or WIN_END) keep every window: O(m). The routes of a and b are made fresh."""
    cdef double t
    cdef int i, prev = a
    win_fresh_ends(s, inst, a, b)
    t = win_leave(s, inst, a)
    for i in range(m):
        t += travel(inst, prev, seq[i])
        if not win_visit(inst, &t, seq[i]):
            return False
        prev = seq[i]
    return win_reach(s, inst, prev, t, b)


cdef inline bint win_join(const Sol *s, const Inst *inst, int a, int b) noexcept nogil:
    """a (a routed node or 0) followed directly by b (a routed node or WIN_END) keeps every
    window: a removal, or one half of a 2-opt* move. O(1)."""
    return win_chain(s, inst, a, NULL, 0, b)


cdef inline bint win_between(const Sol *s, const Inst *inst, int a, int v, int b) noexcept nogil:
    """Node v put between a and b keeps every window: an insertion. O(1)."""
    return win_chain(s, inst, a, &v, 1, b)


cdef inline bint win_between_known(const Sol *s, const Inst *inst, int a, int v, int b,
                                   double av, double vb) noexcept nogil:
    """win_between where the caller has the arc costs a -> v and v -> b (b == WIN_END: v ->
    depot) already: they are the travel times unless the instance has durations or a depot
    fee. The routes of a and b must be fresh. Saves the two distances of a scan that prices
    the position."""
    cdef double t
    if inst.dur != NULL or inst.depot_fee != 0.0:
        av = travel(inst, a, v)
        vb = travel(inst, v, 0 if b == WIN_END else b)
    t = win_leave(s, inst, a) + av
    if t < inst.win[v].ready:
        t = inst.win[v].ready
    if t > inst.win[v].due + inst.time_eps:
        return False
    t += inst.win[v].service + vb
    return t <= win_latest(s, inst, b) + inst.time_eps


cdef inline bint win_may_between(const Sol *s, const Inst *inst, int a, int v, int b) noexcept nogil:
    """A necessary condition of win_between(s, inst, a, v, b) from the times alone: v starts
    no earlier than a's earliest departure, which must then be by v's due time, and it leaves
    no earlier than its ready time plus its service, which must be by b's latest start (the
    depot's closing at WIN_END). Travel times are never negative and float sums and max are
    monotone, so where this is False win_between is too, and a move needs no price. The
    routes of a and b are made fresh (b's only once a's test passed: most moves fail there)."""
    if a != 0:
        win_fresh(s, inst, s.route_of[a])
    if win_leave(s, inst, a) > inst.win[v].due + inst.time_eps:
        return False
    if b != WIN_END:
        win_fresh(s, inst, s.route_of[b])
    return inst.win[v].leave <= win_latest(s, inst, b) + inst.time_eps


cdef inline bint win_may_join(const Sol *s, const Inst *inst, int a, int b) noexcept nogil:
    """A necessary condition of win_join(s, inst, a, b) from the times alone: a's earliest
    departure is by b's latest start (see win_may_between). The routes made fresh."""
    win_fresh_ends(s, inst, a, b)
    return win_leave(s, inst, a) <= win_latest(s, inst, b) + inst.time_eps


cdef inline bint win_bounded(const Inst *inst) noexcept nogil:
    """Travel times are the distances computed from coordinates (no duration matrix, no dense
    matrix), so that _distance.distance_below bounds them from below."""
    return inst.dur == NULL and inst.dist == NULL and inst.xy != NULL


cdef inline bint win_may_take(const Sol *s, const Inst *inst, int a, int v, int b) noexcept nogil:
    """win_between(s, inst, a, v, b) decided from lower bounds of its two travel times
    (distance_below, no square root): False only when the insertion breaks a window, so a scan
    computes the two distances only where this is True. Only where win_bounded; the routes of a
    and b fresh. Exact as a filter: every step is win_between_known's with a smaller travel
    time, and float sums and max are monotone, so what this rejects that rejects too."""
    cdef double t = win_leave(s, inst, a) + distance_below(inst, a, v)
    if t < inst.win[v].ready:
        t = inst.win[v].ready
    if t > inst.win[v].due + inst.time_eps:
        return False
    t += inst.win[v].service + distance_below(inst, v, 0 if b == WIN_END else b)
    return t <= win_latest(s, inst, b) + inst.time_eps


cdef inline bint win_insert_ok(const Sol *s, const Inst *inst, int v, int r, int pos) noexcept nogil:
    """Node v put at index pos of route r keeps every window (O(1); win_between makes r fresh).
    Inline: the regret repair asks it of every pending node after each insertion."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    return win_between(s, inst, row[pos - 1] if pos > 0 else 0, v,
                       row[pos] if pos < L else WIN_END)


cdef bint win_sequence_ok(const Inst *inst, const int *seq, int m) noexcept nogil
cdef int win_violation(const Inst *inst, const int *seq, int m, int *node,
                       double *when) noexcept nogil
cdef bint win_route_ok(const Sol *s, const Inst *inst, int r) noexcept nogil
