"""Penalised loads: the native local search that may overload routes at a weight per unit of
excess, then repairs them, against its plain-Python twin, a replay that checks every move's
penalised delta, and the solve that uses it."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns._core._local_search import local_search_py
from glns._core._native_ops import apply_destroy, apply_repair
from glns.operators.library import local_search as ref_ls
from glns.operators.library.local_search import local_search
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

VRP_KINDS = ("cvrp", "ovrp")
CAPACITIES = st.sampled_from([9, 10, 15, 50])   # demands are 1..9: 9 is as tight as it gets
WEIGHTS = st.sampled_from([1e-3, 0.05, 0.3, 2.0, 40.0])


def _excess(problem, routes):
    q = problem.problem_data()["demands"]
    return sum(max(0, sum(int(q[c]) for c in r) - problem.capacity) for r in routes)


def _repaired(problem, seed, frac):
    """A greedy repair after a random removal, and the removed nodes (the loop's situation)."""
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, int(frac * problem.n_customers))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed)
    repaired, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
    return repaired, removed


@pytest.mark.parametrize("kind", VRP_KINDS)
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES, weight=WEIGHTS,
       level=st.sampled_from([1, 3, 4]), frac=st.floats(0.0, 1.0), full=st.booleans())
def test_penalised_search_matches_reference(kind, n, seed, capacity, weight, level, frac, full):
    """Same moves, same repairs, same result (overloaded or not), from all nodes or from the
    reinserted ones."""
    problem = make_problem(kind, n, seed, capacity)
    start, removed = _repaired(problem, seed, frac)
    touched = None if full else removed
    y = local_search_py(problem.core, start, touched, level=level, load_weight=weight)
    assert y == local_search(start, problem.problem_data(), touched, level=level,
                             load_weight=weight)
    assert sorted(c for r in y for c in r) == list(range(1, problem.n_nodes))


@pytest.mark.parametrize("kind", VRP_KINDS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES, weight=WEIGHTS,
       level=st.sampled_from([1, 3, 4]))
def test_every_penalised_move_lowers_distance_plus_weighted_excess(kind, n, seed, capacity,
                                                                   weight, level):
    """Replayed in the twin: each applied move lowers cost + weight * excess, recomputed from
    scratch, by more than the search's threshold."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    search = ref_ls._Search(x, problem.problem_data(), None, level, weight)

    def priced():
        routes = [r for r in search.routes if r]
        return solution_cost(problem, routes) + search.lam * _excess(problem, routes)

    plain = search.vrp_try

    def checked(v):
        before = priced()
        moved = plain(v)
        if moved:
            assert priced() < before - 0.5 * search.eps
        return moved

    search.vrp_try = checked
    search.run(None)
    assert sorted(c for r in search.routes for c in r) == list(range(1, problem.n_nodes))


@pytest.mark.parametrize("kind", VRP_KINDS)
@settings(max_examples=20, deadline=None)
@given(n=st.integers(5, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES, weight=WEIGHTS,
       frac=st.floats(0.05, 0.5))
def test_only_reinserted_nodes_add_excess_load(kind, n, seed, capacity, weight, frac):
    """From a touched list, a move of any other node never raises the total excess load."""
    problem = make_problem(kind, n, seed, capacity)
    start, removed = _repaired(problem, seed, frac)
    search = ref_ls._Search(start, problem.problem_data(), None, 1, weight)
    plain = search.vrp_try

    def checked(v):
        before = _excess(problem, search.routes)
        moved = plain(v)
        if moved and v not in search.free:
            assert _excess(problem, search.routes) <= before
        return moved

    search.vrp_try = checked
    search.penalised_run(removed)


@pytest.mark.parametrize("kind", VRP_KINDS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES,
       level=st.sampled_from([1, 3]))
def test_a_prohibitive_weight_is_the_hard_search(kind, n, seed, capacity, level):
    """When any excess costs more than any move can save, the penalised search makes exactly
    the moves of the search that keeps every load within the capacity."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    hard = local_search_py(problem.core, x, level=level)
    assert local_search_py(problem.core, x, level=level, load_weight=1e12) == hard


def test_routes_never_outgrow_the_core_rows():
    """Equal demands, three per vehicle: the rows hold three customers, so even a negligible
    weight cannot pile more into one route (the core would write past its row)."""
    rs = np.random.default_rng(5)
    coords = rs.random((31, 2)) * 100
    problem = glns.CVRP(coords, np.r_[0, np.full(30, 4)], 12)
    x = random_solution(problem, SplitMix64(5))
    y = local_search_py(problem.core, x, load_weight=1e-6)
    assert max(len(r) for r in y) <= 3
    assert y == local_search(x, problem.problem_data(), load_weight=1e-6)


def test_the_penalised_search_finds_what_the_hard_one_cannot():
    """Two full routes whose better split needs a customer to pass through an overloaded
    route first: a light weight lets the search through it and the repairs restore the loads."""
    found = False
    for seed in range(40):
        problem = make_problem("cvrp", 30, seed, 10)
        x = random_solution(problem, SplitMix64(seed))
        hard = local_search_py(problem.core, x)
        soft = local_search_py(problem.core, x, load_weight=0.05)
        if _excess(problem, soft) == 0:
            problem.check(soft)
            found |= solution_cost(problem, soft) < solution_cost(problem, hard) - 1e-9
    assert found


def test_a_light_weight_can_leave_routes_overloaded():
    """Repairs at 10x and 100x a negligible weight do not pay for a new route: the search
    reports the overloaded result (the loop drops it), the same in the twin."""
    left = 0
    for seed in range(10):
        problem = _tight_cvrp(40, seed)
        x = random_solution(problem, SplitMix64(seed))
        y = local_search_py(problem.core, x, load_weight=1e-9)
        assert y == local_search(x, problem.problem_data(), load_weight=1e-9)
        left += _excess(problem, y) > 0
    assert left > 0


def test_load_weight_must_be_positive():
    problem = make_problem("cvrp", 10, 1, 15)
    x = random_solution(problem, SplitMix64(1))
    with pytest.raises(ValueError, match="load_weight"):
        local_search_py(problem.core, x, load_weight=0.0)


# ------------------------------------------------------------------------------ in the loop

def _tight_cvrp(n=120, seed=3):
    """Routes nearly full: total demand is 97 % of ten vehicles."""
    rs = np.random.default_rng(seed)
    coords = rs.random((n + 1, 2)) * 1000
    q = np.r_[0, rs.integers(1, 20, n)]
    return glns.CVRP(coords, q, int(np.ceil(q.sum() / (10 * 0.97))))


@pytest.mark.parametrize("kind", VRP_KINDS)
def test_a_penalised_solve_returns_a_feasible_best_and_reports_its_searches(kind):
    problem = _tight_cvrp() if kind == "cvrp" else make_problem("ovrp", 80, 4, 20)
    params = glns.SolveParams(load_penalty=0.3)
    result = glns.solve(problem, iterations=400, seed=2, params=params)
    problem.check(result.solution)
    assert result.cost == pytest.approx(solution_cost(problem, result.solution))
    stats = result.extra["load_penalty"]
    assert stats["searches"] == 400         # one search per iteration (both default repairs)
    assert 0 < stats["feasible"] < stats["searches"]
    assert stats["feasible"] + stats["repaired"] + stats["dropped"] == stats["searches"]
    assert stats["weight"] > 0
    again = glns.solve(problem, iterations=400, seed=2, params=params)
    assert again.solution == result.solution and again.extra == result.extra
    plain = glns.solve(problem, iterations=400, seed=2, params=glns.SolveParams(load_penalty=None))
    assert "load_penalty" not in plain.extra
    assert plain.solution != result.solution


def test_the_weight_follows_the_target_share():
    """A higher target share makes overloading dearer: the final weight is higher and more
    searches end within the capacity."""
    problem = _tight_cvrp(150, 7)
    runs = {share: glns.solve(problem, iterations=1500, seed=1,
                              params=glns.SolveParams(load_penalty=share)).extra["load_penalty"]
            for share in (0.1, 0.9)}
    assert runs[0.9]["weight"] > runs[0.1]["weight"]
    assert runs[0.9]["feasible"] / runs[0.9]["searches"] > runs[0.1]["feasible"] / runs[0.1]["searches"]


def test_time_windows_and_tours_ignore_the_penalty():
    params = glns.SolveParams(load_penalty=0.3)
    for problem in (make_problem("vrptw", 30, 1, 20), make_problem("tsp", 30, 1, 0)):
        with_it = glns.solve(problem, iterations=200, seed=1, params=params)
        assert with_it.solution == glns.solve(problem, iterations=200, seed=1).solution
        assert "load_penalty" not in with_it.extra


@pytest.mark.parametrize("share", [0, 1, -0.2, 1.5, "on", True])
def test_load_penalty_share_must_be_inside_0_1(share):
    with pytest.raises(ValueError, match="load_penalty"):
        glns.SolveParams(load_penalty=share)


def test_bench_solver_with_changed_params():
    from glns.benchmark.solvers import parse_solver

    spec = parse_solver("default:load_penalty=0.3")
    assert spec.params.load_penalty == 0.3 and spec.kind == "glns"
    assert spec.label == "glns default portfolio (load_penalty=0.3)"
    paper = parse_solver("paper:load_penalty=0.4,decay=0.2")
    assert paper.params.decay == 0.2 and paper.params.initial == "random"   # the paper preset
    with pytest.raises(ValueError, match="load_penalty"):
        parse_solver("default:load_penalty=2")
    with pytest.raises(ValueError, match="no_such"):
        parse_solver("default:no_such=1")
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_solver("default:load_penalty")


@pytest.mark.parametrize("kind", VRP_KINDS)
@pytest.mark.parametrize("level", [1, 3])       # 3: with SWAP*, as the default's repairs there
def test_native_loop_replays_the_reference_loop_with_penalised_loads(kind, level):
    """The core's load penalty (weight, adaptation every 100 searches, repairs, dropped
    candidates) against glns.reference with the twin search after the twin repair."""
    from glns.operators import native
    from glns.operators.seeds import BY_PROBLEM
    from glns.reference import reference_alns

    problem = _tight_cvrp(30, 9) if kind == "cvrp" else make_problem("ovrp", 30, 9, 12)
    params = glns.SolveParams(load_penalty=0.3)
    seeds = BY_PROBLEM[problem.kind]
    got = glns.solve(problem, ["random_removal", "worst_removal"],
                     [native("greedy_insertion", local_search=level)], iterations=350, seed=5,
                     params=params)
    ref = reference_alns(problem, [seeds.random_removal, seeds.worst_removal],
                         [seeds.greedy_insertion], 350, 5, params, local_search=[level])
    np.testing.assert_array_equal(got.best_curve, ref["best_curve"])
    np.testing.assert_array_equal(got.current_curve, ref["current_curve"])
    assert got.solution == ref["best"]
    np.testing.assert_array_equal([s.outcomes for s in got.repair_stats], ref["repair_outcomes"])
    assert got.extra["load_penalty"] == ref["load_penalty"]
    stats = ref["load_penalty"]
    assert stats["feasible"] > 0 and stats["repaired"] > 0     # both paths were taken


def _routes_of_length(kind, per_route, n=48, seed=4):
    """An instance whose routes hold `per_route` customers at the fewest routes."""
    rs = np.random.default_rng(seed)
    coords = rs.random((n + 1, 2)) * 100
    q = np.r_[0, np.full(n, 5)]
    cls = glns.CVRP if kind == "cvrp" else glns.OVRP
    return cls(coords, q, 5 * per_route)


def test_customers_per_route_counts_the_fewest_routes():
    assert _routes_of_length("cvrp", 6).customers_per_route == 6.0
    assert _routes_of_length("cvrp", 7, n=60).customers_per_route == 60 / 9     # ceil(60 / 7) routes
    assert make_problem("tsp", 20, 1, 0).customers_per_route is None


@pytest.mark.parametrize("kind", VRP_KINDS)
def test_auto_penalises_loads_below_400_customers_or_on_short_routes(kind):
    """The default ("auto") is load_penalty=0.3 below 400 customers, and from 400 on below 8
    customers per route; off otherwise. The paper's preset is always off."""
    auto = glns.SolveParams()
    assert auto.load_penalty == "auto" and glns.SolveParams.paper().load_penalty is None
    for n, per_route, share in ((48, 6, 0.3), (48, 12, 0.3), (399, 12, 0.3), (400, 6, 0.3),
                                (400, 7, 0.3), (400, 8, None), (400, 12, None)):
        problem = _routes_of_length(kind, per_route, n=n)
        assert auto.load_penalty_share(problem.customers_per_route, n) == (share or 0.0)
    for n, per_route, share in ((48, 12, 0.3), (400, 6, 0.3), (400, 12, None)):
        problem = _routes_of_length(kind, per_route, n=n)
        got = glns.solve(problem, iterations=150, seed=3)
        fixed = glns.solve(problem, iterations=150, seed=3, params=glns.SolveParams(load_penalty=share))
        assert got.solution == fixed.solution and got.extra == fixed.extra
        assert ("load_penalty" in got.extra) == (share is not None)
        problem.check(got.solution)
