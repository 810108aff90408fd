"""The space-filling start (glns.problems.space_filling): the Hilbert curve against a plain
scalar reference, the start solutions, and which start a run takes."""

import numpy as np
import pytest

import glns
from glns.problems import space_filling
from glns.problems.space_filling import (curve_order, hilbert_keys, space_filling_solution,
                                         start_solution)
from glns.problems.solutions import random_solution
from glns.rng import SplitMix64

from conftest import make_tsp, make_vrp


def hilbert_key_reference(x: int, y: int, order: int) -> int:
    """The textbook cell -> curve index conversion, one cell at a time."""
    side = 1 << order
    key = 0
    s = side // 2
    while s > 0:
        rx = 1 if x & s else 0
        ry = 1 if y & s else 0
        key += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = side - 1 - x, side - 1 - y
            x, y = y, x
        s //= 2
    return key


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_curve_visits_every_cell_once_through_cells_that_share_a_side(order):
    side = 1 << order
    ix, iy = (a.ravel() for a in np.meshgrid(np.arange(side), np.arange(side)))
    keys = hilbert_keys(ix, iy, order)
    assert sorted(keys.tolist()) == list(range(side * side))
    path = np.argsort(keys)
    steps = np.abs(np.diff(ix[path])) + np.abs(np.diff(iy[path]))
    assert steps.tolist() == [1] * (side * side - 1)


def test_curve_keys_equal_the_scalar_reference_on_the_full_grid():
    rng = np.random.default_rng(5)
    order = space_filling.HILBERT_ORDER
    ix = rng.integers(0, 1 << order, 300)
    iy = rng.integers(0, 1 << order, 300)
    ix[:4] = [0, (1 << order) - 1, 0, (1 << order) - 1]
    iy[:4] = [0, 0, (1 << order) - 1, (1 << order) - 1]
    expected = [hilbert_key_reference(int(x), int(y), order) for x, y in zip(ix, iy)]
    assert hilbert_keys(ix, iy).tolist() == expected


@pytest.mark.parametrize("cells", [([0, 4], [0, 0]), ([-1], [0]), ([0, 1], [0])])
def test_curve_keys_reject_cells_off_the_grid(cells):
    with pytest.raises(ValueError, match="cells"):
        hilbert_keys(np.array(cells[0]), np.array(cells[1]), order=2)


def test_curve_order_is_a_permutation_that_ignores_scale_and_shift():
    xy = np.random.default_rng(3).random((500, 2))
    order = curve_order(xy, first=1)
    assert sorted(order) == list(range(1, 500))
    assert curve_order(xy * 37.5 + [1000.0, -20.0], first=1) == order


def test_curve_order_keeps_id_order_within_a_cell_and_on_equal_points():
    xy = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]])
    order = curve_order(xy)
    assert order == [0, 3, 1, 2, 4] or order == [1, 2, 4, 0, 3]
    assert curve_order(np.zeros((4, 2))) == [0, 1, 2, 3]
    assert curve_order(np.zeros((1, 2)), first=1) == []


def test_curve_tour_is_far_shorter_than_a_random_one():
    problem = make_tsp(2000, 4)
    tour = space_filling_solution(problem)
    assert sorted(tour) == list(range(2000))
    random_tour = random_solution(problem, SplitMix64(0))
    assert problem.cost(tour) < 0.2 * problem.cost(random_tour)


@pytest.mark.parametrize("cls", [glns.CVRP, glns.OVRP])
def test_curve_routes_are_the_curve_cut_greedily_by_capacity(cls):
    problem = make_vrp(cls, 300, 8, 40)
    routes = space_filling_solution(problem)
    problem.check(routes)
    assert [c for route in routes for c in route] == curve_order(problem.coords, 1)
    demand = problem.demands
    for route, after in zip(routes, routes[1:]):
        # a route ends only where the next customer does not fit
        assert sum(demand[c] for c in route) + demand[after[0]] > problem.capacity
    assert problem.cost(routes) < 0.5 * problem.cost(random_solution(problem, SplitMix64(0)))


def test_start_depends_on_the_setting_the_size_and_the_coordinates(monkeypatch):
    tsp = make_tsp(60, 2)
    matrix_only = glns.TSP(distances=tsp.distances)
    assert start_solution(tsp, "random") is None
    assert start_solution(tsp, "auto") is None          # 60 < SPACE_FILLING_FROM
    assert start_solution(tsp, "space_filling") == space_filling_solution(tsp)
    monkeypatch.setattr(space_filling, "SPACE_FILLING_FROM", 60)
    assert start_solution(tsp, "auto") == space_filling_solution(tsp)
    assert start_solution(matrix_only, "auto") is None
    with pytest.raises(ValueError, match="coordinates"):
        start_solution(matrix_only, "space_filling")
    with pytest.raises(ValueError, match="initial"):
        start_solution(tsp, "greedy")


def test_params_check_the_setting_and_the_paper_keeps_the_random_start():
    assert glns.SolveParams().initial == "auto"
    assert glns.SolveParams.paper().initial == "random"
    with pytest.raises(ValueError, match="initial"):
        glns.SolveParams(initial="hilbert")


@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
def test_solve_starts_on_the_curve_from_the_threshold_on(kind):
    n = space_filling.SPACE_FILLING_FROM
    problem = glns.datasets.generate(kind, n, 3)
    start = glns.solve(problem, iterations=0, seed=1)
    assert start.solution == space_filling_solution(problem)
    assert start.cost == problem.cost(start.solution)
    # the paper's start is still one setting away, and a given solution wins over both
    rand = glns.solve(problem, iterations=0, seed=1, params=glns.SolveParams(initial="random"))
    assert rand.solution != start.solution
    assert rand.cost > start.cost
    given = glns.solve(problem, iterations=0, seed=1, initial_solution=rand.solution)
    assert given.solution == rand.solution


def test_below_the_threshold_the_default_start_is_the_paper_start():
    problem = make_vrp(glns.CVRP, 40, 6, 30)
    start = glns.solve(problem, iterations=0, seed=9)
    assert start.solution == random_solution(problem, SplitMix64(9))
