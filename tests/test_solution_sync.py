"""The loop's candidate is a twin of the current solution: each iteration it is made equal to
it again by copying only the routes either of them changed (sol_mark / sol_sync), not the
whole solution. With check_sync on, every sync is compared in full with the current solution
(routes, loads, node indices, cached costs), so a route written without its mark fails here;
and the runs end where the plain computations say they should."""

import random

import numpy as np
import pytest

import glns
from glns._core._alns import check_sync
from glns._core._instance import CoreInstance
from glns._core._solution import Solution
from glns.operators import native
from glns.operators.natives import NATIVE_OPERATORS
from glns.reference import solution_cost
from glns.rng import SplitMix64

from conftest import make_problem, native_chain_step

KINDS = ("tsp", "cvrp", "ovrp")


@pytest.fixture
def checked_sync():
    check_sync(True)
    yield
    check_sync(False)


def _natives(kind: str, role: str, **params: float) -> list:
    ops = []
    for name, spec in sorted(NATIVE_OPERATORS.items()):
        if spec.kind != role or kind not in spec.problems:
            continue
        names = {p.name for p in spec.all_params}
        ops.append(native(name, **{p: v for p, v in params.items() if p in names}))
    return ops


def _check_result(problem, result):
    problem.check(result.solution)
    assert result.cost == solution_cost(problem, result.solution)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("local_search", [0, 1, 2])
def test_every_native_operator_keeps_the_twins_equal(checked_sync, kind, local_search):
    problem = make_problem(kind, 60, 5, capacity=30)
    destroy = _natives(kind, "destroy")
    repair = _natives(kind, "repair", local_search=local_search)
    result = glns.solve(problem, destroy, repair, iterations=1500, seed=3)
    _check_result(problem, result)
    assert all(record.calls > 0 for record in result.destroy_stats + result.repair_stats)


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
def test_on_demand_distances_and_many_routes(checked_sync, kind):
    problem = make_problem(kind, 300, 7, capacity=12)     # about 60 short routes
    coords = problem.coords
    problem._core = CoreInstance(problem.core_code, None, problem.demands, problem.capacity,
                                 coords=coords, rounding="exact")
    assert problem.core.on_demand
    result = glns.solve(problem, iterations=1500, seed=4)
    _check_result(problem, result)


@pytest.mark.parametrize("kind", KINDS)
def test_restarts_keep_the_twins_equal(checked_sync, kind):
    # 450 nodes: the default portfolio of a large tour (granular repairs, lazy positions)
    problem = make_problem(kind, 450, 6, capacity=30)
    params = glns.SolveParams(restart=glns.Restart(stall=0.01, temperature=0.5))
    result = glns.solve(problem, iterations=1500, seed=6, params=params)
    _check_result(problem, result)
    assert result.restarts >= 3


def test_the_default_portfolio_from_a_warm_start(checked_sync):
    problem = make_problem("cvrp", 120, 8, capacity=20)
    first = glns.solve(problem, iterations=300, seed=1)
    result = glns.solve(problem, iterations=1500, seed=2, initial_solution=first.solution)
    _check_result(problem, result)
    assert result.cost <= first.cost


def _flaky_destroy(solution, k, problem_data):
    """A destroy (any kind) that returns malformed output three times in four: a duplicate in
    `removed` (the loader marks nodes while it checks them), a foreign node, a missing node."""
    tsp = "demands" not in problem_data
    routes = [list(solution)] if tsp else [list(r) for r in solution]
    victims = []
    for route in routes:
        while route and len(victims) < k:
            victims.append(route.pop(random.randrange(len(route))))
    partial = routes[0] if tsp else [r for r in routes if r]
    fault = random.randrange(4)
    if fault == 1 and victims:
        return victims + victims[:1], partial
    if fault == 2:
        return victims + [10**6], partial
    if fault == 3 and len(victims) > 1:
        return victims[1:], partial
    return victims, partial


@pytest.mark.parametrize("kind", ["cvrp", "ovrp", "tsp"])
def test_failed_python_operators_leave_the_twins_equal(checked_sync, kind):
    problem = make_problem(kind, 40, 9, capacity=25)
    repair = _natives(kind, "repair", local_search=1)
    result = glns.solve(problem, glns.operators.from_callable(_flaky_destroy, "destroy"), repair,
                        iterations=600, seed=5)
    _check_result(problem, result)
    (record,) = result.destroy_stats
    assert 0 < record.failures < record.calls


@pytest.mark.parametrize("kind", KINDS)
def test_sync_after_either_twin_changed(kind):
    """The loop's two cases: the candidate was accepted (the current one takes its changes)
    or rejected (the candidate goes back); after each sync the twins are the same, and
    sync_from equals a full copy."""
    n = 80
    problem = make_problem(kind, n, 3, capacity=15)
    inst = problem.core
    cur, cand, full = Solution(inst), Solution(inst), Solution(inst)
    cur.random_init(1)
    cur.cost()
    cand.copy_from(cur)
    cur.forget_changes()
    rng = SplitMix64(9)
    for step in range(120):
        native_chain_step(inst, kind, cand, step, rng, n)
        assert cand.cost() == solution_cost(problem, cand.routes())
        if rng.randrange(2):            # accepted: the old current solution catches up
            cur, cand = cand, cur
        full.copy_from(cur)             # a full copy keeps cur's marks
        cand.sync_from(cur)
        assert cand.same_as(cur) and cand.same_as(full)
        assert cand.routes() == cur.routes() and cand.cost() == cur.cost()


def test_an_unmarked_change_is_caught():
    """The check can fail: a change whose marks are lost is not synced, and same_as says so."""
    problem = make_problem("cvrp", 50, 2, capacity=20)
    inst = problem.core
    cur, cand = Solution(inst), Solution(inst)
    cur.random_init(1)
    cur.cost()
    cand.copy_from(cur)
    cur.forget_changes()
    rng = SplitMix64(4)
    native_chain_step(inst, "cvrp", cand, 1, rng, 50)
    cand.cost()
    cand.forget_changes()
    cand.sync_from(cur)
    assert not cand.same_as(cur)
