# Time windows: per-route forward/backward times and the checks that read them (see
# _windows.pxd for the model and the notation).
from libc.math cimport INFINITY

from glns._core._types cimport Inst, Sol, Window


cdef void win_refresh(Sol *s, const Inst *inst, int r) noexcept nogil:
    """Recompute the time data (times: the earliest departure and the latest start) of route
    r's nodes and its troom: O(route)."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int i, v, prev = 0
    cdef const Window *w
    cdef double t = inst.win[0].ready, start, late_next, gap, room = -INFINITY
    for i in range(L):
        v = row[i]
        t = win_start(inst, t, prev, v) + inst.win[v].service
        s.times[v].leave = t
        prev = v
    late_next = inst.win[0].due     # the latest return; then the latest start at the next node
    prev = 0
    for i in range(L - 1, -1, -1):
        v = row[i]
        w = &inst.win[v]
        start = late_next - travel(inst, v, prev) - w.service
        if start > w.due:
            start = w.due
        s.times[v].late = start
        if i > 0:       # between row[i - 1] and v
            gap = start - s.times[row[i - 1]].leave
            if gap > room:
                room = gap
        late_next = start
        prev = v
    s.troom[r] = room
    s.tstale[r] = 0


cdef int win_violation(const Inst *inst, const int *seq, int m, int *node,
                       double *when) noexcept nogil:
    """The first window a route visiting seq[0:m] breaks: 0 none; 1 service at node[0] would
    start after its due time, when[0] being the arrival; 2 the route is back at the depot at
    when[0], after it closes. From scratch, O(m)."""
    cdef double t = inst.win[0].ready, arrive
    cdef int i, prev = 0
    for i in range(m):
        arrive = t + travel(inst, prev, seq[i])
        t = arrive
        if not win_visit(inst, &t, seq[i]):
            node[0] = seq[i]
            when[0] = arrive
            return 1
        prev = seq[i]
    if m > 0:
        t += travel(inst, prev, 0)
        if t > inst.win[0].due + inst.time_eps:
            node[0] = 0
            when[0] = t
            return 2
    return 0


cdef bint win_sequence_ok(const Inst *inst, const int *seq, int m) noexcept nogil:
    """A route visiting seq[0:m] keeps every window (from scratch, O(m))."""
    cdef int node = 0
    cdef double when = 0.0
    return win_violation(inst, seq, m, &node, &when) == 0


cdef bint win_route_ok(const Sol *s, const Inst *inst, int r) noexcept nogil:
    """Route r keeps every window: at every node the earliest start of service is no later
    than the latest (late). The earliest starts are computed again, as win_refresh computes
    them (the same floats), rather than stored: only the checks of whole solutions ask."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int i, v, prev = 0
    cdef double t = inst.win[0].ready, start
    win_fresh(s, inst, r)
    for i in range(s.length[r]):
        v = row[i]
        start = win_start(inst, t, prev, v)
        if start > s.times[v].late + inst.time_eps:
            return False
        t = start + inst.win[v].service
        prev = v
    return True
