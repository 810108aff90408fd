"""Tiny instances solved exactly by brute force: the solver must reach the optimum."""

import itertools

import pytest

import glns
from glns.reference import solution_cost

from conftest import make_tsp, make_vrp


def tsp_optimum(problem):
    d = problem.distances
    n = problem.n_nodes
    best = float("inf")
    for perm in itertools.permutations(range(1, n)):
        tour = (0,) + perm
        best = min(best, sum(d[tour[i], tour[(i + 1) % n]] for i in range(n)))
    return best


def vrp_optimum(problem, route_ok=None, route_cost=0.0):
    """Every solution is a customer permutation cut into routes: optimal split per permutation.
    route_ok(route): whether a route is allowed (time windows); route_cost: paid per route."""
    d, q, cap = problem.distances, problem.demands, problem.capacity
    closed = problem.kind != "ovrp"
    customers = range(1, problem.n_nodes)
    best = float("inf")
    for perm in itertools.permutations(customers):
        m = len(perm)
        cost = [0.0] + [float("inf")] * m
        for i in range(m):
            load, length = 0, 0.0
            for j in range(i, m):
                load += q[perm[j]]
                if load > cap:
                    break
                length = d[0, perm[i]] if j == i else length + d[perm[j - 1], perm[j]]
                if route_ok is not None and not route_ok(list(perm[i:j + 1])):
                    continue
                total = length + (d[perm[j], 0] if closed else 0.0) + route_cost
                cost[j + 1] = min(cost[j + 1], cost[i] + total)
        best = min(best, cost[m])
    return best


@pytest.mark.parametrize("n", [3, 5, 7, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tsp_reaches_brute_force_optimum(n, seed):
    problem = make_tsp(n, 100 + seed)
    result = glns.solve(problem, iterations=1500, seed=seed)
    assert result.cost == pytest.approx(tsp_optimum(problem), rel=1e-12)
    assert solution_cost(problem, result.solution) == result.cost


@pytest.mark.parametrize("cls", [glns.CVRP, glns.OVRP])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vrp_feasible_and_optimal_on_tiny_instances(cls, seed):
    problem = make_vrp(cls, 6, 200 + seed, capacity=15)
    result = glns.solve(problem, iterations=3000, seed=seed,
                        params=glns.SolveParams(destroy_fraction=0.5))
    problem.check(result.solution)
    assert result.cost == pytest.approx(vrp_optimum(problem), rel=1e-12)


def vrptw_optimum(problem):
    """As vrp_optimum, with each route's windows checked from scratch (unlimited fleet) and the
    instance's route cost paid per route."""
    return vrp_optimum(problem, lambda route: _route_in_time(problem, route), problem.route_cost)


def _route_in_time(problem, route):
    tw, s, d = problem.time_windows, problem.service_times, problem.distances
    t, prev = tw[0, 0], 0
    for c in route:
        t = max(t + d[prev, c], tw[c, 0])
        if t > tw[c, 1] + 1e-9:
            return False
        t += s[c]
        prev = c
    return t + d[prev, 0] <= tw[0, 1] + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_vrptw_feasible_and_optimal_on_tiny_instances(seed):
    from conftest import make_problem

    problem = make_problem("vrptw", 6, 300 + seed, 15)
    result = glns.solve(problem, iterations=3000, seed=seed,
                        params=glns.SolveParams(destroy_fraction=0.5))
    problem.check(result.solution)
    assert result.cost == pytest.approx(vrptw_optimum(problem), rel=1e-12)
