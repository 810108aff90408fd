# Native repair operators. Each inserts every node of `removed` into a partial solution so that
# it is complete and feasible. Each has a plain-Python twin that makes the same choices.
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t

from glns._core._types cimport Inst, Sol, KIND_TSP
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
