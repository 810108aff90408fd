"""VRPTW with a fixed cost per route: the objective is the total distance plus route_cost for
every route. The core adds half of it on every arc from or to the depot (a dense matrix holds
it, on-demand distances add it); travel times never include it. Checked against an
independent evaluation, brute force, the wire to worker processes and the operators' view."""

import itertools
import math
import pickle

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._instance import CoreInstance
from glns.exceptions import InvalidInstanceError
from glns.problems.vrptw import plain_check
from glns.rng import run_seed

from conftest import make_problem
from test_brute_force import vrptw_optimum
from test_vrptw import independent_check


def with_route_cost(p, fee, **kw):
    return glns.VRPTW(p.coords, p.demands, p.capacity, p.time_windows, p.service_times,
                      route_cost=fee, rounding=p.rounding, **kw)


def _objective(p, routes):
    """Independent: total distance from the coordinates plus the fee per non-empty route."""
    ok, total, why = independent_check(p, routes)
    assert ok, why
    return total + p.route_cost * sum(1 for r in routes if r)


@pytest.mark.parametrize("value, message", [(-1.0, "route_cost must be finite and >= 0"),
                                            (math.nan, "route_cost must be finite and >= 0"),
                                            ("x", "route_cost must be a number")])
def test_invalid_route_cost_is_a_clear_error(value, message):
    with pytest.raises(InvalidInstanceError, match=message):
        with_route_cost(make_problem("vrptw", 5, 1, 10), value)


@pytest.mark.parametrize("rounding", ["exact", "nint", "dimacs"])
@pytest.mark.parametrize("on_demand", [False, True])
def test_the_core_adds_half_the_fee_on_depot_arcs_and_never_to_travel_times(on_demand, rounding):
    g = datasets.generate_vrptw(30, 2, "random", "long", "wide")
    p = glns.VRPTW(g.coords * 10.0, g.demands, g.capacity, g.time_windows * 10.0, g.service_times * 10.0,
                   route_cost=8.5, rounding=rounding)
    core = (CoreInstance(3, None, p.demands, p.capacity, coords=p.coords, rounding=p.rounding,
                         windows=p.time_windows, service=p.service_times, route_cost=8.5)
            if on_demand else p.core)
    assert core.on_demand == on_demand
    n = p.n_nodes
    plain = p.distances
    for a, b in itertools.product(range(n), repeat=2):
        fee = 4.25 if (a == 0) != (b == 0) else 0.0
        assert core.distance(a, b) == plain[a, b] + fee == p.arc_costs[a, b]
        assert core.travel_time(a, b) == plain[a, b]


def test_a_route_cost_needs_closed_routes_from_a_depot():
    p = make_problem("vrptw", 5, 1, 10)
    with pytest.raises(ValueError, match="closed routes from a depot"):
        CoreInstance(2, p.distances, p.demands, p.capacity, route_cost=1.0)   # OVRP


@pytest.mark.parametrize("seed", range(3))
def test_solve_reports_distance_plus_fee_per_route(seed):
    p = with_route_cost(datasets.generate_vrptw(40, seed, "mixed", "long", "wide"), 25.0)
    r = glns.solve(p, iterations=300, seed=seed)
    assert r.cost == pytest.approx(_objective(p, r.solution), rel=1e-12)
    err, total = plain_check(p, r.solution)
    assert err is None and total == pytest.approx(r.cost, rel=1e-12)
    assert p.cost(r.solution) == pytest.approx(r.cost, rel=1e-12)


def test_a_large_fee_buys_fewer_routes():
    p = datasets.generate_vrptw(60, 4, "random", "long", "wide")
    free = glns.solve(p, iterations=1500, seed=1)
    dear = glns.solve(with_route_cost(p, 1000.0), iterations=1500, seed=1)
    # a route costs ten times the whole square's diagonal: the count must drop (the loads
    # allow it: the capacity bound is far below the routes distance alone asks for)
    bound = math.ceil(p.demands.sum() / p.capacity)
    assert len(dear.solution) < len(free.solution)
    assert len(dear.solution) >= bound
    assert _objective(p, dear.solution) >= _objective(p, free.solution) - 1e-9   # distance paid


def trade_off(fee: float) -> glns.VRPTW:
    """Two customers east of the depot and two west; the windows let one route serve them
    only as east, west, west, east (about 61 long), while an east and a west route take about
    42: a fee above about 19 makes one route the better."""
    xy = [(0, 0), (10, 0), (10, 1), (-10, 0), (-10, 1)]
    tw = [(0, 300), (0, 15), (55, 200), (25, 40), (70, 300)]
    return glns.VRPTW(xy, [0, 1, 1, 1, 1], 10, tw, 0.0, route_cost=fee)


def test_the_trade_off_instance_changes_its_optimum_with_the_fee():
    cheap, dear = trade_off(0.0), trade_off(40.0)
    assert vrptw_optimum(cheap) == pytest.approx(cheap.cost([[1, 2], [3, 4]]))
    assert vrptw_optimum(dear) == pytest.approx(dear.cost([[1, 3, 4, 2]]))
    assert dear.cost([[1, 2], [3, 4]]) > vrptw_optimum(dear)


@pytest.mark.parametrize("fee", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("seed", range(2))
def test_optimal_on_tiny_instances_by_brute_force(fee, seed):
    p = with_route_cost(make_problem("vrptw", 6, 400 + seed, 15), fee)
    r = glns.solve(p, iterations=3000, seed=seed, params=glns.SolveParams(destroy_fraction=0.5))
    assert r.cost == pytest.approx(vrptw_optimum(p), rel=1e-9)


@pytest.mark.parametrize("fee, routes", [(0.0, 2), (10.0, 2), (25.0, 1), (80.0, 1)])
def test_the_solver_pays_the_fee_only_when_it_is_worth_it(fee, routes):
    p = trade_off(fee)
    r = glns.solve(p, iterations=500, seed=1)
    assert r.cost == pytest.approx(vrptw_optimum(p), rel=1e-9)
    assert len(r.solution) == routes


def test_the_fee_survives_pickling_and_the_wire_to_workers():
    p = with_route_cost(datasets.generate_vrptw(30, 1), 12.0)
    q = pickle.loads(pickle.dumps(p))
    assert q.route_cost == 12.0 and np.array_equal(q.arc_costs, p.arc_costs)
    one = glns.solve(p, iterations=200, seed=run_seed(3, 1))
    many = glns.solve_many([q, p], iterations=200, seed=3, workers=2)   # worker processes
    assert many[1].cost == one.cost and many[1].solution == one.solution
    assert many[1].cost == pytest.approx(_objective(p, many[1].solution), rel=1e-12)


def test_operators_see_the_arc_costs_and_the_fee():
    p = with_route_cost(datasets.generate_vrptw(20, 0), 6.0)
    data = p.problem_data()
    assert data["route_cost"] == 6.0
    assert np.array_equal(data["distance_matrix"], p.arc_costs)
    assert np.array_equal(data["durations"], p.distances)
    assert not data["distance_matrix"].flags.writeable
    seen = {}

    def destroy(x, k, pd):
        seen["fee"] = pd["route_cost"]
        return x[:k], x[k:]

    r = glns.solve(p, destroy, "greedy_insertion", iterations=20, seed=0)
    assert seen["fee"] == 6.0 and r.cost == pytest.approx(_objective(p, r.solution), rel=1e-12)


def test_on_demand_distances_with_renumbered_ids_keep_the_fee():
    from glns.problems.renumber import RENUMBER_FROM, renumbered

    p = with_route_cost(datasets.generate_vrptw(RENUMBER_FROM + 50, 6, "random", "long", "wide"), 40.0)
    assert p.core.on_demand and renumbered(p).problem.route_cost == 40.0
    r = glns.solve(p, iterations=150, seed=2)
    assert r.cost == pytest.approx(_objective(p, r.solution), rel=1e-12)
