"""Route bounds (glns._core._route_bounds) and the repairs that skip routes with them.

On a VRP whose distances are computed on demand from coordinates, a repair that already holds
an option of cost t skips every route whose bounding box proves that all its insertions cost
more than t. The bound is checked against brute force (every insertion delta of every route),
and the repairs that use it against their plain-Python twins, which scan every route: same
complete solution, same random stream afterwards, same regret caches and scores.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import glns
from glns._core._native_ops import apply_destroy, apply_repair
from glns._core._repair import regret_trace, routes_beyond
from glns.operators.library import repair as twins
from glns.operators.seeds import BY_PROBLEM
from glns.problems import base as problem_base
from glns.rng import SplitMix64

SHAPES = ["uniform", "clustered"]


def _instance(kind, n, seed, rounding, shape):
    """n customers in a square of side 1000 (uniform, or around six centres), demands 1..9,
    capacity 50: about ten customers per route, so routes are compact and most are far."""
    rs = np.random.default_rng(seed)
    if shape == "clustered":
        xy = rs.random((6, 2))[rs.integers(0, 6, n + 1)] * 1000 + rs.random((n + 1, 2)) * 40
    else:
        xy = rs.random((n + 1, 2)) * 1000
    demands = np.r_[0, rs.integers(1, 10, n)]
    cls = glns.CVRP if kind == "cvrp" else glns.OVRP
    return cls(xy, demands, 50, rounding=rounding)


def _destroyed(problem, seed, k):
    """A partial solution with compact routes (a short solve, then k random removals)."""
    x = glns.solve(problem, iterations=30, seed=seed).solution
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed + 1)
    return removed, partial


def _deltas(problem, route, v):
    """Every insertion delta of v into `route`, from the distance matrix (brute force)."""
    d = problem.problem_data()["distance_matrix"]
    seq = [0] + list(route)
    out = []
    for pos in range(len(route) + 1):
        a = seq[pos]
        if pos < len(route):
            b = route[pos]
            out.append(d[a, v] + d[v, b] - d[a, b])
        elif problem.kind == "cvrp":
            out.append(d[a, v] + d[v, 0] - d[a, 0])
        else:
            out.append(d[a, v])             # the open end: no way back
    return out


@pytest.fixture
def on_demand(monkeypatch):
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
@pytest.mark.parametrize("rounding", ["exact", "nint"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_skipped_route_has_no_insertion_as_cheap(on_demand, kind, rounding, shape):
    problem = _instance(kind, 160, 3, rounding, shape)
    assert problem.core.on_demand
    removed, partial = _destroyed(problem, 3, 25)
    skipped = 0
    for v in removed[:12]:
        best = [min(_deltas(problem, route, v)) for route in partial]
        for t in sorted(set(best))[:: max(1, len(best) // 8)] + [max(best) + 1.0]:
            beyond = routes_beyond(problem.core, partial, removed, v, t)
            assert len(beyond) == len(partial)
            for r, skip in enumerate(beyond):
                if skip:
                    assert best[r] > t, (v, r, t)
            skipped += sum(beyond)
    assert skipped > 0          # the bound bites on compact routes


def test_no_bounds_on_a_dense_matrix(monkeypatch):
    """A dense matrix may hold any distances: no route is ever skipped on one."""
    problem = _instance("cvrp", 60, 1, "exact", "uniform")
    assert not problem.core.on_demand
    removed, partial = _destroyed(problem, 1, 10)
    assert routes_beyond(problem.core, partial, removed, removed[0], 0.0) is None
    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    problem = _instance("cvrp", 60, 1, "exact", "uniform")
    assert problem.core.on_demand
    assert routes_beyond(problem.core, partial, removed, removed[0], 0.0) is not None


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
@pytest.mark.parametrize("rounding", ["exact", "nint"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), shape=st.sampled_from(SHAPES), k=st.integers(1, 40),
       order=st.integers(0, 4), blink_rate=st.sampled_from([0.0, 0.01, 0.3]))
def test_repairs_with_route_bounds_match_twins(on_demand, kind, rounding, seed, shape, k, order,
                                               blink_rate):
    problem = _instance(kind, 150, seed, rounding, shape)
    removed, partial = _destroyed(problem, seed, k)
    data = problem.problem_data()
    cases = [("blink_insertion", {"order": order, "blink_rate": blink_rate, "neighbours": 0},
              twins.blink_insertion),
             ("regret_insertion", {"k": 2, "neighbours": 0}, twins.regret_insertion),
             ("regret_insertion", {"k": 3, "neighbours": 0}, twins.regret_insertion),
             ("greedy_insertion", {}, BY_PROBLEM[kind].greedy_insertion)]
    for name, params, twin in cases:
        complete, state = apply_repair(name, problem.core, partial, removed, seed, params)
        rng = SplitMix64(seed)
        assert complete == twin(partial, removed, data, rng, **params), (name, params)
        assert state == rng.state, (name, params)


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("shape", SHAPES)
def test_regret_cache_with_skipped_routes(on_demand, kind, k, shape):
    """Skipped entries are computed only when they may matter; before every insertion every
    pending node's options per route (a skipped one shown by what it stands for) and its
    score equal a from-scratch computation."""
    problem = _instance(kind, 200, 11, "nint", shape)
    removed, partial = _destroyed(problem, 11, 40)
    snapshots, complete = regret_trace(problem.core, partial, removed, k, 0)
    data = problem.problem_data()
    for snap in snapshots:
        ref = twins.regret_reference(snap["routes"], list(snap["cache"]), data, k, 0)
        for w, (options, _, score) in ref.items():
            assert snap["cache"][w] == options
            assert snap["scores"][w] == score
    assert complete == twins.regret_insertion(partial, removed, data, SplitMix64(0), k=k,
                                              neighbours=0)
