# Route-exchange crossover of two VRP solutions, after the selective route exchange (SREX) of
# Nagata and Kobayashi: the child is parent A with a few routes of parent B put in place of the
# routes of A that share the most customers with them. An epoch of a run with an elite pool
# may begin from such a child of the best solution and an earlier epoch's end
# (glns.params.Epochs.crossover). Plain-Python twin: glns.operators.library.crossover.
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, calloc, free

from glns._core._types cimport Inst, Sol
from glns._core._instance cimport CoreInstance
from glns._core._kind cimport is_tour
from glns._core._rng cimport rng_below
from glns._core._solution cimport (Solution, sol_copy, sol_remove, sol_insert, sol_new_route,
                                   sol_drop_empty, sol_cost)
from glns._core._repair cimport regret_insertion
from glns._core._local_search cimport local_search


cdef int _routes_in_use(const Sol *s) noexcept nogil:
    """Routes of s with at least one node."""
    cdef int k, n = 0
    for k in range(s.n_routes):
        n += s.length[s.order[k]] > 0
    return n


cdef int route_crossover(Sol *child, const Sol *a, const Sol *b, const Inst *inst, int level,
                         double deadline, uint64_t *rng) except -1 nogil:
    """Make `child` a cross of VRP solutions `a` and `b` (complete and feasible); returns 1,
    with `child` left unusable, when the child needs more routes than the fleet, else 0.

    Two draws: a customer x, and how many of b's routes to take, m in 1..max(1, routes of b
    // 2). B's routes are those of x and of x's candidates (Inst.near, nearest first), the first
    m distinct; A's are the m routes of a holding the most of their customers (ties: the
    earlier route), none that holds none. The child is a without A's routes and without B's
    customers, then B's routes appended in the order found; the customers of A's routes that
    are not in B's go back by regret-2 insertion, and the local search at `level` (0: none)
    starts from B's customers and those. Removing customers keeps a route's load and, with
    travel times that obey the triangle inequality, its windows; B's routes are b's own."""
    cdef int n = inst.n
    cdef int slots_a = a.route_slots, slots_b = b.route_slots
    cdef int *picked = <int *> malloc(max(slots_b, 1) * sizeof(int))      # B's routes (b's slots)
    cdef char *in_b = <char *> calloc(max(n, 1), sizeof(char))            # customer of B's routes
    cdef int *overlap = <int *> calloc(max(slots_a, 1), sizeof(int))      # per slot of a
    cdef char *drop = <char *> calloc(max(slots_a, 1), sizeof(char))      # A's routes
    cdef int *moved = <int *> malloc(max(n, 1) * sizeof(int))             # B's customers, then the rest
    cdef int x, m, n_picked = 0, n_moved = 0, n_b, j, k, t, r, y, best_r, i, L
    cdef const int *row
    cdef int result = 0
    if picked == NULL or in_b == NULL or overlap == NULL or drop == NULL or moved == NULL:
        free(picked); free(in_b); free(overlap); free(drop); free(moved)
        with gil:
            raise MemoryError()
    try:
        x = inst.first + rng_below(rng, n - inst.first)
        m = 1 + rng_below(rng, max(1, _routes_in_use(b) // 2))
        for j in range(-1, inst.n_near):
            y = x if j < 0 else inst.near[x * inst.n_near + j]
            r = b.route_of[y]
            if r < 0 or b.length[r] == 0:
                continue
            for t in range(n_picked):
                if picked[t] == r:
                    break
            else:
                picked[n_picked] = r
                n_picked += 1
                if n_picked == m:
                    break
        for t in range(n_picked):
            row = &b.nodes[picked[t] * b.stride]
            for i in range(b.length[picked[t]]):
                in_b[row[i]] = 1
                moved[n_moved] = row[i]
                n_moved += 1
                if a.route_of[row[i]] >= 0:
                    overlap[a.route_of[row[i]]] += 1
        n_b = n_moved
        for t in range(n_picked):       # A's routes: the most overlap, the earlier on ties
            best_r = -1
            for k in range(a.n_routes):
                r = a.order[k]
                if not drop[r] and overlap[r] > 0 and (best_r < 0 or overlap[r] > overlap[best_r]):
                    best_r = r
            if best_r < 0:
                break
            drop[best_r] = 1
        for k in range(a.n_routes):     # their customers not in B's routes, in a's order
            r = a.order[k]
            if not drop[r]:
                continue
            row = &a.nodes[r * a.stride]
            for i in range(a.length[r]):
                if not in_b[row[i]]:
                    moved[n_moved] = row[i]
                    n_moved += 1
        sol_copy(child, a, inst)
        for i in range(n_moved):
            sol_remove(child, inst, moved[i])
        sol_drop_empty(child)
        for t in range(n_picked):
            r = sol_new_route(child)
            row = &b.nodes[picked[t] * b.stride]
            L = b.length[picked[t]]
            for i in range(L):
                sol_insert(child, inst, row[i], r, i)
        regret_insertion(child, inst, &moved[n_b], n_moved - n_b, 2.0, 0.0, NULL)
        if inst.fleet > 0 and child.n_routes > inst.fleet:
            result = 1
        else:
            child.cost = sol_cost(child, inst)
            if level > 0:       # it leaves the recomputed cost in child.cost
                local_search(child, inst, moved, n_moved, deadline, level, NULL)
    finally:
        free(picked); free(in_b); free(overlap); free(drop); free(moved)
    return result


def crossover(CoreInstance inst not None, a_routes, b_routes, uint64_t seed, int level=2):
    """route_crossover of two complete VRP solutions given as route lists (for tests and the
    twin). Returns (child routes or None when it needs more routes than the fleet, the stream's
    state after the draws)."""
    if is_tour(&inst.c):
        raise ValueError("crossover needs a VRP")
    cdef Solution a = Solution(inst)
    cdef Solution b = Solution(inst)
    cdef Solution child = Solution(inst)
    a.load(a_routes)
    b.load(b_routes)
    cdef uint64_t state = seed
    if route_crossover(&child.s, &a.s, &b.s, &inst.c, level, 0.0, &state):
        return None, state
    return child.routes(), state
