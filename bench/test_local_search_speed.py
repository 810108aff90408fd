"""Speed of the native local search. See bench/README.md.

Times are per call and include nothing but the search: a repair with ``local_search=1`` minus
the same repair without it (both load and return the same Python lists), or one full search.
"""

from __future__ import annotations

import statistics
import timeit

import pytest

from glns._core._local_search import local_search_py
from glns._core._native_ops import apply_destroy, apply_repair
from glns.datasets import paper_instances
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

K = 20          # nodes removed before the repair


def _median_seconds(func, number: int, repeat: int = 7) -> float:
    return statistics.median(timeit.repeat(func, number=number, repeat=repeat)) / number


@pytest.mark.parametrize("kind,n", [("cvrp", 100), ("ovrp", 100), ("tsp", 200)])
def test_search_after_repair(kind, n):
    """One search from the k = 20 reinserted nodes after random removal + greedy insertion,
    starting from a local optimum (as in an ALNS run past its first iterations)."""
    problem = paper_instances(kind, n)[0]
    base = local_search_py(problem.core, random_solution(problem, SplitMix64(1)))
    extra, gains = [], []
    for seed in range(20):
        removed, partial, _ = apply_destroy("random_removal", problem.core, base, K, seed)
        plain = _median_seconds(lambda: apply_repair("greedy_insertion", problem.core, partial, removed, seed), 20)
        with_ls = _median_seconds(lambda: apply_repair("greedy_insertion", problem.core, partial, removed, seed,
                                                       {"local_search": 1}), 20)
        extra.append(with_ls - plain)
        a = apply_repair("greedy_insertion", problem.core, partial, removed, seed)[0]
        b = apply_repair("greedy_insertion", problem.core, partial, removed, seed, {"local_search": 1})[0]
        gains.append(solution_cost(problem, a) - solution_cost(problem, b))
    print(f"\n{kind}{n}: local search after repair (k={K}): median {1e6 * statistics.median(extra):.1f} us,"
          f" mean gain {statistics.mean(gains):.4f}")


@pytest.mark.parametrize("kind,n", [("tsp", 200), ("cvrp", 100)])
def test_full_search_from_random(kind, n):
    problem = paper_instances(kind, n)[0]
    x = random_solution(problem, SplitMix64(2))
    t = _median_seconds(lambda: local_search_py(problem.core, x), 3, 5)
    y = local_search_py(problem.core, x)
    print(f"\n{kind}{n}: full local search from a random solution: median {1e3 * t:.2f} ms,"
          f" cost {solution_cost(problem, x):.3f} -> {solution_cost(problem, y):.3f}")
