"""Plain-Python primitives on solutions, written to mirror the core exactly: the objective
summed in the core's canonical order, and the random initial solution (docs/method.md).
Operators' twins, probes, the reference loop and the tests use them."""

from __future__ import annotations

from typing import Any

import numpy as np

from glns.problems.base import Problem
from glns.rng import SplitMix64

__all__ = ["solution_cost", "matrix_cost", "random_solution", "shuffled_nodes"]


def solution_cost(problem: Problem, solution: Any) -> float:
    """Objective of a solution, summed in the core's canonical order (one running total)."""
    return matrix_cost(problem.distances, solution, not problem.has_depot, not problem.closed_routes)


def matrix_cost(d: np.ndarray, solution: Any, tsp: bool, open_routes: bool) -> float:
    """The core's sol_cost on a distance matrix: one running total, routes in order, arcs in
    route order (a TSP tour read as a cycle; an open route ends at its last customer)."""
    total = 0.0
    if tsp:
        n = len(solution)
        for i in range(n):
            total += d[solution[i], solution[(i + 1) % n]]
        return total
    for route in solution:
        if not route:
            continue
        prev = 0
        for c in route:
            total += d[prev, c]
            prev = c
        if not open_routes:
            total += d[prev, 0]
    return total


def shuffled_nodes(problem: Problem, rng: SplitMix64) -> list[int]:
    order = list(range(problem.first_node, problem.n_nodes))
    for i in range(len(order) - 1, 0, -1):
        j = rng.randrange(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def random_solution(problem: Problem, rng: SplitMix64) -> Any:
    """The initial solution (docs/method.md): a random permutation, cut greedily by capacity
    for VRP (as the core does)."""
    order = shuffled_nodes(problem, rng)
    if not problem.has_depot:   # one tour, as the core's sol_random_init
        return order
    routes: list[list[int]] = []
    load = 0
    for c in order:
        q = int(problem.demands[c])
        if not routes or load + q > problem.capacity:
            routes.append([])
            load = 0
        routes[-1].append(c)
        load += q
    return routes
