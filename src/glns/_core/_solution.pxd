# Solution storage and its O(1)/O(route) primitives. See _solution.pyx for details.
from libc.stdint cimport int64_t, uint64_t
from glns._core._types cimport Inst, Sol
from glns._core._kind cimport close_cost, is_tour
from glns._core._distance cimport dist
from glns._core._instance cimport CoreInstance

cdef enum:
    END = -1      # the end of a depot route: the depot when routes are closed, else nothing
    COST_BLOCK_SHIFT = 4    # the cost is summed in blocks of 2**4 = 16 node ids
    # sol_sync copies the whole solution when more than 1/SYNC_COPY_FRACTION of the routes
    # are marked
    SYNC_COPY_FRACTION = 8
    # sol_drop_empty moves the routes down to slots 0.. once the free slots below the last
    # route outnumber the routes by more than COMPACT_SLACK
    COMPACT_SLACK = 8
    # A tour updates the positions of a shift of more than LAZY_SHIFT nodes later (Sol.drift,
    # Sol.lazy_shift); once the deferred shifts add up to more than POS_DRIFT_MAX places, all
    # are made exact.
    LAZY_SHIFT = 256
    POS_DRIFT_MAX = 64


cdef inline void sol_touch(Sol *s, int v) noexcept nogil:
    """Node v's incoming arc or its being last in its route may have changed."""
    s.stale[v >> COST_BLOCK_SHIFT] = 1
    s.own_ok[v] = 0


cdef inline void sol_touch_at(Sol *s, const Inst *inst, int r, int p) noexcept nogil:
    """sol_touch the node at index p of route r: cyclically in a tour, nothing outside a route."""
    cdef int L = s.length[r]
    if L == 0:
        return
    if is_tour(inst):
        if p < 0:
            p += L
        elif p >= L:
            p -= L
    elif p < 0 or p >= L:
        return
    sol_touch(s, s.nodes[r * s.stride + p])


cdef int sol_find_pos(const Sol *s, int v, int p) noexcept nogil


cdef inline int sol_pos(const Sol *s, int v) noexcept nogil:
    """Index of node v in its route (-1 when unrouted): pos_of[v], or on a tour with deferred
    shifts the index found within `drift` places of it."""
    cdef int p = s.pos_of[v]
    cdef int r
    if s.drift == 0 or p < 0:
        return p
    r = s.route_of[v]
    if p < s.length[r] and s.nodes[r * s.stride + p] == v:     # not moved, or written back
        return p
    return sol_find_pos(s, v, p)


cdef inline int sol_slot_end(const Sol *s) noexcept nogil:
    """One past the slot of the last route: the slot sol_new_route opens next. A call that
    opens at most m routes sees only slots below sol_slot_end(s) + m."""
    return s.order[s.n_routes - 1] + 1 if s.n_routes > 0 else 0


cdef inline void sol_set_length(Sol *s, int r, int L) noexcept nogil:
    """Route r now holds L nodes. Every length write of an operator goes through here, so a
    route left empty is always noted for sol_drop_empty (Sol.may_have_empty)."""
    s.length[r] = L
    if L == 0:
        s.may_have_empty = True


cdef inline void sol_mark(Sol *s, int r) noexcept nogil:
    """Route r's row, length or load changed: sol_sync must copy it. Every write to a route
    goes with this mark (sol_insert, sol_remove and the moves that write rows directly)."""
    if s.tstale != NULL:
        s.tstale[r] = 1         # its time data (_windows) must be recomputed
    if not s.changed[r]:
        s.changed[r] = 1
        s.changed_list[s.n_changed] = r
        s.n_changed += 1


cdef inline double arc(const Inst *inst, int a, int b) noexcept nogil:
    """Cost of travelling a -> b, where b == END means 'finish the route'."""
    if b == END:
        return close_cost(inst, a)
    return dist(inst, a, b)


cdef void sol_fix_positions(Sol *s) noexcept nogil
cdef void sol_moved(Sol *s, int r, int first, int places) noexcept nogil
cdef bint sol_positions_ok(const Sol *s, const Inst *inst) noexcept nogil
cdef int sol_alloc(Sol *s, const Inst *inst) except -1 nogil
cdef void sol_free(Sol *s) noexcept nogil
cdef int sol_reserve_routes(Sol *s, int slots) except -1 nogil
cdef int sol_copy(Sol *dst, const Sol *src, const Inst *inst) except -1 nogil
cdef int sol_sync(Sol *dst, Sol *src, const Inst *inst) except -1 nogil
cdef void sol_unmark(Sol *s) noexcept nogil
cdef bint sol_same(const Sol *a, const Sol *b, const Inst *inst) noexcept nogil
cdef void sol_clear(Sol *s, const Inst *inst) noexcept nogil
cdef int sol_new_route(Sol *s) except -1 nogil
cdef void sol_remove(Sol *s, const Inst *inst, int v) noexcept nogil
cdef void sol_insert(Sol *s, const Inst *inst, int v, int r, int pos) noexcept nogil
cdef void sol_drop_empty(Sol *s) noexcept nogil
cdef double sol_cost(Sol *s, const Inst *inst) noexcept nogil
cdef double sol_cost_full(const Sol *s, const Inst *inst) noexcept nogil
cdef double removal_delta(const Sol *s, const Inst *inst, int v) noexcept nogil
cdef int sol_random_init(Sol *s, const Inst *inst, uint64_t *rng) except -1 nogil

cdef object sol_to_py(const Sol *s, const Inst *inst)
cdef object sol_load(Sol *s, const Inst *inst, object routes, bint complete,
                     object removed, int *removed_out, int *n_removed)

cdef class Solution:
    cdef Sol s
    cdef CoreInstance inst


cdef inline double new_route_cost(const Inst *inst, int v) noexcept nogil:
    """Cost of a new route serving only v."""
    return arc(inst, 0, v) + arc(inst, v, END)


cdef inline double insertion_delta(const Sol *s, const Inst *inst, int v, int r, int pos) noexcept nogil:
    """Change of cost when node v is put at index pos of route r. Inline: the repairs price
    positions with it in their loops."""
    cdef int L = s.length[r]
    cdef const int *row = &s.nodes[r * s.stride]
    cdef int a, b
    if is_tour(inst):
        if L == 0:
            return dist(inst, v, v)
        a = row[pos - 1] if pos > 0 else row[L - 1]
        b = row[pos] if pos < L else row[0]
        return dist(inst, a, v) + dist(inst, v, b) - dist(inst, a, b)
    if L == 0:
        return new_route_cost(inst, v)
    a = row[pos - 1] if pos > 0 else 0
    b = row[pos] if pos < L else END
    # with symmetric distances d(a, v) is read from v's row, the same float: a scan over many
    # positions then keeps one matrix row in cache
    return (dist(inst, v, a) if inst.symmetric else arc(inst, a, v)) + arc(inst, v, b) - arc(inst, a, b)
