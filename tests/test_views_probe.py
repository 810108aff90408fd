"""Views of problem_data (glns.operators.views) and the negotiation of forms (.probe)."""

import gc
import json
import random
import time

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._solution import check
from glns.offline_llm.corpus import good_entries
from glns.operators import views
from glns.operators.bridge import compile_source, third_argument_convention
from glns.operators.probe import Form, canonical, negotiate, probe_cases, probe_problem
from glns.operators.seeds import BY_PROBLEM
from glns.operators.views import view_data, view_of_matrix

KINDS = ("tsp", "cvrp", "ovrp")


def _problem(kind, n=15, seed=3):
    if kind == "tsp":
        return datasets.generate_tsp(n, seed)
    return (datasets.generate_cvrp if kind == "cvrp" else datasets.generate_ovrp)(n, seed)


# ============================================================================ views


@pytest.mark.parametrize("kind", KINDS)
def test_python_view_has_the_same_values_as_plain_python_types(kind):
    p = _problem(kind)
    py, ref = view_data(p, "python"), p.problem_data()
    assert list(py) == list(ref)
    d = py["distance_matrix"]
    assert type(d) is tuple and all(type(row) is tuple for row in d)
    assert all(type(x) is float for row in d for x in row)
    assert len(d) == p.n_nodes
    assert all(d[i][j] == p.distances[i, j] for i in range(p.n_nodes) for j in range(p.n_nodes))
    xy = py["coordinates"]
    assert type(xy) is tuple and all(type(c) is tuple and len(c) == 2 for c in xy)
    assert all(type(v) is float for c in xy for v in c)
    assert all(xy[i][k] == p.coords[i, k] for i in range(p.n_nodes) for k in range(2))
    if kind != "tsp":
        q = py["demands"]
        assert type(q) is tuple and all(type(v) is int for v in q)
        assert list(q) == p.demands.tolist()
        assert type(py["capacity"]) is int and py["capacity"] == ref["capacity"]
        assert py["depot_idx"] == 0 and type(py["depot_idx"]) is int
        assert py["open_routes"] is (kind == "ovrp")


def test_python_view_is_immutable():
    py = view_data(_problem("cvrp"), "python")
    with pytest.raises(TypeError):
        py["distance_matrix"][0] = ()
    with pytest.raises(TypeError):
        py["distance_matrix"][1][2] = 0.0
    with pytest.raises(TypeError):
        py["demands"][1] = 0
    with pytest.raises(TypeError):
        py["coordinates"][1][0] = 0.0


@pytest.mark.parametrize("view", views.VIEWS)
def test_views_are_built_once_per_problem(view):
    p = _problem("ovrp")
    assert view_data(p, view) is view_data(p, view)
    assert view_of_matrix(p, view) is view_data(p, view)["distance_matrix"]
    other = _problem("ovrp")  # equal data, another problem: its own copy
    assert view_data(other, view) is not view_data(p, view)


def test_numpy_view_is_a_sealed_private_copy():
    p = _problem("cvrp")
    data = view_data(p, "numpy")
    for key in ("distance_matrix", "coordinates", "demands"):
        arr, original = data[key], getattr(p, {"distance_matrix": "distances",
                                               "coordinates": "coords"}.get(key, key))
        assert isinstance(arr, np.ndarray) and arr.dtype == original.dtype
        assert np.array_equal(arr, original)
        assert not np.shares_memory(arr, original)
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr.flags.writeable = True  # shared by every operator: it cannot be unlocked
        with pytest.raises(ValueError):
            arr[1] = 0
    assert data["capacity"] == p.capacity and data["open_routes"] is False


def test_views_without_coordinates():
    d = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.5], [2.0, 1.5, 0.0]])
    p = glns.TSP(distances=d)
    assert view_data(p, "numpy")["coordinates"] is None
    assert view_data(p, "python")["coordinates"] is None
    assert view_of_matrix(p, "python") == ((0.0, 1.0, 2.0), (1.0, 0.0, 1.5), (2.0, 1.5, 0.0))


def test_unknown_view_and_too_many_nodes(monkeypatch):
    p = _problem("tsp", n=15)
    with pytest.raises(ValueError, match="unknown view"):
        view_data(p, "list")
    with pytest.raises(ValueError, match="unknown view"):
        view_of_matrix(p, "pandas")
    monkeypatch.setattr(views, "MAX_PYTHON_VIEW_NODES", 14)
    with pytest.raises(ValueError, match="limited to 14 nodes"):
        view_data(p, "python")
    assert view_data(p, "numpy")["distance_matrix"].shape == (15, 15)


def test_cache_entry_goes_with_its_problem():
    p = _problem("tsp")
    view_data(p, "python")
    key = id(p)
    assert key in views._CACHE
    del p
    gc.collect()
    assert key not in views._CACHE


def test_unhashable_problem():
    class Unhashable(glns.CVRP):
        def __eq__(self, other):  # defining __eq__ drops __hash__
            return self is other

    base = _problem("cvrp")
    p = Unhashable(base.coords, base.demands, base.capacity)
    with pytest.raises(TypeError):
        hash(p)
    assert view_data(p, "python") is view_data(p, "python")
    assert view_data(p, "python")["demands"] == tuple(base.demands.tolist())


# ============================================================================ probe cases


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op_kind", ["destroy", "repair"])
def test_probe_cases_are_fixed_and_valid(kind, op_kind):
    problem = probe_problem(kind)
    cases = probe_cases(problem, op_kind)
    assert 6 <= len(cases) <= 10
    assert probe_cases(problem, op_kind) == cases  # cached: the very same inputs
    assert {c.problem.n_nodes for c in cases} == {50}
    harsh = [c.problem for c in cases if c.problem.name.endswith("harsh")]
    assert harsh and all(p.distances[1, 2] == 0 for p in harsh)
    plain = [c.problem for c in cases if not c.problem.name.endswith("harsh")]
    np.testing.assert_array_equal(plain[0].distances, problem.distances)
    assert len({c.seed for c in cases}) == len(cases)
    for c in cases:
        assert c.problem.kind == kind
        if op_kind == "destroy":
            assert c.problem.violation(c.first) is None
        else:
            assert check(c.problem.core, c.first, c.second) is None
            assert c.second and all(type(v) is int for v in c.second)
    sizes = [c.second if op_kind == "destroy" else len(c.second) for c in cases]
    assert 1 in sizes and max(sizes) >= 10


def test_probe_cases_come_from_the_bound_problem():
    """An operator only sees the run's kind of data: the first nodes of its own instance."""
    big = probe_problem("cvrp")
    small = glns.datasets.generate_cvrp(12, 3)
    for problem in (small, glns.datasets.generate_cvrp(120, 4)):
        cases = probe_cases(problem, "destroy")
        m = min(problem.n_nodes, 50)
        assert {c.problem.n_nodes for c in cases} == {m}
        plain = next(c.problem for c in cases if not c.problem.name.endswith("harsh"))
        np.testing.assert_array_equal(plain.distances, problem.distances[:m, :m])
        np.testing.assert_array_equal(plain.demands, problem.demands[:m])
    assert big.n_nodes == 50
    # an instance of a few customers lends its kind's generated instance: on one customer a
    # repair never compares two distances, and a form chosen there would be shared
    tiny = glns.CVRP([[0.0, 0.0], [3.0, 4.0]], [0, 7], 7)
    assert {c.problem.n_nodes for c in probe_cases(tiny, "repair")} == {50}


def test_probe_cases_reject_unknown_kinds():
    with pytest.raises(ValueError):
        probe_problem("pdptw")
    with pytest.raises(ValueError):
        probe_cases(probe_problem("tsp"), "local_search")
    with pytest.raises(TypeError):
        probe_cases("tsp", "destroy")


# ============================================================================ canonical


def test_canonical_equals_what_the_core_loads_alike():
    assert canonical([[1, 2], (3,)]) == canonical(((np.int64(1), np.int32(2)), np.array([3])))
    assert canonical(([4, 5], [[1, 2, 3]])) == canonical([np.array([4, 5]), np.array([[1, 2, 3]])])
    assert canonical(np.float64(0.5)) == canonical(0.5) == ("f", 0.5)
    assert canonical(7) == ("i", 7)


def test_canonical_keeps_apart_what_the_core_may_not_load_alike():
    assert canonical([1, 2]) != canonical([2, 1])
    assert canonical([1]) != canonical([1.0])
    assert canonical([True]) != canonical([1])          # strict: bool has its own tag
    assert canonical(np.bool_(True)) != canonical(True)  # the core refuses numpy booleans
    assert canonical(np.array([True])) == [("nb", True)]
    assert canonical([[1], []]) != canonical([[1]])
    assert canonical({1, 2}) != canonical([1, 2])
    assert canonical("12") != canonical([1, 2])
    assert canonical({1: 2}) == ("repr", "dict", "{1: 2}")
    assert canonical([[1, 2], [3]]) != canonical([[1, 2, 3]])


# ============================================================================ negotiation


def _without(routes, removed):
    """The partial solution left when `removed` leave `routes` (empty routes dropped)."""
    gone = set(removed)
    return [kept for kept in ([c for c in r if c not in gone] for r in routes) if kept]


def _paper_style_vrp_repair(partial, removed, problem_data):
    """Cheapest insertion written the way the paper's code is: dist[a][b], demands[c]."""
    dist = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = problem_data["open_routes"]
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]
    for c in removed:
        best, where = dist[0][c] + (0 if open_routes else dist[c][0]), None
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > cap:
                continue
            path = [0] + route + [0]
            for p in range(len(route) + 1):
                a, b = path[p], path[p + 1]
                delta = dist[a][c] + dist[c][b] - (0 if open_routes and b == 0 else dist[a][b])
                if delta < best:
                    best, where = delta, (r, p)
        if where is None:
            routes.append([c])
            loads.append(demands[c])
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += demands[c]
    return routes


def _paper_style_tsp_destroy(x, destroy_cnt, distance_matrix):
    """Remove the most isolated cities (distance to the nearest other), ties at random."""
    key = [(min(distance_matrix[c][v] for v in x if v != c), random.random(), c) for c in x]
    key.sort(reverse=True)
    removed = [c for _, _, c in key[:destroy_cnt]]
    gone = set(removed)
    return removed, [c for c in x if c not in gone]


def _paper_style_vrp_destroy(x, destroy_cnt, problem_data):
    """Remove the customers farthest from a random one (every distance scanned)."""
    d = problem_data["distance_matrix"]
    customers = [c for r in x for c in r]
    centre = random.choice(customers)
    ranked = sorted(customers, key=lambda c: (-sum(d[c][v] for v in customers) - d[centre][c], c))
    removed = ranked[:destroy_cnt]
    return removed, _without(x, removed)


@pytest.mark.parametrize("kind,op_kind,func", [
    ("cvrp", "repair", _paper_style_vrp_repair),
    ("ovrp", "repair", _paper_style_vrp_repair),
    ("cvrp", "destroy", _paper_style_vrp_destroy),
    ("tsp", "destroy", _paper_style_tsp_destroy),
])
def test_python_view_is_taken_for_paper_style_operators(kind, op_kind, func):
    neg = negotiate(func, op_kind, probe_problem(kind), third_argument_convention(func))
    ref, py = neg.trials
    print(f"{kind} {func.__name__}: {neg.reason}")
    assert py.identical and py.error is None
    assert neg.chosen == Form("python"), neg.reason
    assert neg.reason.startswith("python: identical on 7 synthetic probes")
    assert ref.seconds / py.seconds >= 1.1


def test_min_gain_keeps_an_identical_form_that_is_not_fast_enough():
    neg = negotiate(_paper_style_vrp_repair, "repair", probe_problem("cvrp"), "problem_data", min_gain=50.0)
    assert neg.chosen == Form("numpy") and neg.trials[1].identical
    assert "needs 51.00x" in neg.reason


def _corpus_and_seed_operators(kind, op_kind):
    ops = [(e.name, compile_source(e.source(), op_kind)) for e in good_entries(kind, op_kind)]
    seeds = BY_PROBLEM[kind]
    names = ("random_removal", "worst_removal") if op_kind == "destroy" else ("greedy_insertion",)
    return ops + [(f"seeds/{name}", getattr(seeds, name)) for name in names]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op_kind", ["destroy", "repair"])
def test_corpus_and_seed_operators_negotiate(kind, op_kind):
    lines = []
    for name, func in _corpus_and_seed_operators(kind, op_kind):
        t0 = time.perf_counter()
        neg = negotiate(func, op_kind, probe_problem(kind), third_argument_convention(func))
        ms = 1000 * (time.perf_counter() - t0)
        ref, py = neg.trials
        assert ref.identical and ref.error is None, f"{name}: {neg.reason}"
        assert neg.chosen in (Form("numpy"), Form("python"))
        assert py.identical or py.error
        json.dumps(neg.to_dict())
        ratio = ref.seconds / py.seconds if py.identical else float("nan")
        lines.append(f"{kind:4} {op_kind:7} {name:34} -> {neg.chosen.label():6} "
                     f"python/numpy speed {ratio:4.2f}x  {ms:4.0f} ms  {neg.reason[:90]}")
        assert ms < 2000, f"{name}: negotiation took {ms:.0f} ms"
    print("\n" + "\n".join(lines))


def _destroy_using_shape(x, destroy_cnt, problem_data):
    n = problem_data["distance_matrix"].shape[0]
    customers = [c for r in x for c in r]
    removed = random.sample(customers, min(destroy_cnt, n - 1))
    return removed, _without(x, removed)


def _destroy_using_matrix_shape(x, destroy_cnt, distance_matrix):
    return _destroy_using_shape(x, destroy_cnt, {"distance_matrix": distance_matrix})


def _destroy_copying_demands(x, destroy_cnt, problem_data):
    q = problem_data["demands"].copy()
    q[0] = 10**6
    return _destroy_using_shape(x, destroy_cnt, {"distance_matrix": np.zeros((len(q), 1))})


def _destroy_adding_rows(x, destroy_cnt, problem_data):
    d = problem_data["distance_matrix"]
    customers = [c for r in x for c in r]
    i, j = random.sample(customers, 2)
    row = d[i] + d[j]  # elementwise on arrays, concatenation on tuples
    removed = sorted(customers, key=lambda c: (row[c], c))[:destroy_cnt]
    return removed, _without(x, removed)


def _destroy_overflowing(x, destroy_cnt, problem_data):
    q = problem_data["demands"]
    customers = [c for r in x for c in r]
    with np.errstate(over="ignore"):  # int64 wraps around, Python ints do not
        removed = sorted(customers, key=lambda c: (q[c] * 2**62, c))[:destroy_cnt]
    return removed, _without(x, removed)


def _destroy_raising_on_tuples(x, destroy_cnt, problem_data):
    if isinstance(problem_data["distance_matrix"], tuple):
        raise RuntimeError("tuples are not welcome")
    return _destroy_using_shape(x, destroy_cnt, problem_data)


def _destroy_by_type(x, destroy_cnt, problem_data):
    extra = 0 if isinstance(problem_data["distance_matrix"], np.ndarray) else 1
    customers = [c for r in x for c in r]
    removed = customers[:destroy_cnt + extra]
    return removed, _without(x, removed)


@pytest.mark.parametrize("func,error", [
    (_destroy_using_shape, "probe 1: AttributeError: 'tuple' object has no attribute 'shape'"),
    (_destroy_using_matrix_shape, "AttributeError: 'tuple' object has no attribute 'shape'"),
    (_destroy_copying_demands, "AttributeError: 'tuple' object has no attribute 'copy'"),
    (_destroy_adding_rows, "output differs"),
    (_destroy_overflowing, "output differs"),
    (_destroy_raising_on_tuples, "probe 1: RuntimeError: tuples are not welcome"),
    (_destroy_by_type, "probe 1: output differs at [0]: length 2 vs 1"),
])
def test_operators_that_need_numpy_keep_it(func, error):
    neg = negotiate(func, "destroy", probe_problem("cvrp"), third_argument_convention(func))
    ref, py = neg.trials
    print(f"{func.__name__}: {neg.reason}")
    assert neg.chosen == Form("numpy")
    assert ref.identical and not py.identical
    assert error in py.error
    assert neg.reason.startswith("numpy: no other form is identical") and error in neg.reason


def test_numpy_integer_semantics_in_the_reference():
    def repair(partial, removed, problem_data):
        q = problem_data["demands"]
        return partial + [[c] for c in sorted(removed, key=lambda c: q[c] ** -1)]

    neg = negotiate(repair, "repair", probe_problem("cvrp"), "problem_data")
    assert neg.chosen == Form("numpy") and len(neg.trials) == 1  # nothing else tried
    assert not neg.trials[0].identical
    assert "the reference failed (probe 1: ValueError" in neg.reason


def test_asarray_operator_stays_identical():
    def destroy(x, destroy_cnt, problem_data):
        d = np.asarray(problem_data["distance_matrix"])
        customers = [c for r in x for c in r]
        centre = random.choice(customers)
        removed = sorted(customers, key=lambda c: (d[centre, c], c))[:destroy_cnt]
        return removed, _without(x, removed)

    neg = negotiate(destroy, "destroy", probe_problem("ovrp"), "problem_data")
    assert neg.trials[1].identical and neg.trials[1].error is None


def _same_np_state(a, b):
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


class _Escape(BaseException):
    pass


def test_random_states_are_restored():
    def noisy(x, destroy_cnt, problem_data):
        random.random()
        np.random.rand(5)
        return _paper_style_vrp_destroy(x, destroy_cnt, problem_data)

    def escaping(x, destroy_cnt, problem_data):
        random.random()
        raise _Escape()

    random.seed(11)
    np.random.seed(12)
    random.random()
    np.random.rand()
    before_py, before_np = random.getstate(), np.random.get_state()
    negotiate(noisy, "destroy", probe_problem("cvrp"), "problem_data")
    assert random.getstate() == before_py and _same_np_state(np.random.get_state(), before_np)
    with pytest.raises(_Escape):  # not an operator failure: it propagates, states restored
        negotiate(escaping, "destroy", probe_problem("cvrp"), "problem_data")
    assert random.getstate() == before_py and _same_np_state(np.random.get_state(), before_np)


def test_every_form_gets_the_same_seeded_random_state():
    draws = {}

    def recorder(x, destroy_cnt, problem_data):
        key = type(problem_data["distance_matrix"]).__name__
        draws.setdefault(key, []).append((random.random(), float(np.random.rand())))
        return _paper_style_vrp_destroy(x, destroy_cnt, problem_data)

    negotiate(recorder, "destroy", probe_problem("cvrp"), "problem_data")
    n = len(probe_cases(probe_problem("cvrp"), "destroy"))
    assert draws["ndarray"][:n] == draws["tuple"][:n]
    assert len(set(draws["ndarray"][:n])) == n  # a seed of its own per probe


def test_hanging_reference_times_out():
    def hang(x, destroy_cnt, problem_data):
        while True:
            pass

    t0 = time.perf_counter()
    neg = negotiate(hang, "destroy", probe_problem("tsp"), "problem_data", timeout=0.2)
    assert time.perf_counter() - t0 < 2.0
    assert neg.chosen == Form("numpy") and len(neg.trials) == 1
    assert "longer than its probe limit of 0.2 s" in neg.reason and "nothing else tried" in neg.reason


def test_a_hanging_reference_costs_the_probe_bound_not_the_op_timeout():
    """A reference that never returns on a synthetic probe is stopped at the probe limit
    (FIRST_PROBE_LIMIT for the first probe), not at the run's op_timeout of 60 s."""
    from glns.operators.probe import FIRST_PROBE_LIMIT

    def hang(x, destroy_cnt, problem_data):
        while True:
            pass

    t0 = time.perf_counter()
    neg = negotiate(hang, "destroy", probe_problem("cvrp"), "problem_data", timeout=60.0)
    assert time.perf_counter() - t0 < FIRST_PROBE_LIMIT + 1.0
    assert neg.chosen == Form("numpy") and f"probe limit of {FIRST_PROBE_LIMIT:g} s" in neg.reason


def test_probe_limits_follow_what_a_normal_call_costs():
    from glns.operators.probe import PROBE_FLOOR, call_limit
    assert call_limit([0.01, 0.02, 0.5]) == 20 * 0.02
    assert call_limit([0.0001]) == PROBE_FLOOR
    assert call_limit([1.0], timeout=5.0) == 5.0
    assert call_limit([]) == 1.0 and call_limit([], timeout=0.3) == 0.3


def test_candidate_hanging_without_timeout_is_stopped():
    def hang_on_tuples(x, destroy_cnt, problem_data):
        while isinstance(problem_data["distance_matrix"], tuple):
            pass
        return _paper_style_vrp_destroy(x, destroy_cnt, problem_data)

    t0 = time.perf_counter()
    neg = negotiate(hang_on_tuples, "destroy", probe_problem("cvrp"), "problem_data")
    assert time.perf_counter() - t0 < 5.0
    assert neg.chosen == Form("numpy")
    assert "probe 1: took longer than its probe limit" in neg.trials[1].error


def test_candidates_compiled_forms_and_labels():
    def wrong(partial, removed, problem_data):
        return [list(r) for r in partial] + [[c] for c in removed]

    neg = negotiate(_paper_style_vrp_repair, "repair", probe_problem("cvrp"), "problem_data",
                    candidates=[(Form("numpy", True), wrong),
                                (Form("python", True), _paper_style_vrp_repair)])
    assert [t.form.label() for t in neg.trials] == ["numpy", "compiled+numpy", "compiled+python"]
    assert not neg.trials[1].identical and "output differs" in neg.trials[1].error
    assert neg.chosen == Form("python", True)
    d = neg.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["chosen"] == "compiled+python" and d["trials"][1]["seconds"] is None
    with pytest.raises(ValueError):
        negotiate(wrong, "repair", probe_problem("cvrp"), "problem_data", candidates=[(Form("numpy"), wrong)])
    with pytest.raises(ValueError):
        Form("arrow")


def test_coincident_nodes_are_looked_for_only_where_the_python_view_is_a_candidate(monkeypatch):
    """A recorded run on an instance too large for the python view decides alone (only the
    exact compiled numpy form is a candidate there), and its matrix is not scanned."""
    from glns.operators import probe
    from glns.operators.views import MAX_PYTHON_VIEW_NODES

    small = glns.CVRP(np.array([[0.0, 0.0]] + [[1.0, float(i)] for i in range(12)] + [[1.0, 3.0]]),
                      np.array([0] + [1] * 13), 20)
    assert probe.has_coincident_nodes(small) and probe.needs_synthetic_evidence(small)
    rng = np.random.default_rng(3)
    big = glns.CVRP(rng.random((MAX_PYTHON_VIEW_NODES + 1, 2)), np.array([0] + [1] * MAX_PYTHON_VIEW_NODES), 50)

    def scanned(problem):
        raise AssertionError("the matrix of an instance above the python view's size was scanned")

    monkeypatch.setattr(probe, "has_coincident_nodes", scanned)
    assert not probe.needs_synthetic_evidence(big)
