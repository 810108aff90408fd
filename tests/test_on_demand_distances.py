"""Distances computed on demand from coordinates (issue 13): the same floats, neighbour lists
and solver results as the dense matrix, memory O(n), and a clear error for a matrix too big."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._grid import coordinate_neighbours
from glns._core._instance import CoreInstance
from glns.exceptions import MatrixTooLargeError
from glns.neighbours import nearest_neighbours
from glns.problems import CVRP, OVRP, TSP, euclidean_distances
from glns.problems import base as problem_base


def _coordinates(layout: str, n: int, rs: np.random.RandomState) -> np.ndarray:
    if layout == "uniform":
        return rs.rand(n, 2) * 1000.0
    if layout == "grid":                      # integer points: many equal distances (ties)
        return rs.randint(0, 12, size=(n, 2)).astype(float)
    if layout == "line":                      # a degenerate bounding box
        xy = np.zeros((n, 2))
        xy[:, 0] = rs.rand(n)
        return xy
    xy = rs.rand(n, 2) * [1000.0, 1.0]        # flat, with the depot far outside the others
    xy[0] = [5000.0, -300.0]
    return xy


@pytest.mark.parametrize("layout", ["uniform", "grid", "line", "outlier"])
@pytest.mark.parametrize("rounding", ["exact", "nint"])
@pytest.mark.parametrize("first", [0, 1])
def test_grid_neighbours_equal_the_dense_reference(layout, rounding, first):
    rs = np.random.RandomState(hash((layout, rounding, first)) % 2**31)
    for n in (2, 3, 17, 250):
        xy = _coordinates(layout, n, rs)
        dense = euclidean_distances(xy, rounding)
        for k in (1, 7, 100):
            expected = nearest_neighbours(dense, first, k)
            got = coordinate_neighbours(xy, first, k, rounding == "nint")
            assert got.dtype == np.int32 and got.shape == expected.shape
            assert np.array_equal(got, expected), (n, k)


@pytest.mark.parametrize("rounding", ["exact", "nint"])
def test_on_demand_distance_is_the_matrix_entry(rounding):
    rs = np.random.RandomState(7)
    xy = rs.rand(60, 2) * 1e4 - 5e3
    dense = euclidean_distances(xy, rounding)
    core = CoreInstance(1, None, np.ones(60), 10, coords=xy, rounding=rounding)
    assert core.on_demand and core.dist is None and core.symmetric
    for a in range(60):
        for b in range(60):
            assert core.distance(a, b) == dense[a, b]


@pytest.mark.parametrize("storage", ["dense", "asymmetric", "exact", "nint", "quadrant"])
def test_stored_candidate_distances_are_the_distances(storage):
    """Inst.near_d (read by the local search and the granular tour repairs instead of the
    distance) holds dist(v, near[v, c]) exactly, whichever way distances are stored."""
    rs = np.random.RandomState(11)
    n = 90
    xy = rs.randint(0, 40, size=(n, 2)).astype(float)      # ties
    if storage in ("dense", "asymmetric"):
        d = euclidean_distances(xy)
        if storage == "asymmetric":
            d = d + rs.rand(n, n)
            np.fill_diagonal(d, 0.0)
        core = CoreInstance(0, d)
    else:
        core = CoreInstance(0, None, coords=xy, rounding="exact" if storage == "exact" else "nint",
                            quadrant=storage == "quadrant")
    near, stored = core.near, core.near_distances
    assert stored.shape == near.shape and stored.dtype == np.float64
    assert not stored.flags.writeable
    for v in range(n):
        for c in range(near.shape[1]):
            assert stored[v, c] == core.distance(v, int(near[v, c]))     # the same float


def test_the_chunked_matrix_is_the_one_shot_formula():
    rs = np.random.RandomState(3)
    xy = rs.rand(700, 2) * 100.0          # more rows than one block
    diff = xy[:, None, :] - xy[None, :, :]
    assert np.array_equal(euclidean_distances(xy), np.sqrt((diff * diff).sum(axis=-1)))


@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
@pytest.mark.parametrize("rounding", ["exact", "nint"])
def test_solver_gives_the_same_run_with_either_storage(kind, rounding):
    p = datasets.generate(kind, 120, 5)
    p = type(p).from_parts(p.coords * 1000, None, p.demands, p.capacity, rounding=rounding)
    dense = type(p).from_parts(p.coords, p.distances, p.demands, p.capacity)
    on_demand = CoreInstance(p.core_code, None, p.demands, p.capacity, coords=p.coords,
                             rounding=rounding)
    p._core = on_demand                   # force the on-demand storage on a small instance
    assert p.core.on_demand and not dense.core.on_demand
    assert np.array_equal(p.core.neighbours, dense.core.neighbours)
    a = glns.solve(p, iterations=300, seed=11)
    b = glns.solve(dense, iterations=300, seed=11)
    assert a.solution == b.solution and a.cost == b.cost
    assert np.array_equal(a.best_curve, b.best_curve)
    assert dense.cost(a.solution) == p.cost(a.solution) == a.cost


def test_large_coordinate_instances_keep_no_matrix():
    xy = np.random.RandomState(0).rand(problem_base.DENSE_CORE_NODES + 50, 2)
    p = TSP(xy, rounding="nint")
    assert not p.explicit_distances
    assert p.core.on_demand and p._matrix is None      # solving never built the matrix
    r = glns.solve(p, iterations=5, seed=0)
    assert p._matrix is None and p.cost(r.solution) == r.cost
    small = CVRP(xy[:50], np.r_[0, np.ones(49)], 10)
    assert not small.core.on_demand                   # small: a cached dense matrix is faster


def test_a_matrix_over_the_limit_is_refused_clearly(monkeypatch):
    monkeypatch.setattr(problem_base, "MAX_MATRIX_BYTES", 8 * 100 * 100 - 1)
    p = CVRP(np.random.RandomState(1).rand(100, 2), np.r_[0, np.ones(99)], 5)
    with pytest.raises(MatrixTooLargeError, match="100 nodes.*GLNS_MAX_MATRIX_GB") as info:
        p.distances
    assert isinstance(info.value, MemoryError) and isinstance(info.value, glns.GlnsError)
    with pytest.raises(MatrixTooLargeError):
        p.problem_data()
    monkeypatch.setattr(problem_base, "MAX_MATRIX_BYTES", 8 * 100 * 100)
    assert p.distances.shape == (100, 100)


def test_pickles_carry_coordinates_not_a_built_matrix():
    xy = np.random.RandomState(2).rand(400, 2)
    p = OVRP(xy, np.r_[0, np.ones(399)], 30, rounding="nint")
    before = len(pickle.dumps(p))
    p.distances                                      # built and cached
    copy = pickle.loads(pickle.dumps(p))
    assert len(pickle.dumps(p)) == before
    assert copy.rounding == "nint" and np.array_equal(copy.distances, p.distances)
    explicit = OVRP(None, np.r_[0, np.ones(399)], 30, distances=p.distances)
    assert np.array_equal(pickle.loads(pickle.dumps(explicit)).distances, p.distances)


def test_an_old_pickle_with_a_distances_attribute_still_loads():
    p = TSP(np.random.RandomState(4).rand(10, 2))
    state = {**p.__getstate__(), "distances": p.distances}
    for key in ("_matrix", "_n", "_explicit", "rounding"):
        state.pop(key)
    old = TSP.__new__(TSP)
    old.__setstate__(state)
    assert old.n_nodes == 10 and old.explicit_distances and old.cost(list(range(10))) == p.cost(list(range(10)))


def test_coordinates_whose_distances_overflow_are_refused():
    with pytest.raises(glns.InvalidInstanceError, match="too large"):
        TSP([[0.0, 0.0], [1e200, 1e200]])
    with pytest.raises(glns.InvalidInstanceError, match="rounding"):
        TSP([[0.0, 0.0], [1.0, 1.0]], rounding="ceil")
