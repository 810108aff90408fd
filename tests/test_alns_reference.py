"""The native ALNS loop against the plain-Python reference loop (glns.reference).

With the native seed operators on one side and their twins on the other, both loops draw the
same random numbers in the same order, so every statistic must agree exactly: the best and
current cost after each iteration, sigma outcome counts, weights, fitness F and synergy S.
"""

import numpy as np
import pytest

import glns
from glns.operators.seeds import BY_PROBLEM
from glns.params import AutoTemperature, FixedTemperature, Restart, SIGMA_AGGRESSIVE, SIGMA_FLAT
from glns.reference import reference_alns

from conftest import make_problem, make_tsp, make_vrp

PROBLEMS = {"tsp": lambda: make_tsp(18, 11), "cvrp": lambda: make_vrp(glns.CVRP, 18, 12, 25),
            "ovrp": lambda: make_vrp(glns.OVRP, 18, 13, 25),
            "vrptw": lambda: make_problem("vrptw", 18, 14, 25),
            # a fixed cost per route: half of it on every depot arc, in the core and the twins
            "vrptw-route-cost": lambda: _with_route_cost(make_problem("vrptw", 18, 14, 25), 0.7)}


def _with_route_cost(p, fee):
    return glns.VRPTW(p.coords, p.demands, p.capacity, p.time_windows, p.service_times, route_cost=fee)

PARAMS = {
    "paper": glns.SolveParams.paper(),
    "auto": glns.SolveParams(),
    "flat-uniform": glns.SolveParams(scores=SIGMA_FLAT, adaptive=False, decay=0.8,
                                     temperature=FixedTemperature(0.05, 0.99)),
    "aggressive": glns.SolveParams(scores=SIGMA_AGGRESSIVE, destroy_fraction=0.35,
                                   temperature=AutoTemperature(worse=0.05, accept=0.3)),
    "k-range": glns.SolveParams(destroy_fraction=(0.05, 0.4), max_destroy=6),
    "per-node-scaled": glns.SolveParams(temperature=AutoTemperature(reference_nodes=5),
                                        large_destroy=(10, 3)),
    "space-filling": glns.SolveParams(initial="space_filling"),
    # large_destroy's cap through the short-route rule alone (about 4.5 customers a route on
    # the VRPs; not on the TSP, which has no capacity)
    "short-routes": glns.SolveParams(large_destroy=(1000, 3)),
    # the large-tour rule from 10 cities on (k up to 4, 3x hotter): on the TSP only
    "large-tour": glns.SolveParams(large_destroy=(10, 2),
                                   large_tour=glns.LargeTour(cities=10, max_destroy=4, hotter=3.0)),
    # restarts every few iterations without a new best (the default's stall of a fifth of
    # 150 iterations rarely comes on these small instances)
    "restart-often": glns.SolveParams(restart=Restart(stall=0.04, temperature=0.3)),
    "restart-cold": glns.SolveParams(restart=Restart(stall=0.06, temperature=0.0)),
    "restart-fixed": glns.SolveParams.paper(restart=Restart(stall=0.05, temperature=0.5)),
}


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
@pytest.mark.parametrize("preset", sorted(PARAMS))
def test_native_loop_replays_reference_loop(kind, preset):
    problem = PROBLEMS[kind]()
    params = PARAMS[preset]
    seeds = BY_PROBLEM[problem.kind]
    iterations, seed = 150, 7
    if problem.timed and params.initial == "space_filling":
        with pytest.raises(ValueError, match="breaks time windows"):
            glns.solve(problem, iterations=1, params=params)
        return
    native = glns.solve(problem, ["random_removal", "worst_removal"], ["greedy_insertion"],
                        iterations=iterations, seed=seed, params=params)
    ref = reference_alns(problem, [seeds.random_removal, seeds.worst_removal],
                         [seeds.greedy_insertion], iterations, seed, params)
    assert native.initial_temperature == ref["initial_temperature"]
    np.testing.assert_array_equal(native.best_curve, ref["best_curve"])
    np.testing.assert_array_equal(native.current_curve, ref["current_curve"])
    assert native.cost == ref["best_cost"]
    assert native.solution == ref["best"]
    for stats, weights, fitness, outcomes in (
        (native.destroy_stats, ref["destroy_weights"], ref["destroy_fitness"], ref["destroy_outcomes"]),
        (native.repair_stats, ref["repair_weights"], ref["repair_fitness"], ref["repair_outcomes"]),
    ):
        np.testing.assert_array_equal([s.weight for s in stats], weights)
        np.testing.assert_array_equal([s.fitness for s in stats], fitness)
        np.testing.assert_array_equal([s.outcomes for s in stats], outcomes)
        assert [s.calls for s in stats] == outcomes.sum(axis=1).tolist()
    np.testing.assert_array_equal(native.synergy, ref["synergy"])
    assert native.restarts == ref["restarts"]
    if preset.startswith("restart"):
        assert native.restarts >= 1
    # the run really moved (the comparison is not between two idle loops)
    assert native.best_curve[-1] < native.current_curve[0] or native.best_curve[0] == native.best_curve[-1]
    assert sum(s.outcomes[0] for s in native.destroy_stats) >= 1


def test_bookkeeping_identities():
    """F equals the sigma-weighted outcome counts; S sums to the sum of F over destroy ops."""
    problem = PROBLEMS["cvrp"]()
    res = glns.solve(problem, iterations=300, seed=3, params=glns.SolveParams.paper())
    sigma = np.array(glns.SIGMA_PAPER)
    for st in res.destroy_stats + res.repair_stats:
        assert st.fitness == pytest.approx(float(np.dot(st.outcomes, sigma)))
    assert res.synergy.sum() == pytest.approx(sum(st.fitness for st in res.destroy_stats))
    assert res.synergy.sum(axis=1) == pytest.approx([st.fitness for st in res.destroy_stats])
    assert res.synergy.sum(axis=0) == pytest.approx([st.fitness for st in res.repair_stats])


@pytest.mark.parametrize("kind, n", [("tsp", 399), ("tsp", 400), ("tsp", 450), ("cvrp", 450)])
def test_reference_cost_matches_twin_on_both_sides_of_the_granular_threshold(kind, n):
    from glns._core._alns import REFERENCE_GRANULAR, reference_cost as native_reference_cost
    from glns.reference import reference_cost

    problem = glns.datasets.generate(kind, n, 3)
    native = native_reference_cost(problem.core, 11)
    assert native == reference_cost(problem, 11)
    # the granular construction of a large tour differs from the full greedy one (and on fewer
    # cities, or with a depot, it is the full greedy one)
    granular = kind == "tsp" and n >= REFERENCE_GRANULAR[0]
    from glns.operators.seeds import BY_PROBLEM
    from glns.problems.solutions import shuffled_nodes, solution_cost
    from glns.rng import SplitMix64

    rng = SplitMix64(11)
    full = solution_cost(problem, BY_PROBLEM[kind].greedy_insertion(
        [], shuffled_nodes(problem, rng), problem.problem_data(), rng))
    assert (native != full) == granular
