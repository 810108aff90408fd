"""Plain-Python primitives on solutions, written to mirror the core exactly: the objective
summed in the core's canonical order, and the random initial solution (docs/method.md).
Operators' twins, probes, the reference loop and the tests use them."""

from __future__ import annotations

from typing import Any

import numpy as np

from glns.problems.base import Problem
from glns.rng import SplitMix64

__all__ = ["solution_cost", "matrix_cost", "random_solution", "shuffled_nodes", "cut_by_capacity",
           "insertion_solution"]


#: the cost is summed per block of this many consecutive node ids (the core's COST_BLOCK_SHIFT)
COST_BLOCK = 16


def solution_cost(problem: Problem, solution: Any) -> float:
    """Objective of a solution, summed in the core's canonical order (see :func:`matrix_cost`)."""
    return matrix_cost(problem.arc_costs, solution, not problem.has_depot, not problem.closed_routes)


def matrix_cost(d: np.ndarray, solution: Any, tsp: bool, open_routes: bool) -> float:
    """The core's sol_cost on a distance matrix, the identical float.

    Every routed node owns its incoming arc (in a tour from its predecessor, read as a cycle;
    in a route from the previous customer or the depot) and, when it ends a closed route, the
    arc back to the depot, added to it. Those costs are summed per block of ``COST_BLOCK``
    consecutive node ids in id order, and the blocks' sums in block order.
    """
    owned: dict[int, float] = {}
    if tsp:
        for i, v in enumerate(solution):
            owned[v] = d[solution[i - 1], v]
    else:
        for route in solution:
            prev = 0
            for i, c in enumerate(route):
                a = d[prev, c]
                if i == len(route) - 1 and not open_routes:
                    a = a + d[c, 0]
                owned[c] = a
                prev = c
    total = 0.0
    for start in range(0, d.shape[0], COST_BLOCK):
        part = 0.0
        for v in range(start, min(start + COST_BLOCK, d.shape[0])):
            if v in owned:
                part += owned[v]
        total += part
    return float(total)


def shuffled_nodes(problem: Problem, rng: SplitMix64) -> list[int]:
    order = list(range(problem.first_node, problem.n_nodes))
    for i in range(len(order) - 1, 0, -1):
        j = rng.randrange(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def random_solution(problem: Problem, rng: SplitMix64) -> Any:
    """The initial solution (docs/method.md): a random permutation, cut greedily by capacity
    for VRP (as the core does); with time windows every customer of the permutation at its
    cheapest feasible position (:func:`insertion_solution`, as the core does)."""
    order = shuffled_nodes(problem, rng)
    if not problem.has_depot:   # one tour, as the core's sol_random_init
        return order
    if problem.timed:
        return insertion_solution(problem, order)
    return cut_by_capacity(problem, order)


def insertion_solution(problem: Problem, order: list[int]) -> list[list[int]]:
    """The customers of `order`, one by one, each at its cheapest position that keeps the
    capacity and the time windows (first route and position on ties), or in a new route when
    that is strictly cheaper and the fleet has a vehicle left, or nothing else fits: the start
    of a time-window run, the choices of the core's blink insertion without blinks."""
    d = problem.arc_costs
    tw, service, travel = problem.time_windows, problem.service_times, problem.durations
    demands = problem.demands.tolist()
    tol = 1e-9 * max(float(np.abs(tw).max(initial=1.0)), 1.0)

    def in_time(route: list[int]) -> bool:
        t, prev = tw[0, 0], 0
        for c in route:
            t = max(t + travel[prev, c], tw[c, 0])
            if t > tw[c, 1] + tol:
                return False
            t += service[c]
            prev = c
        return t + travel[prev, 0] <= tw[0, 1] + tol

    routes: list[list[int]] = []
    loads: list[int] = []
    for c in order:
        best = (float("inf"), -1, 0)
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > problem.capacity:
                continue
            for pos in range(len(route) + 1):
                a = route[pos - 1] if pos > 0 else 0
                b = route[pos] if pos < len(route) else 0
                option = (d[a, c] + d[c, b] - d[a, b], r, pos)
                if option < best and in_time(route[:pos] + [c] + route[pos:]):
                    best = option
        cost, r, pos = best
        vehicle_left = problem.vehicles is None or len(routes) < problem.vehicles
        if r < 0 or (d[0, c] + d[c, 0] < cost and vehicle_left):
            routes.append([c])
            loads.append(demands[c])
        else:
            routes[r].insert(pos, c)
            loads[r] += demands[c]
    return routes


def cut_by_capacity(problem: Problem, order: list[int]) -> list[list[int]]:
    """The customers in `order` cut greedily into routes: a new route starts when the next
    customer does not fit (the core's sol_random_init does the same)."""
    routes: list[list[int]] = []
    demands = problem.demands.tolist()
    load = 0
    for c in order:
        q = int(demands[c])
        if not routes or load + q > problem.capacity:
            routes.append([])
            load = 0
        routes[-1].append(c)
        load += q
    return routes
