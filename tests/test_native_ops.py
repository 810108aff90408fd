"""Native seed operators against their plain-Python twins (glns.operators.seeds).

Given the same SplitMix64 seed, a native operator and its twin must return exactly the same
removed nodes, partial solution and completed solution, and consume the same random numbers.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns._core._native_ops import apply_destroy, apply_repair
from glns.operators.seeds import BY_PROBLEM
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64
from glns._core._rng import CoreRNG

from conftest import make_tsp, make_vrp

KINDS = {"tsp": lambda n, s: make_tsp(n, s), "cvrp": lambda n, s: make_vrp(glns.CVRP, n, s, 20),
         "ovrp": lambda n, s: make_vrp(glns.OVRP, n, s, 20)}


def test_python_rng_mirrors_native_rng():
    for seed in (0, 1, 12345, 2**63 + 7):
        a, b = CoreRNG(seed), SplitMix64(seed)
        for n in (1, 2, 7, 1000, 2**31 - 1):
            assert a.randrange(n) == b.randrange(n)
            assert a.random() == b.random()
            assert a.next_u64() == b.next_u64()


def _problem_and_solution(kind, n, seed):
    problem = KINDS[kind](n, seed)
    return problem, random_solution(problem, SplitMix64(seed + 99))


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", ["random_removal", "worst_removal"])
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_destroy_matches_twin(kind, name, n, seed, frac):
    problem, x = _problem_and_solution(kind, n, seed)
    k = max(1, int(frac * problem.n_customers))
    removed, partial, state = apply_destroy(name, problem.core, x, k, seed)
    rng = SplitMix64(seed)
    t_removed, t_partial = getattr(BY_PROBLEM[kind], name)(x, k, problem.problem_data(), rng)
    assert removed == t_removed
    assert partial == t_partial
    assert state == rng.state
    # a destroy removes exactly k nodes and keeps the rest in order
    assert len(removed) == min(k, problem.n_customers) == len(set(removed))
    flat = partial if kind == "tsp" else [c for r in partial for c in r]
    assert sorted(flat + removed) == list(range(problem.first_node, problem.n_nodes))


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_greedy_insertion_matches_twin(kind, n, seed, frac):
    problem, x = _problem_and_solution(kind, n, seed)
    k = max(1, int(frac * problem.n_customers))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed)
    complete, state = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
    rng = SplitMix64(seed)
    twin = BY_PROBLEM[kind].greedy_insertion(partial, removed, problem.problem_data(), rng)
    assert complete == twin
    assert state == rng.state
    problem.check(complete)
    assert problem.cost(complete) == solution_cost(problem, complete)


def test_greedy_insertion_is_cheapest_position_tsp():
    """Brute force: inserting one city where greedy puts it is never beaten by another position."""
    problem = make_tsp(12, 3)
    tour = list(range(11))
    complete, _ = apply_repair("greedy_insertion", problem.core, tour, [11], 0)
    best = min(solution_cost(problem, tour[:p] + [11] + tour[p:]) for p in range(len(tour) + 1))
    assert solution_cost(problem, complete) == pytest.approx(best, abs=1e-12)


def test_greedy_insertion_opens_route_only_when_nothing_fits():
    coords = np.array([[0.5, 0.5], [0.1, 0.1], [0.9, 0.9], [0.2, 0.1]])
    problem = glns.CVRP(coords, [0, 5, 5, 5], 10)
    complete, _ = apply_repair("greedy_insertion", problem.core, [[1, 2]], [3], 0)
    assert complete == [[1, 2], [3]]
    complete, _ = apply_repair("greedy_insertion", problem.core, [[1], [2]], [3], 0)
    assert len(complete) == 2 and sorted(complete[0] + complete[1]) == [1, 2, 3]


def test_worst_removal_with_high_randomness_takes_largest_saving():
    problem = make_tsp(15, 8)
    tour = list(range(15))
    removed, _, _ = apply_destroy("worst_removal", problem.core, tour, 1, 5, (1e9,))
    savings = {}
    for i, c in enumerate(tour):
        a, b = tour[i - 1], tour[(i + 1) % 15]
        d = problem.distances
        savings[c] = d[a, c] + d[c, b] - d[a, b]
    assert removed == [max(savings, key=savings.get)]
