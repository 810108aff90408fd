"""Deferred tour positions (Sol.drift): a tour's long shifts leave pos_of up to `drift` places
off, and every index read (Solution.position, sol_pos in every operator) still answers the
exact index. Checked against a plain Python list, through copies, through the native operator
chain, and by whole runs that must equal runs with every position rewritten at once."""

import random

import pytest

import glns
import glns.operators
from glns._core._alns import check_sync
from glns._core._solution import (LAZY_SHIFT_NODES, POS_DRIFT_MAX_PLACES, Solution,
                                  lazy_positions, missed_position_searches)
from glns.reference import solution_cost
from glns.rng import SplitMix64

from conftest import make_problem, native_chain_step


@pytest.fixture
def eager_positions():
    """Solutions allocated inside the test rewrite every position at once."""
    lazy_positions(False)
    yield
    lazy_positions(True)


def _assert_exact(sol: Solution, tour: list[int], n: int) -> None:
    """The stored bound holds, and every city's index is as the list has it (in this order:
    reading an index writes the exact one back)."""
    assert sol.positions_ok()
    assert sol.routes() == tour
    where = {v: i for i, v in enumerate(tour)}
    assert [sol.position(v) for v in range(n)] == [where.get(v, -1) for v in range(n)]


def _random_edits(sol: Solution, tour: list[int], n: int, steps: int, rng: random.Random,
                  check_every: int = 1) -> int:
    """Remove a random city or insert an unrouted one at a random index, on `sol` and on the
    list alike; returns the largest drift seen."""
    most = 0
    out = sorted(set(range(n)) - set(tour))
    for step in range(steps):
        if out and (len(tour) < n // 2 or rng.random() < 0.5):
            v, p = out.pop(rng.randrange(len(out))), rng.randrange(len(tour) + 1)
            sol.insert(v, 0, p)
            tour.insert(p, v)
        else:
            v = rng.choice(tour)
            sol.remove(v)
            tour.remove(v)
            out.append(v)
        most = max(most, sol.drift)
        assert 0 <= sol.drift <= POS_DRIFT_MAX_PLACES
        if step % check_every == 0:
            _assert_exact(sol, tour, n)
    return most


def _loaded_tour(n: int, seed: int):
    """A Solution holding a random tour of n cities, the tour as a list, and the instance."""
    inst = make_problem("tsp", n, seed, capacity=0).core
    sol = Solution(inst)
    tour = list(range(n))
    random.Random(seed).shuffle(tour)
    sol.load(tour)
    return sol, tour, inst


def test_edits_match_a_plain_list():
    n = 700
    sol, tour, _ = _loaded_tour(n, 1)
    missed = missed_position_searches()
    most = _random_edits(sol, tour, n, 1500, random.Random(2), check_every=3)
    assert missed_position_searches() == missed
    # the deferral really ran, and was made exact again within its bound
    assert LAZY_SHIFT_NODES < n and most > 1


def test_small_shifts_are_written_at_once():
    """A shift of at most LAZY_SHIFT_NODES cities (here: near the tour's end) leaves no drift."""
    n = 200
    sol, tour, _ = _loaded_tour(n, 3)
    for step in range(40):
        v = tour[-1 - step % 5]
        sol.remove(v)
        tour.remove(v)
        p = len(tour) - step % LAZY_SHIFT_NODES
        sol.insert(v, 0, p)
        tour.insert(p, v)
        assert sol.drift == 0
    _assert_exact(sol, tour, n)


def test_fix_positions_and_copies_keep_the_indices():
    n = 600
    sol, tour, inst = _loaded_tour(n, 4)
    rng = random.Random(5)
    while sol.drift == 0:
        _random_edits(sol, tour, n, 1, rng)
    twin = Solution(inst)
    twin.copy_from(sol)                 # stale entries are copied with their drift
    assert twin.drift == sol.drift and twin.same_as(sol)
    _assert_exact(twin, tour, n)
    twin_tour = list(tour)              # both go on alike
    _random_edits(sol, tour, n, 200, random.Random(6), check_every=7)
    _random_edits(twin, twin_tour, n, 200, random.Random(6), check_every=7)
    assert twin.same_as(sol) and twin_tour == tour
    while sol.drift == 0:
        _random_edits(sol, tour, n, 1, rng)
    sol.fix_positions()
    assert sol.drift == 0
    _assert_exact(sol, tour, n)


def test_native_operator_chain_on_a_long_tour():
    """Every native TSP destroy and repair (local search and granular lists in turn) on one
    Solution: after each call the indices are exact and the cost is the plain sum."""
    n = 1200
    problem = make_problem("tsp", n, 8, capacity=0)
    sol = Solution(problem.core)
    sol.random_init(3)
    rng = SplitMix64(11)
    drifts = []

    def check():
        drifts.append(sol.drift)
        tour = sol.routes()
        _assert_exact(sol, tour, n)
        assert sol.cost() == solution_cost(problem, tour) if len(tour) == n else True

    for step in range(150):
        native_chain_step(problem.core, "tsp", sol, step, rng, n, check)
    assert max(drifts) > 0


@pytest.fixture
def checked_sync():
    check_sync(True)
    yield
    check_sync(False)


def _run_all_natives(problem, seed: int, iterations: int) -> glns.Result:
    destroy = ["string_removal", "segment_removal", "related_removal", "radial_removal",
               "random_removal", "worst_removal"]
    repair = [glns.operators.native("greedy_insertion"),
              glns.operators.native("blink_insertion", local_search=1),
              glns.operators.native("regret_insertion", local_search=2, neighbours=8)]
    return glns.solve(problem, destroy, repair, iterations=iterations, seed=seed)


@pytest.mark.parametrize("n", [150, 1500])
def test_runs_equal_runs_with_every_position_written(checked_sync, n):
    """The same run, deferred or eager, takes the same steps: identical solution, cost and
    per-iteration records (check_sync also checks the bound after every iteration)."""
    problem = make_problem("tsp", n, 12, capacity=0)
    missed = missed_position_searches()
    lazy = _run_all_natives(problem, 7, 600)
    assert missed_position_searches() == missed      # every index was found in its window
    lazy_positions(False)
    try:
        eager = _run_all_natives(problem, 7, 600)
    finally:
        lazy_positions(True)
    assert lazy.solution == eager.solution and lazy.cost == eager.cost
    assert list(lazy.current_curve) == list(eager.current_curve)
    assert [r.calls for r in lazy.repair_stats] == [r.calls for r in eager.repair_stats]
    assert all(r.calls > 0 for r in lazy.destroy_stats + lazy.repair_stats)


def test_the_default_portfolio_equals_eager_positions(eager_positions):
    problem = make_problem("tsp", 1500, 13, capacity=0)
    eager = glns.solve(problem, iterations=400, seed=2)
    lazy_positions(True)
    missed = missed_position_searches()
    lazy = glns.solve(problem, iterations=400, seed=2)
    assert missed_position_searches() == missed
    assert lazy.solution == eager.solution and lazy.cost == eager.cost
