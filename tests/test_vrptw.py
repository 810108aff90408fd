"""VRPTW: the problem, its validation, the core's window checks and every native operator
against an independent plain-Python evaluation of routes (tests/conftest.make_vrptw_like and
glns.datasets.generate_vrptw instances)."""

import itertools
import math

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._local_search import local_search_py
from glns._core._native_ops import NATIVE_DESTROY, NATIVE_REPAIR, apply_destroy, apply_repair
from glns.exceptions import InfeasibleSolutionError, InvalidInstanceError
from glns.operators.seeds import vrptw as seeds
from glns.rng import SplitMix64

from conftest import make_problem


# ------------------------------------------------------------------ an independent evaluation

def _travel(problem, a, b):
    """Travel time from the coordinates, rounded as the instance says (not the core's code)."""
    (xa, ya), (xb, yb) = problem.coords[a], problem.coords[b]
    d = math.sqrt((xa - xb) ** 2 + (ya - yb) ** 2)
    if problem.rounding == "dimacs":
        return math.floor(d * 10.0) / 10.0
    return d


def independent_check(problem, routes):
    """(feasible, total distance, why not) of a VRPTW solution, from the instance's data."""
    seen = sorted(c for route in routes for c in route)
    if seen != list(range(1, problem.n_nodes)):
        return False, None, "not every customer exactly once"
    if problem.vehicles is not None and len(routes) > problem.vehicles:
        return False, None, "fleet"
    tw, service, total = problem.time_windows, problem.service_times, 0.0
    tol = 1e-6
    for route in routes:
        if sum(int(problem.demands[c]) for c in route) > problem.capacity:
            return False, None, "capacity"
        t, prev = float(tw[0, 0]), 0
        for c in route:
            total += _travel(problem, prev, c)
            t = max(t + _travel(problem, prev, c), float(tw[c, 0]))
            if t > tw[c, 1] + tol:
                return False, None, f"customer {c} late"
            t += float(service[c])
            prev = c
        total += _travel(problem, prev, 0)
        if t + _travel(problem, prev, 0) > tw[0, 1] + tol:
            return False, None, "depot late"
    return True, total, None


def _instances():
    out = [make_problem("vrptw", 25, seed, 30) for seed in range(3)]
    out += [datasets.generate_vrptw(30, seed, layout, horizon, windows)
            for seed, (layout, horizon, windows) in enumerate(
                [("random", "short", "tight"), ("clustered", "long", "wide"), ("mixed", "short", "wide")])]
    return out


INSTANCES = _instances()


# ------------------------------------------------------------------ the problem

def _line(**kw):
    """Depot at 0, customers at x = 1, 2 on a line: distances |i - j|."""
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    args = dict(demands=[0, 1, 1], capacity=10, time_windows=[[0, 100], [0, 5], [0, 10]],
                service_times=[0, 1, 1])
    args.update(kw)
    return glns.VRPTW(xy, args.pop("demands"), args.pop("capacity"), args.pop("time_windows"),
                      args.pop("service_times"), **args)


@pytest.mark.parametrize("change, message", [
    (dict(time_windows=[[0, 100], [5, 2], [0, 10]]), "customer 1 closes at 2, before it opens at 5"),
    (dict(time_windows=[[0, 100], [0, 0.5], [0, 10]]), "customer 1 cannot be served in time"),
    (dict(time_windows=[[0, 3], [0, 5], [0, 10]]), "customer 2 cannot be served in time"),
    (dict(service_times=[0, -1, 1]), "service time of customer 1 is negative"),
    (dict(service_times=[0, 1]), "service_times must have shape (3,)"),
    (dict(time_windows=[[0, 100], [0, 5]]), "time_windows must have shape (3, 2)"),
    (dict(vehicles=0), "vehicles must be a positive integer"),
    (dict(durations=np.ones((2, 2))), "durations must have shape (3, 3)"),
])
def test_invalid_data_is_a_clear_error(change, message):
    with pytest.raises(InvalidInstanceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _line(**change)


def test_a_late_customer_is_named_with_its_arrival_and_due_time():
    p = _line(time_windows=[[0, 100], [0, 3.5], [0, 10]])
    assert p.violation([[1, 2]]) is None and p.violation([[2], [1]]) is None
    # 0 -> 2 at 2, served until 3, -> 1 at 4 > 3.5
    err = p.violation([[2, 1]])
    assert "customer 1" in err and "reached at 4" in err and "due time 3.5" in err
    with pytest.raises(InfeasibleSolutionError, match="customer 1"):
        p.cost([[2, 1]])
    late = _line(time_windows=[[0, 5.5], [0, 5], [0, 5]])
    assert "back at the depot at 6" in late.violation([[1, 2]])     # 1 + 1 + 1 + 1 + 2


def test_waiting_and_durations():
    # customer 1 opens at 10: the route waits, serves 10..11, reaches 2 at 12 (due 12)
    p = _line(time_windows=[[0, 100], [10, 20], [0, 12]])
    assert p.violation([[1, 2]]) is None
    assert p.violation([[1, 2]]) is None and p.cost([[1, 2]]) == pytest.approx(4.0)
    slow = _line(time_windows=[[0, 100], [10, 20], [0, 12]], durations=2 * np.abs(
        np.subtract.outer(np.arange(3.0), np.arange(3.0))))
    assert "customer 2" in slow.violation([[1, 2]])      # travel takes twice as long
    assert slow.cost([[1], [2]]) == pytest.approx(6.0)   # the objective is still distance


def test_fleet_bound():
    p = _line(vehicles=1)
    assert "more than the fleet of 1" in p.violation([[1], [2]])
    r = glns.solve(p, iterations=50, seed=0)
    assert len(r.solution) == 1 and independent_check(p, r.solution)[0]


def test_problem_data_gives_operators_the_windows():
    p = INSTANCES[0]
    data = p.problem_data()
    assert data["time_windows"].shape == (p.n_nodes, 2) and not data["time_windows"].flags.writeable
    assert data["service_times"].shape == (p.n_nodes,)
    assert np.array_equal(data["durations"], p.distances) and data["vehicles"] is None


@pytest.mark.parametrize("layout", datasets.VRPTW_LAYOUTS)
@pytest.mark.parametrize("horizon", sorted(datasets.VRPTW_HORIZONS))
def test_generated_instances_are_valid_and_reproducible(layout, horizon):
    a = datasets.generate_vrptw(60, 3, layout, horizon, "tight")
    b = datasets.generate_vrptw(60, 3, layout, horizon, "tight")
    assert np.array_equal(a.time_windows, b.time_windows) and np.array_equal(a.coords, b.coords)
    assert (a.time_windows[:, 1] >= a.time_windows[:, 0]).all()
    assert datasets.generate("vrptw", 10, 0).kind == "vrptw"


# ------------------------------------------------------------------ the search

@pytest.mark.parametrize("index", range(len(INSTANCES)))
def test_solve_returns_feasible_solutions_with_the_independent_cost(index):
    p = INSTANCES[index]
    r = glns.solve(p, iterations=400, seed=index)
    ok, total, why = independent_check(p, r.solution)
    assert ok, why
    assert r.cost == pytest.approx(total, rel=1e-12)
    assert all(s.failures == 0 for s in r.repair_stats)    # the repairs never broke a window
    assert r.best_curve[-1] <= r.best_curve[0]


def test_solve_is_deterministic_and_respects_a_tight_fleet():
    p = INSTANCES[1]
    free = glns.solve(p, iterations=300, seed=2)
    assert glns.solve(p, iterations=300, seed=2).solution == free.solution
    bound = glns.VRPTW(p.coords, p.demands, p.capacity, p.time_windows, p.service_times,
                       vehicles=len(free.solution))
    r = glns.solve(bound, iterations=300, seed=2)
    assert len(r.solution) <= len(free.solution) and independent_check(bound, r.solution)[0]


def _start(problem, seed):
    """A feasible solution: every customer by the time-aware greedy twin, in a random order."""
    order = list(range(1, problem.n_nodes))
    np.random.RandomState(seed).shuffle(order)
    return seeds.greedy_insertion([], order, problem.problem_data())


@pytest.mark.parametrize("index", range(len(INSTANCES)))
def test_every_native_operator_keeps_the_windows(index):
    p = INSTANCES[index]
    sol = _start(p, index)
    assert independent_check(p, sol)[0]
    rng = SplitMix64(index)
    for step in range(40):
        dname = sorted(NATIVE_DESTROY)[step % len(NATIVE_DESTROY)]
        rname = sorted(NATIVE_REPAIR)[step % len(NATIVE_REPAIR)]
        removed, partial, _ = apply_destroy(dname, p.core, sol, 1 + step % 12, rng.next_u64())
        params = {"local_search": step % 3} if step % 3 else {}
        if step % 4 == 1 and "neighbours" in {q.name for q in NATIVE_REPAIR[rname].all_params}:
            params["neighbours"] = 5
        params = {k: v for k, v in params.items() if k in {q.name for q in NATIVE_REPAIR[rname].all_params}}
        sol, _ = apply_repair(rname, p.core, partial, removed, rng.next_u64(), params)
        ok, _, why = independent_check(p, sol)
        assert ok, f"{dname} + {rname} {params}: {why}"


@pytest.mark.parametrize("index", range(len(INSTANCES)))
def test_greedy_insertion_is_its_plain_python_twin(index):
    p = INSTANCES[index]
    rng = SplitMix64(100 + index)
    sol = _start(p, index)
    for step in range(15):
        removed, partial, _ = apply_destroy("random_removal", p.core, sol, 3 + step, rng.next_u64())
        native, _ = apply_repair("greedy_insertion", p.core, partial, removed, 0)
        twin = seeds.greedy_insertion(partial, removed, p.problem_data())
        assert native == twin
        sol = native


def _moves(routes):
    """Every relocate, swap, 2-opt* and intra-route reversal of a solution, as new solutions."""
    R = [list(r) for r in routes]
    for a in range(len(R)):
        for i, v in enumerate(R[a]):
            for b in range(len(R) + 1):
                target = R[b] if b < len(R) else []
                for pos in range(len(target) + (0 if b == a else 1)):
                    new = [list(r) for r in R] + [[]]
                    new[a].pop(i)
                    new[b].insert(pos, v)
                    yield [r for r in new if r]
        for j in range(len(R[a])):
            for k in range(j + 2, len(R[a]) + 1):
                new = [list(r) for r in R]
                new[a][j:k] = new[a][j:k][::-1]
                yield new
        for b in range(a + 1, len(R)):
            for i in range(len(R[a])):
                for j in range(len(R[b])):
                    new = [list(r) for r in R]
                    new[a][i], new[b][j] = new[b][j], new[a][i]
                    yield new
            for i in range(len(R[a]) + 1):
                for j in range(len(R[b]) + 1):
                    new = [list(r) for r in R]
                    new[a], new[b] = R[a][:i] + R[b][j:], R[b][:j] + R[a][i:]
                    yield [r for r in new if r]


def _string_moves(routes):
    """Every string of 2 or 3 customers moved anywhere else, forward and reversed."""
    R = [list(r) for r in routes]
    for a in range(len(R)):
        for length in (2, 3):
            for i in range(len(R[a]) - length + 1):
                piece = R[a][i:i + length]
                for b in range(len(R)):
                    rest = [list(r) for r in R]
                    rest[a][i:i + length] = []
                    for pos in range(len(rest[b]) + 1):
                        for p in (piece, piece[::-1]):
                            new = [list(r) for r in rest]
                            new[b][pos:pos] = p
                            yield [r for r in new if r]


@pytest.mark.parametrize("level", (1, 4))
@pytest.mark.parametrize("seed", range(4))
def test_local_search_optimum_has_no_feasible_improving_move_by_brute_force(seed, level):
    # 11 customers: every customer is a candidate of every other, so the local optimum of the
    # native search is one of every move that brute force enumerates (at level 4 strings too)
    p = make_problem("vrptw", 11, 40 + seed, 12)
    start = _start(p, seed)
    out = local_search_py(p.core, start, level=level)
    ok, cost, why = independent_check(p, out)
    assert ok, why
    assert cost <= independent_check(p, start)[1] + 1e-9
    eps = 1e-9 * cost
    moves = _moves(out) if level < 4 else itertools.chain(_moves(out), _string_moves(out))
    for new in moves:
        feasible, c, _ = independent_check(p, new)
        if feasible:
            assert c >= cost - eps, f"missed an improving feasible move: {new} ({c} < {cost})"


def test_python_operators_get_checked_against_the_windows():
    p = _line(time_windows=[[0, 100], [0, 3.5], [0, 10]])

    def destroy(x, k, data):
        return [1, 2], []

    def late_repair(partial, removed, data):
        return [[2, 1]]

    r = glns.solve(p, destroy, late_repair, iterations=5, seed=0)
    assert r.repair_stats[0].failures == 5
    assert "customer 1" in r.repair_stats[0].last_error and "due time 3.5" in r.repair_stats[0].last_error
    assert independent_check(p, r.solution)[0]
    good = glns.solve(p, destroy, seeds.greedy_insertion, iterations=5, seed=0)
    assert good.repair_stats[0].failures == 0 and independent_check(p, good.solution)[0]


@pytest.mark.parametrize("level", (1, 3, 4))
@pytest.mark.parametrize("seed", range(12))
def test_local_search_is_its_plain_python_twin(seed, level):
    """Also with SWAP* (level 3), its cheapest positions taken only if both routes keep their
    windows (checked from scratch), and with strings (level 4: O(string) between routes); the
    result is feasible (independent check)."""
    from glns.operators.library.local_search import local_search

    n = [5, 12, 25, 40][seed % 4]
    p = make_problem("vrptw", n, 200 + seed, [9, 15, 50][seed % 3])
    start = _start(p, seed)
    out = local_search_py(p.core, start, level=level)
    assert out == local_search(start, p.problem_data(), level=level)
    assert independent_check(p, out)[0]
    # from the nodes a repair reinserted, as the repairs' local_search hook runs it
    rng = SplitMix64(seed)
    removed, partial, _ = apply_destroy("random_removal", p.core, start, 1 + n // 3, rng.next_u64())
    repaired, _ = apply_repair("greedy_insertion", p.core, partial, removed, 0)
    assert (local_search_py(p.core, repaired, removed, level=level)
            == local_search(repaired, p.problem_data(), removed, level=level))


def test_reference_twins_use_the_cores_time_aware_candidates():
    p = INSTANCES[0]
    from glns.neighbours import time_neighbours

    d = p.distances
    twin = time_neighbours(lambda lo, hi: d[lo:hi], p.time_windows, p.service_times, 1)
    assert np.array_equal(p.core.neighbours, twin)


def test_time_aware_candidates_rank_by_window_fit():
    # customers 1 and 2 are next to each other but their windows exclude each other (2 closes
    # long before 1 opens, in either order); customer 3 is farther but fits right after 1
    xy = np.array([[0.0, 0.0], [10.0, 0.0], [10.5, 0.0], [13.0, 0.0]])
    tw = np.array([[0, 1000], [500, 510], [10.5, 20], [505, 540]])
    p = glns.VRPTW(xy, [0, 1, 1, 1], 10, tw, 1.0)
    assert p.core.neighbours[1].tolist() == [3, 2]
    plain = glns.VRPTW(xy, [0, 1, 1, 1], 10, tw, 1.0)
    from glns._core._instance import CoreInstance
    by_distance = CoreInstance(3, plain.distances, plain.demands, 10, **plain.core_extras(),
                               time_candidates=False)
    assert by_distance.neighbours[1].tolist() == [2, 3]


def test_a_fleet_too_small_for_the_start_is_a_clear_error():
    # customers 1 and 2 must both be served at time 1 (each is 1 away from the depot): two
    # routes, one vehicle; a start that respects the fleet must come from the caller
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    p = glns.VRPTW(xy, [0, 1, 1], 10, [[0, 100], [1, 1], [1, 1]], 0.0, vehicles=1)
    with pytest.raises(InfeasibleSolutionError, match="more than the fleet of 1 vehicles"):
        glns.solve(p, iterations=10)
    two = glns.VRPTW(xy, [0, 1, 1], 10, [[0, 100], [1, 1], [1, 1]], 0.0, vehicles=2)
    assert len(glns.solve(two, iterations=10).solution) == 2
