"""Baseline adapters (glns.benchmark.baselines): optimal on tiny instances, feasible, honest
curves, reproducible where the solver allows, and precise errors."""

import math
import pickle
import sys

import numpy as np
import pytest

import glns
from glns.benchmark import baselines
from glns.benchmark.baselines import BASELINES, fleet_bound, integer_distances, run_baseline
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem, make_tsp, make_vrp
from test_brute_force import tsp_optimum, vrp_optimum, vrptw_optimum

#: short budgets: tiny instances need far less than the benchmark's 5 s / 500 iterations
BUDGET = {"ortools": {"time_limit": 0.25}, "pyvrp": {"time_limit": 0.25}, "hgs": {"time_limit": 0.25},
          "lkh": {}, "alns": {"iterations": 1000}}
PAIRS = [(name, kind) for name, b in BASELINES.items() for kind in b.problems]


def need(name: str) -> None:
    """Skip when the baseline's package is not installed (a user without the bench extra)."""
    pytest.importorskip(BASELINES[name].module)


def tiny(kind: str, n: int, seed: int):
    # capacity 15 with demands 1..9: two to four routes, so splitting matters
    if kind == "tsp":
        return make_tsp(n, 300 + seed)
    if kind == "vrptw":
        return make_problem("vrptw", n, 400 + seed, 15)
    return make_vrp(glns.CVRP if kind == "cvrp" else glns.OVRP, n, 400 + seed, capacity=15)


def scaling_error(problem, run) -> float:
    """Largest gap rounding to the integer matrix can cause: half a unit per arc."""
    scale = run.info.get("scale", 1e6)
    return 0.5 * (2 * problem.n_nodes) / scale + 1e-9


@pytest.mark.parametrize("name,kind", PAIRS)
@pytest.mark.parametrize("seed", [0, 1])
def test_reaches_brute_force_optimum(name, kind, seed):
    need(name)
    n = 7 if kind == "tsp" else 6
    problem = tiny(kind, n, seed)
    run = run_baseline(name, problem, seed=seed, **BUDGET[name])
    problem.check(run.solution)
    optimum = (tsp_optimum(problem) if kind == "tsp" else
               vrptw_optimum(problem) if kind == "vrptw" else vrp_optimum(problem))
    assert problem.cost(run.solution) == pytest.approx(optimum, rel=1e-12, abs=scaling_error(problem, run))


@pytest.mark.parametrize("name", [n for n, b in BASELINES.items() if "vrptw" in b.problems])
@pytest.mark.parametrize("seed", [0, 1])
def test_vrptw_route_cost_reaches_brute_force_optimum(name, seed):
    from test_vrptw_route_cost import trade_off

    need(name)
    problem = trade_off([10.0, 25.0][seed])     # two routes, then one (the fee decides)
    run = run_baseline(name, problem, seed=seed, **BUDGET[name])
    problem.check(run.solution)
    assert problem.cost(run.solution) == pytest.approx(vrptw_optimum(problem), rel=1e-9,
                                                       abs=scaling_error(problem, run))


@pytest.mark.parametrize("name,kind", PAIRS)
def test_feasible_with_consistent_curve(name, kind):
    need(name)
    problem = make_problem(kind, 14, 7, capacity=12)
    run = run_baseline(name, problem, seed=3, **BUDGET[name])
    problem.check(run.solution)
    if kind == "tsp":
        assert sorted(run.solution) == list(range(problem.n_nodes)) and run.solution[0] == 0
    else:
        assert all(run.solution)  # no empty routes
    curve = run.curve
    assert len(curve["cost"]) == len(curve["seconds"]) >= 1
    assert all(b < a for a, b in zip(curve["cost"], curve["cost"][1:]))
    assert all(b >= a for a, b in zip(curve["seconds"], curve["seconds"][1:]))
    assert problem.cost(run.solution) == pytest.approx(curve["cost"][-1], abs=scaling_error(problem, run))
    assert run.seconds > 0
    if BASELINES[name].module in ("alns", "pyvrp"):
        assert run.iterations >= 1 and curve["iteration"] is not None
        assert len(curve["iteration"]) == len(curve["cost"])
        assert all(b > a for a, b in zip(curve["iteration"], curve["iteration"][1:]))
        assert curve["iteration"][-1] <= run.iterations
    else:
        assert run.iterations is None and curve["iteration"] is None
    assert run.info["version"] == BASELINES[name].version()
    pickle.loads(pickle.dumps(run))  # runs come back from worker processes


@pytest.mark.parametrize("name", [n for n, b in BASELINES.items() if "ovrp" in b.problems])
def test_ovrp_routes_are_open(name):
    need(name)
    problem = make_vrp(glns.OVRP, 12, 5, capacity=15)
    closed = glns.CVRP(problem.coords, problem.demands, problem.capacity)
    run = run_baseline(name, problem, seed=0, **BUDGET[name])
    problem.check(run.solution)
    d = problem.distances
    returns = sum(d[route[-1], 0] for route in run.solution)
    assert returns > 0.1
    assert problem.cost(run.solution) == pytest.approx(closed.cost(run.solution) - returns, rel=1e-12)


@pytest.mark.parametrize("name", [n for n, b in BASELINES.items() if "tsp" in b.problems])
@pytest.mark.parametrize("n", [2, 3])
def test_tiny_tsp(name, n):
    need(name)
    problem = make_tsp(n, 11)
    run = run_baseline(name, problem, seed=0, **BUDGET[name])
    assert sorted(run.solution) == list(range(n))
    assert problem.cost(run.solution) == pytest.approx(tsp_optimum(problem), abs=scaling_error(problem, run))


@pytest.mark.parametrize("name", [n for n, b in BASELINES.items() if "cvrp" in b.problems])
@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
def test_single_customer(name, kind):
    if kind not in BASELINES[name].problems:
        pytest.skip(f"{name} does not solve {kind}")
    need(name)
    problem = make_problem(kind, 1, 2, capacity=9)
    run = run_baseline(name, problem, seed=0, **BUDGET[name])
    assert run.solution == [[1]]


def test_alns_same_seed_same_run():
    need("alns")
    problem = make_vrp(glns.CVRP, 15, 9)
    a, b = (run_baseline("alns", problem, iterations=150, seed=4) for _ in range(2))
    assert a.solution == b.solution and a.curve["cost"] == b.curve["cost"]
    assert a.curve["iteration"] == b.curve["iteration"] and a.iterations == b.iterations == 150
    c = run_baseline("alns", problem, iterations=150, seed=5)
    assert c.curve["cost"] != a.curve["cost"]  # the seed reaches operators and initial solution


def test_alns_starts_from_glns_random_solution():
    need("alns")
    problem = make_vrp(glns.OVRP, 15, 9)
    run = run_baseline("alns", problem, iterations=1, seed=6)
    start = random_solution(problem, SplitMix64(6))
    assert run.curve["iteration"][0] == 0
    assert run.curve["cost"][0] == solution_cost(problem, start)


def test_pyvrp_iteration_budget_is_reproducible():
    """Under a time limit the iteration count varies with the machine; an iteration budget alone
    gives identical runs for one seed."""
    need("pyvrp")
    problem = make_vrp(glns.CVRP, 25, 9)
    a, b = (run_baseline("pyvrp", problem, iterations=300, seed=2) for _ in range(2))
    assert a.iterations == b.iterations == 300
    assert a.solution == b.solution
    assert a.curve["iteration"] == b.curve["iteration"] and a.curve["cost"] == b.curve["cost"]


def test_pyvrp_time_limit_with_iterations_stops_at_the_first():
    need("pyvrp")
    run = run_baseline("pyvrp", make_vrp(glns.CVRP, 10, 1), time_limit=30.0, iterations=50)
    assert run.iterations == 50 and run.seconds < 10


def test_lkh_iterations_are_runs():
    need("lkh")
    run = run_baseline("lkh", make_tsp(12, 3), iterations=2)
    assert run.info["runs"] == 2
    assert run_baseline("lkh", make_tsp(12, 3)).info["runs"] == 10


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown baseline 'gurobi'.*ortools, pyvrp, lkh, alns"):
        run_baseline("gurobi", make_tsp(5, 0), time_limit=1.0)


def test_kind_not_solved():
    with pytest.raises(ValueError, match="'lkh' does not solve 'cvrp'"):
        run_baseline("lkh", make_vrp(glns.CVRP, 5, 0))


@pytest.mark.parametrize("name,budget,message", [
    ("ortools", {}, "ortools needs a time_limit"),
    ("ortools", {"iterations": 10}, "ortools needs a time_limit"),
    ("hgs", {"iterations": 10}, "hgs needs a time_limit"),
    ("pyvrp", {}, "pyvrp needs a time_limit"),
    ("alns", {"time_limit": 1.0}, "alns needs iterations"),
    ("alns", {"iterations": 0}, "iterations must be a positive integer"),
    ("alns", {"iterations": 2.5}, "iterations must be a positive integer"),
    ("pyvrp", {"time_limit": 0}, "time_limit must be a finite number > 0"),
    ("ortools", {"time_limit": math.inf}, "time_limit must be a finite number > 0"),
])
def test_missing_or_bad_budget(name, budget, message):
    problem = make_tsp(5, 0) if "tsp" in BASELINES[name].problems else make_vrp(glns.CVRP, 5, 0)
    with pytest.raises(ValueError, match=message):
        run_baseline(name, problem, **budget)


@pytest.mark.parametrize("name", list(BASELINES))
def test_missing_package(monkeypatch, name):
    baseline = BASELINES[name]
    monkeypatch.setitem(sys.modules, baseline.module, None)  # import now raises ImportError
    reason = baseline.available()
    assert reason is not None and "pip install 'glns[bench]'" in reason and baseline.module in reason
    assert baseline.version() is None
    budget = {"time_limit": 1.0, "iterations": 5}
    problem = make_tsp(5, 0) if "tsp" in baseline.problems else make_vrp(glns.CVRP, 5, 0)
    with pytest.raises(ImportError, match=r"pip install 'glns\[bench\]'"):
        run_baseline(name, problem, **budget)


def test_registry():
    assert list(BASELINES) == ["ortools", "pyvrp", "lkh", "alns", "hgs"]
    assert BASELINES["lkh"].problems == ("tsp",) and BASELINES["hgs"].problems == ("cvrp",)
    assert {b.name: b.budget for b in BASELINES.values()} == {"ortools": "time", "pyvrp": "time", "lkh": "runs",
                                                               "alns": "iterations", "hgs": "time"}
    for b in BASELINES.values():
        assert b.name and b.label and b.module
        if b.available() is None:
            assert b.version()


def test_integer_distances():
    tsp = make_tsp(6, 1)
    m, scale = integer_distances(tsp)
    assert scale == 1e6 and m.dtype == np.int64
    assert np.abs(m / scale - tsp.distances).max() <= 0.5 / scale
    ints = glns.TSP(distances=np.array([[0, 3, 4], [3, 0, 5], [4, 5, 0]], dtype=float))
    m, scale = integer_distances(ints)
    assert scale == 1 and m.tolist() == [[0, 3, 4], [3, 0, 5], [4, 5, 0]]
    big = glns.TSP(np.array([[0.0, 0.0], [3.3e4, 0.5], [0.25, 7.1e4]]))
    m, scale = integer_distances(big)
    assert scale == 100 and m.max() <= 1e7
    ovrp = make_vrp(glns.OVRP, 5, 1)
    m, _ = integer_distances(ovrp)
    assert not m[:, 0].any() and m[0, 1:].all()


def test_fleet_bound():
    cvrp = make_vrp(glns.CVRP, 30, 1, capacity=50)
    total = int(cvrp.demands.sum())
    assert fleet_bound(cvrp) == 2 * math.ceil(total / 50) < 30
    assert fleet_bound(make_vrp(glns.OVRP, 30, 1)) == 30
    assert fleet_bound(make_tsp(8, 0)) == 1
    # not metric: the arc between the customers is dearer than the way through the depot
    d = np.array([[0, 1, 1], [1, 0, 5], [1, 5, 0]], dtype=float)
    assert fleet_bound(glns.CVRP(distances=d, demands=[0, 1, 1], capacity=10)) == 2


def test_run_baseline_is_module_level():
    assert pickle.loads(pickle.dumps(run_baseline)) is baselines.run_baseline
