"""Nearest-neighbour tables and the symmetry flag the core derives from an instance."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns.neighbours import nearest_neighbours
from tests.conftest import make_problem


def brute_neighbours(dist, first, k):
    n = len(dist)
    rows = []
    for a in range(n):
        others = [b for b in range(first, n) if b != a]
        rows.append(sorted(others, key=lambda b: (dist[a][b], b))[:k])
    return rows


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["tsp", "cvrp", "ovrp"]), n=st.integers(2, 30),
       seed=st.integers(0, 10**6), k=st.integers(1, 40))
def test_neighbours_match_brute_force(kind, n, seed, k):
    problem = make_problem(kind, n, seed, 30)
    dist = problem.distances
    first = 0 if kind == "tsp" else 1
    got = nearest_neighbours(dist, first, k)
    width = min(k, problem.n_customers - 1)     # the depot's row is cut to the same width
    expect = [row[:width] for row in brute_neighbours(dist.tolist(), first, k)]
    assert got.tolist() == expect


def test_ties_are_broken_by_node_id():
    dist = np.ones((5, 5)) - np.eye(5)      # every pair at distance 1
    table = nearest_neighbours(dist, 0, 10)
    assert table.tolist() == [[1, 2, 3, 4], [0, 2, 3, 4], [0, 1, 3, 4], [0, 1, 2, 4], [0, 1, 2, 3]]


def test_core_instance_keeps_a_read_only_table_and_symmetry_flag():
    problem = make_problem("cvrp", 150, 3, 50)
    table = problem.core.neighbours
    assert table.shape == (151, 100)
    assert not table.flags.writeable
    assert (table >= 1).all()                        # the depot is never a neighbour
    assert problem.core.symmetric
    asym = problem.distances.copy()
    asym[1, 2] += 1.0
    assert not glns.TSP(distances=asym).core.symmetric


def test_one_routable_node_has_no_neighbours():
    problem = glns.CVRP(np.array([[0.0, 0.0], [1.0, 1.0]]), [0, 1], 5)
    assert problem.core.neighbours.shape == (2, 0)


# ------------------------------------------------------------------------------------------
# The compact table of the first columns, and quadrant candidate lists

def test_near_is_the_first_columns_in_a_table_of_their_own():
    for problem in (make_problem("cvrp", 150, 3, 50), make_problem("tsp", 12, 4, 0)):
        core = problem.core
        near = core.near
        assert near.shape[1] == min(20, core.neighbours.shape[1])
        assert np.array_equal(near, core.neighbours[:, :near.shape[1]])
        assert near.flags.c_contiguous and not near.flags.writeable


def _layout(name, n, rs):
    if name == "uniform":
        return rs.rand(n, 2) * 1000.0
    if name == "grid":                        # integer points: many equal distances and dx = 0
        return rs.randint(0, 9, size=(n, 2)).astype(float)
    if name == "line":                        # two quadrants empty for every point
        return np.c_[rs.rand(n), np.zeros(n)]
    if name == "clusters":                    # tight clusters far apart (as fl1577)
        centres = rs.rand(5, 2) * 1000.0
        return centres[rs.randint(0, 5, n)] + rs.rand(n, 2) * 10.0
    xy = rs.rand(n, 2) * [1000.0, 1.0]        # flat, the depot far outside
    xy[0] = [5000.0, -300.0]
    return xy


@pytest.mark.parametrize("layout", ["uniform", "grid", "line", "clusters", "outlier"])
@pytest.mark.parametrize("rounding", ["exact", "nint"])
@pytest.mark.parametrize("first", [0, 1])
def test_quadrant_candidates_equal_the_reference(layout, rounding, first):
    from glns._core._grid import coordinate_neighbours, quadrant_candidates as native
    from glns.neighbours import quadrant_candidates
    from glns.problems import euclidean_distances

    rs = np.random.RandomState(sum(map(ord, layout + rounding)) + first)   # stable across runs
    for n in (2, 3, 9, 40, 300):
        xy = _layout(layout, n, rs)
        dense = euclidean_distances(xy, rounding)
        for k, columns, per_quadrant, reach in ((8, 8, 2, 2.0), (30, 20, 5, 3.0),
                                                (30, 12, 5, np.inf), (5, 20, 1, 1.0)):
            nearest = coordinate_neighbours(xy, first, k, rounding == "nint")
            expected = quadrant_candidates(xy, dense, nearest, first, columns, per_quadrant, reach)
            got = native(xy, nearest, first, columns, per_quadrant, reach, rounding == "nint")
            assert got.dtype == np.int32 and got.shape == expected.shape
            assert np.array_equal(got, expected), (n, k, columns, per_quadrant, reach)


@pytest.mark.parametrize("layout", ["uniform", "circle"])
def test_quadrant_candidates_of_nodes_with_a_sparse_side_equal_the_reference(layout):
    """Nodes whose quadrant holds fewer points than asked for (the hull of a uniform cloud,
    every node of a circle) search the whole grid; the picks are still the reference's."""
    from glns._core._grid import coordinate_neighbours, quadrant_candidates as native
    from glns.neighbours import quadrant_candidates
    from glns.problems import euclidean_distances

    rs = np.random.RandomState(11)
    n = 2500
    if layout == "circle":
        angle = rs.rand(n) * 2 * np.pi
        xy = np.c_[np.cos(angle), np.sin(angle)] * 1000.0
    else:
        xy = rs.rand(n, 2) * 1000.0
    nearest = coordinate_neighbours(xy, 0, 30, False)
    expected = quadrant_candidates(xy, euclidean_distances(xy, "exact"), nearest, 0, 20, 5, np.inf)
    assert np.array_equal(native(xy, nearest, 0, 20, 5, np.inf, False), expected)


def test_quadrant_candidates_reach_other_clusters():
    """Two clusters: a city's nearest all lie in its own cluster, its quadrant candidates
    include the nearest cities of the other one (what the lists are for)."""
    from glns._core._grid import coordinate_neighbours, quadrant_candidates

    rs = np.random.RandomState(5)
    xy = np.r_[rs.rand(60, 2), rs.rand(60, 2) + [50.0, 0.0]]
    nearest = coordinate_neighbours(xy, 0, 30, False)
    assert (nearest[:60] < 60).all()
    cand = quadrant_candidates(xy, nearest, 0, 20, 5, np.inf, False)
    east = xy[:60, 0].argmax()                # the western cluster's easternmost city
    assert (cand[east] >= 60).any()
    assert len(set(cand[east].tolist())) == 20


def test_tours_on_demand_get_quadrant_candidates(monkeypatch):
    """A tour computed on demand: `near` is the quadrant table; a VRP keeps the nearest."""
    from glns.neighbours import quadrant_candidates
    from glns.problems import base as problem_base, euclidean_distances

    monkeypatch.setattr(problem_base, "DENSE_CORE_NODES", 0)
    rs = np.random.RandomState(8)
    xy = _layout("clusters", 150, rs)
    tour = glns.TSP(xy, rounding="nint")
    core = tour.core
    assert core.on_demand
    expected = quadrant_candidates(xy, euclidean_distances(xy, "nint"), core.neighbours, 0, 20, 5,
                                   np.inf)
    assert np.array_equal(core.near, expected)
    assert not np.array_equal(core.near, core.neighbours[:, :20])    # the lists do differ
    vrp = glns.CVRP(xy, np.r_[0, np.ones(149, dtype=int)], 10)
    assert vrp.core.on_demand
    assert np.array_equal(vrp.core.near, vrp.core.neighbours[:, :20])
