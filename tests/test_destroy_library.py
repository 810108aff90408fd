"""Native destroy operators of the library against their plain-Python twins
(glns.operators.library.destroy), and the properties each operator promises."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns._core._instance import CoreInstance
from glns._core._native_ops import NATIVE_DESTROY, apply_destroy
from glns._core._solution import check
from glns.exceptions import OperatorError
from glns.operators import native
from glns.operators.library import destroy as twins
from glns.operators.natives import NATIVE_OPERATORS
from glns.problems import KIND_CODES
from glns.reference import random_solution
from glns.rng import SplitMix64

from conftest import make_problem

LIBRARY = ["string_removal", "related_removal", "route_removal", "segment_removal"]
CASES = [(name, kind) for name in LIBRARY for kind in ("tsp", "cvrp", "ovrp")
         if kind in NATIVE_OPERATORS[name].problems]

#: random parameter vectors in each operator's valid range (registry order)
PARAMS = {
    "string_removal": st.fixed_dictionaries({
        "max_string_len": st.integers(1, 15).map(float),
        "split_rate": st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0),
        "split_depth": st.sampled_from([0.0, 0.01, 1.0]) | st.floats(0.0, 1.0)}),
    "related_removal": st.fixed_dictionaries({"randomness": st.sampled_from([1.0, 6.0, 1e9])
                                              | st.floats(1.0, 50.0)}),
    "route_removal": st.just({}),
    "segment_removal": st.fixed_dictionaries({"segments": st.integers(1, 8).map(float)}),
}


def _flat(kind, partial):
    return list(partial) if kind == "tsp" else [c for route in partial for c in route]


def _instance(kind, n, seed, capacity, max_neighbours):
    """A random instance, its core with a neighbour table of `max_neighbours` columns (short
    tables exercise the fallbacks), the matching problem_data and a random solution."""
    problem = make_problem(kind, n, seed, capacity)
    core = CoreInstance(KIND_CODES[kind], problem.distances, problem.demands, problem.capacity,
                        max_neighbours=max_neighbours)
    data = problem.problem_data()
    data["neighbours"] = core.neighbours
    return problem, core, data, random_solution(problem, SplitMix64(seed + 7))


def _run_both(name, kind, core, data, x, k, seed, params):
    """Native and twin on the same stream; asserts they agree and returns the native output."""
    removed, partial, state = apply_destroy(name, core, x, k, seed, params)
    rng = SplitMix64(seed)
    t_removed, t_partial = getattr(twins, name)(x, k, data, rng, **params)
    assert removed == t_removed
    assert partial == t_partial
    assert state == rng.state
    return removed, partial


def test_registry_and_codes_agree():
    for name in LIBRARY:
        assert name in NATIVE_DESTROY and NATIVE_OPERATORS[name].kind == "destroy"
        assert callable(getattr(twins, name))
    assert NATIVE_OPERATORS["route_removal"].problems == {"cvrp", "ovrp", "vrptw"}


@pytest.mark.parametrize("name,kind", CASES)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(2, 60), seed=st.integers(0, 10**6),
       frac=st.floats(0.0, 1.0), capacity=st.sampled_from([9, 15, 50]),
       max_neighbours=st.sampled_from([0, 1, 3, 100]))
def test_native_matches_twin_and_keeps_node_set(name, kind, data, n, seed, frac, capacity,
                                                max_neighbours):
    params = data.draw(PARAMS[name])
    problem, core, pdata, x = _instance(kind, n, seed, capacity, max_neighbours)
    m = problem.n_customers
    k = max(1, round(frac * m))
    removed, partial = _run_both(name, kind, core, pdata, x, k, seed, params)
    assert check(core, partial, removed) is None   # node set, no duplicates, capacities
    assert sorted(_flat(kind, partial) + removed) == list(range(problem.first_node, problem.n_nodes))
    assert 1 <= len(removed) <= m
    if kind != "tsp":
        assert all(route for route in partial)
    if name in ("related_removal", "segment_removal"):
        assert len(removed) == k
    if name == "string_removal" and kind == "tsp":
        assert len(removed) <= k


@pytest.mark.parametrize("name,kind", CASES)
def test_large_instance_default_table(name, kind):
    """n > 101: the default 100-neighbour table is shorter than the instance (fallback paths)."""
    problem, core, pdata, x = _instance(kind, 260, 5, 50, 100)
    del pdata["neighbours"]    # the twin builds the core's table itself
    for seed, k in ((1, 52), (2, 200), (3, 260)):
        removed, partial = _run_both(name, kind, problem.core, pdata, x, k, seed,
                                     {"randomness": 1.0} if name == "related_removal" else {})
        assert check(problem.core, partial, removed) is None


@pytest.mark.parametrize("name,kind", CASES)
def test_tiny_instances_every_k(name, kind):
    """n = 2, 3 with every k (also 0 and above n: clamped to [1, n]) and tight capacity."""
    for n in (2, 3):
        for seed in range(6):
            problem, core, pdata, x = _instance(kind, n, seed, 9, 100)
            m = problem.n_customers
            for k in range(0, m + 3):
                removed, partial = _run_both(name, kind, core, pdata, x, k, seed, {})
                assert check(core, partial, removed) is None
                assert 1 <= len(removed) <= m
                if name != "string_removal":
                    assert len(removed) >= min(max(k, 1), m)


def test_defaults_and_invalid_params():
    assert native("string_removal").params == (10.0, 0.5, 0.01)
    assert native("related_removal").params == (6.0,)
    assert native("segment_removal").params == (1.0,)
    for name, bad in [("string_removal", {"split_rate": 1.5}), ("string_removal", {"max_string_len": 2.5}),
                      ("string_removal", {"split_depth": -0.1}), ("related_removal", {"randomness": 0.5}),
                      ("segment_removal", {"segments": 0}), ("route_removal", {"segments": 1})]:
        with pytest.raises(OperatorError):
            native(name, **bad)


def test_route_removal_refuses_tsp():
    problem = make_problem("tsp", 10, 1, 0)
    with pytest.raises(ValueError, match="CVRP or OVRP"):
        apply_destroy("route_removal", problem.core, list(range(10)), 3, 0)
    with pytest.raises(ValueError, match="CVRP or OVRP"):
        twins.route_removal(list(range(10)), 3, problem.problem_data())


# --- operator-specific properties -------------------------------------------------------------

def _vrp_cases(n, seed, capacity):
    problem = make_problem("cvrp", n, seed, capacity)
    return problem, random_solution(problem, SplitMix64(seed))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       capacity=st.sampled_from([9, 20, 50]))
def test_string_removal_cuts_one_contiguous_string_per_route(n, seed, frac, capacity):
    problem, x = _vrp_cases(n, seed, capacity)
    k = max(1, round(frac * n))
    lsmax = max(1, min(10, n // len(x)))
    removed, _, _ = apply_destroy("string_removal", problem.core, x, k, seed,
                                  {"split_rate": 0.0})
    ks_max = max(1, 4 * k // (1 + lsmax) - 1)
    touched = 0
    for route in x:
        pos = sorted(route.index(c) for c in removed if c in route)
        if pos:
            touched += 1
            assert pos == list(range(pos[0], pos[0] + len(pos)))   # one contiguous string
            assert len(pos) <= lsmax
            # removal order is route order
            assert [c for c in removed if c in route] == [route[p] for p in pos]
    assert 1 <= touched <= ks_max


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       depth=st.sampled_from([0.0, 1.0]))
def test_split_string_keeps_a_middle_block(n, seed, frac, depth):
    """split_rate 1: inside each ruined route the removed nodes span a window with one kept
    gap in the middle (of 1 node when split_depth = 1), or are a plain string when l = 1 or
    the route has no room."""
    problem, x = _vrp_cases(n, seed, 50)
    k = max(1, round(frac * n))
    lsmax = max(1, min(10, n // len(x)))
    removed, _, _ = apply_destroy("string_removal", problem.core, x, k, seed,
                                  {"split_rate": 1.0, "split_depth": depth})
    for route in x:
        pos = sorted(route.index(c) for c in removed if c in route)
        if not pos:
            continue
        gaps = [p for p in range(pos[0], pos[-1] + 1) if p not in pos]
        if len(pos) >= 2 and len(route) > len(pos):
            assert 1 <= len(gaps) <= lsmax
            assert gaps == list(range(gaps[0], gaps[0] + len(gaps)))   # one kept block
            if depth == 1.0:
                assert len(gaps) == 1
            else:   # m grows to its cap min(|t| - l, l_max)
                assert len(gaps) == min(len(route) - len(pos), lsmax)
        else:
            assert not gaps


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_string_removal_tsp_strings_are_contiguous(n, seed, frac):
    """Replaying the removal list on the tour: it splits into at most k_s runs, each contiguous
    (cyclically, in removal order) in the tour as it was when the run was cut."""
    problem = make_problem("tsp", n, seed, 0)
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, round(frac * n))
    lsmax = min(10, n)
    removed, _, _ = apply_destroy("string_removal", problem.core, x, k, seed, {"split_rate": 0.0})
    tour, i, runs = list(x), 0, 0
    while i < len(removed):
        p = tour.index(removed[i])
        j = i + 1
        while j < len(removed) and j - i < lsmax and tour[(p + j - i) % len(tour)] == removed[j]:
            j += 1
        gone = set(removed[i:j])
        tour = [c for c in tour if c not in gone]
        i, runs = j, runs + 1
    assert runs <= max(1, 4 * k // (1 + lsmax) - 1)
    assert len(removed) <= k


@pytest.mark.parametrize("kind", ["tsp", "cvrp"])
@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_related_removal_greedy_takes_nearest_routed_neighbours(kind, n, seed, frac):
    problem = make_problem(kind, n, seed, 30)
    x = random_solution(problem, SplitMix64(seed))
    k = max(2, round(frac * problem.n_customers))
    removed, _, _ = apply_destroy("related_removal", problem.core, x, k, seed, {"randomness": 1e9})
    neigh = problem.core.neighbours
    assert removed[1] == neigh[removed[0]][0]
    for i in range(1, len(removed)):
        done = set(removed[:i])
        nearest = {next(int(v) for v in neigh[r] if int(v) not in done) for r in removed[:i]}
        assert removed[i] in nearest


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       capacity=st.sampled_from([9, 20, 50]), open_=st.booleans())
def test_route_removal_removes_whole_routes(n, seed, frac, capacity, open_):
    problem = make_problem("ovrp" if open_ else "cvrp", n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, round(frac * n))
    removed, partial, _ = apply_destroy("route_removal", problem.core, x, k, seed)
    # removed is a concatenation of whole original routes; all but the last stayed below k
    i, taken = 0, []
    while i < len(removed):
        route = next(r for r in x if r[0] == removed[i])
        assert removed[i:i + len(route)] == route
        taken.append(route)
        i += len(route)
    assert len(removed) >= k
    assert len(removed) - len(taken[-1]) < k
    assert [r for r in x if r not in taken] == partial


@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_single_segment_is_contiguous(kind, n, seed, frac):
    problem = make_problem(kind, n, seed, 30)
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, round(frac * problem.n_customers))
    removed, _, _ = apply_destroy("segment_removal", problem.core, x, k, seed)
    assert len(removed) == k
    if kind == "tsp":
        p = x.index(removed[0])
        assert removed == [x[(p + i) % n] for i in range(k)]
        return
    # chunks: whole routes, then one contiguous piece of a last route
    i = 0
    while i < k:
        route = next(r for r in x if removed[i] in r)
        p = route.index(removed[i])
        piece = route[p:p + k - i]
        assert removed[i:i + len(piece)] == piece
        assert len(piece) == len(route) or i + len(piece) == k
        i += len(piece)



@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0),
       spread=st.sampled_from([1.0, 1.5, 3.0, 1e9]))
def test_radial_removal_takes_nodes_near_its_seed(kind, n, seed, frac, spread):
    """The first removed node is the seed; the others are k - 1 of the c = ceil(spread (k - 1))
    nodes nearest to it (by its distance row, ties by id), nearest first; spread 1: the k - 1
    nearest exactly."""
    problem = make_problem(kind, n, seed, 30)
    x = random_solution(problem, SplitMix64(seed))
    m = problem.n_customers
    k = max(1, round(frac * m))
    removed, _, _ = apply_destroy("radial_removal", problem.core, x, k, seed, {"spread": spread})
    centre, others = removed[0], removed[1:]
    row = problem.distances[centre]
    near = sorted((v for v in range(problem.first_node, problem.n_nodes) if v != centre),
                  key=lambda v: (row[v], v))
    c = min(m - 1, max(k - 1, math.ceil(spread * (k - 1))))
    assert len(removed) == k
    assert others == [v for v in near[:c] if v in set(others)]
    if spread == 1.0:
        assert others == near[:k - 1]
    with pytest.raises(OperatorError):
        native("radial_removal", spread=0.5)

# --- inside the solver ------------------------------------------------------------------------

@pytest.mark.parametrize("name,kind", CASES)
def test_solve_with_library_destroy(name, kind):
    problem = make_problem(kind, 30, 11, 25)
    result = glns.solve(problem, destroy=[name], repair="greedy_insertion", iterations=50, seed=3)
    problem.check(result.solution)
    assert result.cost == pytest.approx(problem.cost(result.solution))
    stats = result.destroy_stats[0]
    assert stats.calls == 50 and stats.failures == 0


def test_solve_mixes_library_and_python_twin():
    problem = make_problem("cvrp", 25, 4, 30)
    result = glns.solve(problem, destroy=["string_removal", twins.related_removal],
                        repair="greedy_insertion", iterations=40, seed=1)
    problem.check(result.solution)
    assert all(s.failures == 0 for s in result.destroy_stats)


def test_operator_for_another_problem_kind_is_refused_before_the_run():
    from glns.exceptions import OperatorError
    problem = make_problem("tsp", 12, 0, 30)
    with pytest.raises(OperatorError, match="'route_removal' does not handle TSP \\(only CVRP, OVRP, VRPTW\\)"):
        glns.solve(problem, "route_removal", "greedy_insertion", iterations=5)
