# Native local search: improves a complete feasible solution in place by first-improvement
# moves until no move of its neighbourhoods improves.
#
# Neighbourhoods (every move puts a node next to one of its LS_NEIGHBOURS candidates, Inst.near:
# its nearest neighbours, or the quadrant candidates on a tour from coordinates):
#   TSP   2-opt (both edge pairs around v and w) and or-opt (a segment of 1..3 cities that starts
#         or ends at v, moved next to w, in both orientations); from level 2 (a repair's
#         local_search=2), when none of those improves, 3-opt from v (_tsp_three_opt:
#         sequential 3-opt by Lin-Kernighan's positive-gain rule, both choices of t4). On
#         an asymmetric matrix only the moves whose delta is exact there remain: or-opt without
#         reversal (a reversed path costs something else backwards, so 2-opt, reversed or-opt
#         and 3-opt are off).
#   VRP   relocate (v next to w, in any route with room, or alone in a new route), swap (v and w
#         of different routes), intra-route 2-opt (segment reversal; in an OVRP reversing a
#         suffix or a whole route is a real move because the route has no last arc), 2-opt*
#         (two routes exchange their tails; capacity from prefix loads), and from level 3 SWAP*
#         (v and w of different routes exchanged, each going to its cheapest position in the
#         other route, not necessarily the other's place: Vidal's SWAP*, granular: from v's
#         neighbours; the three cheapest positions of a node in a route are kept until the
#         route changes, and Inst.insert_floor skips the pairs that cannot improve before
#         the second route is scanned), and from level 4 string relocation (a string of 2 or 3
#         customers with v at one end goes next to w, v beside w, forward or reversed, within
#         v's route or into w's: HGS's relocation of pairs, Or's strings). 2-opt and reversed
#         strings are off on an asymmetric matrix; the others are exact there.
#
# Every move is priced with an O(1) delta using the `arc` convention of _solution.pyx (END is
# the depot for CVRP and nothing for OVRP; an empty route costs nothing). A move is taken when
# its delta is below -eps, eps = LS_REL_EPS * (cost at the start): the threshold makes each move
# a real improvement despite rounding, so the search cannot cycle.
#
# Scan order (fixed, so the plain-Python reference glns.operators.library.local_search makes the
# same moves): a FIFO queue of nodes whose don't-look bit is clear, initially `touched` in the
# given order (all nodes ascending when n_touched < 0). A node is taken from the queue and its
# moves are tried in the order written in _tsp_try / _vrp_try; the first improving one is applied
# and the end nodes of the move (the nodes whose adjacent arcs changed, in the order listed at
# each move) are queued again unless queued already. With n_touched < 0 the search ends only
# after a full sweep over all nodes finds nothing, so the result is a local optimum of the
# neighbourhoods; with a touched list it is the usual don't-look-bit approximation (a node whose
# moves became improving only through changes elsewhere, e.g. a route load, is not re-examined).
#
# Penalised loads (a run's LoadPenalty, CVRP/OVRP without windows): a move may leave a route
# above the capacity; its delta then also counts lam * (change of the two routes' excess loads),
# lam = the penalty's weight. A move into a route still needs room in its row (stride: the most
# customers whose smallest demands fit). From a touched list, only the touched nodes may make a
# move that adds excess load (Work.free); the others may move excess or remove it. Without
# that rule one search at a light weight made hundreds of moves on long routes (X-n783-k48:
# up to 308 after 30 reinsertions). If the search ends with an overloaded route, it is
# searched again from the nodes of the overloaded routes at LOAD_REPAIR_FACTOR times the weight
# (LOAD_REPAIRS times at most); a result still overloaded is reported to the caller (the loop
# drops it). The weight adapts towards the share of searches that should end within the
# capacity before a repair (_adapt). The same moves in the same order otherwise: with a weight
# no move can pay for, the penalised search is the plain one.
#
# Deadline: a run with a time limit passes its end (the _clock.now() time); the search reads the
# clock every LS_CLOCK_EVERY nodes it takes from the queue and stops once the deadline is past,
# whatever is still queued. Every move of the plain search keeps the solution feasible, so
# the result is a valid, partly improved solution (a penalised one may be left overloaded).
# Without it the budget was checked only between iterations, and the first iteration from a
# random 30,000-city tour (a descent across the whole tour) took 5 s.
# Runs without a time limit pass 0 (no deadline) and never read the clock here.
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memset
from libc.stdint cimport int64_t

from glns._core._types cimport Inst, Sol
from glns.ablation import ablated
from glns._core._kind cimport is_tour, load_limit
from glns._core._distance cimport dist, near_dists
from glns._core._solution cimport (Solution, sol_remove, sol_insert, sol_new_route,
                                   sol_drop_empty, sol_cost, removal_delta, new_route_cost,
                                   sol_touch, sol_touch_at, sol_mark, sol_pos, sol_set_length, arc,
                                   END)
from glns._core._instance cimport CoreInstance
from glns._core._clock cimport now
from glns._core._windows cimport (win_join, win_between, win_chain, win_sequence_ok, WIN_END,
                                  win_may_between, win_may_join)

# SWAP*: slots of the cache of nodes' cheapest positions in routes, hashed by node and route
# (4 per node below 1,024 nodes; collisions only cost a rescan)
cdef int LS_TOPS_SLOTS = 4096

# A move must improve by more than this fraction of the starting cost (rounding guard).
cdef double LS_REL_EPS = 1e-12

# SWAP* in the VRP local search (on unless GLNS_ABLATE names it: off only to measure what it
# buys)
cdef bint LS_SWAP_STAR = not ablated("swap_star")


def set_swap_star(bint on):
    """Turn SWAP* in the VRP local search on or off for the whole process (an ablation switch
    for benchmarks: set it before solving, never while a solve runs); returns the previous
    setting."""
    global LS_SWAP_STAR
    cdef bint was = LS_SWAP_STAR
    LS_SWAP_STAR = on
    return was

NEIGHBOURS = LS_NEIGHBOURS
REL_EPS = LS_REL_EPS


cdef struct Top3:
    # The three cheapest insertion positions of one node in one route as it was (route stamp
    # `stamp`), by cost, the earlier position first among equal costs: pos[e] = k means before
    # the route's k-th customer (k = length: at its end). A route without the node's partner
    # has its cheapest position among the first of these that does not touch the partner and
    # the gap the partner leaves (_best_without), which is why three are enough.
    int node
    int route           # -1: empty
    int stamp
    int count
    double cost[3]
    int pos[3]


cdef struct StringCut:
    # A string of v's route for string relocation (_string_cuts): positions a..a+l-1, with
    # v first or last, between p and n (0: the depot; END), its load, and what taking it
    # out changes the cost by
    int a
    int l
    bint v_first
    int p
    int n
    int64_t qs
    double rem


cdef struct Work:
    Sol *s
    const Inst *inst
    int K               # neighbour columns used
    double eps          # improvement threshold
    bint three_opt      # TSP: also the sequential 3-opt moves (_tsp_three_opt)
    bint swap_star      # VRP: also SWAP* (_try_swap_star)
    bint strings        # VRP: also string relocation (_try_strings)
    StringCut cuts[4]   # strings: those of the node being tried (_string_cuts)
    int n_cuts
    bint penalised      # VRP: loads may exceed cap at lam per unit (else every load fits)
    char *free          # penalised, from a touched list: free[v], v may add excess load
                        # (NULL: every node may)
    int64_t cap         # load_limit(inst)
    double lam
    int *queue          # ring buffer of nodes with a clear don't-look bit (n slots)
    int head
    int count
    char *inq           # inq[v]: v is in the queue
    int64_t *pre        # VRP: load of v's route from its start up to and including v, valid
                        # for the routes r with pre_ok[r] (computed when first needed, so a
                        # call costs O(routes it looks at), not O(n))
    char *pre_ok        # one per route slot (pre_slots of them; grows with new routes)
    int pre_slots
    int *stamp          # SWAP* only (else NULL): one per route slot, bumped whenever the
                        # route changes (_fix_pre)
    Top3 *tops          # SWAP*: nodes' cheapest positions in routes, hashed by node and route
    int tops_mask       # (power of two) - 1
    int *tmp            # scratch: n + 3 * stride ints (strings: their piece after two routes)


cdef inline void _push(Work *w, int v) noexcept nogil:
    """Clear v's don't-look bit (queue it); the depot and END are never queued."""
    if v < w.inst.first or w.inq[v]:
        return
    w.inq[v] = 1
    w.queue[(w.head + w.count) % w.inst.n] = v
    w.count += 1


cdef inline int _pop(Work *w) noexcept nogil:
    cdef int v = w.queue[w.head]
    w.head = (w.head + 1) % w.inst.n
    w.count -= 1
    w.inq[v] = 0
    return v


# ---------------------------------------------------------------------------------- TSP

cdef inline int _t_at(const Sol *s, int p) noexcept nogil:
    """City at tour position p, read cyclically (p may be out of range by less than L)."""
    cdef int L = s.length[0]
    if p >= L:
        p -= L
    elif p < 0:
        p += L
    return s.nodes[p]


cdef void _tsp_two_opt(Sol *s, int x, int y) noexcept nogil:
    """Replace arcs (x, succ x), (y, succ y) by (x, y), (succ x, succ y): reverse the path
    succ x .. y, or the complementary path succ y .. x when that one is shorter."""
    cdef int L = s.length[0]
    cdef int *row = s.nodes
    cdef int i = (sol_pos(s, x) + 1) % L
    cdef int j = sol_pos(s, y)
    cdef int m = (j - i + L) % L + 1
    cdef int k, a, b, t
    if 2 * m > L:
        i = (sol_pos(s, y) + 1) % L
        j = sol_pos(s, x)
        m = L - m
    sol_mark(s, 0)
    for k in range(m + 1):          # the reversed cities and the one after them (sol_cost)
        sol_touch(s, row[(i + k) % L])
    for k in range(m // 2):
        a = (i + k) % L
        b = (j - k + L) % L
        t = row[a]
        row[a] = row[b]
        row[b] = t
        s.pos_of[row[a]] = a
        s.pos_of[row[b]] = b


cdef void _tsp_move_segment(Work *w, int s0, int l, int a, bint rev) noexcept nogil:
    """Move the l cities from s0 on to just after city a (in the tour without them), reversed
    when rev. The other cities keep their array order: the array is what removing the segment
    from the list and inserting it after a gives, so only the cities between the segment's old
    and new places move (a segment that wraps past the array's end takes one pass over all)."""
    cdef Sol *s = w.s
    cdef int L = s.length[0]
    cdef int *row = s.nodes
    cdef int p0 = sol_pos(s, s0)
    cdef int pa = sol_pos(s, a)
    cdef int seg[3]
    cdef int k, idx, x, lo, hi, m = 0
    for k in range(l):
        seg[k] = row[(p0 + k) % L]
    sol_mark(s, 0)
    if p0 + l <= L:
        if pa > p0:     # a lies after the segment: the cities up to a move back by l
            memmove(&row[p0], &row[p0 + l], (pa - p0 - l + 1) * sizeof(int))
            lo = p0
            hi = pa
        else:           # a lies before it: the cities after a move on by l
            memmove(&row[pa + 1 + l], &row[pa + 1], (p0 - pa - 1) * sizeof(int))
            lo = pa + 1
            hi = p0 + l - 1
        idx = hi - l + 1 if pa > p0 else pa + 1
        for k in range(l):
            row[idx + k] = seg[l - 1 - k] if rev else seg[k]
        for idx in range(lo, hi + 1):
            s.pos_of[row[idx]] = idx
            sol_touch(s, row[idx])
        sol_touch_at(s, w.inst, 0, hi + 1)
        return
    for idx in range(L):
        if (idx - p0 + L) % L < l:
            continue
        x = row[idx]
        w.tmp[m] = x
        m += 1
        if x == a:
            for k in range(l):
                w.tmp[m] = seg[l - 1 - k] if rev else seg[k]
                m += 1
    for idx in range(L):
        row[idx] = w.tmp[idx]
        s.pos_of[row[idx]] = idx
        sol_touch(s, row[idx])


cdef int _tsp_try(Work *w, int v) noexcept nogil:
    """Apply the first improving 2-opt / or-opt move around city v; 1 if one was applied."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int L = s.length[0]
    cdef bint sym = inst.symmetric
    if L < 3:
        return 0
    # The or-opt segments of v: (length 1, forward), (2, forward), (2, backward), (3, ...).
    # forward: v is the first city s0; backward: v is the last city se.
    cdef int g_s0[5]
    cdef int g_se[5]
    cdef int g_p[5]
    cdef int g_nx[5]
    cdef int g_l[5]
    cdef int g_pos0[5]
    cdef bint g_fwd[5]
    cdef double g_gain[5]
    cdef int ng = 0, l, back, s0, se, p, nx, pos_s0
    # Positions are read once here and once per candidate: nothing moves until a move is
    # applied, and that ends the call. (On a large tour with deferred shifts each read may
    # search; see sol_pos.)
    cdef int pos_v = sol_pos(s, v)
    for l in range(1, 4):
        if L < l + 2:
            break
        for back in range(2 if l > 1 else 1):
            pos_s0 = pos_v - (l - 1) if back else pos_v
            if pos_s0 < 0:
                pos_s0 += L
            s0 = s.nodes[pos_s0]
            se = _t_at(s, pos_s0 + l - 1)
            p = _t_at(s, pos_s0 - 1)
            nx = _t_at(s, pos_s0 + l)
            g_pos0[ng] = pos_s0
            g_s0[ng] = s0
            g_se[ng] = se
            g_p[ng] = p
            g_nx[ng] = nx
            g_l[ng] = l
            g_fwd[ng] = not back
            # what removing the segment saves
            g_gain[ng] = dist(inst, p, s0) + dist(inst, se, nx) - dist(inst, p, nx)
            ng += 1
    cdef int sv = _t_at(s, pos_v + 1)
    cdef int pv = _t_at(s, pos_v - 1)
    cdef int c, u, su, pu, g, opt, a, b, pos_u
    cdef bint rev
    cdef double delta, add
    cdef const double *dv = near_dists(inst, v)
    for c in range(w.K):
        u = inst.near[v * inst.n_near + c]
        pos_u = sol_pos(s, u)
        su = _t_at(s, pos_u + 1)
        pu = _t_at(s, pos_u - 1)
        if sym and u != sv and u != pv:
            # 2-opt on the arcs leaving v and u
            delta = dv[c] + dist(inst, sv, su) - dist(inst, v, sv) - dist(inst, u, su)
            if delta < -w.eps:
                _tsp_two_opt(s, v, u)
                _push(w, v); _push(w, sv); _push(w, u); _push(w, su)
                return 1
            # 2-opt on the arcs entering v and u
            delta = dv[c] + dist(inst, pv, pu) - dist(inst, pv, v) - dist(inst, pu, u)
            if delta < -w.eps:
                _tsp_two_opt(s, pv, pu)
                _push(w, v); _push(w, pv); _push(w, u); _push(w, pu)
                return 1
        for g in range(ng):
            s0 = g_s0[g]
            se = g_se[g]
            p = g_p[g]
            nx = g_nx[g]
            if (pos_u - g_pos0[g] + L) % L < g_l[g]:
                continue        # u is inside the segment
            for opt in range(2):
                if opt == 0:    # after u: between u and its successor
                    if u == p:
                        continue    # that is where the segment is
                    a = u
                    b = su
                    rev = not g_fwd[g]
                else:           # before u: between its predecessor and u
                    if u == nx:
                        continue
                    a = pu
                    b = u
                    rev = g_fwd[g]
                if rev and not sym:
                    continue
                if rev:
                    add = dist(inst, a, se) + dist(inst, s0, b) - dist(inst, a, b)
                else:
                    add = dist(inst, a, s0) + dist(inst, se, b) - dist(inst, a, b)
                delta = add - g_gain[g]
                if delta < -w.eps:
                    _tsp_move_segment(w, s0, g_l[g], a, rev)
                    _push(w, p); _push(w, nx); _push(w, s0); _push(w, se); _push(w, a); _push(w, b)
                    return 1
    if w.three_opt and sym and L >= 6:
        return _tsp_three_opt(w, v, pos_v, 1) or _tsp_three_opt(w, v, pos_v, -1)
    return 0


cdef void _tsp_exchange(Sol *s, int a, int b, int c, int d) noexcept nogil:
    """Replace arcs (a, b), (c, d) by (a, c), (b, d), where b follows a and d follows c in the
    same direction of the tour (a 2-opt move written by its cities, whichever way the array
    holds the tour)."""
    if _t_at(s, sol_pos(s, a) + 1) == b:
        _tsp_two_opt(s, a, c)
    else:
        _tsp_two_opt(s, b, d)


cdef int _tsp_three_opt(Work *w, int t1, int pos_1, int d) noexcept nogil:
    """The first improving 3-opt move from city t1 in direction d; 1 if one was applied.

    Sequential 3-opt as in Lin-Kernighan, with the positive-gain rule: remove (t1, t2), t2
    after t1 in direction d; add (t2, t3), t3 one of t2's candidates with d(t2, t3) < d(t1, t2);
    remove (t3, t4) with t4 on either side of t3, add (t4, t5) for a candidate t5 of t4 while
    the partial gain stays positive, remove (t5, t6) with the t6 that keeps one tour, and close
    with (t6, t1): _three_opt_split (t4 after t3) and _three_opt_valid (t4 before t3), in that
    order for each t3. Candidate lists are nearest first (Inst.near), so each scan stops at the
    first candidate whose partial gain is not positive. A move is applied as two or three
    2-opt exchanges (_tsp_exchange), each reversing the shorter side."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int L = s.length[0]
    cdef int t2 = _t_at(s, pos_1 + d)
    cdef int pos_2 = sol_pos(s, t2)
    cdef double d12 = dist(inst, t1, t2)
    cdef int c3, t3, off3
    cdef double d23
    cdef const double *d2 = near_dists(inst, t2)
    for c3 in range(w.K):
        t3 = inst.near[t2 * inst.n_near + c3]
        if t3 == t1:
            continue
        d23 = d2[c3]
        if d12 - d23 <= 0:
            break               # candidates are nearest first: no later t3 gains either
        off3 = ((sol_pos(s, t3) - pos_2) * d + L) % L     # t3's place on the path from t2
        if (_three_opt_split(w, t1, t2, t3, pos_2, off3, d, d12, d23)
                or _three_opt_valid(w, t1, t2, t3, pos_2, off3, d, d12, d23)):
            return 1
    return 0


cdef inline double _three_opt_delta(const Inst *inst, double d12, double d23, double d34,
                                    double d45, int t5, int t6, int t1) noexcept nogil:
    """Change of cost of the move: + y1 + y2 + (t6, t1) - x1 - x2 - (t5, t6)."""
    return d23 + d45 + dist(inst, t6, t1) - d12 - d34 - dist(inst, t5, t6)


cdef inline void _push_six(Work *w, int t1, int t2, int t3, int t4, int t5, int t6) noexcept nogil:
    """Queue the ends of the three changed arc pairs."""
    _push(w, t1); _push(w, t2); _push(w, t3); _push(w, t4); _push(w, t5); _push(w, t6)


cdef int _three_opt_split(Work *w, int t1, int t2, int t3, int pos_2, int off3, int d,
                          double d12, double d23) noexcept nogil:
    """t4 after t3, so that closing up with (t4, t1) would split the tour (the
    "or-3opt" moves). t5 must lie on the path t2 .. t3; with t6 after t5 the paths t2 .. t5
    and t6 .. t3 swap places, with t6 before t5 both are reversed in place."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int L = s.length[0]
    cdef int t4 = _t_at(s, pos_2 + (off3 + 1) * d)
    cdef int c5, t5, t6, off5, side
    cdef double d34, d45, g
    cdef const double *d4
    if t4 == t1:
        return 0                # x2 would be (t3, t1): an or-opt of t1
    d34 = dist(inst, t3, t4)
    d4 = near_dists(inst, t4)
    g = d12 - d23 + d34         # the gain before (t4, t5)
    for c5 in range(w.K):
        t5 = inst.near[t4 * inst.n_near + c5]
        if t5 == t3:
            continue            # y2 would put x2 back
        d45 = d4[c5]
        if g - d45 <= 0:
            break
        off5 = ((sol_pos(s, t5) - pos_2) * d + L) % L
        if off5 > off3:
            continue            # not on the path t2 .. t3
        for side in range(2):
            if side == 0:
                if off5 == off3:
                    continue
                t6 = _t_at(s, pos_2 + (off5 + 1) * d)
            else:
                if off5 == 0:
                    continue
                t6 = _t_at(s, pos_2 + (off5 - 1) * d)
            if _three_opt_delta(inst, d12, d23, d34, d45, t5, t6, t1) < -w.eps:
                if side == 0:       # t1 [t2..t5][t6..t3] t4 -> t1 [t6..t3][t2..t5] t4
                    _tsp_exchange(s, t1, t2, t3, t4)
                    _tsp_exchange(s, t1, t3, t6, t5)
                    _tsp_exchange(s, t3, t5, t2, t4)
                else:               # t1 [t2..t6][t5..t3] t4 -> t1 [t6..t2][t3..t5] t4
                    _tsp_exchange(s, t1, t2, t6, t5)
                    _tsp_exchange(s, t2, t5, t3, t4)
                _push_six(w, t1, t2, t3, t4, t5, t6)
                return 1
    return 0


cdef int _three_opt_valid(Work *w, int t1, int t2, int t3, int pos_2, int off3, int d,
                          double d12, double d23) noexcept nogil:
    """t4 before t3, so that closing up with (t4, t1) would be a 2-opt move (not necessarily an
    improving one) giving the tour T' = t1 [t4 .. t2] [t3 .. ]; then a second 2-opt move on T'
    removes (t1, t4) and (t6, t5) with t6 before t5 in T', and adds (t4, t5) and (t6, t1)."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int L = s.length[0]
    cdef int t4, c5, t5, t6, off5
    cdef double d34, d45, g
    cdef const double *d4
    if off3 < 2:
        return 0                # t3 right after t2: (t2, t3) is already an arc
    t4 = _t_at(s, pos_2 + (off3 - 1) * d)
    d34 = dist(inst, t3, t4)
    d4 = near_dists(inst, t4)
    g = d12 - d23 + d34
    for c5 in range(w.K):
        t5 = inst.near[t4 * inst.n_near + c5]
        if t5 == t3 or t5 == t1:
            continue            # (t5, t6) would be y1, or (t4, t5) an arc of T'
        d45 = d4[c5]
        if g - d45 <= 0:
            break
        off5 = ((sol_pos(s, t5) - pos_2) * d + L) % L
        if off5 == off3 - 2:
            continue            # (t4, t5) is an arc of T'
        # t5's predecessor in T': the path t2 .. t4 runs backwards there, the rest forwards
        t6 = _t_at(s, pos_2 + (off5 + 1 if off5 < off3 else off5 - 1) * d)
        if _three_opt_delta(inst, d12, d23, d34, d45, t5, t6, t1) < -w.eps:
            _tsp_exchange(s, t1, t2, t4, t3)
            _tsp_exchange(s, t1, t4, t6, t5)
            _push_six(w, t1, t2, t3, t4, t5, t6)
            return 1
    return 0


# ---------------------------------------------------------------------------------- VRP

# Penalised loads: see local_search. Every LOAD_WINDOW searches the weight is multiplied by
# LOAD_UP when the share that ended feasible is below target - LOAD_SLACK, by LOAD_DOWN when
# it is above target + LOAD_SLACK; an overloaded result gets LOAD_REPAIRS more searches from
# the overloaded routes' nodes, each at LOAD_REPAIR_FACTOR times the weight before.
cdef int LOAD_WINDOW = 100
cdef double LOAD_SLACK = 0.05
cdef double LOAD_UP = 1.2
cdef double LOAD_DOWN = 0.85
cdef int LOAD_REPAIRS = 2
cdef double LOAD_REPAIR_FACTOR = 10.0

cdef void _fix_pre(Work *w, int r) noexcept nogil:
    """Recompute the prefix loads of route r (called after every change of a route, so it
    also bumps the route's stamp)."""
    cdef Sol *s = w.s
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int64_t acc = 0
    cdef int i
    for i in range(s.length[r]):
        acc += w.inst.demand[row[i]]
        w.pre[row[i]] = acc
    w.pre_ok[r] = 1
    if w.stamp != NULL:         # SWAP*'s cache only
        w.stamp[r] += 1


cdef int _pre_room(Work *w, int r) except -1 nogil:
    """Make pre_ok cover route r (a route the search opened)."""
    cdef int slots = w.pre_slots
    cdef char *grown
    cdef int *stamps
    if r < slots:
        return 0
    while slots <= r:
        slots *= 2
    grown = <char *> realloc(w.pre_ok, slots * sizeof(char))
    if grown != NULL:
        w.pre_ok = grown
    stamps = w.stamp
    if stamps != NULL:
        stamps = <int *> realloc(w.stamp, slots * sizeof(int))
        if stamps != NULL:
            w.stamp = stamps
    if grown == NULL or (w.stamp != NULL and stamps == NULL):
        with gil:
            raise MemoryError()
    memset(&grown[w.pre_slots], 0, (slots - w.pre_slots) * sizeof(char))
    if stamps != NULL:
        memset(&stamps[w.pre_slots], 0, (slots - w.pre_slots) * sizeof(int))
    w.pre_slots = slots
    return 0


cdef inline double _excess(const Work *w, int64_t load) noexcept nogil:
    """The penalty of a route carrying `load`."""
    return (load - w.cap) * w.lam if load > w.cap else 0.0


cdef inline double _load_delta(const Work *w, int64_t new_a, int64_t old_a, int64_t new_b,
                               int64_t old_b) noexcept nogil:
    """The change of penalty when two routes' loads go from old to new."""
    return (_excess(w, new_a) - _excess(w, old_a)) + (_excess(w, new_b) - _excess(w, old_b))


cdef inline bint _tails_fit(const Work *w, int len_v, int len_u, int64_t new_v, int64_t old_v,
                            int64_t new_u, int64_t old_u, bint held, double *pd) noexcept nogil:
    """Whether a 2-opt* that leaves v's and u's routes with these lengths and loads may be
    made (held: not if it adds excess load), and its penalty change in pd (0 unless
    penalised)."""
    if w.penalised:
        pd[0] = _load_delta(w, new_v, old_v, new_u, old_u)
        return len_v <= w.s.stride and len_u <= w.s.stride and not (held and pd[0] > 0)
    pd[0] = 0.0
    return new_v <= w.cap and new_u <= w.cap


cdef inline void _need_pre(Work *w, int r) noexcept nogil:
    """Make the prefix loads of route r valid (moves keep them valid once computed)."""
    if not w.pre_ok[r]:
        _fix_pre(w, r)


cdef void _reverse(Work *w, int r, int lo, int hi) noexcept nogil:
    """Reverse positions lo..hi of route r."""
    cdef Sol *s = w.s
    cdef int *row = &s.nodes[r * s.stride]
    cdef int t, p
    sol_mark(s, r)
    for p in range(lo, hi + 2):     # the reversed nodes and the one after them (sol_cost)
        sol_touch_at(s, w.inst, r, p)
    while lo < hi:
        t = row[lo]
        row[lo] = row[hi]
        row[hi] = t
        s.pos_of[row[lo]] = lo
        s.pos_of[row[hi]] = hi
        lo += 1
        hi -= 1
    _fix_pre(w, r)


# -- time windows: a move that improves is taken only if it keeps every window. Moves between
# routes are checked in O(1) from the routes' forward/backward times (_windows.pxd); moves
# that rewrite a route (relocate and reversal inside one, SWAP*, strings) change the times of
# everything between their ends and are checked over that stretch (_rewritten_in_time). (END
# and WIN_END are the same value, -1.)

cdef bint _rewritten_in_time(Work *w, int r, const int *seq, int m) noexcept nogil:
    """Route r rewritten as seq[0:m] keeps every time window. The solution's routes keep
    theirs, so where seq has r's length only the stretch that differs from r is walked
    (win_chain): before it the times are r's (earliest departures), after it r's latest
    starts hold. O(stretch), where a check from scratch (win_sequence_ok) reads the travel
    times of the whole route."""
    cdef const int *row = &w.s.nodes[r * w.s.stride]
    cdef int f = 0, g = m - 1
    if m != w.s.length[r]:
        return win_sequence_ok(w.inst, seq, m)
    while f < m and seq[f] == row[f]:
        f += 1
    if f == m:
        return True
    while seq[g] == row[g]:
        g -= 1
    return win_chain(w.s, w.inst, seq[f - 1] if f > 0 else 0, &seq[f], g - f + 1,
                     seq[g + 1] if g < m - 1 else WIN_END)


cdef bint _reverse_in_time(Work *w, int r, int lo, int hi) noexcept nogil:
    """Route r with positions lo..hi reversed keeps every time window: the reversed stretch
    walked between its two neighbours (_rewritten_in_time's stretch, built directly)."""
    cdef const int *row = &w.s.nodes[r * w.s.stride]
    cdef int i, L = w.s.length[r]
    for i in range(hi - lo + 1):
        w.tmp[i] = row[hi - i]
    return win_chain(w.s, w.inst, row[lo - 1] if lo > 0 else 0, w.tmp, hi - lo + 1,
                     row[hi + 1] if hi < L - 1 else WIN_END)


cdef bint _relocate_in_time(Work *w, int v, int u, bint after) noexcept nogil:
    """Moving customer v next to customer u (after it, or before) keeps every time window."""
    cdef Sol *s = w.s
    cdef int rv = s.route_of[v], ru = s.route_of[u]
    cdef const int *row = &s.nodes[ru * s.stride]
    cdef int i, x, m = 0, j = sol_pos(s, u), L = s.length[ru]
    cdef int pu = row[j - 1] if j > 0 else 0
    cdef int nu = row[j + 1] if j < L - 1 else WIN_END
    if rv != ru:
        i = sol_pos(s, v)
        row = &s.nodes[rv * s.stride]
        if not win_join(s, w.inst, row[i - 1] if i > 0 else 0,
                        row[i + 1] if i < s.length[rv] - 1 else WIN_END):
            return False
        return win_between(s, w.inst, u, v, nu) if after else win_between(s, w.inst, pu, v, u)
    # within the route only the stretch between v's and u's places changes (the caller never
    # moves v to where it is): it is walked between its two neighbours, as _rewritten_in_time
    # would find them
    i = sol_pos(s, v)
    cdef int lo = min(i, j + 1 if after else j), hi = max(i, j if after else j - 1)
    cdef int a = row[lo - 1] if lo > 0 else 0
    cdef int b = row[hi + 1] if hi < L - 1 else WIN_END
    if i > j:                           # v first, then what lay between
        w.tmp[m] = v
        m += 1
    for x in range(lo, hi + 1):
        if row[x] != v:
            w.tmp[m] = row[x]
            m += 1
    if i < j:                           # what lay between, then v
        w.tmp[m] = v
        m += 1
    return win_chain(s, w.inst, a, w.tmp, m, b)


cdef int _try_reverse(Work *w, int r, int lo, int hi) noexcept nogil:
    """Reverse positions lo..hi of route r if that improves; 1 if it did."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int a = row[lo - 1] if lo > 0 else 0
    cdef int b = row[hi + 1] if hi < L - 1 else END
    cdef int x = row[lo], y = row[hi]
    cdef double delta = arc(inst, a, y) + arc(inst, x, b) - arc(inst, a, x) - arc(inst, y, b)
    if delta < -w.eps and (not inst.timed or _reverse_in_time(w, r, lo, hi)):
        _reverse(w, r, lo, hi)
        _push(w, a); _push(w, x); _push(w, y); _push(w, b)
        return 1
    return 0


cdef void _relocate(Work *w, int v, int u, bint after) noexcept nogil:
    """Move customer v to just after (or before) customer u."""
    cdef Sol *s = w.s
    cdef int rv = s.route_of[v]
    cdef int ru = s.route_of[u]
    sol_remove(s, w.inst, v)
    sol_insert(s, w.inst, v, ru, sol_pos(s, u) + 1 if after else sol_pos(s, u))
    _fix_pre(w, rv)
    if ru != rv:
        _fix_pre(w, ru)


cdef void _swap(Work *w, int v, int u) noexcept nogil:
    """Exchange customers v and u of different routes."""
    cdef Sol *s = w.s
    cdef int rv = s.route_of[v], ru = s.route_of[u]
    cdef int i = sol_pos(s, v), j = sol_pos(s, u)
    sol_mark(s, rv)
    sol_mark(s, ru)
    s.nodes[rv * s.stride + i] = u
    s.nodes[ru * s.stride + j] = v
    s.route_of[v] = ru
    s.pos_of[v] = j
    s.route_of[u] = rv
    s.pos_of[u] = i
    s.load[rv] += w.inst.demand[u] - w.inst.demand[v]
    s.load[ru] += w.inst.demand[v] - w.inst.demand[u]
    sol_touch(s, u)
    sol_touch(s, v)
    sol_touch_at(s, w.inst, rv, i + 1)
    sol_touch_at(s, w.inst, ru, j + 1)
    _fix_pre(w, rv)
    _fix_pre(w, ru)


cdef void _exchange_tails(Work *w, int r1, int c1, int r2, int c2) noexcept nogil:
    """2-opt*: route r1 becomes r1[:c1] + r2[c2:] and r2 becomes r2[:c2] + r1[c1:]."""
    cdef Sol *s = w.s
    cdef int *row1 = &s.nodes[r1 * s.stride]
    cdef int *row2 = &s.nodes[r2 * s.stride]
    cdef int L1 = s.length[r1], L2 = s.length[r2]
    cdef int *t1 = w.tmp
    cdef int *t2 = &w.tmp[s.stride]
    cdef int m1 = 0, m2 = 0, i
    sol_mark(s, r1)
    sol_mark(s, r2)
    for i in range(c1):
        t1[m1] = row1[i]; m1 += 1
    for i in range(c2, L2):
        t1[m1] = row2[i]; m1 += 1
    for i in range(c2):
        t2[m2] = row2[i]; m2 += 1
    for i in range(c1, L1):
        t2[m2] = row1[i]; m2 += 1
    _rewrite(w, r1, t1, m1)
    _rewrite(w, r2, t2, m2)


cdef void _rewrite(Work *w, int r, const int *seq, int m) noexcept nogil:
    """Route r (marked written) becomes seq[0:m]: positions, load and prefix loads."""
    cdef Sol *s = w.s
    cdef int *row = &s.nodes[r * s.stride]
    cdef int64_t q = 0
    cdef int i
    for i in range(m):
        row[i] = seq[i]
        s.route_of[seq[i]] = r
        s.pos_of[seq[i]] = i
        sol_touch(s, seq[i])
        q += w.inst.demand[seq[i]]
    sol_set_length(s, r, m)
    s.load[r] = q
    _fix_pre(w, r)


cdef inline double _gap(const Inst *inst, int x, int y) noexcept nogil:
    """The arc x -> y an insertion between x and y replaces (an empty route costs nothing)."""
    return 0.0 if (x == 0 and y == END) else arc(inst, x, y)


cdef void _top3(const Sol *s, const Inst *inst, int v, int r, Top3 *t) noexcept nogil:
    """Fill t with the three cheapest insertion positions of v in route r. O(route)."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int k, e, i, prev = 0, x
    cdef double c
    t.count = 0
    for k in range(L + 1):
        x = row[k] if k < L else END
        c = arc(inst, prev, v) + arc(inst, v, x) - _gap(inst, prev, x)
        prev = x
        e = t.count
        while e > 0 and c < t.cost[e - 1]:     # after equal costs: the earlier position first
            e -= 1
        if e >= 3:
            continue
        if t.count < 3:
            t.count += 1
        for i in range(t.count - 1, e, -1):
            t.cost[i] = t.cost[i - 1]
            t.pos[i] = t.pos[i - 1]
        t.cost[e] = c
        t.pos[e] = k


cdef double _best_without(const Sol *s, const Inst *inst, const Top3 *t, int v, int r,
                          int j, int *where) noexcept nogil:
    """The cheapest insertion of v into route r without its j-th customer, from v's top three
    positions in r (t): its cost, and in where[0] its index in that shorter route (the lowest
    among equal costs, as a scan of the shorter route finds it). O(1)."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    cdef int a = row[j - 1] if j > 0 else 0
    cdef int b = row[j + 1] if j < L - 1 else END
    cdef double best = arc(inst, a, v) + arc(inst, v, b) - _gap(inst, a, b)   # the gap left
    cdef int best_p = j, e, k, p
    for e in range(t.count):
        k = t.pos[e]
        if k == j or k == j + 1:        # next to the customer that leaves
            continue
        p = k if k < j else k - 1
        if t.cost[e] < best or (t.cost[e] == best and p < best_p):
            best, best_p = t.cost[e], p
        break                           # the first one not next to it is the cheapest of them
    where[0] = best_p
    return best


cdef const Top3 *_tops_of(Work *w, int v, int r) noexcept nogil:
    """v's top three positions in route r, from the cache (hashed by node and route) while r
    is unchanged."""
    cdef Top3 *t = &w.tops[(<unsigned int> v * 2654435761u + <unsigned int> r) & w.tops_mask]
    if t.node != v or t.route != r or t.stamp != w.stamp[r]:
        _top3(w.s, w.inst, v, r, t)
        t.node, t.route, t.stamp = v, r, w.stamp[r]
    return t


cdef int _swap_star_seq(const Sol *s, int r, int skip, int v, int at, int *out) noexcept nogil:
    """out = route r without `skip`, with v at index `at`; returns the length."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int k, m = 0
    for k in range(s.length[r]):
        if row[k] == skip:
            continue
        if m == at:
            out[m] = v
            m += 1
        out[m] = row[k]
        m += 1
    if m == at:
        out[m] = v
        m += 1
    return m


cdef int _try_swap_star(Work *w, int v, int u, double rem_v) noexcept nogil:
    """SWAP* (Vidal 2022) of customers v and u of different routes: v goes to its cheapest
    position in u's route without u, u to its cheapest in v's route without v (loads checked
    by the caller). Applied if it improves (and, with windows, both new routes keep them:
    checked over the stretch each changes, only for an improving move); 1 if it was."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int rv = s.route_of[v], ru = s.route_of[u]
    cdef int at_v, at_u, m1, m2
    cdef double ins_v = _best_without(s, inst, _tops_of(w, v, ru), v, ru, sol_pos(s, u), &at_v)
    cdef double part = rem_v + removal_delta(s, inst, u) + ins_v
    if not part + inst.insert_floor < -w.eps:      # no place of u in rv can make it improve
        return 0
    cdef double ins_u = _best_without(s, inst, _tops_of(w, u, rv), u, rv, sol_pos(s, v), &at_u)
    cdef double delta = part + ins_u
    if not delta < -w.eps:
        return 0
    cdef int *t1 = w.tmp
    cdef int *t2 = &w.tmp[s.stride]
    m1 = _swap_star_seq(s, rv, v, u, at_u, t1)
    m2 = _swap_star_seq(s, ru, u, v, at_v, t2)
    if inst.timed and not (_rewritten_in_time(w, rv, t1, m1) and _rewritten_in_time(w, ru, t2, m2)):
        return 0
    cdef int i = sol_pos(s, v), j = sol_pos(s, u), Lv = s.length[rv], Lu = s.length[ru]
    cdef const int *rowv = &s.nodes[rv * s.stride]
    cdef const int *rowu = &s.nodes[ru * s.stride]
    # the nodes whose arcs change: v, u, their old neighbours, then their new ones
    cdef int pv = rowv[i - 1] if i > 0 else 0
    cdef int nv = rowv[i + 1] if i < Lv - 1 else END
    cdef int pu = rowu[j - 1] if j > 0 else 0
    cdef int nu = rowu[j + 1] if j < Lu - 1 else END
    sol_mark(s, rv)
    sol_mark(s, ru)
    _rewrite(w, rv, t1, m1)
    _rewrite(w, ru, t2, m2)
    _push(w, v); _push(w, u); _push(w, pv); _push(w, nv); _push(w, pu); _push(w, nu)
    _push(w, t2[at_v - 1] if at_v > 0 else 0); _push(w, t2[at_v + 1] if at_v < m2 - 1 else END)
    _push(w, t1[at_u - 1] if at_u > 0 else 0); _push(w, t1[at_u + 1] if at_u < m1 - 1 else END)
    return 1


cdef int _string_seq(const Sol *s, int r, int skip_a, int skip_b, int u, bint after,
                     const int *piece, int l, int *out) noexcept nogil:
    """out = route r without its positions skip_a..skip_b (none when skip_a > skip_b), with
    piece[0:l] right after customer u (or right before it); returns the length."""
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int k, e, m = 0
    for k in range(s.length[r]):
        if skip_a <= k <= skip_b:
            continue
        if row[k] == u and not after:
            for e in range(l):
                out[m] = piece[e]
                m += 1
        out[m] = row[k]
        m += 1
        if row[k] == u and after:
            for e in range(l):
                out[m] = piece[e]
                m += 1
    return m


cdef void _string_cuts(Work *w, int v) noexcept nogil:
    """The strings of 2 and 3 customers of v's route with v at one end (w.cuts, in the order
    they are tried), each with what taking it out changes: computed once per node, not once
    per neighbour."""
    cdef Sol *s = w.s
    cdef int rv = s.route_of[v], i = sol_pos(s, v), Lv = s.length[rv], l, e, a, k
    cdef const int *rowv = &s.nodes[rv * s.stride]
    cdef StringCut *c
    w.n_cuts = 0
    for l in range(2, 4):
        for e in range(2):          # v first, then v last
            a = i if e == 0 else i - l + 1
            if a < 0 or a + l > Lv:
                continue
            c = &w.cuts[w.n_cuts]
            w.n_cuts += 1
            c.a = a
            c.l = l
            c.v_first = e == 0
            c.p = rowv[a - 1] if a > 0 else 0
            c.n = rowv[a + l] if a + l < Lv else END
            c.qs = 0
            for k in range(a, a + l):
                c.qs += w.inst.demand[rowv[k]]
            c.rem = _gap(w.inst, c.p, c.n) - arc(w.inst, c.p, rowv[a]) - arc(w.inst, rowv[a + l - 1], c.n)


cdef int _try_string(Work *w, int v, int u, const StringCut *c, bint after, bint rev,
                     bint held) noexcept nogil:
    """Move the string c of v's route next to customer u, right after it or right before it,
    reversed or not; applied if it improves (loads as relocate; with windows: O(l) between
    routes, O(route) within one); 1 if it was."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int rv = s.route_of[v], ru = s.route_of[u]
    cdef const int *rowv = &s.nodes[rv * s.stride]
    cdef const int *rowu = &s.nodes[ru * s.stride]
    cdef int a = c.a, l = c.l, b = c.a + c.l - 1, p = c.p, n = c.n
    cdef int Lu = s.length[ru], j = sol_pos(s, u)
    cdef int x, y, k, m1, m2
    cdef double pd = 0.0, delta
    cdef int *piece = &w.tmp[2 * s.stride]
    if ru == rv and a <= j <= b:
        return 0                                # u is in the string
    if after:
        x = u
        y = rowu[j + 1] if j < Lu - 1 else END
    else:
        x = rowu[j - 1] if j > 0 else 0
        y = u
    if ru == rv and (x == p or y == n):
        return 0                                # where it is already
    if ru != rv:
        if w.penalised:
            if Lu + l > s.stride:
                return 0
            pd = _load_delta(w, s.load[ru] + c.qs, s.load[ru], s.load[rv] - c.qs, s.load[rv])
            if held and pd > 0:
                return 0
        elif s.load[ru] + c.qs > w.cap:
            return 0
    delta = ((pd + c.rem) + (arc(inst, x, rowv[b] if rev else rowv[a])
                             + arc(inst, rowv[a] if rev else rowv[b], y) - arc(inst, x, y)))
    if not delta < -w.eps:
        return 0
    for k in range(l):
        piece[k] = rowv[b - k] if rev else rowv[a + k]
    cdef int *t1 = w.tmp
    cdef int *t2 = &w.tmp[s.stride]
    if ru == rv:
        m1 = _string_seq(s, rv, a, b, u, after, piece, l, t1)
        if inst.timed and not _rewritten_in_time(w, rv, t1, m1):
            return 0
        sol_mark(s, rv)
        _rewrite(w, rv, t1, m1)
    else:
        if inst.timed and not (win_join(s, inst, p, n) and win_chain(s, inst, x, piece, l, y)):
            return 0
        m1 = _string_seq(s, rv, a, b, -1, False, NULL, 0, t1)
        m2 = _string_seq(s, ru, 0, -1, u, after, piece, l, t2)
        sol_mark(s, rv)
        sol_mark(s, ru)
        _rewrite(w, rv, t1, m1)
        _rewrite(w, ru, t2, m2)
    # the nodes whose arcs changed: the string's ends, its old neighbours, its new ones
    _push(w, v); _push(w, piece[0] if piece[0] != v else piece[l - 1])
    _push(w, p); _push(w, n); _push(w, x); _push(w, y)
    return 1


cdef int _try_strings(Work *w, int v, int u, bint held) noexcept nogil:
    """String relocation (level 4): a string of 2 or 3 customers of v's route with v at one end
    (w.cuts, from _string_cuts) goes next to customer u, v beside u: when v starts the
    string, forward right after u or reversed right before it; when v ends it, forward right
    before u or reversed right after it (reversed only on a symmetric matrix). Within v's
    route or into u's; 1 if one was applied."""
    cdef bint sym = w.inst.symmetric
    cdef int t
    cdef const StringCut *c
    for t in range(w.n_cuts):
        c = &w.cuts[t]
        if _try_string(w, v, u, c, c.v_first, False, held):
            return 1
        if sym and _try_string(w, v, u, c, not c.v_first, True, held):
            return 1
    return 0


cdef int _vrp_try(Work *w, int v) except -1 nogil:
    """Apply the first improving VRP move of customer v; 1 if one was applied."""
    cdef Sol *s = w.s
    cdef const Inst *inst = w.inst
    cdef int64_t cap = w.cap
    cdef bint pz = w.penalised
    # a node outside the touched list may not add excess load (it may move it or remove it)
    cdef bint held = pz and w.free != NULL and not w.free[v]
    cdef bint sym = inst.symmetric
    cdef bint timed = inst.timed
    # With time windows and distances computed on demand, a move between two routes is first
    # tried against the times alone (win_may_*): where pricing it takes square roots, most of
    # the moves that break a window are told so for a few loads. (Measured: a dense matrix's
    # lookups cost less than the test.)
    cdef bint early_out = timed and inst.dist == NULL
    cdef bint apart             # early_out, v and u in two routes
    cdef int rv = s.route_of[v]
    cdef int i = sol_pos(s, v)
    cdef int Lv = s.length[rv]
    cdef const int *rowv = &s.nodes[rv * s.stride]
    cdef int pv = rowv[i - 1] if i > 0 else 0
    cdef int nv = rowv[i + 1] if i < Lv - 1 else END
    cdef int64_t qv = inst.demand[v], qu, head_u, head_v
    cdef double rem = removal_delta(s, inst, v)
    cdef double delta, pd
    cdef int64_t load_v, load_u, new_v, new_u
    cdef int c, u, ru, j, Lu, pu, nu, lo, hi, r
    cdef bint room
    cdef const int *rowu
    if w.strings:
        _string_cuts(w, v)
    for c in range(w.K):
        u = inst.near[v * inst.n_near + c]
        ru = s.route_of[u]
        j = sol_pos(s, u)
        Lu = s.length[ru]
        rowu = &s.nodes[ru * s.stride]
        pu = rowu[j - 1] if j > 0 else 0
        nu = rowu[j + 1] if j < Lu - 1 else END
        qu = inst.demand[u]
        load_v = s.load[rv]
        load_u = s.load[ru]
        pd = 0.0
        if ru == rv:
            room = True
        elif pz:        # any load, as long as the row has room
            room = Lu < s.stride
            if room:
                pd = _load_delta(w, load_u + qv, load_u, load_v - qv, load_v)
                room = not (held and pd > 0)
        else:
            room = load_u + qv <= cap
        apart = early_out and ru != rv
        if room:
            # relocate v after u (not where it is already)
            if u != pv and (not apart or win_may_between(s, inst, u, v, nu)):
                delta = (rem + pd) + (arc(inst, u, v) + arc(inst, v, nu) - arc(inst, u, nu))
                if delta < -w.eps and (not timed or _relocate_in_time(w, v, u, True)):
                    _relocate(w, v, u, True)
                    _push(w, v); _push(w, pv); _push(w, nv); _push(w, u); _push(w, nu)
                    return 1
            # relocate v before u
            if u != nv and (not apart or win_may_between(s, inst, pu, v, u)):
                delta = (rem + pd) + (arc(inst, pu, v) + arc(inst, v, u) - arc(inst, pu, u))
                if delta < -w.eps and (not timed or _relocate_in_time(w, v, u, False)):
                    _relocate(w, v, u, False)
                    _push(w, v); _push(w, pv); _push(w, nv); _push(w, pu); _push(w, u)
                    return 1
        if w.strings and _try_strings(w, v, u, held):
            return 1
        if ru == rv:
            if not sym:
                continue
            # 2-opt on the arcs leaving v and u: reverse what lies between them
            if i < j:
                lo = i + 1
                hi = j
            else:
                lo = j + 1
                hi = i
            if hi > lo and _try_reverse(w, rv, lo, hi):
                return 1
            # 2-opt on the arcs entering v and u
            if i < j:
                lo = i
                hi = j - 1
            else:
                lo = j
                hi = i - 1
            if hi > lo and _try_reverse(w, rv, lo, hi):
                return 1
            continue
        # swap v and u
        new_v = load_v - qv + qu
        new_u = load_u - qu + qv
        pd = _load_delta(w, new_v, load_v, new_u, load_u) if pz else 0.0
        if ((not (held and pd > 0)) if pz else (new_v <= cap and new_u <= cap)) and (
                not early_out or (win_may_between(s, inst, pv, u, nv)
                                  and win_may_between(s, inst, pu, v, nu))):
            delta = pd + ((arc(inst, pv, u) + arc(inst, u, nv) - arc(inst, pv, v) - arc(inst, v, nv))
                          + (arc(inst, pu, v) + arc(inst, v, nu) - arc(inst, pu, u) - arc(inst, u, nu)))
            if delta < -w.eps and (not timed or (win_between(s, inst, pv, u, nv)
                                                 and win_between(s, inst, pu, v, nu))):
                _swap(w, v, u)
                _push(w, v); _push(w, u); _push(w, pv); _push(w, nv); _push(w, pu); _push(w, nu)
                return 1
        # 2-opt*: rv = rv[..v] + ru[u..], ru = ru[..pu] + rv[nv..]
        _need_pre(w, rv)
        _need_pre(w, ru)
        head_u = w.pre[u] - qu
        new_v = w.pre[v] + (load_u - head_u)
        new_u = head_u + (load_v - w.pre[v])
        if _tails_fit(w, i + 1 + Lu - j, j + Lv - i - 1, new_v, load_v, new_u, load_u, held, &pd) and (
                not early_out or (win_may_join(s, inst, v, u) and win_may_join(s, inst, pu, nv))):
            # an emptied route (depot straight to END) costs nothing
            delta = pd + (arc(inst, v, u) + _gap(inst, pu, nv) - arc(inst, v, nv) - arc(inst, pu, u))
            if delta < -w.eps and (not timed or (win_join(s, inst, v, u)
                                                 and win_join(s, inst, pu, nv))):
                _exchange_tails(w, rv, i + 1, ru, j)
                _push(w, v); _push(w, nv); _push(w, u); _push(w, pu)
                return 1
        # 2-opt*: ru = ru[..u] + rv[v..], rv = rv[..pv] + ru[nu..]
        head_v = w.pre[v] - qv
        new_u = w.pre[u] + (load_v - head_v)
        new_v = head_v + (load_u - w.pre[u])
        if _tails_fit(w, i + Lu - j - 1, j + 1 + Lv - i, new_v, load_v, new_u, load_u, held, &pd) and (
                not early_out or (win_may_join(s, inst, u, v) and win_may_join(s, inst, pv, nu))):
            delta = pd + (arc(inst, u, v) + _gap(inst, pv, nu) - arc(inst, pv, v) - arc(inst, u, nu))
            if delta < -w.eps and (not timed or (win_join(s, inst, u, v)
                                                 and win_join(s, inst, pv, nu))):
                _exchange_tails(w, ru, j + 1, rv, i)
                _push(w, v); _push(w, pv); _push(w, u); _push(w, nu)
                return 1
        # SWAP*: v and u each to their cheapest position in the other's route
        if w.swap_star:
            new_v = load_v - qv + qu
            new_u = load_u - qu + qv
            if pz:
                pd = _load_delta(w, new_v, load_v, new_u, load_u)
                if not (held and pd > 0) and _try_swap_star(w, v, u, rem + pd):
                    return 1
            elif new_v <= cap and new_u <= cap and _try_swap_star(w, v, u, rem):
                return 1
    # v alone in a new route (vehicles are unlimited; can pay in an OVRP)
    if Lv > 1 and (inst.fleet <= 0 or s.n_routes < inst.fleet):
        pd = _load_delta(w, s.load[rv] - qv, s.load[rv], 0, 0) if pz else 0.0
        delta = (rem + pd) + new_route_cost(inst, v)
        if delta < -w.eps and (not timed or win_join(s, inst, pv, nv)):
            sol_remove(s, inst, v)
            r = sol_new_route(s)
            _pre_room(w, r)
            sol_insert(s, inst, v, r, 0)
            _fix_pre(w, rv)
            _fix_pre(w, r)
            _push(w, v); _push(w, pv); _push(w, nv)
            return 1
    # open routes: reverse the whole route (only the depot arc changes); found from its last
    # customer (a closed route costs the same both ways when symmetric)
    if not inst.closed_routes and sym and Lv > 1 and i == Lv - 1:
        if _try_reverse(w, rv, 0, Lv - 1):
            return 1
    return 0


# ---------------------------------------------------------------------------------- driver

cdef bint _descend(Work *w, bint full, double deadline, int *taken) except -1 nogil:
    """Take nodes from the queue and apply their first improving moves until it is empty
    (with `full`: then sweep over every node until a sweep changes nothing). True if the
    deadline stopped it."""
    cdef const Inst *inst = w.inst
    cdef bint tour = is_tour(inst)
    cdef bint improved = 0
    cdef int v
    while True:
        while w.count > 0:
            if deadline > 0 and taken[0] % LS_CLOCK_EVERY == 0 and now() >= deadline:
                return True
            taken[0] += 1
            v = _pop(w)
            if tour:
                if _tsp_try(w, v):
                    improved = 1
            elif _vrp_try(w, v):
                improved = 1
        if not full or not improved:
            return False
        # confirm with a sweep over every node; stop when a sweep changes nothing
        improved = 0
        for v in range(inst.first, inst.n):
            _push(w, v)


cdef int _overloaded(Work *w, bint queue) noexcept nogil:
    """The routes of w.s above the capacity; with `queue`, their nodes are queued."""
    cdef Sol *s = w.s
    cdef int k, r, i, over = 0
    for k in range(s.n_routes):
        r = s.order[k]
        if s.load[r] > w.cap:
            over += 1
            if queue:
                for i in range(s.length[r]):
                    _push(w, s.nodes[r * s.stride + i])
    return over


cdef int _repair_loads(Work *w, LoadPenalty *pen, bint timed_out, double deadline,
                       int *taken) except -1 nogil:
    """After a penalised search: count it, repair an overloaded result (the same search from
    the overloaded routes' nodes, each time at LOAD_REPAIR_FACTOR times the weight), adapt
    the weight. Returns the routes still overloaded."""
    cdef int t, over = _overloaded(w, False)
    pen.calls += 1
    pen.searches += 1
    if over == 0:
        pen.feasible += 1
        pen.first_feasible += 1
    for t in range(LOAD_REPAIRS):
        if over == 0 or timed_out:
            break
        w.lam *= LOAD_REPAIR_FACTOR
        _overloaded(w, True)
        timed_out = _descend(w, False, deadline, taken)
        over = _overloaded(w, False)
        if over == 0:
            pen.repaired += 1
    if over > 0:
        pen.lost += 1
    _adapt(pen)
    return over


cdef void _adapt(LoadPenalty *pen) noexcept nogil:
    """Every LOAD_WINDOW searches: a heavier weight when fewer than the target ended feasible,
    a lighter one when more did (the rule of HGS-CVRP's penalty management)."""
    cdef double share
    if pen.calls < LOAD_WINDOW:
        return
    share = <double>pen.feasible / pen.calls
    if share < pen.target - LOAD_SLACK:
        pen.weight = min(pen.weight * LOAD_UP, pen.high)
    elif share > pen.target + LOAD_SLACK:
        pen.weight = max(pen.weight * LOAD_DOWN, pen.low)
    pen.calls = 0
    pen.feasible = 0


cdef int local_search(Sol *s, const Inst *inst, const int *touched, int n_touched,
                      double deadline, int level, LoadPenalty *pen) except -1 nogil:
    """Improve the complete solution s in place; s.cost is recomputed at the end. Returns 0,
    or 1 when a penalised search (pen) left a route above the capacity.

    s.cost must be the solution's current cost on entry (it scales the rounding guard).

    touched: the nodes whose don't-look bits start clear, in scan order; n_touched < 0 means
    all nodes and a result that is a local optimum (see the module comment).
    deadline: a now() time to stop at (module comment), or 0 for none.
    level (a repair's local_search setting, >= 1): from 2 on a tour also the sequential 3-opt
    moves (tried after a city's other moves); from 3 on VRP routes also SWAP* (unless
    GLNS_ABLATE turned it off); from 4 also string relocation (_try_strings).
    pen: NULL, or the run's load penalty (used on capacitated VRP routes without windows when
    its target is > 0; see "Penalised loads").
    """
    cdef Work w
    cdef int n = inst.n
    cdef int v, t, over = 0
    cdef bint tour = is_tour(inst)
    cdef bint full = n_touched < 0
    cdef bint timed_out = False
    cdef int taken = 0
    if not tour:
        sol_drop_empty(s)
    w.s = s
    w.inst = inst
    w.K = inst.n_near            # min(LS_NEIGHBOURS, n_neigh)
    w.eps = LS_REL_EPS * s.cost
    w.three_opt = level >= 2 and tour
    w.swap_star = level >= 3 and not tour and LS_SWAP_STAR
    w.strings = level >= 4 and not tour
    w.cap = load_limit(inst)
    w.penalised = (pen != NULL and pen.target > 0 and not tour and inst.capacitated
                   and not inst.timed)
    w.lam = pen.weight if w.penalised else 0.0
    w.head = 0
    w.count = 0
    w.queue = <int *> malloc(n * sizeof(int))
    w.inq = <char *> malloc(n * sizeof(char))
    w.pre = <int64_t *> malloc(n * sizeof(int64_t))
    w.pre_slots = max(s.route_slots, 1)
    w.pre_ok = <char *> calloc(w.pre_slots, sizeof(char))
    w.stamp = NULL
    w.tops = NULL
    w.tops_mask = 1
    if w.swap_star:             # its cache and the route stamps that keep it valid
        w.stamp = <int *> calloc(w.pre_slots, sizeof(int))
        while w.tops_mask < min(4 * n, LS_TOPS_SLOTS):
            w.tops_mask *= 2
        w.tops = <Top3 *> malloc(w.tops_mask * sizeof(Top3))
    w.tops_mask -= 1
    w.tmp = <int *> malloc((n + 3 * s.stride) * sizeof(int))
    w.free = NULL
    if w.penalised and not full:
        w.free = <char *> calloc(n, sizeof(char))
    try:
        if (w.queue == NULL or w.inq == NULL or w.pre == NULL or w.pre_ok == NULL
                or w.tmp == NULL or (w.penalised and not full and w.free == NULL)
                or (w.swap_star and (w.stamp == NULL or w.tops == NULL))):
            with gil:
                raise MemoryError()
        memset(w.inq, 0, n * sizeof(char))
        if w.tops != NULL:
            for v in range(w.tops_mask + 1):
                w.tops[v].route = -1
        if full:
            for v in range(inst.first, n):
                _push(&w, v)
        else:
            for t in range(n_touched):
                if 0 <= touched[t] < n:
                    _push(&w, touched[t])
                    if w.free != NULL:
                        w.free[touched[t]] = 1
        timed_out = _descend(&w, full, deadline, &taken)
        if w.penalised:
            over = _repair_loads(&w, pen, timed_out, deadline, &taken)
    finally:
        free(w.queue)
        free(w.inq)
        free(w.pre)
        free(w.pre_ok)
        free(w.stamp)
        free(w.tops)
        free(w.tmp)
        free(w.free)
    if not tour:
        sol_drop_empty(s)
    s.cost = sol_cost(s, inst)
    return 1 if over > 0 else 0


def local_search_py(CoreInstance inst not None, routes, touched=None, bint return_cost=False,
                    seconds=None, int level=1, load_weight=None):
    """Run the native local search on a copy of a complete solution (for tests and benchmarks).

    routes: a feasible solution in the format of docs/operator-contract.md; touched: the nodes
    to start from (None: all nodes, and the result is a local optimum). seconds: a deadline
    that many seconds from now (<= 0: already past; None: none). level: a repair's
    local_search setting (2: on a tour also 3-opt; 3: on VRP routes also SWAP*). load_weight: a
    penalised search at that weight per unit of excess load, with its repairs (CVRP and OVRP;
    the result may be overloaded). Returns the improved solution, or (solution, the cost the
    search left in Sol.cost) when return_cost.
    """
    cdef LoadPenalty pen
    memset(&pen, 0, sizeof(LoadPenalty))
    if load_weight is not None:
        if not float(load_weight) > 0:
            raise ValueError(f"load_weight must be > 0, got {load_weight}")
        pen.target = 0.5        # any share: one search does not adapt the weight
        pen.weight = pen.low = pen.high = float(load_weight)
    cdef double deadline = 0.0
    cdef Solution sol = Solution(inst)
    sol.load(routes)
    cdef int m = -1
    cdef int *buf = NULL
    if touched is not None:
        m = len(touched)
        buf = <int *> malloc(max(m, 1) * sizeof(int))
        if buf == NULL:
            raise MemoryError()
    try:
        for t in range(max(m, 0)):
            buf[t] = touched[t]
        if seconds is not None:     # from now, after the set-up; > 0 even when already past
            deadline = max(now() + float(seconds), 1e-9)
        local_search(&sol.s, &inst.c, buf, m, deadline, level,
                     &pen if load_weight is not None else NULL)
    finally:
        free(buf)
    if return_cost:
        return sol.routes(), sol.s.cost
    return sol.routes()
