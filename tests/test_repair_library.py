"""Library repair operators (blink and regret insertion) against their plain-Python twins.

Given the same SplitMix64 seed a native operator and its twin (glns.operators.library.repair)
must return the same complete solution and leave the generator in the same state. Every
completed solution must route each node exactly once and respect the capacity.
"""

import math

import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns._core._native_ops import apply_destroy, apply_repair
from glns.operators.library import repair as twins
from glns.operators.seeds import BY_PROBLEM
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

KINDS = ["tsp", "cvrp", "ovrp"]


def _case(kind, n, seed, capacity, frac, destroy="random_removal"):
    """A random instance, a random complete solution and a destroyed copy of it."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed + 99))
    k = max(1, int(round(frac * problem.n_customers)))
    removed, partial, _ = apply_destroy(destroy, problem.core, x, k, seed + 1)
    return problem, partial, removed


def _assert_complete(problem, complete):
    """Every node exactly once, loads within capacity, and the core agrees on the cost."""
    flat = complete if problem.kind == "tsp" else [c for route in complete for c in route]
    assert sorted(flat) == list(range(problem.first_node, problem.n_nodes))
    if problem.kind != "tsp":
        assert all(route for route in complete)
        assert all(sum(int(problem.demands[c]) for c in route) <= problem.capacity for route in complete)
    problem.check(complete)
    assert problem.cost(complete) == solution_cost(problem, complete)


instances = dict(
    kind=st.sampled_from(KINDS),
    n=st.integers(2, 60),
    seed=st.integers(0, 10**6),
    capacity=st.sampled_from([9, 10, 12, 15, 20, 50]),   # 9 = the largest demand: tight
    frac=st.floats(0.0, 1.0),
    destroy=st.sampled_from(["random_removal", "worst_removal"]),
)


# ------------------------------------------------------------------------------------------
# blink_insertion

@settings(max_examples=60, deadline=None)
@given(**instances, order=st.integers(0, 4), blink_rate=st.sampled_from([0.0, 0.01, 0.2, 0.7, 1.0]),
       neighbours=st.sampled_from([0, 0, 1, 3, 8, 200]))
def test_blink_insertion_matches_twin(kind, n, seed, capacity, frac, destroy, order, blink_rate,
                                      neighbours):
    problem, partial, removed = _case(kind, n, seed, capacity, frac, destroy)
    params = {"order": order, "blink_rate": blink_rate, "neighbours": neighbours}
    complete, state = apply_repair("blink_insertion", problem.core, partial, removed, seed, params)
    rng = SplitMix64(seed)
    twin = twins.blink_insertion(partial, removed, problem.problem_data(), rng, **params)
    assert complete == twin
    assert state == rng.state
    _assert_complete(problem, complete)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_blink_without_blinks_is_greedy_on_the_shuffled_order(kind, n, seed, frac):
    """order 0, blink_rate 0: the removed nodes are shuffled (Fisher-Yates, the core's stream)
    and then inserted exactly as greedy_insertion would insert them in that order."""
    problem, partial, removed = _case(kind, n, seed, 20, frac)
    complete, state = apply_repair("blink_insertion", problem.core, partial, removed, seed,
                                   {"order": 0, "blink_rate": 0.0})
    rng = SplitMix64(seed)
    shuffled = list(removed)
    for i in range(len(shuffled) - 1, 0, -1):
        j = rng.randrange(i + 1)
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    assert state == rng.state     # no draws beyond the shuffle
    greedy, _ = apply_repair("greedy_insertion", problem.core, partial, shuffled, 0)
    assert complete == greedy
    assert greedy == BY_PROBLEM[kind].greedy_insertion(partial, shuffled, problem.problem_data())


@pytest.mark.parametrize("order, expected", [(1, [3, 1, 2]), (2, [2, 1, 3]), (3, [3, 1, 2])])
def test_blink_orders(order, expected):
    """Demand descending (ties by id), far from the depot first, close first; each node gets
    its own new route here (capacity 9), so the routes show the insertion order."""
    coords = [[0.0, 0.0], [0.5, 0.0], [0.9, 0.0], [0.0, 0.3]]
    problem = glns.CVRP(coords, [0, 5, 5, 9], 9)
    complete, _ = apply_repair("blink_insertion", problem.core, [], [2, 1, 3], 0,
                               {"order": order, "blink_rate": 0.0})
    assert complete == [[c] for c in expected]


def test_blink_rate_one_opens_routes_and_keeps_tours_greedy():
    problem = make_problem("cvrp", 12, 4, 50)
    complete, _ = apply_repair("blink_insertion", problem.core, [[1, 2, 3]], list(range(4, 13)), 3,
                               {"order": 0, "blink_rate": 1.0})
    assert complete[0] == [1, 2, 3] and all(len(route) == 1 for route in complete[1:])
    tsp = make_problem("tsp", 12, 4, 0)
    blinked, _ = apply_repair("blink_insertion", tsp.core, [0, 1, 2], list(range(3, 12)), 3,
                              {"order": 3, "blink_rate": 1.0})
    greedy, _ = apply_repair("greedy_insertion", tsp.core, [0, 1, 2],
                             sorted(range(3, 12), key=lambda v: (tsp.distances[0, v], v)), 0)
    assert blinked == greedy


def test_blink_granular_uses_only_neighbour_positions():
    """With one neighbour, city 4 goes next to its nearest city 2 (tied with 3, lower id wins)
    although the closing edge 3-0 is the cheapest place for it."""
    coords = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0], [1.5, 0.6]]
    problem = glns.TSP(coords)
    greedy, _ = apply_repair("greedy_insertion", problem.core, [0, 1, 2, 3], [4], 0)
    assert greedy == [4, 0, 1, 2, 3]
    complete, _ = apply_repair("blink_insertion", problem.core, [0, 1, 2, 3], [4], 0,
                               {"order": 0, "blink_rate": 0.0, "neighbours": 1})
    assert complete == [0, 1, 2, 4, 3]   # after 2 (between 2 and 3) beats before 2 (1-2)


@pytest.mark.parametrize("bad", [{"order": 5}, {"order": 1.5}, {"blink_rate": 1.5}, {"neighbours": -1}])
def test_blink_rejects_bad_parameters(bad):
    problem = make_problem("cvrp", 5, 1, 20)
    with pytest.raises(glns.exceptions.OperatorError):
        apply_repair("blink_insertion", problem.core, [[1, 2]], [3, 4, 5], 0, bad)


def test_blink_native_rejects_bad_order_code():
    problem = make_problem("cvrp", 5, 1, 20)
    with pytest.raises(ValueError, match="order"):
        apply_repair("blink_insertion", problem.core, [[1, 2]], [3, 4, 5], 0, (7, 0.0, 0))


# ------------------------------------------------------------------------------------------
# through the solver

LIBRARY_REPAIRS = ["blink_insertion"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", LIBRARY_REPAIRS)
def test_library_repair_in_solve(kind, name):
    problem = make_problem(kind, 30, 11, 15)
    result = glns.solve(problem, destroy="random_removal", repair=[name], iterations=50, seed=2)
    problem.check(result.solution)
    assert result.cost == pytest.approx(problem.cost(result.solution))
    assert result.repair_stats[0].calls == 50 and result.repair_stats[0].failures == 0
