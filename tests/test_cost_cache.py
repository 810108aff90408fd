"""The core's cached cost (per-block sums re-summed only where a move touched the solution)
against a recomputation from scratch and the plain-Python mirror, over long chains of native
destroy and repair calls on one Solution (as the loop reuses its solutions)."""

import pytest

from glns._core._native_ops import apply_destroy
from glns._core._solution import Solution
from glns.reference import solution_cost
from glns.rng import SplitMix64

from conftest import make_problem, native_chain_step

KINDS = ("tsp", "cvrp", "ovrp")


def _check(problem, sol):
    cached = sol.cost()
    assert cached == sol.full_cost()
    assert cached == solution_cost(problem, sol.routes())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n, seed", [(7, 1), (40, 2), (150, 3)])
def test_cached_cost_through_operator_chains(kind, n, seed):
    problem = make_problem(kind, n, seed, capacity=25)
    inst = problem.core
    rng = SplitMix64(seed)
    sol = Solution(inst)
    sol.random_init(seed)
    _check(problem, sol)
    for step in range(150):
        native_chain_step(inst, kind, sol, step, rng, n, check=lambda: _check(problem, sol))


def test_solution_of_another_instance_is_refused():
    a, b = make_problem("tsp", 10, 1, 10), make_problem("tsp", 10, 2, 10)
    sol = Solution(a.core)
    sol.random_init(1)
    with pytest.raises(ValueError, match="another instance"):
        apply_destroy("random_removal", b.core, sol, 2, 1)
