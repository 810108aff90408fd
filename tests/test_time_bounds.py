"""The repairs' time-window filters where travel times are distances computed from coordinates
(the on-demand cores of files of more than 600 customers).

A repair tries a position with lower bounds of its two travel times before it computes them
(_windows.win_may_take, from _distance.distance_below: no square root), and rules a whole route
out from its bounding box and its time data (_route_bounds.route_untimely). Each is checked
against brute force with an evaluation of routes that shares nothing with the core: neither
ever rules out a position that keeps every window, and both do rule out on instances with
tight windows. The repairs that use them still make their twins' choices (the twins price
and check every position of every route).
"""

import math

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._native_ops import apply_destroy, apply_repair
from glns._core._repair import (distances_below, joins_may, positions_may_take, routes_untimely,
                                time_rooms)
from glns.operators.library import repair as twins
from glns.problems import base as problem_base
from glns.rng import SplitMix64


@pytest.fixture
def on_demand(monkeypatch):
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)


def _vrptw(n, seed, layout, windows, rounding, horizon="short"):
    """generate_vrptw's instance with its distances rounded as `rounding` says (truncating to
    tenths only shortens them, so every window stays reachable)."""
    p = datasets.generate_vrptw(n, seed, layout, horizon, windows)
    return glns.VRPTW(p.coords, p.demands, p.capacity, p.time_windows, p.service_times,
                      rounding=rounding)


def _travel(problem, a, b):
    """Travel time from the coordinates, rounded as the instance says (not the core's code)."""
    (xa, ya), (xb, yb) = problem.coords[a], problem.coords[b]
    d = math.sqrt((xa - xb) ** 2 + (ya - yb) ** 2)
    return math.floor(d * 10.0) / 10.0 if problem.rounding == "dimacs" else d


def _keeps_windows(problem, route):
    """A route visiting `route` keeps every window (from scratch, floats with a tolerance far
    below the instances' time units)."""
    tw, service = problem.time_windows, problem.service_times
    t, prev = float(tw[0, 0]), 0
    for c in route:
        t = max(t + _travel(problem, prev, c), float(tw[c, 0]))
        if t > tw[c, 1] + 1e-9:
            return False
        t += float(service[c])
        prev = c
    return t + _travel(problem, prev, 0) <= tw[0, 1] + 1e-9


def _open_positions(problem, route, v):
    """The positions of `route` where v can go keeping every window (brute force)."""
    return [pos for pos in range(len(route) + 1)
            if _keeps_windows(problem, route[:pos] + [v] + route[pos:])]


def _partial(problem, seed, k):
    """A good solution (a short solve) with k random customers removed."""
    x = glns.solve(problem, iterations=200, seed=seed).solution
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed + 1)
    return removed, partial


CASES = [("clustered", "tight"), ("random", "tight"), ("mixed", "wide")]


@pytest.mark.parametrize("rounding", ["exact", "nint", "dimacs"])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e6])
def test_distance_below_is_below_every_distance(on_demand, rounding, scale):
    rs = np.random.default_rng(int(scale * 10) % 97)
    xy = rs.random((300, 2)) * scale
    xy[1:40, 0] = xy[0, 0]                  # pairs on a line: the bound equals the distance
    xy[40:60] = xy[60:80]                   # coincident nodes
    problem = glns.CVRP(xy, np.r_[0, np.ones(299, int)], 1000, rounding=rounding)
    assert problem.core.on_demand
    a = rs.integers(0, 300, 20000)
    b = rs.integers(0, 300, 20000)
    a[:300], b[:300] = 0, np.arange(300)
    a[300:320], b[300:320] = np.arange(40, 60), np.arange(60, 80)
    slack = {"exact": 0.0, "nint": 0.5, "dimacs": 0.1}[rounding]
    for (below, d), i, j in zip(distances_below(problem.core, a, b), a, b):
        assert below <= d, (i, j, below, d)
        # and not far below: no Euclidean distance exceeds sqrt(2) x the larger difference
        assert below >= d / math.sqrt(2.0) - 2 * slack - 1e-9 * scale, (i, j, below, d)


def _times(problem, route):
    """(earliest starts, latest starts) of a route's customers, from scratch."""
    tw, service = problem.time_windows, problem.service_times
    early, t, prev = [], float(tw[0, 0]), 0
    for c in route:
        t = max(t + _travel(problem, prev, c), float(tw[c, 0]))
        early.append(t)
        t += float(service[c])
        prev = c
    late, t, nxt = [0.0] * len(route), float(tw[0, 1]), 0
    for i in range(len(route) - 1, -1, -1):
        c = route[i]
        t = min(float(tw[c, 1]), t - _travel(problem, c, nxt) - float(service[c]))
        late[i] = t
        nxt = c
    return early, late


@pytest.mark.parametrize("layout, windows", CASES)
def test_a_routes_room_is_its_most_time_between_two_customers(layout, windows):
    problem = _vrptw(80, 3, layout, windows, "dimacs")
    routes = glns.solve(problem, iterations=100, seed=3).solution
    service = problem.service_times
    for route, room in zip(routes, time_rooms(problem.core, routes)):
        early, late = _times(problem, route)
        gaps = [late[i + 1] - (early[i] + float(service[route[i]])) for i in range(len(route) - 1)]
        assert room == pytest.approx(max(gaps), abs=1e-6) if gaps else room == -math.inf


@pytest.mark.parametrize("times_only", [False, True])
@pytest.mark.parametrize("rounding", ["exact", "dimacs"])
@pytest.mark.parametrize("layout, windows", CASES)
def test_a_position_ruled_out_breaks_a_window(on_demand, rounding, layout, windows, times_only):
    """With lower bounds of the travel times (the repairs) or from the times alone (the local
    search's moves between routes)."""
    problem = _vrptw(120, 5, layout, windows, rounding)
    removed, partial = _partial(problem, 5, 40)
    ruled_out = admitted = 0
    for v in removed:
        takes = positions_may_take(problem.core, partial, removed, v, times_only)
        assert [len(t) for t in takes] == [len(route) + 1 for route in partial]
        for route, admits in zip(partial, takes):
            open_at = _open_positions(problem, route, v)
            assert all(admits[pos] for pos in open_at), (v, route, open_at, admits)
            ruled_out += admits.count(False)
            admitted += admits.count(True) - len(open_at)
    assert ruled_out > 0
    if windows == "tight" and not times_only:   # nearly as good as the exact check
        assert admitted < ruled_out / 5


@pytest.mark.parametrize("layout, windows", CASES)
def test_a_join_ruled_out_breaks_a_window(layout, windows):
    """win_may_join, the local search's first test of a 2-opt* half: a route's head up to a
    followed by another's tail from b."""
    problem = _vrptw(60, 6, layout, windows, "dimacs")
    routes = glns.solve(problem, iterations=100, seed=6).solution
    ruled_out = 0
    for i, r1 in enumerate(routes):
        for j, r2 in enumerate(routes):
            if i == j:
                continue
            for x in range(len(r1) + 1):
                for y in range(len(r2) + 1):
                    a = r1[x - 1] if x > 0 else 0
                    b = r2[y] if y < len(r2) else -1
                    admit = joins_may(problem.core, routes, a, b)
                    assert admit or not _keeps_windows(problem, r1[:x] + r2[y:]), (r1, r2, x, y)
                    ruled_out += not admit
    assert ruled_out > 0


@pytest.mark.parametrize("rounding", ["exact", "dimacs"])
@pytest.mark.parametrize("layout, windows", CASES)
def test_a_route_ruled_out_has_no_position_in_time(on_demand, rounding, layout, windows):
    problem = _vrptw(150, 8, layout, windows, rounding)
    removed, partial = _partial(problem, 8, 45)
    ruled_out = closed = 0
    for v in removed:
        untimely = routes_untimely(problem.core, partial, removed, v)
        assert len(untimely) == len(partial)
        for route, out in zip(partial, untimely):
            open_at = _open_positions(problem, route, v)
            assert not (out and open_at), (v, route, open_at)
            ruled_out += out
            closed += not open_at
    if windows == "tight":
        assert ruled_out > closed / 2 > 0     # most routes without a position go unscanned


def test_no_time_filters_without_on_demand_distances_or_with_durations(monkeypatch):
    problem = _vrptw(60, 1, "clustered", "tight", "dimacs")
    assert not problem.core.on_demand
    removed, partial = _partial(problem, 1, 10)
    assert routes_untimely(problem.core, partial, removed, removed[0]) is None
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    p = _vrptw(60, 1, "clustered", "tight", "dimacs")
    timed = glns.VRPTW(p.coords, p.demands, p.capacity, p.time_windows, p.service_times,
                       durations=0.5 * problem_base.euclidean_distances(p.coords, "dimacs"),
                       rounding="dimacs")     # travel times that are not the distances
    assert timed.core.on_demand
    assert routes_untimely(timed.core, partial, removed, removed[0]) is None
    assert positions_may_take(timed.core, partial, removed, removed[0]) is None
    assert routes_untimely(p.core, partial, removed, removed[0]) is not None


@pytest.mark.parametrize("rounding", ["exact", "dimacs"])
@pytest.mark.parametrize("layout, windows, horizon", [("clustered", "tight", "short"),
                                                      ("random", "tight", "short"),
                                                      ("mixed", "wide", "long")])
@pytest.mark.parametrize("seed", range(3))
def test_repairs_with_time_filters_match_twins(on_demand, rounding, layout, windows, horizon, seed):
    problem = _vrptw(130, seed, layout, windows, rounding, horizon)
    assert problem.core.on_demand
    removed, partial = _partial(problem, seed, 20 + 15 * seed)
    data = problem.problem_data()
    for name, params in (("blink_insertion", {"order": 4, "blink_rate": 0.0}),
                         ("blink_insertion", {"order": 0, "blink_rate": 0.2}),
                         ("regret_insertion", {"k": 2}), ("regret_insertion", {"k": 3})):
        complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
        rng = SplitMix64(seed)
        assert complete == getattr(twins, name)(partial, removed, data, rng, **params), name
        assert state == rng.state, name
        assert all(_keeps_windows(problem, route) for route in complete)


@pytest.mark.parametrize("rounding", ["exact", "dimacs"])
@pytest.mark.parametrize("layout, windows, horizon", [("clustered", "tight", "short"),
                                                      ("random", "tight", "short"),
                                                      ("mixed", "wide", "long")])
@pytest.mark.parametrize("level", (1, 3))
def test_local_search_with_early_time_checks_matches_its_twin(on_demand, rounding, layout,
                                                              windows, horizon, level):
    """With distances on demand the local search tries a move between two routes against the
    times alone before it prices it (_windows.win_may_between, win_may_join); it still makes
    its twin's moves, and its result keeps every window."""
    from glns._core._local_search import local_search_py
    from glns.operators.library.local_search import local_search

    problem = _vrptw(110, 4, layout, windows, rounding, horizon)
    assert problem.core.on_demand
    data = problem.problem_data()
    for seed in range(3):
        removed, partial = _partial(problem, seed, 25)
        repaired, _ = apply_repair("greedy_insertion", problem.core, partial, removed, seed)
        out = local_search_py(problem.core, repaired, removed, level=level)
        assert out == local_search(repaired, data, removed, level=level, neighbours=problem.core.near)
        assert all(_keeps_windows(problem, route) for route in out)
        full = local_search_py(problem.core, repaired, level=level)
        assert full == local_search(repaired, data, level=level, neighbours=problem.core.near)


def test_the_times_alone_admit_moves_that_meet_a_window_exactly():
    """At equality: v reached at the instant its window closes (from a node at the same
    place), and a route joined at the instant the next node's latest start passes."""
    xy = [[0, 0], [10, 0], [10, 0], [20, 0], [10, 0]]
    #       depot   a        v        b        c (at a's place)
    windows = [[0, 100], [10, 10], [0, 15], [25, 25], [15, 15]]
    problem = glns.VRPTW(xy, [0, 1, 1, 1, 1], 10, windows, [0, 5, 0, 0, 0])
    partial, removed = [[1, 3], [4]], [2]
    assert _keeps_windows(problem, [1, 2, 3])           # v between a and b: at 15, then 25
    assert positions_may_take(problem.core, partial, removed, 2, True)[0][1]
    routes = [[1, 3], [4, 2]]
    assert _keeps_windows(problem, [1, 4, 2])           # a's head, then c's route: c at 15
    assert joins_may(problem.core, routes, 1, 4)
    assert not joins_may(problem.core, routes, 3, 4)    # b leaves at 25, c's window closed
