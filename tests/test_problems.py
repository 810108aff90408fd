"""Instances (SPEC §1): validation errors, read-only copies, problem_data, Euclidean distances."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from glns import CVRP, OVRP, TSP, InfeasibleSolutionError, InvalidInstanceError, Problem
from glns.problems import euclidean_distances
import glns
from glns.datasets import generate_cvrp, generate_ovrp, generate_tsp

SQUARE = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
DEMANDS = [0, 3, 4, 5]


def esc(text: str) -> str:
    """A regex matching `text` literally (and the whole message)."""
    return "^" + re.escape(text) + "$"


# --------------------------------------------------------------------------- coordinates


@pytest.mark.parametrize("cls", [TSP, CVRP, OVRP])
@pytest.mark.parametrize(
    "coords, message",
    [
        (np.zeros((4, 3)), "coordinates must have shape (n, 2), got (4, 3)"),
        (np.zeros((4, 1)), "coordinates must have shape (n, 2), got (4, 1)"),
        (np.zeros(4), "coordinates must have shape (n, 2), got (4,)"),
        (np.zeros((2, 2, 2)), "coordinates must have shape (n, 2), got (2, 2, 2)"),
        (5.0, "coordinates must have shape (n, 2), got ()"),
    ],
)
def test_coordinates_wrong_shape(cls, coords, message):
    args = (coords,) if cls is TSP else (coords, [0] * 4, 10)
    with pytest.raises(InvalidInstanceError, match=esc(message)):
        cls(*args)


@pytest.mark.parametrize("bad, shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
@pytest.mark.parametrize("node", [0, 2])
def test_coordinates_not_finite(bad, shown, node):
    coords = np.array(SQUARE)
    coords[node, 1] = bad
    x = float(coords[node, 0])
    msg = f"coordinates of node {node} are not finite: [{x}, {shown}]"
    with pytest.raises(InvalidInstanceError, match=esc(msg)):
        TSP(coords)
    with pytest.raises(InvalidInstanceError, match=esc(msg)):
        CVRP(coords, DEMANDS, 10)


def test_coordinates_not_numeric():
    with pytest.raises(InvalidInstanceError, match="^coordinates are not numeric: "):
        TSP([["a", "b"], [1, 2]])


def test_no_geometry():
    with pytest.raises(InvalidInstanceError, match=esc("give coordinates or a distance matrix")):
        TSP()
    with pytest.raises(InvalidInstanceError, match=esc("give coordinates or a distance matrix")):
        CVRP(None, [0, 1], 5)


# --------------------------------------------------------------------------- distance matrix


@pytest.mark.parametrize(
    "matrix, message",
    [
        (np.zeros((2, 3)), "distance matrix must be square, got shape (2, 3)"),
        (np.zeros((4, 1)), "distance matrix must be square, got shape (4, 1)"),
        (np.zeros((2, 2, 2)), "distance matrix must be 2-D, got 3-D"),
        (np.zeros(4), "distance matrix must be 2-D, got 1-D"),
        (np.float64(1.0), "distance matrix must be 2-D, got 0-D"),
    ],
)
def test_distance_matrix_shape(matrix, message):
    with pytest.raises(InvalidInstanceError, match=esc(message)):
        TSP(distances=matrix)
    with pytest.raises(InvalidInstanceError, match=esc(message)):
        OVRP(distances=matrix, demands=[0, 1], capacity=5)


@pytest.mark.parametrize("bad, shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_distance_matrix_not_finite(bad, shown):
    d = np.ones((3, 3))
    d[1, 2] = bad
    with pytest.raises(InvalidInstanceError, match=esc(f"distance (1, 2) is not finite: {shown}")):
        TSP(distances=d)
    with pytest.raises(InvalidInstanceError, match=esc(f"distance (1, 2) is not finite: {shown}")):
        CVRP(distances=d, demands=[0, 1, 1], capacity=3)


def test_distance_matrix_negative():
    d = np.ones((3, 3))
    d[2, 0] = -0.5
    d[2, 1] = -7.0
    with pytest.raises(InvalidInstanceError, match=esc("distance (2, 0) is negative: -0.5")):
        TSP(distances=d)
    with pytest.raises(InvalidInstanceError, match=esc("distance (2, 0) is negative: -0.5")):
        CVRP(distances=d, demands=[0, 1, 1], capacity=3)


def test_distance_matrix_not_numeric():
    with pytest.raises(InvalidInstanceError, match="^distance matrix is not numeric: "):
        TSP(distances=[["x", 1], [1, 0]])


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_nodes(n):
    msg = f"an instance needs at least 2 nodes, got {n}"
    with pytest.raises(InvalidInstanceError, match=esc(msg)):
        TSP(np.zeros((n, 2)))
    with pytest.raises(InvalidInstanceError, match=esc(msg)):
        TSP(distances=np.zeros((n, n)))
    with pytest.raises(InvalidInstanceError, match=esc(msg)):
        CVRP(np.zeros((n, 2)), [0] * n, 5)


def test_coords_matrix_size_mismatch():
    with pytest.raises(InvalidInstanceError, match=esc("4 coordinates but a 3x3 distance matrix")):
        TSP(SQUARE, distances=np.ones((3, 3)))
    with pytest.raises(InvalidInstanceError, match=esc("4 coordinates but a 5x5 distance matrix")):
        CVRP(SQUARE, DEMANDS, 10, distances=np.ones((5, 5)))


def test_two_nodes_are_enough():
    assert TSP([[0, 0], [3, 4]]).n_nodes == 2
    p = CVRP([[0, 0], [3, 4]], [0, 1], 1)
    assert (p.n_nodes, p.n_customers) == (2, 1)


def test_asymmetric_matrix_and_nonzero_diagonal_are_accepted():
    d = np.array([[0.0, 1.0, 2.0], [5.0, 0.5, 1.0], [3.0, 4.0, 0.0]])
    p = TSP(distances=d)
    assert np.array_equal(p.distances, d)
    assert p.cost([0, 1, 2]) == 1.0 + 1.0 + 3.0
    assert p.cost([0, 2, 1]) == 2.0 + 4.0 + 5.0


# --------------------------------------------------------------------------- demands and capacity


@pytest.mark.parametrize("cls", [CVRP, OVRP])
@pytest.mark.parametrize(
    "demands, capacity, message",
    [
        ([0, 3, -1, 2], 10, "demand of node 2 is negative: -1"),
        ([0, -4, -1, 2], 10, "demand of node 1 is negative: -4"),
        ([1, 3, 1, 2], 10, "the depot (node 0) must have demand 0, got 1"),
        ([0, 3, 11, 2], 10, "demand of node 2 (11) exceeds the capacity 10"),
        ([0, 3, 4, 5], 4, "demand of node 3 (5) exceeds the capacity 4"),
        ([0, 3, 1, 2], 0, "capacity must be positive, got 0"),
        ([0, 3, 1, 2], -5, "capacity must be positive, got -5"),
        ([0, 1.5, 1, 2], 10, "demand of node 1 is not an integer"),
        ([0, 1, 1, 2.25], 10, "demand of node 3 is not an integer"),
        ([0, 1, np.nan, 2], 10, "demand of node 2 is not finite"),
        ([0, 1, np.inf, 2], 10, "demand of node 2 is not finite"),
        (["0", "1", "1", "2"], 10, "demands must be integers, got dtype <U1"),
        ([0, 1, 1], 10, "demands must have shape (4,) with the depot first, got (3,)"),
        ([[0, 1, 1, 2]], 10, "demands must have shape (4,) with the depot first, got (1, 4)"),
        ([0, 1, 1, 2], 2.5, "capacity must be an integer, got 2.5"),
        ([0, 1, 1, 2], "many", "capacity must be an integer, got 'many'"),
        ([0, 1, 1, 2], [5], "capacity must be an integer, got [5]"),
    ],
)
def test_demand_and_capacity_errors(cls, demands, capacity, message):
    with pytest.raises(InvalidInstanceError, match=esc(message)):
        cls(SQUARE, demands, capacity)


@pytest.mark.parametrize("cls", [CVRP, OVRP])
def test_missing_demands_or_capacity(cls):
    with pytest.raises(InvalidInstanceError, match=esc("demands are required")):
        cls(SQUARE)
    with pytest.raises(InvalidInstanceError, match=esc("demands are required")):
        cls(SQUARE, capacity=10)
    with pytest.raises(InvalidInstanceError, match=esc("capacity is required")):
        cls(SQUARE, DEMANDS)


def test_integral_float_demands_and_capacity_are_accepted():
    p = CVRP(SQUARE, [0.0, 3.0, 4.0, 5.0], 10.0)
    assert p.demands.dtype == np.int64
    assert p.demands.tolist() == [0, 3, 4, 5]
    assert p.capacity == 10 and type(p.capacity) is int


def test_zero_demand_customers_and_demand_equal_capacity_are_accepted():
    p = CVRP(SQUARE, [0, 0, 5, 5], 5)
    assert p.violation([[1, 2], [3]]) is None
    assert "capacity exceeded" in p.violation([[2, 3], [1]])


@pytest.mark.parametrize("capacity", [float("nan"), float("inf")])
def test_non_finite_capacity_is_an_invalid_instance(capacity):
    with pytest.raises(InvalidInstanceError, match="capacity"):
        CVRP(SQUARE, DEMANDS, capacity)


def test_fractional_numpy_float32_capacity_is_refused():
    with pytest.raises(InvalidInstanceError, match="capacity must be an integer"):
        CVRP(SQUARE, DEMANDS, np.float32(10.5))


def test_huge_float_demand_reports_capacity_excess():
    with pytest.raises(InvalidInstanceError, match="demand of node 1 .* exceeds the capacity 10"):
        CVRP(SQUARE, [0, 1e30, 1, 1], 10)


# --------------------------------------------------------------------------- read-only, independent copies


def test_arrays_are_read_only():
    p = CVRP(SQUARE, DEMANDS, 10)
    for arr in (p.coords, p.distances, p.demands):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1
    t = TSP(SQUARE)
    for arr in (t.coords, t.distances, t.demands):
        with pytest.raises(ValueError, match="read-only"):
            arr[...] = 0


def test_instance_copies_its_inputs():
    coords = np.array(SQUARE)
    demands = np.array(DEMANDS)
    p = CVRP(coords, demands, 10)
    before = (p.coords.copy(), p.distances.copy(), p.demands.copy())
    cost_before = p.cost([[1, 2], [3]])
    coords[:] = 99.0
    demands[:] = 0
    assert np.array_equal(p.coords, before[0])
    assert np.array_equal(p.distances, before[1])
    assert np.array_equal(p.demands, before[2])
    assert p.cost([[1, 2], [3]]) == cost_before
    assert not np.shares_memory(p.coords, coords)
    assert not np.shares_memory(p.demands, demands)


def test_instance_copies_its_distance_matrix():
    d = np.array([[0.0, 2.0, 3.0], [2.0, 0.0, 4.0], [3.0, 4.0, 0.0]])
    p = TSP(distances=d)
    q = CVRP(distances=d, demands=[0, 1, 1], capacity=2)
    assert p.cost([0, 1, 2]) == 9.0
    d[:] = 100.0
    assert p.distances[0, 1] == 2.0 and q.distances[0, 1] == 2.0
    assert p.cost([0, 1, 2]) == 9.0
    assert q.cost([[1, 2]]) == 9.0
    assert not np.shares_memory(p.distances, d)


def test_input_list_of_lists_is_not_kept():
    coords = [list(c) for c in SQUARE]
    p = TSP(coords)
    coords[0][0] = 50.0
    assert p.coords[0, 0] == 0.0


# --------------------------------------------------------------------------- problem_data


def test_problem_data_tsp():
    p = TSP(SQUARE)
    data = p.problem_data()
    assert set(data) == {"distance_matrix", "coordinates"}
    dm, xy = data["distance_matrix"], data["coordinates"]
    assert isinstance(dm, np.ndarray) and dm.dtype == np.float64 and dm.shape == (4, 4)
    assert isinstance(xy, np.ndarray) and xy.dtype == np.float64 and xy.shape == (4, 2)
    assert np.array_equal(dm, p.distances) and np.array_equal(xy, np.array(SQUARE))
    assert not dm.flags.writeable and not xy.flags.writeable


@pytest.mark.parametrize("cls, open_routes", [(CVRP, False), (OVRP, True)])
def test_problem_data_vrp(cls, open_routes):
    p = cls(SQUARE, DEMANDS, 10)
    data = p.problem_data()
    assert set(data) == {"distance_matrix", "coordinates", "demands", "capacity", "depot_idx", "open_routes"}
    assert data["distance_matrix"].shape == (4, 4) and data["distance_matrix"].dtype == np.float64
    assert data["coordinates"].shape == (4, 2)
    q = data["demands"]
    assert isinstance(q, np.ndarray) and q.ndim == 1 and q.dtype.kind == "i"
    assert q.tolist() == DEMANDS and q[0] == 0
    assert data["capacity"] == 10 and type(data["capacity"]) is int
    assert data["depot_idx"] == 0 and type(data["depot_idx"]) is int
    assert data["open_routes"] is open_routes
    for key in ("distance_matrix", "coordinates", "demands"):
        assert not data[key].flags.writeable
        with pytest.raises(ValueError):
            data[key][0] = 7


def test_problem_data_is_a_fresh_dict_each_call():
    p = CVRP(SQUARE, DEMANDS, 10)
    a = p.problem_data()
    b = p.problem_data()
    assert a is not b
    a["capacity"] = 1
    a["demands"] = None
    del a["distance_matrix"]
    c = p.problem_data()
    assert c["capacity"] == 10 and c["demands"].tolist() == DEMANDS and "distance_matrix" in c


def test_problem_data_from_matrix_only_instance():
    d = np.array([[0.0, 1.0], [1.0, 0.0]])
    data = TSP(distances=d).problem_data()
    assert data["coordinates"] is None
    assert np.array_equal(data["distance_matrix"], d)


# --------------------------------------------------------------------------- distances, misc API


coordinate_arrays = st.integers(2, 25).flatmap(
    lambda n: arrays(np.float64, (n, 2),
                     elements=st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False,
                                        allow_subnormal=False))
)


@settings(max_examples=60, deadline=None)
@given(coordinate_arrays)
def test_euclidean_distances_match_hypot(xy):
    n = len(xy)
    pts = xy.tolist()
    for cls in (TSP, CVRP):
        p = cls(xy) if cls is TSP else cls(xy, [0] * n, 1)
        d = p.distances
        assert d.shape == (n, n) and d.dtype == np.float64
        for i in range(n):
            for j in range(n):
                dx, dy = pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]
                # the same formula: identical float
                assert d[i, j] == math.sqrt(dx * dx + dy * dy)
                assert d[i, j] == pytest.approx(math.hypot(dx, dy), rel=1e-14, abs=1e-12)
        assert np.array_equal(d, d.T)
        assert np.all(np.diag(d) == 0.0)


def test_euclidean_distances_known_values():
    d = euclidean_distances(np.array([[0.0, 0.0], [3.0, 4.0], [-5.0, 12.0]]))
    assert d.tolist() == [[0.0, 5.0, 13.0], [5.0, 0.0, math.sqrt(64 + 64)], [13.0, math.sqrt(128), 0.0]]


def test_large_finite_coordinates_give_finite_distances_or_an_error():
    coords = [[0.0, 0.0], [1e200, 0.0], [0.0, 1e200]]
    try:
        p = TSP(coords)
    except InvalidInstanceError:
        return
    assert np.isfinite(p.distances).all()


def test_sizes_and_repr():
    t = TSP(SQUARE, name="sq")
    assert (t.n_nodes, t.n_customers, t.kind, t.first_node) == (4, 4, "tsp", 0)
    assert repr(t) == "<TSP 'sq' with 4 cities>"
    c = OVRP(SQUARE, DEMANDS, 10)
    assert (c.n_nodes, c.n_customers, c.kind, c.first_node) == (4, 3, "ovrp", 1)
    assert repr(c) == "<OVRP with 3 customers>"
    assert isinstance(c, CVRP) and isinstance(c, Problem)
    assert t.demands.tolist() == [0, 0, 0, 0] and t.capacity == 0


def test_problem_base_class_cannot_be_instantiated():
    with pytest.raises(TypeError):
        Problem()


def test_cost_check_and_violation():
    p = CVRP(SQUARE, DEMANDS, 10)
    assert p.cost([[1, 2], [3]]) == 1.0 + 1.0 + math.sqrt(2) + 1.0 + 1.0
    o = OVRP(SQUARE, DEMANDS, 10)
    assert o.cost([[1, 2], [3]]) == (1.0 + 1.0) + 1.0
    assert p.violation([[1, 2], [3]]) is None
    p.check([[1, 2], [3]])
    with pytest.raises(InfeasibleSolutionError, match=esc("node 3 is missing")):
        p.check([[1, 2]])
    with pytest.raises(InfeasibleSolutionError, match=esc("node 3 is missing")):
        p.cost([[1, 2]])
    with pytest.raises(InfeasibleSolutionError, match="^route 0: capacity exceeded"):
        p.cost([[1, 2, 3]])
    with pytest.raises(InfeasibleSolutionError, match=esc("route 1: capacity exceeded (11 > 10)")):
        CVRP(SQUARE, [0, 1, 5, 6], 10).cost([[1], [2, 3]])
    t = TSP(SQUARE)
    assert t.cost([0, 1, 2, 3]) == 4.0
    assert t.cost([0, 2, 1, 3]) == math.sqrt(2) + 1.0 + math.sqrt(2) + 1.0


@pytest.mark.parametrize("make", [lambda: generate_tsp(12, 3), lambda: generate_cvrp(12, 3), lambda: generate_ovrp(12, 3)])
def test_problem_pickles_after_its_core_was_built(make):
    import pickle

    problem = make()
    sol = glns.solve(problem, iterations=20, seed=1).solution   # builds the core's copy
    copy = pickle.loads(pickle.dumps(problem))
    assert copy.kind == problem.kind and copy.name == problem.name
    assert np.array_equal(copy.distances, problem.distances)
    assert copy.cost(sol) == problem.cost(sol)
