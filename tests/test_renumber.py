"""The curve-ordered copy a solve searches on large coordinate instances (glns.problems.renumber)."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import glns
from glns import datasets
from glns._core._solution import Solution
from glns.problems import CVRP, TSP
from glns.problems.renumber import LOCAL_IDS, RENUMBER_FROM, id_spread, renumbered
from glns.problems.solutions import matrix_cost
from glns.problems.space_filling import curve_order

KINDS = ("tsp", "cvrp", "ovrp")


def _random_solution(problem, rng: random.Random):
    """A feasible solution of `problem` in its own ids: a shuffled tour, or shuffled customers
    cut greedily by capacity."""
    nodes = list(range(problem.first_node, problem.n_nodes))
    rng.shuffle(nodes)
    if not problem.has_depot:
        return nodes
    routes, route, load = [], [], 0
    for v in nodes:
        if route and load + int(problem.demands[v]) > problem.capacity:
            routes.append(route)
            route, load = [], 0
        route.append(v)
        load += int(problem.demands[v])
    routes.append(route)
    return routes


@pytest.mark.parametrize("kind", KINDS)
def test_the_copy_is_the_instance_renumbered(kind):
    problem = datasets.generate(kind, 70, 4)
    copy = renumbered(problem, from_customers=50)
    assert copy is not None and renumbered(problem, from_customers=50) is copy     # built once
    original, internal = copy.original, copy.internal
    assert sorted(original.tolist()) == list(range(problem.n_nodes))
    assert (internal[original] == np.arange(problem.n_nodes)).all()
    if problem.has_depot:
        assert original[0] == 0
    assert original.tolist() != list(range(problem.n_nodes))     # uniform ids are not in curve order
    assert np.array_equal(copy.problem.coords, problem.coords[original])
    assert np.array_equal(copy.problem.demands, problem.demands[original])
    assert np.array_equal(copy.problem.distances, problem.distances[np.ix_(original, original)])
    assert type(copy.problem) is type(problem) and copy.problem.capacity == problem.capacity


def test_when_there_is_no_copy():
    small = datasets.generate("tsp", 40, 0)
    assert renumbered(small) is None                              # below RENUMBER_FROM
    assert renumbered(small, from_customers=None) is None
    assert renumbered(small, from_customers=41) is None
    assert renumbered(small, from_customers=40) is not None
    explicit = TSP(distances=small.distances)
    assert renumbered(explicit, from_customers=1) is None         # ids may mean anything there
    with_matrix = CVRP(np.random.RandomState(0).rand(30, 2), np.r_[0, np.ones(29, dtype=int)], 5,
                       distances=np.ones((30, 30)) - np.eye(30))
    assert renumbered(with_matrix, from_customers=1) is None
    uniform = datasets.generate("tsp", 300, 0)
    curve = np.asarray(curve_order(uniform.coords))
    in_curve_order = TSP(uniform.coords[curve])
    assert id_spread(uniform.coords, uniform.coords[curve]) > 3 * LOCAL_IDS   # about sqrt(n) / 2
    assert id_spread(in_curve_order.coords, in_curve_order.coords) == 1.0
    assert renumbered(uniform, from_customers=100) is not None
    assert renumbered(in_curve_order, from_customers=100) is None   # its ids are local already
    assert glns.SolveParams().renumber == RENUMBER_FROM
    assert glns.SolveParams.paper().renumber is None


@pytest.mark.parametrize("kind", KINDS)
def test_solutions_map_both_ways_and_cost_the_same_to_the_last_bit(kind):
    problem = datasets.generate(kind, 93, 1)          # 93 (+ depot): blocks of 16 do not fit evenly
    copy = renumbered(problem, from_customers=50)
    rng = random.Random(5)
    for _ in range(20):
        solution = _random_solution(problem, rng)
        inner = copy.to_internal(solution)
        assert copy.to_original(inner) == solution
        assert copy.problem.cost(inner) == pytest.approx(problem.cost(solution), rel=1e-12)
        assert copy.cost(inner) == problem.cost(solution)           # exact: the caller's summation
        assert copy.cost(inner) == matrix_cost(problem.distances, solution, kind == "tsp", kind == "ovrp")


def test_cost_in_order_is_the_canonical_sum_of_the_renumbered_instance():
    problem = datasets.generate("tsp", 77, 2)
    rng = np.random.RandomState(3)
    for _ in range(10):
        perm = rng.permutation(problem.n_nodes)       # node u of `other` is node perm[u] here
        other = TSP(problem.coords[perm])
        tour = rng.permutation(problem.n_nodes).tolist()
        sol = Solution(problem.core)
        sol.load(tour)
        inverse = np.argsort(perm)
        assert sol.cost_in_order(perm) == other.cost(inverse[tour].tolist())
    sol = Solution(problem.core)
    sol.load(list(range(problem.n_nodes)))
    assert sol.cost_in_order(np.arange(problem.n_nodes)) == sol.cost()
    with pytest.raises(ValueError, match="permutation"):
        sol.cost_in_order(np.zeros(problem.n_nodes, dtype=np.int64))
    with pytest.raises(ValueError, match="must list"):
        sol.cost_in_order(np.arange(5, dtype=np.int64))


def test_a_solution_with_foreign_ids_is_refused():
    problem = datasets.generate("cvrp", 60, 0)
    copy = renumbered(problem, from_customers=50)
    with pytest.raises(ValueError, match="not a node"):
        copy.to_internal([[1, 2, 61]])
    with pytest.raises(ValueError, match="not a node"):
        copy.to_internal([[1, -2]])


@pytest.mark.parametrize("kind", KINDS)
def test_solve_searches_the_copy_and_answers_in_the_callers_ids(kind):
    problem = datasets.generate(kind, 90, 7)
    params = glns.SolveParams(renumber=50)
    result = glns.solve(problem, iterations=300, seed=11, params=params)
    problem.check(result.solution)
    assert result.cost == problem.cost(result.solution)
    assert result.best_curve[-1] == pytest.approx(result.cost, rel=1e-12)
    # exactly the run on the copy, mapped back
    copy = renumbered(problem, from_customers=50)
    on_copy = glns.solve(copy.problem, iterations=300, seed=11, params=glns.SolveParams(renumber=None))
    assert result.solution == copy.to_original(on_copy.solution)
    assert result.iterations == on_copy.iterations
    assert np.array_equal(result.best_curve, on_copy.best_curve)
    again = glns.solve(problem, iterations=300, seed=11, params=params)
    assert again.solution == result.solution and again.cost == result.cost


def test_a_given_start_is_mapped_and_checked_in_the_callers_ids():
    problem = datasets.generate("cvrp", 80, 2)
    params = glns.SolveParams(renumber=50)
    start = _random_solution(problem, random.Random(0))
    result = glns.solve(problem, iterations=0, seed=0, params=params, initial_solution=start)
    assert problem._core is None          # a sound start is checked on the copy only
    assert result.solution == start and result.cost == problem.cost(start)
    broken = [route[:] for route in start]
    broken[0].append(broken[1][0])                     # a customer visited twice
    with pytest.raises(ValueError, match="initial solution is invalid") as caught:
        glns.solve(problem, iterations=10, seed=0, params=params, initial_solution=broken)
    with pytest.raises(ValueError) as expected:
        glns.solve(problem, iterations=10, seed=0, params=glns.SolveParams(renumber=None),
                   initial_solution=broken)
    assert str(caught.value) == str(expected.value)    # the same message, in the caller's ids


def test_python_operators_see_the_callers_ids():
    problem = datasets.generate("tsp", 70, 1)
    seen = []

    def remove_first_five(solution, n_remove, problem_data):
        tour = list(solution)
        seen.append(tuple(tour[:5]))
        return tour[:5], tour[5:]

    runs = [glns.solve(problem, remove_first_five, "greedy_insertion", iterations=20, seed=3,
                       params=glns.SolveParams(renumber=r)) for r in (10, None)]
    assert runs[0].solution == runs[1].solution and runs[0].cost == runs[1].cost
    assert seen[: len(seen) // 2] == seen[len(seen) // 2:]


def test_the_copy_is_not_pickled():
    problem = datasets.generate("tsp", 60, 0)
    renumbered(problem, from_customers=50)
    clone = pickle.loads(pickle.dumps(problem))
    assert clone._renumbered is None
    assert renumbered(clone, from_customers=50).original.tolist() == \
        renumbered(problem, from_customers=50).original.tolist()


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "many"])
def test_renumber_setting_is_validated(bad):
    with pytest.raises((ValueError, TypeError)):
        glns.SolveParams(renumber=bad)


@pytest.mark.parametrize("bad", [[[1, 2, 500]], [[1, -1]], "nonsense"])
def test_a_start_with_foreign_ids_gets_the_same_error_as_without_a_copy(bad):
    problem = datasets.generate("cvrp", 80, 2)
    messages = []
    for renumber in (50, None):
        with pytest.raises(ValueError, match="initial solution is invalid") as caught:
            glns.solve(problem, iterations=1, params=glns.SolveParams(renumber=renumber), initial_solution=bad)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
