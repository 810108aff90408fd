"""The route-exchange crossover (_crossover.pyx) against its plain-Python twin
(glns.operators.library.crossover), on CVRP, OVRP and VRPTW solutions."""

import numpy as np
import pytest

import glns
from glns._core._crossover import crossover
from glns.datasets import generate_vrptw
from glns.operators.library.crossover import route_crossover
from glns.rng import SplitMix64

from conftest import make_problem


def _parents(problem, seed):
    a = glns.solve(problem, iterations=150, seed=seed).solution
    b = glns.solve(problem, iterations=150, seed=seed + 1000).solution
    return a, b


def _problems():
    yield "cvrp", make_problem("cvrp", 40, 3, capacity=40)
    yield "ovrp", make_problem("ovrp", 40, 4, capacity=40)
    yield "vrptw", generate_vrptw(40, 5, layout="mixed", horizon="short", windows="tight")
    yield "vrptw-long", generate_vrptw(40, 6, layout="clustered", horizon="long", windows="wide")


@pytest.mark.parametrize("name, problem", list(_problems()), ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("level", [0, 2, 3])
def test_the_native_crossover_makes_the_twins_child(name, problem, level):
    for seed in range(6):
        a, b = _parents(problem, seed)
        child, state = crossover(problem.core, a, b, 11 + seed, level)
        rng = SplitMix64(11 + seed)
        twin = route_crossover(a, b, problem.problem_data(), rng, problem.core.near, level,
                               getattr(problem, "vehicles", None))
        assert child == twin
        assert rng.state == state                   # the same two draws
        if child is None:
            continue
        assert sorted(v for r in child for v in r) == list(range(1, problem.n_nodes))
        assert problem.violation(child) is None if problem.timed else True
        if problem.has_depot and getattr(problem, "capacity", None):
            demands = np.asarray(problem.demands)
            assert all(demands[r].sum() <= problem.capacity for r in child)


def test_the_child_keeps_routes_of_both_parents():
    problem = make_problem("cvrp", 60, 8, capacity=30)
    a, b = _parents(problem, 1)
    shared_a = shared_b = 0
    for seed in range(20):
        child, _ = crossover(problem.core, a, b, seed, 0)
        routes = {tuple(r) for r in child}
        shared_b += len(routes & {tuple(r) for r in b} - {tuple(r) for r in a})
        shared_a += len(routes & {tuple(r) for r in a})
    # without the local search, B's routes are in the child as they are, and most of A's too
    assert shared_b >= 20 and shared_a > shared_b


def test_the_same_parent_twice_gives_a_complete_solution():
    problem = make_problem("cvrp", 30, 2, capacity=25)
    a, _ = _parents(problem, 2)
    child, _ = crossover(problem.core, a, a, 3, 2)
    assert sorted(v for r in child for v in r) == list(range(1, problem.n_nodes))
    assert problem.cost(child) <= problem.cost(a) + 1e-9


def test_a_tour_has_no_crossover():
    problem = make_problem("tsp", 20, 1, capacity=20)
    tour = glns.solve(problem, iterations=10, seed=0).solution
    with pytest.raises(ValueError, match="VRP"):
        crossover(problem.core, tour, tour, 0)
