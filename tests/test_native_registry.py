"""Properties every native operator must have, derived from the registry: an operator added to
the catalog (glns._core._native_ops) is tested here without naming it anywhere.

Each operator has a plain-Python twin ``glns.operators.library.<kind>.<name>`` taking its
declared parameters as keywords; given the same SplitMix64 stream both return the same result.
"""

import inspect
import math

import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns._core._instance import CoreInstance
from glns._core._native_ops import NATIVE_DESTROY, NATIVE_REPAIR, apply_destroy, apply_repair
from glns._core._operator import REMOVES, Declaration, NativeOperator, Param, check_layout
from glns._core._solution import check
from glns.exceptions import OperatorError
from glns.operators import NATIVE_OPERATORS, library, native
from glns.operators.library.local_search import local_search
from glns.problems import KIND_CODES
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

from conftest import make_problem

KINDS = ("tsp", "cvrp", "ovrp")
DESTROY_CASES = [(name, kind) for name, d in NATIVE_OPERATORS.items() if d.kind == "destroy"
                 for kind in KINDS if kind in d.problems]
REPAIR_CASES = [(name, kind) for name, d in NATIVE_OPERATORS.items() if d.kind == "repair"
                for kind in KINDS if kind in d.problems]


def _twin(name):
    return getattr(getattr(library, NATIVE_OPERATORS[name].kind), name)


def _value(p: Param):
    """Values of parameter p across its declared range (an open range is cut at low + 20)."""
    high = p.high if math.isfinite(p.high) else p.low + 20
    if p.integer:
        return st.integers(int(p.low), int(high)).map(float)
    return st.sampled_from([p.low, float(p.default), high]) | st.floats(p.low, high)


def _values(name):
    return st.fixed_dictionaries({p.name: _value(p) for p in NATIVE_OPERATORS[name].all_params})


def _flat(kind, solution):
    return list(solution) if kind == "tsp" else [c for route in solution for c in route]


# --- the registry itself ----------------------------------------------------------------------

def test_registry_is_the_catalog():
    assert set(NATIVE_OPERATORS) == set(NATIVE_DESTROY) | set(NATIVE_REPAIR)
    assert not set(NATIVE_DESTROY) & set(NATIVE_REPAIR)
    for name, d in NATIVE_OPERATORS.items():
        assert isinstance(d, Declaration) and d.name == name
        assert (NATIVE_DESTROY if d.kind == "destroy" else NATIVE_REPAIR)[name] is d


@pytest.mark.parametrize("name", sorted(NATIVE_OPERATORS))
def test_every_operator_is_documented(name):
    d = NATIVE_OPERATORS[name]
    assert d.doc.strip()
    assert d.problems and d.problems <= {"tsp", "cvrp", "ovrp", "vrptw"}
    assert (d.removes in REMOVES) if d.kind == "destroy" else d.removes is None
    assert len({p.name for p in d.all_params}) == len(d.all_params)
    for p in d.all_params:
        assert p.doc.strip(), f"{name}.{p.name} has no doc"
        assert p.low <= p.default <= p.high
        assert not p.integer or p.default == int(p.default)
        assert p.check(name, p.default) == p.default


@pytest.mark.parametrize("name", sorted(NATIVE_OPERATORS))
def test_every_operator_has_a_twin_with_its_parameters(name):
    """The twin takes (solution, count or removed, problem_data, rng) and then the operator's
    own parameters as keywords, with the same defaults (keyword-only arguments after them
    are the twin's own, e.g. the core's candidate table)."""
    d = NATIVE_OPERATORS[name]
    twin = _twin(name)
    assert callable(twin)
    params = [p for p in inspect.signature(twin).parameters.values()
              if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert [p.name for p in params[2:4]] == ["problem_data", "rng"]
    assert {p.name: float(p.default) for p in params[4:]} == {p.name: float(p.default) for p in d.params}


def test_layout_check_refuses_a_struct_unlike_the_declaration():
    params = (Param("a", 1.0, 0.0, doc="a"), Param("b", 1.0, 0.0, doc="b"))
    check_layout("op", {"a": 0.0, "b": 0.0}, params)
    for fields in ({"b": 0.0, "a": 0.0}, {"a": 0.0}, {"a": 0.0, "b": 0.0, "c": 0.0}, {"a": 0.0, "b": 0}):
        with pytest.raises(TypeError, match="op"):
            check_layout("op", fields, params)
    many = tuple(Param(f"p{i}", 0.0, 0.0) for i in range(9))
    with pytest.raises(TypeError, match="at most"):
        check_layout("op", {p.name: 0.0 for p in many}, many)


def test_declarations_and_bound_operators_come_only_from_the_core():
    with pytest.raises(TypeError):
        Declaration()
    with pytest.raises(TypeError):
        NativeOperator()


def test_binding_reads_values_by_declared_name():
    d = NATIVE_OPERATORS["blink_insertion"]
    bound = d.bind(native("blink_insertion", blink_rate=0.25, local_search=1).params)
    assert bound.values == {"order": 4.0, "blink_rate": 0.25, "neighbours": 0.0, "local_search": 1.0}
    assert d.bind((1, 0.5, 3)).values["local_search"] == 0.0   # common settings may be left out
    with pytest.raises(ValueError, match="blink_insertion"):
        d.bind((1, 0.5))
    with pytest.raises(OperatorError, match="no parameter 'blinkrate'"):
        d.values({"blinkrate": 0.1})
    with pytest.raises(OperatorError, match="unknown native destroy operator"):
        apply_destroy("greedy_insertion", make_problem("tsp", 5, 0, 0).core, [0, 1, 2, 3, 4], 1, 0)


# --- every destroy operator -------------------------------------------------------------------

@pytest.mark.parametrize("name,kind", DESTROY_CASES)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(2, 50), seed=st.integers(0, 10**6),
       frac=st.floats(0.0, 1.2), capacity=st.sampled_from([9, 15, 50]),
       max_neighbours=st.sampled_from([0, 1, 3, 100]))
def test_destroy_matches_twin_and_keeps_its_count(name, kind, data, n, seed, frac, capacity,
                                                  max_neighbours):
    d = NATIVE_OPERATORS[name]
    params = data.draw(_values(name))
    problem = make_problem(kind, n, seed, capacity)
    core = CoreInstance(KIND_CODES[kind], problem.distances, problem.demands, problem.capacity,
                        max_neighbours=max_neighbours)
    pdata = problem.problem_data()
    pdata["neighbours"] = core.neighbours
    x = random_solution(problem, SplitMix64(seed + 7))
    m = problem.n_customers
    k = max(1, round(frac * m))

    removed, partial, state = apply_destroy(name, core, x, k, seed, params)
    rng = SplitMix64(seed)
    assert (removed, partial) == _twin(name)(x, k, pdata, rng, **params)
    assert state == rng.state

    assert check(core, partial, removed) is None   # a valid partial solution
    assert sorted(_flat(kind, partial) + removed) == list(range(problem.first_node, problem.n_nodes))
    if kind != "tsp":
        assert all(partial)
    want = min(k, m)
    assert {"k": len(removed) == want, "at most k": 1 <= len(removed) <= want,
            "at least k": want <= len(removed) <= m,
            "about k": 1 <= len(removed) <= m}[d.removes]


# --- every repair operator --------------------------------------------------------------------

@pytest.mark.parametrize("name,kind", REPAIR_CASES)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(2, 50), seed=st.integers(0, 10**6),
       frac=st.floats(0.0, 1.0), capacity=st.sampled_from([9, 15, 50]))
def test_repair_matches_twin_and_completes(name, kind, data, n, seed, frac, capacity):
    values = data.draw(_values(name))
    problem = make_problem(kind, n, seed, capacity)
    x = random_solution(problem, SplitMix64(seed + 7))
    k = max(1, round(frac * problem.n_customers))
    removed, partial, _ = apply_destroy("random_removal", problem.core, x, k, seed + 1)

    complete, state = apply_repair(name, problem.core, partial, removed, seed, values)
    rng = SplitMix64(seed)
    own = {p.name: values[p.name] for p in NATIVE_OPERATORS[name].params}
    twin = _twin(name)(partial, removed, problem.problem_data(), rng, **own)
    if values["local_search"]:
        twin = local_search(twin, problem.problem_data(), removed,
                            level=values["local_search"])
    assert complete == twin
    assert state == rng.state

    problem.check(complete)   # complete and feasible
    assert sorted(_flat(kind, complete)) == list(range(problem.first_node, problem.n_nodes))
    assert problem.cost(complete) == pytest.approx(solution_cost(problem, complete))


# --- inside the solver ------------------------------------------------------------------------

@pytest.mark.parametrize("name,kind", DESTROY_CASES + REPAIR_CASES)
def test_every_operator_runs_in_solve(name, kind):
    problem = make_problem(kind, 25, 3, 20)
    d = NATIVE_OPERATORS[name]
    destroy, repair = (name, "greedy_insertion") if d.kind == "destroy" else ("random_removal", name)
    result = glns.solve(problem, destroy, repair, iterations=40, seed=2)
    problem.check(result.solution)
    assert result.cost == pytest.approx(problem.cost(result.solution))
    stats = (result.destroy_stats if d.kind == "destroy" else result.repair_stats)[0]
    assert stats.calls == 40 and stats.failures == 0 and stats.form == "native"


@pytest.mark.parametrize("name,kind", [(name, kind) for name, d in NATIVE_OPERATORS.items()
                                       for kind in KINDS if kind not in d.problems])
def test_operator_refused_on_a_problem_it_does_not_declare(name, kind):
    problem = make_problem(kind, 12, 0, 30)
    d = NATIVE_OPERATORS[name]
    destroy, repair = (name, "greedy_insertion") if d.kind == "destroy" else ("random_removal", name)
    with pytest.raises(OperatorError, match=f"'{name}' does not handle {kind.upper()}"):
        glns.solve(problem, destroy, repair, iterations=5)

