"""Tests of glns.write_solution: CVRPLIB .sol and TSPLIB .tour files, read back by vrplib and
glns.read_solution, in the numbering of glns.read (file node k + 1 is node k)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

import glns
from glns import datasets
from glns.exceptions import InfeasibleSolutionError
from glns.solution_files import solution_format

HERE = Path(__file__).parent / "data"
A32 = HERE / "cvrplib/A/A-n32-k5"
P16 = HERE / "cvrplib/P/P-n16-k8"
EIL51 = HERE / "tsplib/eil51"


def _vrplib():
    return pytest.importorskip("vrplib")


def _route_cost(problem: glns.Problem, routes: list[list[int]]) -> float:
    """The cost of .sol routes from node 0 (the depot, or a TSP's city 0), computed from the
    distances independently of the core."""
    total = 0.0
    for route in routes:
        path = [0, *route] if problem.kind == "ovrp" else [0, *route, 0]
        total += sum(problem.distances[a, b] for a, b in pairwise(path))
    return total


def _rotation_of(tour: list[int], other: list[int]) -> bool:
    start = other.index(tour[0])
    return other[start:] + other[:start] == tour


@pytest.mark.parametrize("stem, problem", [(A32, "cvrp"), (P16, "ovrp"), (EIL51, "tsp")],
                         ids=["cvrp", "ovrp", "tsp"])
def test_sol_read_back_by_vrplib(tmp_path, stem, problem):
    vrplib = _vrplib()
    instance = datasets.read(stem.with_suffix(".vrp" if problem != "tsp" else ".tsp"), problem=problem)
    result = glns.solve(instance, iterations=200, seed=3)
    path = glns.write_solution(tmp_path / "out.sol", result, instance)
    assert path == tmp_path / "out.sol"
    sol = vrplib.read_solution(path)
    assert sol["cost"] == result.cost and isinstance(sol["cost"], int)  # nint costs as integers
    if problem == "tsp":
        # one route from city 0 (file node 1), which is not written; a rotation of the tour
        (route,) = sol["routes"]
        assert _rotation_of([0, *route], result.solution)
        assert datasets.read_solution(path) == ([route], result.cost)
    else:
        assert sol["routes"] == result.solution
        assert datasets.read_solution(path) == (result.solution, result.cost)
    assert _route_cost(instance, sol["routes"]) == result.cost


def test_sol_is_the_inverse_of_reading_cvrplib(tmp_path):
    # the published solution, read and written again, says the same routes and cost
    vrplib = _vrplib()
    instance = datasets.read(A32.with_suffix(".vrp"))
    routes, stated = datasets.read_solution(A32.with_suffix(".sol"))
    path = glns.write_solution(tmp_path / "A-n32-k5.sol", routes, instance)
    again = vrplib.read_solution(path)
    assert again["routes"] == vrplib.read_solution(A32.with_suffix(".sol"))["routes"] == routes
    assert again["cost"] == stated == 784
    assert path.read_text().splitlines()[0] == "Route #1: " + " ".join(map(str, routes[0]))


def test_tour_is_the_inverse_of_reading_tsplib(tmp_path):
    _vrplib()
    instance = datasets.read(EIL51.with_suffix(".tsp"))
    tour, _ = datasets.read_solution(EIL51.with_suffix(".opt.tour"))
    path = glns.write_solution(tmp_path / "eil51.tour", tour, instance)
    assert datasets.read_solution(path) == (tour, None)
    text = path.read_text()
    assert "TYPE : TOUR" in text and "DIMENSION : 51" in text and "glns, cost 426" in text
    # the same node ids, in the same order, as the published file
    published = EIL51.with_suffix(".opt.tour").read_text().split("TOUR_SECTION")[1].split()
    assert text.split("TOUR_SECTION")[1].split() == published[:published.index("-1") + 1] + ["EOF"]


def test_tour_of_a_result_round_trips(tmp_path):
    _vrplib()
    instance = datasets.read(EIL51.with_suffix(".tsp"))
    result = glns.solve(instance, iterations=100, seed=1)
    path = glns.write_solution(tmp_path / "run.tour", result)
    assert datasets.read_solution(path) == (result.solution, None)
    # format= overrides the name
    other = glns.write_solution(tmp_path / "run.txt", result, format="tour")
    assert other.read_text() == path.read_text().replace("NAME : run.tour", "NAME : run.txt")


def test_unrounded_cost_keeps_full_precision(tmp_path, cvrp20):
    vrplib = _vrplib()
    result = glns.solve(cvrp20, iterations=100, seed=2)
    assert not float(result.cost).is_integer()
    sol = vrplib.read_solution(glns.write_solution(tmp_path / "x.sol", result))
    assert sol["cost"] == result.cost and sol["routes"] == result.solution


def test_generated_instances_without_vrplib(tmp_path, tsp20, ovrp20):
    # writing needs no optional dependency; the text is the documented format
    result = glns.solve(ovrp20, iterations=50, seed=0)
    text = glns.write_solution(tmp_path / "o.sol", result).read_text().splitlines()
    assert text[:-1] == [f"Route #{i}: {' '.join(map(str, r))}" for i, r in enumerate(result.solution, 1)]
    assert text[-1] == f"Cost {float(result.cost)!r}"
    tour = [5, 3, 0, 1, *range(6, 20), 2, 4]
    text = glns.write_solution(tmp_path / "t.sol", tour, tsp20).read_text().splitlines()
    assert text[0] == "Route #1: " + " ".join(map(str, [1, *range(6, 20), 2, 4, 5, 3]))
    assert text[1] == f"Cost {float(tsp20.cost(tour))!r}"


def test_empty_routes_are_not_written(tmp_path, cvrp20):
    result = glns.solve(cvrp20, iterations=20, seed=0)
    with_empty = [[], *result.solution, []]
    text = glns.write_solution(tmp_path / "e.sol", with_empty, cvrp20).read_text()
    assert text == glns.write_solution(tmp_path / "r.sol", result).read_text()


def test_top_level_names_are_the_datasets_ones():
    assert glns.read is datasets.read and glns.read_solution is datasets.read_solution
    assert glns.write_solution is datasets.write_solution


def test_bad_input(tmp_path, tsp20, cvrp20):
    result = glns.solve(cvrp20, iterations=20, seed=0)
    with pytest.raises(ValueError, match="a plain solution needs the problem"):
        glns.write_solution(tmp_path / "x.sol", result.solution)
    with pytest.raises(ValueError, match="write the CVRP solution as a .sol file"):
        glns.write_solution(tmp_path / "x.tour", result)
    with pytest.raises(ValueError, match="unknown solution format 'csv'"):
        glns.write_solution(tmp_path / "x.sol", result, format="csv")
    with pytest.raises(ValueError, match="the result is a CVRP solution but the problem is a TSP"):
        glns.write_solution(tmp_path / "x.sol", result, tsp20)
    missing = [r for r in result.solution[1:]]
    with pytest.raises(InfeasibleSolutionError):
        glns.write_solution(tmp_path / "x.sol", missing, cvrp20)
    other = datasets.generate_cvrp(25, 99)   # nodes 21..25 are foreign to cvrp20
    with pytest.raises(InfeasibleSolutionError):   # a result of another instance
        glns.write_solution(tmp_path / "x.sol", glns.solve(other, iterations=5, seed=0), cvrp20)
    with pytest.raises(OSError):
        glns.write_solution(tmp_path / "no" / "such" / "x.sol", result)
    assert not list(tmp_path.iterdir())  # nothing half-written


@pytest.mark.parametrize("path, kind, expected", [
    ("a.sol", "cvrp", "sol"), ("a.tour", "tsp", "tour"), ("A.TOUR", "tsp", "tour"),
    ("a.txt", "ovrp", "sol"), ("a", "tsp", "sol"),
])
def test_solution_format(path, kind, expected):
    assert solution_format(path, kind) == expected


def test_solution_format_errors():
    with pytest.raises(ValueError, match="unknown problem"):
        solution_format("a.sol", "pdptw")
    with pytest.raises(ValueError, match="write the OVRP solution as a .sol file"):
        solution_format("a.tour", "ovrp")
    assert solution_format("a.sol", "tsp", "tour") == "tour"
