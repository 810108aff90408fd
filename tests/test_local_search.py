"""Native local search (glns._core._local_search) against its plain-Python reference
(glns.operators.library.local_search) and a brute-force local-optimality checker."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns import operators
from glns._core import _local_search as native_ls
from glns._core._local_search import local_search_py
from glns._core._native_ops import apply_destroy, apply_repair
from glns.exceptions import OperatorError
from glns.operators import natives
from glns.operators.library import local_search as ref_ls
from glns.operators.library.local_search import improving_moves, local_search
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

KINDS = ("tsp", "cvrp", "ovrp")
CAPACITIES = st.sampled_from([9, 10, 15, 50])   # demands are 1..9: 9 is as tight as it gets


def _nodes(problem, solution):
    flat = solution if problem.kind == "tsp" else [c for r in solution for c in r]
    return sorted(flat)


def _asymmetric(kind, n, seed, capacity=15):
    """An instance from a random asymmetric matrix (no triangle inequality either)."""
    rs = np.random.default_rng(seed)
    m = n if kind == "tsp" else n + 1
    d = rs.random((m, m))
    np.fill_diagonal(d, 0.0)
    d[0, 0] = 0.3     # an empty route still costs nothing (a depot self-loop must not count)
    if kind == "tsp":
        return glns.TSP(distances=d)
    q = np.r_[0, rs.integers(1, 10, n)]
    return (glns.CVRP if kind == "cvrp" else glns.OVRP)(distances=d, demands=q, capacity=capacity)


def _check_result(problem, before, after, cost):
    problem.check(after)
    assert _nodes(problem, after) == list(range(problem.first_node, problem.n_nodes))
    assert cost == solution_cost(problem, after)          # Sol.cost is a full recomputation
    assert cost <= solution_cost(problem, before)


def test_constants_match_reference():
    assert native_ls.NEIGHBOURS == ref_ls.LS_NEIGHBOURS
    assert native_ls.REL_EPS == ref_ls.LS_REL_EPS


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES)
def test_full_search_matches_reference(kind, n, seed, capacity):
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True)
    assert y == local_search(x, problem.problem_data())
    _check_result(problem, x, y, cost)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES,
       frac=st.floats(0.0, 1.0))
def test_touched_search_after_repair_matches_reference(kind, n, seed, capacity, frac):
    """The repair hook: greedy insertion then the search from the reinserted nodes."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    k = max(1, int(frac * problem.n_customers))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed)
    repaired, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
    y, cost = local_search_py(problem.core, repaired, removed, return_cost=True)
    assert y == local_search(repaired, problem.problem_data(), removed)
    _check_result(problem, repaired, y, cost)
    hooked, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed,
                             {"local_search": 1})
    assert hooked == y


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 21), seed=st.integers(0, 10**6), capacity=CAPACITIES, level=st.integers(1, 4))
def test_result_is_local_optimum(kind, n, seed, capacity, level):
    """n <= 21: the 20 neighbours cover every node, so no move of any pair may improve (with
    levels 2 to 4, 3-opt's path swaps on a tour, SWAP* and strings on VRP routes included)."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    y = local_search_py(problem.core, x, level=level)
    assert improving_moves(y, problem.problem_data(), limit=1, level=level) == []


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 14), seed=st.integers(0, 10**6))
def test_asymmetric_matrix(kind, n, seed):
    """Only moves exact for asymmetric distances: every applied move really lowers the cost,
    the native search matches the reference, and the result is a local optimum."""
    problem = _asymmetric(kind, n, seed)
    assert not problem.core.symmetric
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True)
    assert y == local_search(x, problem.problem_data())
    _check_result(problem, x, y, cost)
    assert improving_moves(y, problem.problem_data(), limit=1) == []
    # replay in the reference, checking the true cost after every move
    search = ref_ls._Search(x, problem.problem_data(), None)
    try_move = search.tsp_try if kind == "tsp" else search.vrp_try

    def checked(v):
        before = search.cost()
        moved = try_move(v)
        if moved:
            assert search.cost() < before
        return moved

    if kind == "tsp":
        search.tsp_try = checked
    else:
        search.vrp_try = checked
    search.run(None)
    assert search.result() == y


@pytest.mark.parametrize("kind", KINDS)
def test_checker_finds_moves_and_search_removes_them(kind):
    """The checker is not vacuous: a random solution has improving moves of every family the
    search uses, and they are all gone afterwards."""
    problem = make_problem(kind, 12, 7, 20)
    x = random_solution(problem, SplitMix64(7))
    moves = improving_moves(x, problem.problem_data())
    families = {m[0][0] for m in moves}
    expected = {"2-opt", "or-opt"} if kind == "tsp" else {"relocate", "swap", "2-opt", "2-opt*"}
    assert expected <= families
    for move, gain in moves:
        assert gain > 0
    assert improving_moves(local_search_py(problem.core, x), problem.problem_data()) == []


def test_ovrp_suffix_and_whole_route_reversal():
    """An open route is priced without its last arc: reversing it can pay (depot arc only)."""
    coords = np.array([[0.0, 0.0], [3.0, 0.0], [2.0, 0.0], [1.0, 0.0]])
    problem = glns.OVRP(coords, [0, 1, 1, 1], 10)
    y = local_search_py(problem.core, [[1, 2, 3]])
    assert y == [[3, 2, 1]]
    assert solution_cost(problem, y) == pytest.approx(3.0)
    # the same in a CVRP is no improvement (both directions cost 6)
    cvrp = glns.CVRP(coords, [0, 1, 1, 1], 10)
    assert solution_cost(cvrp, local_search_py(cvrp.core, [[1, 2, 3]])) == pytest.approx(6.0)


def test_tiny_instances():
    assert local_search_py(make_problem("tsp", 2, 1, 0).core, [1, 0]) == [1, 0]
    assert local_search_py(make_problem("tsp", 3, 1, 0).core, [2, 0, 1]) == [2, 0, 1]
    assert local_search_py(make_problem("cvrp", 1, 1, 50).core, [[1]]) == [[1]]
    assert local_search_py(make_problem("ovrp", 1, 1, 50).core, [[1]], []) == [[1]]


def test_touched_empty_changes_nothing():
    problem = make_problem("cvrp", 30, 3, 30)
    x = random_solution(problem, SplitMix64(3))
    assert local_search_py(problem.core, x, []) == x


@pytest.mark.parametrize("kind", KINDS)
def test_a_deadline_stops_the_search_and_leaves_a_feasible_solution(kind):
    problem = make_problem(kind, 40, 5, 15)
    x = random_solution(problem, SplitMix64(5))
    full = local_search_py(problem.core, x)
    assert full != x
    assert local_search_py(problem.core, x, seconds=-1.0) == x      # past: no move at all
    assert local_search_py(problem.core, x, seconds=60.0) == full   # not reached: the same moves
    big = glns.datasets.generate(kind, 5000, 2)
    y = random_solution(big, SplitMix64(2))
    z, cost = local_search_py(big.core, y, return_cost=True, seconds=0.02)   # full: 0.15-0.3 s
    big.check(z)
    assert cost == big.cost(z) < big.cost(y)
    assert cost > big.cost(local_search_py(big.core, y))          # stopped long before the end


def test_registry_gives_every_repair_the_local_search_setting():
    """local_search is a named setting common to every repair operator, after its own
    parameters in Operator.params (no fixed slot), and becomes the bound operator's flag."""
    assert operators.native("greedy_insertion", local_search=1).params == (1.0,)
    assert operators.native("greedy_insertion").params == (0.0,)
    assert operators.native("blink_insertion", local_search=1).params == (4.0, 0.01, 0.0, 1.0)
    assert operators.native("greedy_insertion", local_search=2).params == (2.0,)
    assert operators.native("greedy_insertion", local_search=3).params == (3.0,)
    assert operators.native("greedy_insertion", local_search=4).params == (4.0,)
    with pytest.raises(OperatorError):
        operators.native("greedy_insertion", local_search=5)
    with pytest.raises(OperatorError):
        operators.native("random_removal", local_search=1)
    for name, spec in natives.NATIVE_OPERATORS.items():
        names = [p.name for p in spec.all_params]
        if spec.kind == "repair":
            assert spec.common == natives.REPAIR_COMMON and names[-1] == "local_search"
            assert len(natives.native_params(name, {})) == len(spec.params) + 1
            assert spec.bind(natives.native_params(name, {"local_search": 1})).values["local_search"] == 1.0
            assert spec.bind(natives.native_params(name, {})).values["local_search"] == 0.0
        else:
            assert spec.common == () and "local_search" not in names


# --- 3-opt (local_search=2 on a tour) -------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 120), seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_three_opt_matches_reference(n, seed, frac):
    """Full search and the repair hook's touched search, with 3-opt, native against the
    reference; a full search with 3-opt ends at a local optimum of the other moves too."""
    problem = glns.datasets.generate("tsp", n, seed)
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True, level=2)
    assert y == local_search(x, problem.problem_data(), level=2)
    _check_result(problem, x, y, cost)
    assert local_search_py(problem.core, y) == y
    k = max(1, int(frac * n))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed)
    hooked, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed,
                             {"local_search": 2})
    repaired, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
    assert hooked == local_search(repaired, problem.problem_data(), removed, level=2)
    problem.check(hooked)


def test_three_opt_moves_lower_the_cost_and_every_kind_occurs():
    """Replayed in the reference: every 3-opt move lowers the true cost, and all three kinds
    occur: t4 after t3 with the paths swapping places (3 exchanges) or reversed in place (2),
    and t4 before t3 (a 2-opt move and a second one from its closing arc)."""
    kinds = []
    for n, seed in [(50, 3), (120, 1), (400, 2)]:
        problem = glns.datasets.generate("tsp", n, seed)
        x = local_search_py(problem.core, random_solution(problem, SplitMix64(seed)))  # 2-opt/or-opt optimum
        search = ref_ls._Search(x, problem.problem_data(), None, level=2)
        exchanges = []

        def counted_exchange(*arcs, exchange=search.exchange, exchanges=exchanges):
            exchanges.append(arcs)
            exchange(*arcs)

        def checked(kind, method, search=search, exchanges=exchanges):
            def run(*args):
                before = search.cost()
                exchanges.clear()
                moved = method(*args)
                if moved:
                    assert search.cost() < before
                    kinds.append((kind, len(exchanges)))
                return moved
            return run

        search.exchange = counted_exchange
        search._split = checked("split", search._split)
        search._valid = checked("valid", search._valid)
        search.run(None)
        assert search.result() == local_search_py(problem.core, x, level=2)
        assert search.cost() < problem.cost(x)
    assert set(kinds) == {("split", 3), ("split", 2), ("valid", 2)}


def test_three_opt_finds_the_path_swap_the_checker_sees():
    """The checker's or-3opt family is not vacuous: this 2-opt/or-opt local optimum has an
    improving swap of two adjacent paths, and the search with 3-opt removes every one."""
    problem = glns.datasets.generate("tsp", 50, 3)
    y = local_search_py(problem.core, random_solution(problem, SplitMix64(3)))
    data = problem.problem_data()
    assert improving_moves(y, data, limit=1) == []
    moves = improving_moves(y, data, level=2)
    assert moves and {m[0][0] for m in moves} == {"or-3opt"}
    z = local_search_py(problem.core, y, level=2)
    assert problem.cost(z) < problem.cost(y)
    assert improving_moves(z, data, limit=1, level=2) == []


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 21), seed=st.integers(0, 10**6))
def test_three_opt_result_is_local_optimum(n, seed):
    """n <= 21: the 20 neighbours cover every city, so no path swap may improve either."""
    problem = make_problem("tsp", n, seed, 15)
    y = local_search_py(problem.core, random_solution(problem, SplitMix64(seed)), level=2)
    assert improving_moves(y, problem.problem_data(), limit=1, level=2) == []


def test_deeper_levels_change_nothing_on_an_asymmetric_tour():
    """An asymmetric tour has no 3-opt: local_search=2 and 3 are local_search=1 there."""
    for seed in range(5):
        problem = _asymmetric("tsp", 14, seed)
        x = random_solution(problem, SplitMix64(seed))
        for level in (2, 3):
            assert local_search_py(problem.core, x, level=level) == local_search_py(problem.core, x)


@pytest.mark.parametrize("kind", KINDS)
def test_solve_with_local_search(kind):
    problem = make_problem(kind, 40, 11, 30)
    repair = operators.native("greedy_insertion", local_search=1)
    with_ls, without = [], []
    for seed in range(3):
        res = glns.solve(problem, repair=repair, iterations=50, seed=seed)
        problem.check(res.solution)
        assert res.cost == pytest.approx(solution_cost(problem, res.solution), rel=1e-12)
        # the search never makes the best solution worse
        assert solution_cost(problem, local_search_py(problem.core, res.solution)) <= res.cost
        with_ls.append(res.cost)
        without.append(glns.solve(problem, repair="greedy_insertion", iterations=50, seed=seed).cost)
    # fixed seeds: deterministic, and by a wide margin in practice
    assert np.mean(with_ls) <= np.mean(without)


@pytest.mark.parametrize("n, seed", [(8, 19), (13, 63), (11, 191)])
def test_route_merge_with_depot_self_loop(n, seed):
    """Cases where 2-opt* empties a route while d[0, 0] > 0 (found by search): the emptied
    route must be priced at 0, as sol_cost does; the result must still be a local optimum."""
    problem = _asymmetric("cvrp", n, seed, 15)
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True)
    assert y == local_search(x, problem.problem_data())
    _check_result(problem, x, y, cost)
    assert improving_moves(y, problem.problem_data(), limit=1) == []


# ------------------------------------------------------------------------------------ SWAP*

@pytest.mark.parametrize("kind", ("cvrp", "ovrp"))
def test_swap_star_improves_local_optima_of_the_other_moves(kind):
    """Not vacuous: local optima of the other moves still have improving SWAP* moves (found
    by brute force) on some of these instances, and the search with SWAP* leaves none."""
    extra = 0
    for seed in range(12):
        problem = make_problem(kind, 16, seed, 20)
        data = problem.problem_data()
        x = random_solution(problem, SplitMix64(seed))
        y = local_search(x, data)
        extra += any(m[0] == "swap*" for m, _ in improving_moves(y, data, level=3))
        z = local_search_py(problem.core, y, level=3)
        assert improving_moves(z, data, limit=1, level=3) == []
    assert extra >= 1


@pytest.mark.parametrize("kind", ("cvrp", "ovrp"))
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 10**6), capacity=CAPACITIES)
def test_swap_star_off_matches_the_reference_without_it(kind, n, seed, capacity):
    """The ablation switch: with SWAP* off the native search at level 3 is the reference without it
    (and with it on, the reference at level 3)."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    was = native_ls.set_swap_star(False)
    try:
        y = local_search_py(problem.core, x, level=3)
    finally:
        native_ls.set_swap_star(was)
    assert y == local_search(x, problem.problem_data())
    assert local_search_py(problem.core, x, level=3) == local_search(x, problem.problem_data(), level=3)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 30), seed=st.integers(0, 10**6), capacity=CAPACITIES,
       kind=st.sampled_from(["cvrp", "ovrp"]))
def test_every_swap_star_move_prices_its_routes_exactly(n, seed, capacity, kind):
    """Each SWAP* the reference applies lowers the true cost (a full recomputation before and
    after) and leaves a valid solution (capacity, every customer once)."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    search = ref_ls._Search(x, problem.problem_data(), None, level=3)
    original = search.try_swap_star

    def checked(v, u, rem_v):
        before = search.cost()
        moved = original(v, u, rem_v)
        if moved:
            after = search.cost()
            assert after < before
            problem.check([r for r in search.routes if r])
        return moved

    search.try_swap_star = checked
    search.run(None)
    assert search.result() == local_search_py(problem.core, x, level=3)


@pytest.mark.parametrize("kind", ("cvrp", "ovrp"))
@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 60), seed=st.integers(0, 10**6), capacity=CAPACITIES)
def test_swap_star_ties_match_the_reference(kind, n, seed, capacity):
    """On a small integer grid many insertion positions cost the same (and nodes coincide):
    the native search's cached three cheapest positions break ties as the reference's full
    scan of the shorter route does (the lowest index)."""
    rng = np.random.default_rng(seed)
    xy = rng.integers(0, 4, (n + 1, 2)).astype(float)
    q = rng.integers(1, 10, n + 1)
    q[0] = 0
    problem = (glns.CVRP if kind == "cvrp" else glns.OVRP)(xy, q, capacity)
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True, level=3)
    assert y == local_search(x, problem.problem_data(), level=3)
    _check_result(problem, x, y, cost)


def test_swap_star_cache_with_more_nodes_than_slots():
    """Above 1,024 nodes the cache of cheapest positions (4,096 slots, hashed by node and
    route) has more collisions: a search after a repair still matches the reference that
    scans every route."""
    problem = make_problem("cvrp", 1500, 3, 100)
    data = problem.problem_data()
    base = local_search_py(problem.core, random_solution(problem, SplitMix64(3)))
    moved = 0
    for seed in range(3):
        removed, partial, _ = apply_destroy("random_removal", problem.core, base, 60, seed)
        repaired, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
        y = local_search_py(problem.core, repaired, removed, level=3)
        assert y == local_search(repaired, data, removed, neighbours=problem.core.near, level=3)
        moved += y != local_search(repaired, data, removed, neighbours=problem.core.near)
    assert moved >= 1       # SWAP* made a difference there


def _lowest_insertion(d):
    """Brute force: the lowest arc(x, v) + arc(v, y) - arc(x, y) over distinct x, v, y."""
    n = d.shape[0]
    low = np.inf
    for v in range(n):
        c = (d[:, v, None] + d[None, v, :]) - d
        others = np.ones(n, dtype=bool)
        others[v] = False
        c = c[others][:, others]
        np.fill_diagonal(c, np.inf)
        low = min(low, c.min())
    return low


@pytest.mark.parametrize("rounding", ("exact", "nint", "dimacs"))
@pytest.mark.parametrize("scale", (1.0, 1000.0))
def test_insertion_floor_of_rounded_coordinates_bounds_every_insertion(rounding, scale):
    """The bound SWAP* prunes with is below every insertion cost the rounded distances allow
    (and rounding does push some below zero), for the dense copy of a small instance and for
    distances computed on demand alike."""
    from glns._core._instance import CoreInstance

    lowest = np.inf
    for seed in range(6):
        rng = np.random.default_rng(seed)
        xy = rng.random((40, 2)) * scale
        problem = glns.CVRP(xy, np.r_[0, rng.integers(1, 10, 39)], 30, rounding=rounding)
        low = _lowest_insertion(np.asarray(problem.distances))
        lowest = min(lowest, low)
        on_demand = CoreInstance(problem.core_code, None, problem.demands, problem.capacity,
                                 coords=xy, rounding=rounding)
        for floor in (problem.core.insertion_floor, on_demand.insertion_floor):
            assert floor <= low
            assert floor > -1.5
    if rounding != "exact" and scale > 1:
        assert lowest < 0           # the slack is needed


def test_insertion_floor_of_a_matrix_is_exact_when_small_and_absent_when_large():
    from glns._core._instance import EXACT_FLOOR_NODES, matrix_insertion_floor

    rng = np.random.default_rng(5)
    d = rng.random((12, 12))
    np.fill_diagonal(d, 0.0)
    floor = matrix_insertion_floor(d)
    assert floor <= _lowest_insertion(d) < 0
    n = len(d)      # plain loops over every triple, degenerate ones included, and single arcs
    every = [(d[x, v] + d[v, y]) - d[x, y] for x in range(n) for v in range(n) for y in range(n)]
    assert floor == min(0.0, 2 * d.min(), min(every))
    problem = _asymmetric("cvrp", 11, 5)
    assert problem.core.insertion_floor == matrix_insertion_floor(problem.distances)
    big = np.ones((EXACT_FLOOR_NODES + 1,) * 2)
    assert matrix_insertion_floor(big) == -np.inf


def _solve_at_level(problem, level):
    """The cost of a short solve whose repair ends with the local search at `level`; its
    solution is checked to be valid."""
    repair = operators.native("greedy_insertion", local_search=level)
    res = glns.solve(problem, "random_removal", repair, iterations=200, seed=2)
    problem.check(res.solution)
    return res.cost


@pytest.mark.parametrize("kind", ("cvrp", "ovrp", "vrptw"))
def test_a_solve_at_level_3_searches_with_swap_star(kind):
    """local_search=3 reaches the search through the repair's setting: a run at level 3
    differs from one at level 2 (which has no SWAP* on VRP routes), and turning SWAP* off
    makes the two the same run."""
    problem = make_problem(kind, 60, 4, 30)
    assert _solve_at_level(problem, 3) != _solve_at_level(problem, 2)
    was = native_ls.set_swap_star(False)
    try:
        assert _solve_at_level(problem, 3) == _solve_at_level(problem, 2)
    finally:
        native_ls.set_swap_star(was)


# ------------------------------------------------------------------------------ strings

STRING_KINDS = ("cvrp", "ovrp", "vrptw")


@pytest.mark.parametrize("kind", STRING_KINDS)
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10**6), capacity=CAPACITIES,
       frac=st.floats(0.0, 1.0), full=st.booleans())
def test_strings_match_the_reference(kind, n, seed, capacity, frac, full):
    """Level 4 (strings of 2-3 customers relocated): the native search makes the twin's moves,
    from all nodes or from the reinserted ones, with and without time windows."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    touched = None
    if not full:
        k = max(1, int(frac * problem.n_customers))
        removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed)
        x, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
        touched = removed
    y, cost = local_search_py(problem.core, x, touched, return_cost=True, level=4)
    assert y == local_search(x, problem.problem_data(), touched, level=4)
    _check_result(problem, x, y, cost)


@pytest.mark.parametrize("kind", ("cvrp", "ovrp"))
@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 14), seed=st.integers(0, 10**6))
def test_strings_on_an_asymmetric_matrix(kind, n, seed):
    """Forward strings only (a reversed string costs something else backwards): the native
    search matches the twin and leaves no improving string move of the checker's."""
    problem = _asymmetric(kind, n, seed)
    x = random_solution(problem, SplitMix64(seed))
    y, cost = local_search_py(problem.core, x, return_cost=True, level=4)
    assert y == local_search(x, problem.problem_data(), level=4)
    _check_result(problem, x, y, cost)
    assert improving_moves(y, problem.problem_data(), limit=1, level=4) == []


@pytest.mark.parametrize("kind", ("cvrp", "ovrp"))
def test_strings_improve_local_optima_of_swap_star(kind):
    """Not vacuous: local optima of level 3 still have improving string moves (found by brute
    force) on some of these instances, and the search at level 4 leaves none."""
    extra = 0
    for seed in range(30):
        problem = make_problem(kind, 20, seed, 50)
        data = problem.problem_data()
        y = local_search_py(problem.core, random_solution(problem, SplitMix64(seed)), level=3)
        extra += any(m[0] == "string" for m, _ in improving_moves(y, data, level=4))
        z = local_search_py(problem.core, y, level=4)
        assert improving_moves(z, data, limit=1, level=4) == []
    assert extra >= 2


def test_strings_move_within_and_between_routes_forward_and_reversed():
    """Every kind of string move occurs: within a route and into another, forward and
    reversed, of 2 and of 3 customers (the twin's moves, which the native search makes)."""
    seen = set()
    for seed in range(6):
        problem = make_problem("cvrp", 30, seed, 50)
        search = ref_ls._Search(random_solution(problem, SplitMix64(seed)), problem.problem_data(),
                                None, level=4)
        original = search.try_string

        def recorded(v, u, a, length, after, rev, held):
            within = search.route_of[v] == search.route_of[u]
            moved = original(v, u, a, length, after, rev, held)
            if moved:
                seen.add((within, rev, length))
            return moved

        search.try_string = recorded
        search.run(None)
    assert seen == {(w, r, n) for w in (False, True) for r in (False, True) for n in (2, 3)}


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 30), seed=st.integers(0, 10**6), capacity=CAPACITIES,
       kind=st.sampled_from(STRING_KINDS))
def test_every_string_move_prices_its_routes_exactly(n, seed, capacity, kind):
    """Each string move the twin applies lowers the true cost (a full recomputation before and
    after) and leaves a valid solution: capacity, time windows, every customer once."""
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed))
    search = ref_ls._Search(x, problem.problem_data(), None, level=4)
    original = search.try_string
    applied = []

    def checked(*args):
        before = search.cost()
        moved = original(*args)
        if moved:
            assert search.cost() < before
            problem.check([r for r in search.routes if r])
            applied.append(args)
        return moved

    search.try_string = checked
    search.run(None)
    assert search.result() == local_search_py(problem.core, x, level=4)


@pytest.mark.parametrize("kind", STRING_KINDS)
def test_a_solve_at_level_4_relocates_strings(kind):
    """local_search=4 reaches the search through the repair's setting: a run at level 4
    differs from one at level 3, and its solution is valid."""
    problem = make_problem(kind, 60, 4, 30)
    assert _solve_at_level(problem, 4) != _solve_at_level(problem, 3)
