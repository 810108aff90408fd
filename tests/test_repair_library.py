"""Library repair operators (blink and regret insertion) against their plain-Python twins.

Given the same SplitMix64 seed a native operator and its twin (glns.operators.library.repair)
must return the same complete solution and leave the generator in the same state. Every
completed solution must route each node exactly once and respect the capacity.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import glns
from glns import datasets
from glns._core._native_ops import apply_destroy, apply_repair
from glns._core._repair import regret_trace
from glns.operators.library import repair as twins
from glns.operators.seeds import BY_PROBLEM
from glns.problems import base as problem_base
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

KINDS = ["tsp", "cvrp", "ovrp", "vrptw"]


def _case(kind, n, seed, capacity, frac, destroy="random_removal"):
    """A random instance, a random complete solution (with time windows: every customer in a
    random order by the time-aware greedy twin) and a destroyed copy of it."""
    problem = make_problem(kind, n, seed, capacity)
    if problem.timed:
        order = list(range(1, problem.n_nodes))
        np.random.RandomState(seed).shuffle(order)
        x = BY_PROBLEM["vrptw"].greedy_insertion([], order, problem.problem_data())
    else:
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
# regret_insertion

@settings(max_examples=60, deadline=None)
@given(**instances, k=st.sampled_from([2, 3]), neighbours=st.sampled_from([0, 0, 1, 3, 8, 200]))
def test_regret_insertion_matches_twin(kind, n, seed, capacity, frac, destroy, k, neighbours):
    problem, partial, removed = _case(kind, n, seed, capacity, frac, destroy)
    params = {"k": k, "neighbours": neighbours}
    complete, state = apply_repair("regret_insertion", problem.core, partial, removed, seed, params)
    twin = twins.regret_insertion(partial, removed, problem.problem_data(), SplitMix64(seed), **params)
    assert complete == twin
    assert state == seed          # deterministic: no random numbers drawn
    _assert_complete(problem, complete)


@settings(max_examples=40, deadline=None)
@given(**instances, k=st.sampled_from([2, 3]), neighbours=st.sampled_from([0, 1, 2, 5, 200]))
def test_regret_cache_equals_full_recomputation(kind, n, seed, capacity, frac, destroy, k, neighbours):
    """Before every insertion, each pending node's cached options (per route, or the k best
    tour positions), granular flag and score equal a from-scratch computation."""
    problem, partial, removed = _case(kind, n, seed, capacity, frac, destroy)
    snapshots, complete = regret_trace(problem.core, partial, removed, k, neighbours)
    assert len(snapshots) == len(removed)
    assert [len(snap["cache"]) for snap in snapshots] == list(range(len(removed), 0, -1))
    data = problem.problem_data()
    for snap in snapshots:
        ref = twins.regret_reference(snap["routes"], list(snap["cache"]), data, k, neighbours)
        for w, (options, granular, score) in ref.items():
            assert snap["cache"][w] == options, (w, snap["routes"])
            assert snap["granular"][w] == granular
            assert snap["scores"][w] == score
    assert complete == apply_repair("regret_insertion", problem.core, partial, removed, 0,
                                    {"k": k, "neighbours": neighbours})[0]


@pytest.mark.parametrize("kind", ["cvrp", "ovrp", "vrptw"])
@pytest.mark.parametrize("k, neighbours", [(2, 0), (3, 0), (2, 5)])
def test_regret_cache_with_many_routes(kind, k, neighbours):
    """About 90 routes, far more than the cheapest options a slot holds (TOP_HELD): held
    options get dearer, drop out and are replaced, and the scores still equal a recomputation."""
    problem, partial, removed = _case(kind, 150, 7, 10, 0.3)
    assert len(partial) > 60
    snapshots, complete = regret_trace(problem.core, partial, removed, k, neighbours)
    data = problem.problem_data()
    for snap in snapshots:
        ref = twins.regret_reference(snap["routes"], list(snap["cache"]), data, k, neighbours)
        assert {w: score for w, (_, _, score) in ref.items()} == snap["scores"]
    twin = twins.regret_insertion(partial, removed, data, SplitMix64(0), k=k, neighbours=neighbours)
    assert complete == twin


def test_regret2_hand_computed_choice():
    """Depot (0,0); routes [1] with 1 at (2,0) and [2] with 2 at (0,2); removed 3 at (2,1) and
    4 at (1,1). Node 4 is cheaper to insert (2*sqrt(2) - 2 = 0.83 into either route: regret 0)
    but node 3 has regret sqrt(5) - 1 = 1.24: route 0 costs sqrt(5) + 1 - 2, route 1
    2 sqrt(5) - 2 (a new route 2 sqrt(5)). So regret-2 inserts 3 first, at the first of its two
    equal positions in route 0; then 4 goes between the depot and 3 (sqrt(2) + 1 - sqrt(5))."""
    coords = [[0, 0], [2, 0], [0, 2], [2, 1], [1, 1]]
    problem = glns.CVRP(coords, [0, 1, 1, 1, 1], 100)
    snapshots, complete = regret_trace(problem.core, [[1], [2]], [4, 3], 2, 0)
    r5, r2 = math.sqrt(5), math.sqrt(2)
    assert snapshots[0]["scores"][3] == pytest.approx((0, r5 - 1, r5 - 1))
    assert snapshots[0]["scores"][4] == (0, 0.0, pytest.approx(2 * r2 - 2))
    assert snapshots[1]["routes"] == [[3, 1], [2]]
    assert complete == [[4, 3, 1], [2]]
    # greedy in the given order takes 4 first, and the cheapest-first rule would too
    greedy, _ = apply_repair("greedy_insertion", problem.core, [[1], [2]], [4, 3], 0)
    assert greedy[0][0] == 4


def test_regret_missing_option_goes_first():
    """k = 3, capacity 3: routes [1] (load 1) and [2] (load 2). Node 3 (demand 2) fits only
    route 0 or a new route, one option short of 3, so M counts for it: it goes before node 4
    (demand 1, three options) although its finite part is smaller (-2.4 against 2.0)."""
    coords = [[0, 0], [2, 0], [0, 2], [0, 2.5], [1, 1]]
    problem = glns.CVRP(coords, [0, 1, 2, 2, 1], 3)
    snapshots, complete = regret_trace(problem.core, [[1], [2]], [4, 3], 3, 0)
    missing3, regret3, _ = snapshots[0]["scores"][3]
    missing4, regret4, _ = snapshots[0]["scores"][4]
    assert (missing3, missing4) == (1, 0)
    c1 = 2.5 + math.hypot(2, 2.5) - 2
    assert regret3 == pytest.approx((5.0 - c1) - c1)
    assert regret4 == pytest.approx(2.0) and regret3 < regret4
    assert snapshots[1]["routes"] == [[3, 1], [2]]
    problem.check(complete)


@pytest.mark.parametrize("bad", [{"k": 1}, {"k": 4}, {"k": 2.5}, {"neighbours": 0.5}])
def test_regret_rejects_bad_parameters(bad):
    problem = make_problem("tsp", 6, 1, 0)
    with pytest.raises(glns.exceptions.OperatorError):
        apply_repair("regret_insertion", problem.core, [0, 1], [2, 3, 4, 5], 0, bad)
    with pytest.raises(ValueError, match="k must be"):
        apply_repair("regret_insertion", problem.core, [0, 1], [2, 3, 4, 5], 0, (4, 0))


# ------------------------------------------------------------------------------------------
# tiny instances, every parameter combination

TINY_PARAMS = [("blink_insertion", {"order": o, "blink_rate": b, "neighbours": g})
               for o in range(5) for b in (0.0, 0.5, 1.0) for g in (0, 1, 5)]
TINY_PARAMS += [("regret_insertion", {"k": k, "neighbours": g}) for k in (2, 3) for g in (0, 1, 5)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [2, 3])
def test_tiny_instances(kind, n):
    """n = 2, 3 with everything or half removed, capacity 9 (each route may hold one node)."""
    for seed in range(4):
        for frac in (0.5, 1.0):
            problem, partial, removed = _case(kind, n, seed, 9, frac)
            for name, params in TINY_PARAMS:
                complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
                rng = SplitMix64(seed)
                twin = getattr(twins, name)(partial, removed, problem.problem_data(), rng, **params)
                assert complete == twin, (name, params)
                assert state == rng.state
                _assert_complete(problem, complete)


@pytest.mark.parametrize("name, params", [("blink_insertion", {"blink_rate": 0.3}),
                                          ("regret_insertion", {"k": 3})])
def test_empty_routes_in_partial_are_dropped_as_the_core_does(name, params):
    problem = make_problem("ovrp", 8, 2, 12)
    partial = [[], [1, 2], [], [3]]
    complete, state = apply_repair(name, problem.core, partial, [4, 5, 6, 7, 8], 5, params)
    rng = SplitMix64(5)
    assert complete == getattr(twins, name)(partial, [4, 5, 6, 7, 8], problem.problem_data(), rng, **params)
    assert state == rng.state
    _assert_complete(problem, complete)


# ------------------------------------------------------------------------------------------
# through the solver

LIBRARY_REPAIRS = ["blink_insertion", "regret_insertion"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", LIBRARY_REPAIRS)
def test_library_repair_in_solve(kind, name):
    problem = make_problem(kind, 30, 11, 15)
    result = glns.solve(problem, destroy="random_removal", repair=[name], iterations=50, seed=2)
    problem.check(result.solution)
    assert result.cost == pytest.approx(problem.cost(result.solution))
    assert result.repair_stats[0].calls == 50 and result.repair_stats[0].failures == 0


# ------------------------------------------------------------------------------------------
# The route scan on every kind of distance source: the symmetric fast path (two distances per
# position, from a matrix or on demand from coordinates; on a tour one, and the edges' owned
# costs) and the asymmetric one must choose as the twins do.

def _asymmetric(kind, n, seed, capacity):
    """A random asymmetric matrix (no triangle inequality either)."""
    rs = np.random.default_rng(seed)
    m = n if kind == "tsp" else n + 1
    d = rs.random((m, m))
    np.fill_diagonal(d, 0.0)
    if kind == "tsp":
        return glns.TSP(distances=d)
    q = np.r_[0, rs.integers(1, 10, n)]
    return (glns.CVRP if kind == "cvrp" else glns.OVRP)(distances=d, demands=q, capacity=capacity)


def _on_demand(kind, n, seed, capacity, monkeypatch):
    """Coordinates whose core computes distances on demand (nint, so that ties happen)."""
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    rs = np.random.default_rng(seed)
    xy = np.floor(rs.random((n + (kind != "tsp"), 2)) * 30)
    if kind == "tsp":
        problem = glns.TSP(xy, rounding="nint")
    else:
        q = np.r_[0, rs.integers(1, 10, n)]
        problem = (glns.CVRP if kind == "cvrp" else glns.OVRP)(xy, q, capacity, rounding="nint")
    assert problem.core.on_demand
    return problem


@pytest.mark.parametrize("source", ["asymmetric", "on_demand"])
@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       capacity=st.sampled_from([9, 15, 50]), blink_rate=st.sampled_from([0.0, 0.2]))
def test_repairs_match_twins_on_every_distance_source(monkeypatch, source, kind, n, seed, frac,
                                                      capacity, blink_rate):
    if source == "asymmetric":
        problem = _asymmetric(kind, n, seed, capacity)
        assert not problem.core.symmetric
    else:
        problem = _on_demand(kind, n, seed, capacity, monkeypatch)
    x = random_solution(problem, SplitMix64(seed + 99))
    k = max(1, int(round(frac * problem.n_customers)))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed + 1)
    data = problem.problem_data()
    # on demand, the core's candidates have neighbours in every quadrant: the twins take them
    near = problem.core.near
    cases = [("blink_insertion", {"order": 0, "blink_rate": blink_rate, "neighbours": 0},
              twins.blink_insertion),
             ("regret_insertion", {"k": 2, "neighbours": 0}, twins.regret_insertion),
             # granular, with the whole list behind the 3 nearest on a tour
             ("blink_insertion", {"order": 0, "blink_rate": blink_rate, "neighbours": 3},
              twins.blink_insertion),
             ("regret_insertion", {"k": 2, "neighbours": 3}, twins.regret_insertion)]
    for name, params, twin in cases:
        complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
        rng = SplitMix64(seed)
        assert complete == twin(partial, removed, data, rng, candidates=near, **params), name
        assert state == rng.state, name
        _assert_complete(problem, complete)
    complete, state = apply_repair("greedy_insertion", problem.core, partial, removed, seed, {})
    rng = SplitMix64(seed)
    assert complete == BY_PROBLEM[kind].greedy_insertion(partial, removed, data, rng)
    assert state == rng.state


@pytest.mark.parametrize("seed", range(4))
def test_tour_repairs_widen_to_the_whole_list_before_every_position(seed):
    """A removed stretch of a good tour holds all g nearest neighbours of the cities in its
    middle. Those are tried next to their routed neighbours among the whole neighbour list
    (CAND_WIDE), not at every position; the native caches and choices equal the twins'."""
    problem = make_problem("tsp", 150, seed, 0)
    tour = glns.solve(problem, iterations=300, seed=seed).solution
    removed, partial, _ = apply_destroy("string_removal", problem.core, tour, 50, seed)
    data = problem.problem_data()
    g = 3
    snapshots, complete = regret_trace(problem.core, partial, removed, 2, g)
    levels = [level for snap in snapshots for level in snap["granular"].values()]
    assert twins.CAND_WIDE in levels
    assert twins.CAND_ALL not in levels     # some neighbour of the whole list is always routed
    for snap in snapshots:
        ref = twins.regret_reference(snap["routes"], list(snap["cache"]), data, 2, g)
        for w, (options, level, score) in ref.items():
            assert (snap["cache"][w], snap["granular"][w], snap["scores"][w]) == (options, level, score)
            if level == twins.CAND_WIDE:    # every cached edge touches a whole-list neighbour
                route = snap["routes"]
                wide = set(problem.core.neighbours[w].tolist())
                for _, pos in options:
                    a, b = route[pos - 1], route[pos % len(route)]
                    assert a in wide or b in wide
                assert not set(problem.core.near[w][:g].tolist()) & set(route)
    assert complete == twins.regret_insertion(partial, removed, data, SplitMix64(0), k=2, neighbours=g)
    params = {"order": 0, "blink_rate": 0.05, "neighbours": g}
    blinked, state = apply_repair("blink_insertion", problem.core, partial, removed, seed, params)
    rng = SplitMix64(seed)
    assert blinked == twins.blink_insertion(partial, removed, data, rng, **params)
    assert state == rng.state
    _assert_complete(problem, blinked)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), frac=st.floats(0.02, 0.4), g=st.sampled_from([5, 20, 40]),
       destroy=st.sampled_from(["random_removal", "string_removal"]))
def test_granular_repairs_and_local_search_on_quadrant_candidates(monkeypatch, seed, frac, g, destroy):
    """On a tour computed on demand the core's candidates have neighbours in every quadrant;
    given that table the twins (repairs and local search) make the same choices."""
    from glns._core._local_search import local_search_py
    from glns.operators.library.local_search import local_search

    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    rs = np.random.default_rng(seed)
    xy = rs.random((5, 2))[rs.integers(0, 5, 120)] * 1000 + rs.random((120, 2)) * 20  # clusters
    problem = glns.TSP(xy, rounding="nint")
    core = problem.core
    assert core.on_demand and not np.array_equal(core.near, core.neighbours[:, :20])
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, int(round(frac * problem.n_customers)))
    removed, partial, _ = apply_destroy(destroy, core, x, k, seed + 1)
    data = problem.problem_data()
    for name, params, twin in (("blink_insertion", {"order": 0, "blink_rate": 0.1, "neighbours": g},
                                twins.blink_insertion),
                               ("regret_insertion", {"k": 2, "neighbours": g}, twins.regret_insertion)):
        complete, state = apply_repair(name, core, partial, removed, seed, params)
        rng = SplitMix64(seed)
        assert complete == twin(partial, removed, data, rng, candidates=core.near, **params), name
        assert state == rng.state
    touched = list(removed)
    assert local_search_py(core, complete, touched) == local_search(complete, data, touched,
                                                                     neighbours=core.near)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       capacity=st.sampled_from([9, 15, 50, 400]), blink_rate=st.sampled_from([0.0, 0.2]))
def test_vrptw_repairs_match_twins_with_distances_on_demand(monkeypatch, n, seed, frac, capacity,
                                                            blink_rate):
    """Time windows with the route bounds of an on-demand core (how files of more than 600
    customers run): the bounds skip routes and the time span skips positions, and the choices
    (and random draws) are still those of the twins' full scans."""
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    problem, partial, removed = _case("vrptw", n, seed, capacity, frac)
    assert problem.core.on_demand
    data = problem.problem_data()
    for name, params in (("blink_insertion", {"order": 0, "blink_rate": blink_rate}),
                         ("blink_insertion", {"order": 4, "blink_rate": blink_rate, "neighbours": 3}),
                         ("regret_insertion", {"k": 2}), ("regret_insertion", {"k": 3, "neighbours": 3})):
        complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
        rng = SplitMix64(seed)
        assert complete == getattr(twins, name)(partial, removed, data, rng, **params), name
        assert state == rng.state, name
        _assert_complete(problem, complete)


@pytest.mark.parametrize("layout", ["random", "clustered", "mixed"])
def test_vrptw_repairs_match_twins_on_long_routes(layout):
    """Solomon's class 2 (long horizon, wide windows, large capacity): routes of tens of
    customers, where the repairs narrow each route's positions by bisection; the choices and
    random draws are still those of the twins' full scans."""
    problem = datasets.generate_vrptw(90, 7, layout, "long", "wide")
    data = problem.problem_data()
    order = list(range(1, problem.n_nodes))
    np.random.RandomState(7).shuffle(order)
    x = BY_PROBLEM["vrptw"].greedy_insertion([], order, data)
    assert max(len(route) for route in x) >= 15
    for seed in range(4):
        removed, partial, _ = apply_destroy("random_removal", problem.core, x, 10 + 10 * seed, seed)
        for name, params in (("greedy_insertion", {}),
                             ("blink_insertion", {"order": 4, "blink_rate": 0.1}),
                             ("regret_insertion", {"k": 2})):
            complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
            if name == "greedy_insertion":
                assert complete == BY_PROBLEM["vrptw"].greedy_insertion(partial, removed, data)
                continue
            rng = SplitMix64(seed)
            assert complete == getattr(twins, name)(partial, removed, data, rng, **params), name
            assert state == rng.state, name
            _assert_complete(problem, complete)
