# Solution storage: routes as rows of a (route_slots x stride) int table, listed in route order
# by `order`, plus per-node slot/position indices so that removing or inserting a node costs
# O(route) and its cost delta O(1); dropping an emptied route costs O(routes), since no other
# route moves to another slot. A TSP tour is route 0, read as a cycle; VRP routes start at the
# depot (node 0, never stored) and end at the depot (CVRP) or at their last customer (OVRP).
#
# The cost has one canonical summation so that a plain-Python recomputation
# (glns.problems.solutions.matrix_cost) gives the identical float: every routed node owns its
# incoming arc (a tour: from its predecessor; a depot route: from the previous customer or the
# depot, plus the closing arc back to the depot for the last customer of a closed route); the
# nodes' arcs are summed per block of 16 consecutive node ids in id order, and the blocks'
# sums in block order. sol_cost re-sums only the blocks marked stale since its last call, and
# recomputes only the arcs of the nodes touched (the others' are cached in `own`), so
# re-costing after a move costs O(nodes touched + n/16), not O(n).
#
# The ALNS loop keeps its candidate a twin of the current solution: sol_mark records the routes
# each writes, and sol_sync copies only those, not the whole solution.
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memmove, memset
from libc.stdint cimport int64_t, uint64_t
from libc.limits cimport INT_MAX
from operator import index as _as_index

from glns._core._types cimport Inst, Sol, Times
from glns._core._kind cimport is_tour, fits, close_cost, load_limit
from glns._core._rng cimport rng_below
from glns._core._instance cimport CoreInstance
from glns._core._windows cimport win_violation

# -- Deferred positions (Sol.drift) -----------------------------------------------------------
# A tour is one array of up to n cities: inserting or removing a city shifts every city after
# it by one place, and rewriting their pos_of entries cost more than the memmove itself (a third
# of an iteration at n = 10,000). A long shift therefore only adds its places to `drift`: each
# city's index is then within drift places of pos_of, and sol_pos finds it by looking there
# (and writes it back). The positions are rewritten, from the first stale index on, once the
# drift exceeds POS_DRIFT_MAX. Every index read is exact, so every operator sees what it saw
# with eager updates.

# The lazy_shift of the tours allocated from now on (lazy_positions switches it, for tests).
cdef int _lazy_shift = LAZY_SHIFT

# Searches that had to look beyond the drift window (a broken bound; tests expect none).
cdef long _missed_searches = 0

LAZY_SHIFT_NODES = LAZY_SHIFT
POS_DRIFT_MAX_PLACES = POS_DRIFT_MAX


def lazy_positions(bint on) -> None:
    """Tests: whether the tours allocated from now on defer long shifts (the default) or
    rewrite every position at once, as before deferral existed."""
    global _lazy_shift
    _lazy_shift = LAZY_SHIFT if on else INT_MAX


def missed_position_searches() -> int:
    """Tests: how many index reads so far did not find their node within the drift window
    (each was answered by a scan of the whole route; any at all means a broken bound)."""
    return _missed_searches


cdef int sol_find_pos(const Sol *s, int v, int p) noexcept nogil:
    """sol_pos's search: routed node v, not at index p, is within s.drift places of it. The
    index found is written back to pos_of (that changes no position, so it is allowed
    through a const)."""
    cdef const int *row = &s.nodes[s.route_of[v] * s.stride]
    cdef int L = s.length[s.route_of[v]]
    cdef int d, q
    for d in range(1, s.drift + 1):
        q = p + d
        if q < L and row[q] == v:
            (<Sol *> s).pos_of[v] = q
            return q
        q = p - d
        if 0 <= q < L and row[q] == v:
            (<Sol *> s).pos_of[v] = q
            return q
    # Not reached while the bound holds (sol_positions_ok; the tests check it): still answer
    # right rather than wrong, and count it.
    global _missed_searches
    _missed_searches += 1
    for q in range(L):
        if row[q] == v:
            (<Sol *> s).pos_of[v] = q
            return q
    return -1


cdef void sol_fix_positions(Sol *s) noexcept nogil:
    """Make every pos_of exact again (drift 0): O(tour length - exact_below)."""
    cdef int i
    cdef const int *row = s.nodes
    if s.drift == 0:
        return
    for i in range(s.exact_below, s.length[0]):
        s.pos_of[row[i]] = i
    s.drift = 0
    s.exact_below = INT_MAX


cdef void sol_defer_shift(Sol *s, int first, int places) noexcept nogil:
    """The tour's cities from index `first` on moved by `places` (either way) and their pos_of
    entries were not rewritten (call after updating the length)."""
    s.drift += places
    if first < s.exact_below:
        s.exact_below = first
    if s.drift > POS_DRIFT_MAX:
        sol_fix_positions(s)


cdef void sol_moved(Sol *s, int r, int first, int places) noexcept nogil:
    """The nodes of route r from index `first` to its end moved by `places` (either way; call
    after updating the length): rewrite their pos_of, or on a tour, when there are more than
    lazy_shift of them, defer it (sol_defer_shift)."""
    cdef int i, L = s.length[r]
    cdef const int *row = &s.nodes[r * s.stride]
    if L - first > s.lazy_shift:
        sol_defer_shift(s, first, places)
        return
    for i in range(first, L):
        s.pos_of[row[i]] = i


cdef bint sol_positions_ok(const Sol *s, const Inst *inst) noexcept nogil:
    """Whether route_of and pos_of agree with the routes within the deferred-shift bound:
    every routed node within `drift` places of its index and exact below `exact_below`, every
    unrouted node at -1; slots increasing along the order (tests)."""
    cdef int k, r, i, v, d, routed = 0
    if s.drift < 0 or s.drift > POS_DRIFT_MAX or (s.drift > 0 and not is_tour(inst)):
        return False
    for k in range(s.n_routes):
        r = s.order[k]
        if r >= s.route_slots or (k > 0 and r <= s.order[k - 1]):
            return False
        if s.length[r] == 0 and not s.may_have_empty and not is_tour(inst):
            return False        # an empty route sol_drop_empty would not see
        for i in range(s.length[r]):
            v = s.nodes[r * s.stride + i]
            if s.route_of[v] != r:
                return False
            d = s.pos_of[v] - i
            if d < -s.drift or d > s.drift or (i < s.exact_below and d != 0):
                return False
            routed += 1
    for v in range(inst.n):
        if s.route_of[v] < 0:
            if s.pos_of[v] != -1:
                return False
        else:
            routed -= 1
    return routed == 0


cdef int sol_alloc(Sol *s, const Inst *inst) except -1 nogil:
    s.stride = inst.max_route_len
    s.n_routes = 0
    s.route_slots = 0
    s.nodes = NULL
    s.length = NULL
    s.load = NULL
    s.order = NULL
    s.changed = NULL
    s.changed_list = NULL
    s.n_changed = 0
    s.lazy_shift = _lazy_shift if is_tour(inst) else INT_MAX
    s.times = NULL
    s.tstale = NULL
    s.troom = NULL
    if inst.timed:
        s.times = <Times *> malloc(max(inst.n, 1) * sizeof(Times))
        if s.times == NULL:
            with gil:
                raise MemoryError()
    s.route_of = <int *> malloc(inst.n * sizeof(int))
    s.pos_of = <int *> malloc(inst.n * sizeof(int))
    s.n_blocks = ((inst.n - 1) >> COST_BLOCK_SHIFT) + 1 if inst.n > 0 else 1
    s.part = <double *> malloc(s.n_blocks * sizeof(double))
    s.stale = <char *> malloc(s.n_blocks * sizeof(char))
    s.own = <double *> malloc(max(inst.n, 1) * sizeof(double))
    s.own_ok = <char *> malloc(max(inst.n, 1) * sizeof(char))
    if (s.route_of == NULL or s.pos_of == NULL or s.part == NULL or s.stale == NULL
            or s.own == NULL or s.own_ok == NULL):
        with gil:
            raise MemoryError()
    # Enough slots for the usual case; sol_reserve_routes grows on demand.
    sol_reserve_routes(s, 1 if is_tour(inst) else 8)
    sol_clear(s, inst)
    return 0


cdef void sol_free(Sol *s) noexcept nogil:
    free(s.nodes)
    free(s.length)
    free(s.load)
    free(s.order)
    s.order = NULL
    free(s.route_of)
    free(s.pos_of)
    free(s.part)
    free(s.stale)
    free(s.own)
    free(s.own_ok)
    s.own = NULL
    s.own_ok = NULL
    free(s.changed)
    free(s.changed_list)
    free(s.times)
    free(s.tstale)
    free(s.troom)
    s.times = NULL
    s.tstale = NULL
    s.troom = NULL
    s.changed = NULL
    s.changed_list = NULL
    s.n_changed = 0
    s.part = NULL
    s.stale = NULL
    s.nodes = NULL
    s.length = NULL
    s.load = NULL
    s.route_of = NULL
    s.pos_of = NULL
    s.route_slots = 0


cdef int _resize(void **block, size_t size) except -1 nogil:
    """realloc *block to `size` bytes; on failure *block is left as it was."""
    cdef void *grown = realloc(block[0], size)
    if grown == NULL:
        with gil:
            raise MemoryError()
    block[0] = grown
    return 0


cdef int sol_reserve_routes(Sol *s, int slots) except -1 nogil:
    if slots <= s.route_slots:
        return 0
    cdef int new_slots = s.route_slots * 2
    if new_slots < slots:
        new_slots = slots
    _resize(<void **> &s.nodes, <size_t> new_slots * s.stride * sizeof(int))
    _resize(<void **> &s.length, new_slots * sizeof(int))
    _resize(<void **> &s.load, new_slots * sizeof(int64_t))
    _resize(<void **> &s.order, new_slots * sizeof(int))
    _resize(<void **> &s.changed, new_slots * sizeof(char))
    _resize(<void **> &s.changed_list, new_slots * sizeof(int))
    if s.times != NULL:
        _resize(<void **> &s.tstale, new_slots * sizeof(char))
        _resize(<void **> &s.troom, new_slots * sizeof(double))
    cdef int r
    for r in range(s.route_slots, new_slots):
        s.length[r] = 0
        s.load[r] = 0
        s.changed[r] = 0
        if s.tstale != NULL:
            s.tstale[r] = 1
    s.route_slots = new_slots
    return 0


cdef int sol_copy(Sol *dst, const Sol *src, const Inst *inst) except -1 nogil:
    """Make dst equal to src (O(n)). dst's marks are cleared, src's kept: src may have a
    twin of its own that sol_sync keeps equal to it. Each route keeps its slot."""
    sol_reserve_routes(dst, sol_slot_end(src))
    cdef int k, r
    for k in range(dst.n_routes):
        r = dst.order[k]
        dst.length[r] = 0
        dst.load[r] = 0
    for k in range(src.n_routes):
        r = src.order[k]
        memcpy(&dst.nodes[r * dst.stride], &src.nodes[r * src.stride], src.length[r] * sizeof(int))
        dst.length[r] = src.length[r]
        dst.load[r] = src.load[r]
        dst.order[k] = r
    dst.n_routes = src.n_routes
    dst.may_have_empty = src.may_have_empty
    memcpy(dst.route_of, src.route_of, inst.n * sizeof(int))
    memcpy(dst.pos_of, src.pos_of, inst.n * sizeof(int))
    memcpy(dst.part, src.part, src.n_blocks * sizeof(double))
    memcpy(dst.stale, src.stale, src.n_blocks * sizeof(char))
    memcpy(dst.own, src.own, inst.n * sizeof(double))
    memcpy(dst.own_ok, src.own_ok, inst.n * sizeof(char))
    if src.tstale != NULL:     # the time data, valid or not, as it is
        memcpy(dst.times, src.times, inst.n * sizeof(Times))
        memcpy(dst.tstale, src.tstale, min(src.route_slots, dst.route_slots) * sizeof(char))
        memcpy(dst.troom, src.troom, min(src.route_slots, dst.route_slots) * sizeof(double))
        for r in range(src.route_slots, dst.route_slots):
            dst.tstale[r] = 1
    dst.drift = src.drift       # pos_of was copied as it is, stale entries and all
    dst.exact_below = src.exact_below
    dst.cost = src.cost
    sol_unmark(dst)
    return 0


cdef int sol_sync(Sol *dst, Sol *src, const Inst *inst) except -1 nogil:
    """Make dst equal to src, when the two were equal after their last sol_copy or sol_sync
    and every change since, in either, is marked (sol_mark); clears both's marks.

    Costs O(nodes of the marked routes + n/16) instead of sol_copy's O(n): a node whose route,
    position or owned cost differs between the two lies in a route marked in one of them (it
    was moved out of a marked route, into a marked route, or its route was written), so
    rewriting the marked routes of src over those of dst, after unrouting the nodes dst holds
    in them, rewrites every such node."""
    cdef int i, j, r, L, v
    cdef int *row
    cdef const int *src_row
    if (src.n_changed + dst.n_changed) * SYNC_COPY_FRACTION > src.n_routes:
        # most routes marked (sol_drop_empty moved the routes after a hole, or a tour): the
        # sequential full copy is cheaper than the node-by-node rewrite
        sol_copy(dst, src, inst)
        sol_unmark(src)
        return 0
    # (A tour gets here only when neither twin marked its route, and then nothing is copied.
    # VRP positions are never deferred, so the ones written below are exact.)
    sol_reserve_routes(dst, sol_slot_end(src))
    for i in range(src.n_changed):
        r = src.changed_list[i]
        if r < dst.route_slots:     # else a slot src opened and freed again: empty in both
            sol_mark(dst, r)
    for i in range(dst.n_changed):
        r = dst.changed_list[i]
        row = &dst.nodes[r * dst.stride]
        for j in range(dst.length[r]):
            dst.route_of[row[j]] = -1
            dst.pos_of[row[j]] = -1
    for i in range(dst.n_changed):
        r = dst.changed_list[i]
        dst.changed[r] = 0
        row = &dst.nodes[r * dst.stride]
        if r >= src.route_slots:
            dst.length[r] = 0
            dst.load[r] = 0
            continue
        L = src.length[r]
        src_row = &src.nodes[r * src.stride]
        memcpy(row, src_row, L * sizeof(int))
        dst.length[r] = L
        dst.load[r] = src.load[r]
        for j in range(L):
            v = row[j]
            dst.route_of[v] = r
            dst.pos_of[v] = j
            dst.own[v] = src.own[v]
            dst.own_ok[v] = src.own_ok[v]
        if dst.tstale != NULL:
            dst.tstale[r] = src.tstale[r]
            dst.troom[r] = src.troom[r]
            for j in range(L):
                dst.times[row[j]] = src.times[row[j]]
    dst.n_changed = 0
    sol_unmark(src)
    memcpy(dst.order, src.order, src.n_routes * sizeof(int))
    dst.n_routes = src.n_routes
    dst.may_have_empty = src.may_have_empty
    memcpy(dst.part, src.part, src.n_blocks * sizeof(double))
    memcpy(dst.stale, src.stale, src.n_blocks * sizeof(char))
    dst.cost = src.cost
    return 0


cdef void sol_unmark(Sol *s) noexcept nogil:
    """Forget the marked routes (s is now equal to its twin)."""
    cdef int i
    for i in range(s.n_changed):
        s.changed[s.changed_list[i]] = 0
    s.n_changed = 0


cdef bint _free_slots_empty(const Sol *s) noexcept nogil:
    """Whether the slots not in the order hold empty rows (lengths and loads are >= 0, so
    they do when the routes' add up to every slot's)."""
    cdef int k, r
    cdef int64_t used_len = 0, used_load = 0, all_len = 0, all_load = 0
    for k in range(s.n_routes):
        used_len += s.length[s.order[k]]
        used_load += s.load[s.order[k]]
    for r in range(s.route_slots):
        if s.length[r] < 0 or s.load[r] < 0:
            return False
        all_len += s.length[r]
        all_load += s.load[r]
    return used_len == all_len and used_load == all_load


cdef bint sol_same(const Sol *a, const Sol *b, const Inst *inst) noexcept nogil:
    """Whether a and b hold the same solution, indices and cost caches included (tests)."""
    cdef int k, r, i, v
    if a.n_routes != b.n_routes or a.cost != b.cost or a.n_blocks != b.n_blocks:
        return False
    if not sol_positions_ok(a, inst) or not sol_positions_ok(b, inst):
        return False
    for k in range(a.n_routes):
        r = a.order[k]
        if b.order[k] != r or a.length[r] != b.length[r] or a.load[r] != b.load[r]:
            return False
        for i in range(a.length[r]):
            if a.nodes[r * a.stride + i] != b.nodes[r * b.stride + i]:
                return False
    if not _free_slots_empty(a) or not _free_slots_empty(b):
        return False
    for v in range(inst.n):
        if a.route_of[v] != b.route_of[v] or sol_pos(a, v) != sol_pos(b, v):
            return False
        # a cached arc missing on one side is only recomputed; one held must be v's arc now
        if a.route_of[v] >= 0 and ((a.own_ok[v] and a.own[v] != _incoming(a, inst, v))
                                   or (b.own_ok[v] and b.own[v] != _incoming(b, inst, v))):
            return False
    for i in range(a.n_blocks):
        if a.stale[i] != b.stale[i] or (not a.stale[i] and a.part[i] != b.part[i]):
            return False
    return True


cdef void sol_clear(Sol *s, const Inst *inst) noexcept nogil:
    """Unroute every node. A TSP keeps its one (now empty) route."""
    cdef int v, k, r
    for v in range(inst.n):
        s.route_of[v] = -1
        s.pos_of[v] = -1
    for k in range(s.n_routes):
        r = s.order[k]
        s.length[r] = 0
        s.load[r] = 0
        sol_mark(s, r)
    s.n_routes = 1 if is_tour(inst) else 0
    s.order[0] = 0
    s.may_have_empty = False
    s.drift = 0
    s.exact_below = INT_MAX
    s.cost = 0.0
    memset(s.stale, 1, s.n_blocks * sizeof(char))
    memset(s.own_ok, 0, inst.n * sizeof(char))


cdef int sol_new_route(Sol *s) except -1 nogil:
    """Open an empty route after the last one; returns its slot (sol_slot_end). Never moves
    another route."""
    cdef int r = sol_slot_end(s)
    sol_reserve_routes(s, r + 1)
    sol_set_length(s, r, 0)     # an empty route: notes it for sol_drop_empty
    s.load[r] = 0
    sol_mark(s, r)
    s.order[s.n_routes] = r
    s.n_routes += 1
    return r


cdef void sol_remove(Sol *s, const Inst *inst, int v) noexcept nogil:
    """Unroute node v (which must be routed). Leaves an emptied route in place."""
    cdef int r = s.route_of[v]
    cdef int p = sol_pos(s, v)
    cdef int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    sol_touch_at(s, inst, r, p - 1)
    sol_touch_at(s, inst, r, p)
    sol_touch_at(s, inst, r, p + 1)
    sol_mark(s, r)
    memmove(&row[p], &row[p + 1], (L - p - 1) * sizeof(int))
    sol_set_length(s, r, L - 1)
    sol_moved(s, r, p, 1)
    s.load[r] -= inst.demand[v]
    s.route_of[v] = -1
    s.pos_of[v] = -1


cdef void sol_insert(Sol *s, const Inst *inst, int v, int r, int pos) noexcept nogil:
    """Route node v in route r at index pos (0..length[r]); the caller checks capacity."""
    cdef int *row = &s.nodes[r * s.stride]
    cdef int L = s.length[r]
    sol_mark(s, r)
    memmove(&row[pos + 1], &row[pos], (L - pos) * sizeof(int))
    row[pos] = v
    s.pos_of[v] = pos
    sol_set_length(s, r, L + 1)
    sol_moved(s, r, pos + 1, 1)
    s.load[r] += inst.demand[v]
    s.route_of[v] = r
    sol_touch_at(s, inst, r, pos - 1)
    sol_touch_at(s, inst, r, pos)
    sol_touch_at(s, inst, r, pos + 1)


cdef void _compact_slots(Sol *s) noexcept nogil:
    """Move the k-th route to slot k, for every k (O(n); the moved slots are marked)."""
    cdef int k, r, i
    for k in range(s.n_routes):
        r = s.order[k]
        if r == k:
            continue
        # slot k is free: a route in it came before the k-th and has moved below k already
        memcpy(&s.nodes[k * s.stride], &s.nodes[r * s.stride], s.length[r] * sizeof(int))
        s.length[k] = s.length[r]
        s.load[k] = s.load[r]
        for i in range(s.length[k]):
            s.route_of[s.nodes[k * s.stride + i]] = k
        s.length[r] = 0
        s.load[r] = 0
        s.order[k] = k
        sol_mark(s, k)
        sol_mark(s, r)


cdef void sol_drop_empty(Sol *s) noexcept nogil:
    """Remove empty VRP routes from the order, keeping the order of the others: O(1) unless
    a route may be empty (Sol.may_have_empty), else O(routes); no route moves (their slots
    become free). Once the free slots below the last route
    outnumber the routes (plus COMPACT_SLACK), every route moves to slot = place in the order,
    an O(n) step paid once per that many dropped routes."""
    cdef int k, r, w = 0
    if not s.may_have_empty:
        return
    s.may_have_empty = False
    for k in range(s.n_routes):
        r = s.order[k]
        if s.length[r] > 0:
            s.order[w] = r
            w += 1
    s.n_routes = w
    if sol_slot_end(s) > 2 * w + COMPACT_SLACK:
        _compact_slots(s)


cdef inline double _incoming(const Sol *s, const Inst *inst, int v) noexcept nogil:
    """The cost routed node v owns: its incoming arc, and a closed route's way back to the
    depot when v is the route's last customer."""
    cdef int r = s.route_of[v]
    cdef int p = sol_pos(s, v)
    cdef int L = s.length[r]
    cdef const int *row = &s.nodes[r * s.stride]
    cdef double c
    if is_tour(inst):
        return dist(inst, row[p - 1] if p > 0 else row[L - 1], v)
    c = dist(inst, row[p - 1] if p > 0 else 0, v)
    if p == L - 1:
        c = c + close_cost(inst, v)
    return c


cdef inline double _block_sum(Sol *s, const Inst *inst, int b) noexcept nogil:
    """The summed costs of the routed nodes of block b, in id order: the owned costs that are
    valid (own_ok) are read, the others recomputed and cached."""
    cdef int v = b << COST_BLOCK_SHIFT
    cdef int end = v + (1 << COST_BLOCK_SHIFT)
    cdef double acc = 0.0
    if end > inst.n:
        end = inst.n
    while v < end:
        if s.route_of[v] >= 0:
            if not s.own_ok[v]:
                s.own[v] = _incoming(s, inst, v)
                s.own_ok[v] = 1
            acc += s.own[v]
        v += 1
    return acc


cdef double sol_cost(Sol *s, const Inst *inst) noexcept nogil:
    """The cost (module comment), re-summing only the stale blocks."""
    cdef double total = 0.0
    cdef int b
    for b in range(s.n_blocks):
        if s.stale[b]:
            s.part[b] = _block_sum(s, inst, b)
            s.stale[b] = 0
        total += s.part[b]
    return total


cdef double sol_cost_ordered(const Sol *s, const Inst *inst, const int64_t *order) noexcept nogil:
    """The cost summed from scratch as sol_cost sums it, with no cached value read or written;
    order (NULL: the identity) numbers the nodes: the u-th node summed is order[u], so the
    blocks are those of the instance renumbered by it (Solution.cost_in_order)."""
    cdef double total = 0.0, acc
    cdef int b = 0, u, v, end, n = inst.n
    while b < n:
        acc = 0.0
        end = min(b + (1 << COST_BLOCK_SHIFT), n)
        for u in range(b, end):
            v = <int> order[u] if order != NULL else u
            if s.route_of[v] >= 0:
                acc += _incoming(s, inst, v)
        total += acc
        b = end
    return total


cdef double sol_cost_full(const Sol *s, const Inst *inst) noexcept nogil:
    """sol_cost recomputed from scratch, ignoring the cached block sums (for tests)."""
    return sol_cost_ordered(s, inst, NULL)


cdef double removal_delta(const Sol *s, const Inst *inst, int v) noexcept nogil:
    """Change of cost when routed node v is removed (negative: a saving)."""
    cdef int r = s.route_of[v]
    cdef int p = sol_pos(s, v)
    cdef int L = s.length[r]
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int a, b
    if is_tour(inst):
        a = row[(p - 1 + L) % L]
        b = row[(p + 1) % L]
        return dist(inst, a, b) - dist(inst, a, v) - dist(inst, v, b)
    if L == 1:  # the route disappears (an empty route costs nothing, whatever d[0][0] is)
        return -new_route_cost(inst, v)
    a = row[p - 1] if p > 0 else 0
    b = row[p + 1] if p < L - 1 else END
    return arc(inst, a, b) - arc(inst, a, v) - arc(inst, v, b)


cdef int sol_random_init(Sol *s, const Inst *inst, uint64_t *rng) except -1 nogil:
    """The initial solution (docs/method.md): a random permutation; for VRP cut greedily into
    capacity-feasible routes."""
    cdef int m = inst.n - inst.first
    cdef int *order = <int *> malloc(max(m, 1) * sizeof(int))
    if order == NULL:
        with gil:
            raise MemoryError()
    cdef int i, j, t, v, r = 0
    for i in range(m):
        order[i] = inst.first + i
    for i in range(m - 1, 0, -1):
        j = rng_below(rng, i + 1)
        t = order[i]
        order[i] = order[j]
        order[j] = t
    sol_clear(s, inst)
    try:
        if is_tour(inst):
            for i in range(m):
                sol_insert(s, inst, order[i], 0, i)
        else:
            for i in range(m):
                v = order[i]
                if s.n_routes == 0 or not fits(inst, s.load[r], v):
                    r = sol_new_route(s)
                sol_insert(s, inst, v, r, s.length[r])
        s.cost = sol_cost(s, inst)
    finally:
        free(order)
    return 0


cdef object sol_to_py(const Sol *s, const Inst *inst):
    """The solution in the operator format (docs/operator-contract.md; fresh Python lists)."""
    cdef int k, r, i
    cdef const int *row
    if is_tour(inst):
        return [s.nodes[i] for i in range(s.length[0])]
    out = []
    for k in range(s.n_routes):
        r = s.order[k]
        if s.length[r] == 0:
            continue
        row = &s.nodes[r * s.stride]
        out.append([row[i] for i in range(s.length[r])])
    return out


cdef inline object _node_id(object x):
    """x as an int node id, or None when x is not an integer (floats and strings are refused)."""
    if isinstance(x, float) or isinstance(x, str) or isinstance(x, bytes):
        return None
    try:
        return _as_index(x)
    except TypeError:
        return None


cdef object _place(Sol *s, const Inst *inst, object x, int r, str where):
    """Append node x to route r after checking it; returns an error message or None."""
    v = _node_id(x)
    if v is None:
        return f"{where}: {x!r} is not an integer node id"
    if v < inst.first or v >= inst.n:
        if v == 0 and inst.first == 1:
            return f"{where}: the depot 0 must not be written in a route"
        return f"{where}: foreign node {v} (valid ids are {inst.first}..{inst.n - 1})"
    cdef int iv = v
    if s.route_of[iv] != -1:
        return f"{where}: duplicate node {iv}"
    if s.length[r] >= s.stride:
        return f"{where}: capacity exceeded (more customers than any vehicle can carry)"
    sol_insert(s, inst, iv, r, s.length[r])
    return None


cdef object _window_error(const Inst *inst, const int *row, int L, int r):
    """The first time window route r (visiting row[0:L]) breaks, as text, or None."""
    cdef int node = 0
    cdef double when = 0.0
    cdef int code = win_violation(inst, row, L, &node, &when)
    if code == 1:
        return (f"route {r}: time window missed at customer {node}: reached at {when:.10g}, "
                f"after its due time {inst.win[node].due:.10g}")
    if code == 2:
        return (f"route {r}: back at the depot at {when:.10g}, after it closes at "
                f"{inst.win[0].due:.10g}")
    return None


cdef object sol_load(Sol *s, const Inst *inst, object routes, bint complete,
                     object removed, int *removed_out, int *n_removed):
    """Fill s from operator output, checking it. Returns None, or the first violation as text.

    complete: the solution must route every node. Otherwise `removed` lists the unrouted
    nodes (a destroy's output): it must be disjoint from the routes and cover the rest.
    """
    cdef int r, v, count
    cdef int64_t load
    sol_clear(s, inst)
    if isinstance(routes, (str, bytes, dict)) or not hasattr(routes, "__iter__"):
        return f"solution must be a list, got {type(routes).__name__}"
    if is_tour(inst):
        for x in routes:
            err = _place(s, inst, x, 0, "tour")
            if err is not None:
                return err
    else:
        for route in routes:
            if isinstance(route, (str, bytes, dict)) or not hasattr(route, "__iter__"):
                return f"each route must be a list of customer ids, got {type(route).__name__}"
            r = sol_new_route(s)
            for x in route:
                err = _place(s, inst, x, r, f"route {r}")
                if err is not None:
                    return err
            if s.load[r] > load_limit(inst):
                return f"route {r}: capacity exceeded ({s.load[r]} > {inst.capacity})"
            if inst.timed:
                err = _window_error(inst, &s.nodes[r * s.stride], s.length[r], r)
                if err is not None:
                    return err
        sol_drop_empty(s)
        if inst.fleet > 0 and s.n_routes > inst.fleet and complete:
            return f"{s.n_routes} routes, more than the fleet of {inst.fleet} vehicles"
    count = 0
    if not complete:
        if isinstance(removed, (str, bytes, dict)) or not hasattr(removed, "__iter__"):
            return f"removed nodes must be a list, got {type(removed).__name__}"
        for x in removed:
            v_obj = _node_id(x)
            if v_obj is None:
                return f"removed: {x!r} is not an integer node id"
            if v_obj < inst.first or v_obj >= inst.n:
                return f"removed: foreign node {v_obj} (valid ids are {inst.first}..{inst.n - 1})"
            v = v_obj
            if s.route_of[v] >= 0:
                return f"removed: node {v} is also still in the solution"
            if s.route_of[v] == -2:
                return f"removed: duplicate node {v}"
            s.route_of[v] = -2    # mark as removed while checking
            removed_out[count] = v
            count += 1
    missing = [v for v in range(inst.first, inst.n) if s.route_of[v] == -1]
    for i in range(count):
        s.route_of[removed_out[i]] = -1
    n_removed[0] = count
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"node {missing[0]} is missing{more}"
    s.cost = sol_cost(s, inst)
    return None


cdef class Solution:
    """A solution held by the core, for tests and warm starts."""

    def __cinit__(self, CoreInstance inst not None):
        self.inst = inst
        sol_alloc(&self.s, &inst.c)

    def __dealloc__(self):
        sol_free(&self.s)

    def load(self, routes, removed=None):
        """Load a complete solution (removed is None) or a partial one; raise ValueError if invalid."""
        cdef int n_removed = 0
        cdef int *buf = <int *> PyMem_Malloc(max(self.inst.n, 1) * sizeof(int))
        try:
            err = sol_load(&self.s, &self.inst.c, routes, removed is None, removed, buf, &n_removed)
        finally:
            PyMem_Free(buf)
        if err is not None:
            raise ValueError(err)

    def random_init(self, seed: int):
        """The core's random start: a permutation cut into routes by capacity (not for
        time windows, which it would break: glns.problems.solutions.random_solution)."""
        if self.inst.c.timed:
            raise ValueError("a random permutation cut into routes breaks time windows; "
                             "use glns.problems.solutions.random_solution")
        cdef uint64_t state = <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF)
        sol_random_init(&self.s, &self.inst.c, &state)

    def routes(self):
        return sol_to_py(&self.s, &self.inst.c)

    def cost(self) -> float:
        return sol_cost(&self.s, &self.inst.c)

    def full_cost(self) -> float:
        """The cost summed from scratch, without the cached block sums (equal to cost())."""
        return sol_cost_full(&self.s, &self.inst.c)

    def cost_in_order(self, const int64_t[::1] order not None) -> float:
        """The cost as cost() sums it on this instance with its nodes renumbered, where node u
        of the renumbered instance is node order[u] here (a permutation of the node ids): the
        same arcs, summed per block of 16 renumbered ids. A solve on a renumbered copy
        (glns.problems.renumber) reports its cost this way, so that it equals, to the last
        bit, the cost the caller's instance gives the solution."""
        cdef int u, n = self.inst.n
        cdef double total
        if order.shape[0] != n:
            raise ValueError(f"order must list the {n} nodes, got {order.shape[0]} entries")
        seen = bytearray(n)
        for u in range(n):
            if not 0 <= order[u] < n or seen[order[u]]:
                raise ValueError(f"order is not a permutation of the node ids (order[{u}] = {order[u]})")
            seen[order[u]] = 1
        with nogil:
            total = sol_cost_ordered(&self.s, &self.inst.c, &order[0])
        return total

    def loads(self):
        return [self.s.load[self.s.order[k]] for k in range(self.s.n_routes)]

    def _slot(self, int r) -> int:
        """The slot of the r-th route, or -1 when there is none."""
        return self.s.order[r] if 0 <= r < self.s.n_routes else -1

    def removal_delta(self, int v) -> float:
        if v < 0 or v >= self.inst.n or self.s.route_of[v] < 0:
            raise ValueError(f"node {v} is not routed")
        return removal_delta(&self.s, &self.inst.c, v)

    def insertion_delta(self, int v, int r, int pos) -> float:
        """Cost of inserting v at index pos of the r-th route."""
        cdef int slot = self._slot(r)
        if slot < 0 or pos < 0 or pos > self.s.length[slot]:
            raise ValueError("no such route position")
        return insertion_delta(&self.s, &self.inst.c, v, slot, pos)

    def new_route_cost(self, int v) -> float:
        return new_route_cost(&self.inst.c, v)

    def remove(self, int v):
        if v < 0 or v >= self.inst.n or self.s.route_of[v] < 0:
            raise ValueError(f"node {v} is not routed")
        sol_remove(&self.s, &self.inst.c, v)

    def insert(self, int v, int r, int pos):
        """Insert v at index pos of the r-th route (r == the number of routes: a new one)."""
        if v < self.inst.c.first or v >= self.inst.n or self.s.route_of[v] >= 0:
            raise ValueError(f"node {v} is routed already or not a routable node")
        if r == self.s.n_routes and not is_tour(&self.inst.c):
            sol_new_route(&self.s)
        cdef int slot = self._slot(r)
        if slot < 0 or pos < 0 or pos > self.s.length[slot]:
            raise ValueError("no such route position")
        if self.s.length[slot] >= self.s.stride:
            raise ValueError("route is full")
        sol_insert(&self.s, &self.inst.c, v, slot, pos)

    def slots(self) -> list:
        """The slot each route is stored in, in route order (tests)."""
        return [self.s.order[k] for k in range(self.s.n_routes)]

    def drop_empty(self):
        if not is_tour(&self.inst.c):   # a tour is one route, even when empty
            sol_drop_empty(&self.s)

    # Deferred positions (Sol.drift), for tests.

    def position(self, int v) -> int:
        """Index of node v in its route, -1 when unrouted (sol_pos)."""
        if v < 0 or v >= self.inst.n:
            raise ValueError(f"no node {v}")
        return sol_pos(&self.s, v)

    @property
    def drift(self) -> int:
        """Places by which a stored position may be off (0: all exact)."""
        return self.s.drift

    def positions_ok(self) -> bool:
        """Whether every stored position is within the drift of the true index."""
        return sol_positions_ok(&self.s, &self.inst.c)

    def fix_positions(self):
        """Make every stored position exact (drift 0)."""
        sol_fix_positions(&self.s)

    # The twins of the ALNS loop (sol_copy / sol_sync), for tests.

    def copy_from(self, Solution other not None):
        """Become equal to `other` (a full copy); other's marked routes stay marked."""
        self._same_instance(other)
        sol_copy(&self.s, &other.s, &self.inst.c)

    def sync_from(self, Solution other not None):
        """Become equal to `other`, copying only the routes either marked since they were
        last equal (right only if they were, and every change since was marked)."""
        self._same_instance(other)
        sol_sync(&self.s, &other.s, &self.inst.c)

    def forget_changes(self):
        """Drop the marks of the routes changed (what a route written unmarked would do)."""
        sol_unmark(&self.s)

    def same_as(self, Solution other not None) -> bool:
        """Whether both hold the same solution, node indices and cached costs included."""
        self._same_instance(other)
        return sol_same(&self.s, &other.s, &self.inst.c)

    def _same_instance(self, Solution other):
        if other.inst is not self.inst:
            raise ValueError("the solutions belong to different instances")


def check(CoreInstance inst not None, routes, removed=None):
    """First violation of a complete (removed is None) or partial solution, or None if valid."""
    cdef Solution sol = Solution(inst)
    try:
        sol.load(routes, removed)
    except ValueError as exc:
        return str(exc)
    return None
