"""The core's cached cost (per-block sums re-summed only where a move touched the solution)
against a recomputation from scratch and the plain-Python mirror, over long chains of native
destroy and repair calls on one Solution (as the loop reuses its solutions)."""

import pytest

from glns._core._native_ops import NATIVE_DESTROY, NATIVE_REPAIR, apply_destroy, apply_repair
from glns._core._solution import Solution
from glns.reference import solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

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
    destroys = sorted(name for name, d in NATIVE_DESTROY.items() if kind in d.problems)
    repairs = sorted(name for name, d in NATIVE_REPAIR.items() if kind in d.problems)
    rng = SplitMix64(seed)
    sol = Solution(inst)
    sol.random_init(seed)
    _check(problem, sol)
    for step in range(150):
        k = 1 + rng.randrange(max(1, n // 2))
        removed, _, _ = apply_destroy(destroys[step % len(destroys)], inst, sol, k, rng.next_u64())
        _check(problem, sol)
        params = {"local_search": 1} if step % 3 else {}
        if step % 4 == 1:
            params["neighbours"] = 5
        name = repairs[(step // len(destroys)) % len(repairs)]
        params = {p: v for p, v in params.items()
                  if p in {q.name for q in NATIVE_REPAIR[name].all_params}}
        apply_repair(name, inst, sol, removed, rng.next_u64(), params)
        _check(problem, sol)


def test_solution_of_another_instance_is_refused():
    a, b = make_problem("tsp", 10, 1, 10), make_problem("tsp", 10, 2, 10)
    sol = Solution(a.core)
    sol.random_init(1)
    with pytest.raises(ValueError, match="another instance"):
        apply_destroy("random_removal", b.core, sol, 2, 1)
