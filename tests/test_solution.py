"""The core's Solution (costs, deltas, moves) and its checker, against plain-Python references."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from glns import CVRP, OVRP, TSP
from glns._core._solution import Solution, check

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- plain-Python references


def ref_cost(kind: str, d: list[list[float]], sol) -> float:
    """Objective of SPEC §1 in the core's canonical order: each node's incoming arc (plus the
    way back to the depot for the last customer of a closed route), summed per block of 16
    node ids in id order, then the blocks in order."""
    owned = [None] * len(d)
    routes = [sol] if kind == "tsp" else sol
    for route in routes:
        for i, v in enumerate(route):
            if kind == "tsp":
                owned[v] = d[route[i - 1]][v]
            else:
                owned[v] = d[route[i - 1] if i > 0 else 0][v]
                if kind == "cvrp" and i == len(route) - 1:
                    owned[v] = owned[v] + d[v][0]
    total = 0.0
    for block in range(0, len(d), 16):
        part = 0.0
        for c in owned[block:block + 16]:
            if c is not None:
                part += c
        total += part
    return total


def cut_greedily(order, demands, capacity, extra_cuts=()):
    """Cut a customer order into capacity-feasible routes (plus optional extra cuts)."""
    routes, load = [], 0
    for i, v in enumerate(order):
        if not routes or load + demands[v] > capacity or (i < len(extra_cuts) and extra_cuts[i]):
            routes.append([])
            load = 0
        routes[-1].append(v)
        load += demands[v]
    return routes


@st.composite
def instances(draw, kind):
    """(problem, a random feasible solution) with 2..30 nodes."""
    n = draw(st.integers(2, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        coords = rng.random((n, 2)) * draw(st.sampled_from([1.0, 100.0, 1e4]))
        geometry = dict(coords=coords)
    else:  # explicit asymmetric matrix (zero diagonal)
        d = rng.random((n, n)) * 10.0
        np.fill_diagonal(d, 0.0)
        geometry = dict(distances=d)
    if kind == "tsp":
        problem = TSP(**geometry)
        sol = [int(v) for v in draw(st.permutations(range(n)))]
        return problem, sol
    demands = [0] + [int(x) for x in rng.integers(0, 10, n - 1)]
    capacity = draw(st.integers(max(1, max(demands)), 40))
    cls = CVRP if kind == "cvrp" else OVRP
    problem = cls(demands=demands, capacity=capacity, **geometry)
    order = [int(v) for v in draw(st.permutations(range(1, n)))]
    extra = draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1))
    return problem, cut_greedily(order, demands, capacity, extra)


KINDS = ["tsp", "cvrp", "ovrp"]


def loaded(problem, sol) -> Solution:
    s = Solution(problem.core)
    s.load(sol)
    return s


def dist(problem):
    return problem.distances.tolist()


def storage_routes(s: Solution, kind: str):
    return [s.routes()] if kind == "tsp" else s.routes()


# --------------------------------------------------------------------------- cost


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_cost_equals_reference(kind, data):
    problem, sol = data.draw(instances(kind))
    s = loaded(problem, sol)
    d = dist(problem)
    assert s.routes() == sol
    assert s.cost() == ref_cost(kind, d, sol)
    assert problem.cost(sol) == ref_cost(kind, d, sol)
    if kind != "tsp":
        q = problem.demands.tolist()
        assert s.loads() == [sum(q[v] for v in r) for r in sol]
        assert all(load <= problem.capacity for load in s.loads())


def test_open_and_closed_costs_differ_by_the_return_legs():
    coords = [[0.0, 0.0], [3.0, 4.0], [6.0, 8.0], [0.0, 1.0]]
    c = CVRP(coords, [0, 1, 1, 1], 2)
    o = OVRP(coords, [0, 1, 1, 1], 2)
    sol = [[1, 2], [3]]
    assert c.cost(sol) == 5.0 + 5.0 + 10.0 + 1.0 + 1.0
    assert o.cost(sol) == 5.0 + 5.0 + 1.0
    t = TSP(coords)
    assert t.cost([0, 1, 2, 3]) == 5.0 + 5.0 + float(np.hypot(6.0, 7.0)) + 1.0


# --------------------------------------------------------------------------- deltas


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_removal_delta_equals_recomputed_difference(kind, data):
    problem, sol = data.draw(instances(kind))
    d = dist(problem)
    s = loaded(problem, sol)
    nodes = sol if kind == "tsp" else [v for r in sol for v in r]
    v = data.draw(st.sampled_from(nodes))
    before = s.cost()
    delta = s.removal_delta(v)
    s.remove(v)
    after = s.cost()
    assert delta == pytest.approx(after - before, rel=1e-9, abs=1e-9)
    # and against the plain-Python reference on lists
    if kind == "tsp":
        rest = [u for u in sol if u != v]
    else:
        rest = [[u for u in r if u != v] for r in sol]
    assert after == pytest.approx(ref_cost(kind, d, rest), rel=1e-12, abs=1e-12)
    assert delta == pytest.approx(ref_cost(kind, d, rest) - ref_cost(kind, d, sol), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_insertion_delta_equals_recomputed_difference_at_every_position(kind, data):
    problem, sol = data.draw(instances(kind))
    d = dist(problem)
    nodes = sol if kind == "tsp" else [v for r in sol for v in r]
    v = data.draw(st.sampled_from(nodes))
    s = loaded(problem, sol)
    s.remove(v)
    if kind != "tsp":
        s.drop_empty()
    routes = storage_routes(s, kind)
    base = ref_cost(kind, d, routes if kind != "tsp" else routes[0])
    assert s.cost() == base
    for r, route in enumerate(routes):
        for pos in range(len(route) + 1):
            new = copy.deepcopy(routes)
            new[r].insert(pos, v)
            expected = ref_cost(kind, d, new if kind != "tsp" else new[0]) - base
            assert s.insertion_delta(v, r, pos) == pytest.approx(expected, rel=1e-9, abs=1e-9), (r, pos)
    if kind != "tsp":
        assert s.new_route_cost(v) == ref_cost(kind, d, [[v]])
        assert s.new_route_cost(v) == pytest.approx(ref_cost(kind, d, routes + [[v]]) - base, abs=1e-9)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_remove_then_insert_keeps_loads_routes_and_cost_consistent(kind, data):
    problem, sol = data.draw(instances(kind))
    d = dist(problem)
    q = problem.demands.tolist()
    s = loaded(problem, sol)
    nodes = sol if kind == "tsp" else [v for r in sol for v in r]
    moved = data.draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=len(nodes), unique=True))
    for v in moved:
        s.remove(v)
        with pytest.raises(ValueError, match="not routed"):
            s.remove(v)
        with pytest.raises(ValueError, match="not routed"):
            s.removal_delta(v)
    if kind != "tsp":
        s.drop_empty()
    assert check(problem.core, s.routes(), moved) is None
    for v in moved:
        routes = storage_routes(s, kind)
        if kind == "tsp":
            r = 0
        else:
            r = data.draw(st.integers(0, len(routes)))  # len(routes): open a new route
            if r < len(routes) and sum(q[u] for u in routes[r]) + q[v] > problem.capacity:
                r = len(routes)
        pos = data.draw(st.integers(0, len(routes[r]) if r < len(routes) else 0))
        expected_delta = s.insertion_delta(v, r, pos) if r < len(routes) else s.new_route_cost(v)
        before = s.cost()
        s.insert(v, r, pos)
        with pytest.raises(ValueError, match="routed already"):
            s.insert(v, 0, 0)
        assert s.cost() == pytest.approx(before + expected_delta, rel=1e-9, abs=1e-9)
        new_routes = storage_routes(s, kind)
        assert new_routes[r][pos] == v
        if kind != "tsp":
            assert s.loads() == [sum(q[u] for u in route) for route in new_routes]
    final = s.routes()
    assert check(problem.core, final) is None
    assert s.cost() == ref_cost(kind, d, final)
    assert problem.cost(final) == s.cost()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**64 - 1))
def test_random_init_is_feasible_and_seeded(kind, data, seed):
    problem, _ = data.draw(instances(kind))
    a = Solution(problem.core)
    a.random_init(seed)
    b = Solution(problem.core)
    b.random_init(seed)
    assert a.routes() == b.routes()
    assert check(problem.core, a.routes()) is None
    assert a.cost() == ref_cost(kind, dist(problem), a.routes())
    if kind != "tsp":
        assert all(load <= problem.capacity for load in a.loads())
        assert all(len(r) > 0 for r in a.routes())
        assert len(a.loads()) == len(a.routes())


def test_random_init_differs_between_seeds():
    problem = TSP(np.random.default_rng(1).random((20, 2)))
    tours = set()
    for seed in range(5):
        s = Solution(problem.core)
        s.random_init(seed)
        tours.add(tuple(s.routes()))
    assert len(tours) == 5


def test_delta_argument_errors():
    p = CVRP([[0, 0], [1, 0], [0, 1]], [0, 1, 1], 2)
    s = loaded(p, [[1, 2]])
    with pytest.raises(ValueError, match="not routed"):
        s.removal_delta(0)
    with pytest.raises(ValueError, match="not routed"):
        s.removal_delta(3)
    with pytest.raises(ValueError, match="no such route position"):
        s.insertion_delta(1, 1, 0)
    with pytest.raises(ValueError, match="no such route position"):
        s.insertion_delta(1, 0, 3)
    with pytest.raises(ValueError, match="not routed"):
        s.remove(-1)
    with pytest.raises(ValueError, match="routed already or not a routable node"):
        s.insert(5, 0, 0)


def test_insert_refuses_the_depot():
    p = CVRP([[0, 0], [1, 0], [0, 1]], [0, 1, 1], 10)
    s = loaded(p, [[1], [2]])
    with pytest.raises(ValueError):
        s.insert(0, 0, 1)  # accepted: routes() then reads [[1, 0], [2]]


def test_deltas_with_nonzero_depot_diagonal():
    d = np.array([[2.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    p = CVRP(distances=d, demands=[0, 1, 1], capacity=1)
    s = loaded(p, [[1], [2]])
    before = s.cost()
    delta = s.removal_delta(2)
    s.remove(2)
    assert delta == s.cost() - before


def test_tsp_drop_empty_keeps_the_tour():
    p = TSP([[0, 0], [1, 0]])
    s = loaded(p, [0, 1])
    s.remove(0)
    s.remove(1)
    s.drop_empty()
    s.insert(1, 0, 0)
    assert s.routes() == [1]


# --------------------------------------------------------------------------- the checker


@pytest.fixture
def cvrp():
    #        depot   1       2       3       4       5
    coords = [[0, 0], [1, 0], [2, 0], [0, 1], [0, 2], [1, 1]]
    return CVRP(coords, [0, 2, 2, 3, 3, 4], 6)


@pytest.fixture
def tsp():
    return TSP(np.random.default_rng(0).random((5, 2)))


GOOD_VRP = [[1, 2], [3, 4], [5]]


def test_valid_solutions_pass(cvrp, tsp):
    assert check(cvrp.core, GOOD_VRP) is None
    assert check(tsp.core, [0, 1, 2, 3, 4]) is None
    assert check(tsp.core, [4, 2, 0, 3, 1]) is None


@pytest.mark.parametrize(
    "sol, message",
    [
        ([[1, 2], [3, 4]], "node 5 is missing"),
        ([[1], [3]], "node 2 is missing (and 2 more)"),
        ([], "node 1 is missing (and 4 more)"),
        ([[1, 2], [3, 4], [5, 1]], "route 2: duplicate node 1"),
        ([[1, 2, 2], [3, 4], [5]], "route 0: duplicate node 2"),
        ([[1, 2], [3, 4], [5, 6]], "route 2: foreign node 6 (valid ids are 1..5)"),
        ([[1, 2], [3, 4], [5, 99999999999]], "route 2: foreign node 99999999999 (valid ids are 1..5)"),
        ([[1, 2], [-1, 3, 4], [5]], "route 1: foreign node -1 (valid ids are 1..5)"),
        ([[0, 1, 2], [3, 4], [5]], "route 0: the depot 0 must not be written in a route"),
        ([[1, 2], [3, 4, 0], [5]], "route 1: the depot 0 must not be written in a route"),
        ([[1, 2], [3, 4], [5.0]], "route 2: 5.0 is not an integer node id"),
        ([[1, 2], [3, np.float64(4)], [5]], f"route 1: {np.float64(4)!r} is not an integer node id"),
        ([[1, 2], [3, np.float32(4)], [5]], f"route 1: {np.float32(4)!r} is not an integer node id"),
        ([[1, 2], [3, 4 + 0j], [5]], "route 1: (4+0j) is not an integer node id"),
        ([[1, "2"], [3, 4], [5]], "route 0: '2' is not an integer node id"),
        ([[1, None], [3, 4], [5]], "route 0: None is not an integer node id"),
        ([[1, [2]], [3, 4], [5]], "route 0: [2] is not an integer node id"),
        ([1, 2, 3, 4, 5], "each route must be a list of customer ids, got int"),
        ([[1, 2], "34", [5]], "each route must be a list of customer ids, got str"),
        ([[1, 2], {3: 4}, [5]], "each route must be a list of customer ids, got dict"),
        ([[1, 2], None, [5]], "each route must be a list of customer ids, got NoneType"),
        ("12345", "solution must be a list, got str"),
        ({1: 2}, "solution must be a list, got dict"),
        (None, "solution must be a list, got NoneType"),
        (7, "solution must be a list, got int"),
    ],
)
def test_checker_vrp_violations(cvrp, sol, message):
    assert check(cvrp.core, sol) == message
    assert cvrp.violation(sol) == message


def test_checker_capacity(cvrp):
    assert check(cvrp.core, [[3, 5], [1, 2], [4]]) == "route 0: capacity exceeded (7 > 6)"
    assert check(cvrp.core, [[1, 2], [4, 3]]) == "node 5 is missing"  # 6 <= 6 is fine
    # no three customers fit one vehicle (2 + 2 + 3 > 6)
    assert check(cvrp.core, [[1, 2, 3], [4], [5]]) == \
        "route 0: capacity exceeded (more customers than any vehicle can carry)"
    assert check(cvrp.core, [[1, 2], [3, 5], [4]]) == "route 1: capacity exceeded (7 > 6)"
    # more customers than any vehicle can hold
    msg = check(cvrp.core, [[1, 2, 3, 4, 5]])
    assert msg.startswith("route 0: capacity exceeded")
    assert "capacity exceeded" in check(cvrp.core, [[], [5, 3], [1, 2, 4]])


@pytest.mark.parametrize(
    "sol, message",
    [
        ([0, 1, 2, 3], "node 4 is missing"),
        ([0, 1, 2, 3, 4, 0], "tour: duplicate node 0"),
        ([0, 1, 2, 3, 5], "tour: foreign node 5 (valid ids are 0..4)"),
        ([0, 1, 2, 3, -4], "tour: foreign node -4 (valid ids are 0..4)"),
        ([0, 1, 2, 3, 4.0], "tour: 4.0 is not an integer node id"),
        ([0, 1, 2, 3, "4"], "tour: '4' is not an integer node id"),
        ([[0, 1, 2, 3, 4]], "tour: [0, 1, 2, 3, 4] is not an integer node id"),
        ("01234", "solution must be a list, got str"),
        (None, "solution must be a list, got NoneType"),
    ],
)
def test_checker_tsp_violations(tsp, sol, message):
    assert check(tsp.core, sol) == message


@pytest.mark.parametrize(
    "sol",
    [
        [(1, 2), (3, 4), (5,)],
        ((1, 2), (3, 4), (5,)),
        [np.array([1, 2]), np.array([3, 4], dtype=np.int32), np.array([5], dtype=np.uint8)],
        [list(np.array([1, 2])), list(np.array([3, 4])), [np.int64(5)]],
        [[np.int64(1), np.int32(2)], [np.uint16(3), np.int8(4)], [np.intp(5)]],
        [[], [1, 2], [], [3, 4], [5], []],
        iter([[1, 2], [3, 4], [5]]),
    ],
)
def test_checker_accepts_numpy_ints_tuples_and_empty_routes(cvrp, sol):
    assert check(cvrp.core, sol) is None


def test_empty_routes_are_dropped(cvrp):
    s = loaded(cvrp, [[], [1, 2], [], [3, 4], [5], []])
    assert s.routes() == [[1, 2], [3, 4], [5]]
    assert s.loads() == [4, 6, 4]
    assert all(type(v) is int for r in s.routes() for v in r)
    assert cvrp.cost([[], [1, 2], [], [3, 4], [5], []]) == cvrp.cost(GOOD_VRP)


def test_numpy_tour_accepted(tsp):
    assert check(tsp.core, np.array([3, 1, 0, 2, 4])) is None
    assert check(tsp.core, (np.int64(3), 1, 0, 2, 4)) is None
    s = loaded(tsp, np.array([3, 1, 0, 2, 4], dtype=np.int16))
    assert s.routes() == [3, 1, 0, 2, 4] and all(type(v) is int for v in s.routes())


@pytest.mark.parametrize(
    "partial, removed, message",
    [
        ([[1, 2], [3, 4]], [5], None),
        ([[1, 2]], [3, 4, 5], None),
        ([[]], [1, 2, 3, 4, 5], None),
        ([], [5, 4, 3, 2, 1], None),
        ([[1, 2], [3, 4]], (np.int64(5),), None),
        ([[1, 2], [3, 4]], [5, 4], "removed: node 4 is also still in the solution"),
        ([[1, 2], [3]], [5, 4, 5], "removed: duplicate node 5"),
        ([[1, 2], [3]], [5], "node 4 is missing"),
        ([[1, 2]], [5], "node 3 is missing (and 1 more)"),
        ([[1, 2], [3, 4]], [0], "removed: foreign node 0 (valid ids are 1..5)"),
        ([[1, 2], [3, 4]], [6], "removed: foreign node 6 (valid ids are 1..5)"),
        ([[1, 2], [3, 4]], [5.0], "removed: 5.0 is not an integer node id"),
        ([[1, 2], [3, 4]], ["5"], "removed: '5' is not an integer node id"),
        ([[1, 2], [3, 4]], 5, "removed nodes must be a list, got int"),
        ([[1, 2], [3, 4]], "5", "removed nodes must be a list, got str"),
        ([[1, 2], [3, 4, 4]], [5], "route 1: duplicate node 4"),
    ],
)
def test_checker_partial_solutions(cvrp, partial, removed, message):
    assert check(cvrp.core, partial, removed) == message


def test_checker_partial_tsp(tsp):
    assert check(tsp.core, [0, 2], [4, 1, 3]) is None
    assert check(tsp.core, [], [0, 1, 2, 3, 4]) is None
    assert check(tsp.core, [0, 2], [4, 1]) == "node 3 is missing"
    assert check(tsp.core, [0, 2], [4, 1, 3, 2]) == "removed: node 2 is also still in the solution"
    assert check(tsp.core, [0, 2], [4, 1, 3, 1]) == "removed: duplicate node 1"


def test_failed_load_then_valid_load(cvrp):
    s = Solution(cvrp.core)
    with pytest.raises(ValueError, match="removed: duplicate node 5"):
        s.load([[1, 2], [3]], [5, 4, 5])
    with pytest.raises(ValueError, match="duplicate node 1"):
        s.load([[1, 2], [1]])
    s.load(GOOD_VRP)
    assert s.routes() == GOOD_VRP
    assert s.cost() == ref_cost("cvrp", dist(cvrp), GOOD_VRP)


# --------------------------------------------------------------------------- random corruptions


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_checker_names_each_random_corruption(kind, data):
    problem, sol = data.draw(instances(kind))
    n, first = problem.n_nodes, problem.first_node
    flat = sol if kind == "tsp" else [v for r in sol for v in r]
    fault = data.draw(st.sampled_from(["missing", "duplicate", "foreign", "negative", "float", "str", "depot"]))
    if fault == "depot" and kind == "tsp":
        fault = "duplicate"
    bad = copy.deepcopy(sol)
    ri = data.draw(st.integers(0, len(bad) - 1)) if kind != "tsp" else None
    target = bad if kind == "tsp" else bad[ri]
    where = "tour" if kind == "tsp" else f"route {ri}"
    if fault == "missing":
        v = data.draw(st.sampled_from(list(target)))
        target.remove(v)
        assert check(problem.core, bad) == f"node {v} is missing"
        return
    pos = data.draw(st.integers(0, len(target)))
    if fault == "duplicate":
        x = data.draw(st.sampled_from(flat))
    elif fault == "foreign":
        x = data.draw(st.integers(n, 10**12))
    elif fault == "negative":
        x = data.draw(st.integers(-(10**12), -1))
    elif fault == "float":
        x = float(data.draw(st.sampled_from(flat)))
    elif fault == "str":
        x = str(data.draw(st.sampled_from(flat)))
    else:
        x = 0
    target.insert(pos, x)
    msg = check(problem.core, bad)
    if fault == "duplicate":
        assert msg is not None and ("duplicate node" in msg or "capacity exceeded" in msg), msg
    elif fault in ("foreign", "negative"):
        assert msg == f"{where}: foreign node {x} (valid ids are {first}..{n - 1})"
    elif fault in ("float", "str"):
        assert msg == f"{where}: {x!r} is not an integer node id"
    else:
        assert msg == f"{where}: the depot 0 must not be written in a route"
    with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
        loaded(problem, bad)
