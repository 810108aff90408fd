"""The problem-variant interface: every variant answers the questions code outside
glns.problems asks instead of comparing kind strings."""

from __future__ import annotations

import numpy as np
import pytest

from glns import datasets
from glns.evolution import prompts
from glns.problems import KIND_CODES, PROBLEM_KINDS, problem_class
from glns.reference import solution_cost

VARIANTS = sorted(PROBLEM_KINDS)


def test_registry_names_every_variant_once():
    assert VARIANTS == ["cvrp", "ovrp", "tsp", "vrptw"]
    assert sorted(KIND_CODES.values()) == [0, 1, 2, 3]
    for kind, cls in PROBLEM_KINDS.items():
        assert cls.kind == kind and cls.label == kind.upper()
        assert problem_class(kind.upper()) is cls
    with pytest.raises(ValueError, match="unknown problem 'pdptw'; choose from"):
        problem_class("pdptw")


@pytest.mark.parametrize("kind", VARIANTS)
def test_routes_round_trip_and_generated_instance(kind):
    p = datasets.generate(kind, 12, 3)
    assert type(p) is PROBLEM_KINDS[kind] and p.n_customers == 12
    sol = p.solution_from_routes([[*range(p.first_node, p.n_nodes)]]) if not p.has_depot else \
        [[c] for c in range(1, p.n_nodes)]
    assert p.solution_from_routes(p.routes_of(sol)) == sol
    assert p.violation(sol) is None
    # the route paths walk exactly the arcs the cost counts
    d = p.distances
    arcs = sum(d[a, b] for route in p.routes_of(sol) for a, b in zip(p.route_path(route), p.route_path(route)[1:]))
    assert arcs == pytest.approx(p.cost(sol)) and arcs == pytest.approx(solution_cost(p, sol))


@pytest.mark.parametrize("kind", VARIANTS)
def test_from_parts_rebuilds_the_same_instance(kind):
    p = datasets.generate(kind, 9, 4)
    q = type(p).from_parts(p.coords, p.distances, p.demands, p.capacity, name="copy",
                           **p.extra_parts())
    assert np.array_equal(p.distances, q.distances) and np.array_equal(p.demands, q.demands)
    assert q.capacity == p.capacity and q.name == "copy"
    for key, value in p.extra_parts().items():
        assert np.array_equal(value, q.extra_parts()[key]) if value is not None else q.extra_parts()[key] is None


def test_variant_facts():
    tsp, cvrp, ovrp = (PROBLEM_KINDS[k] for k in ("tsp", "cvrp", "ovrp"))
    assert tsp.route_path([3, 1, 2]) == [3, 1, 2, 3]
    assert cvrp.route_path([3, 1]) == [0, 3, 1, 0]
    assert ovrp.route_path([3, 1]) == [0, 3, 1]
    assert (tsp.has_depot, cvrp.has_depot, ovrp.has_depot) == (False, True, True)
    assert (tsp.capacitated, cvrp.capacitated) == (False, True)
    with pytest.raises(ValueError, match="one tour"):
        tsp.solution_from_routes([[0, 1], [2]])
    assert sorted(datasets.generate("tsp", 5, 1).problem_data()) == ["coordinates", "distance_matrix"]
    data = datasets.generate("ovrp", 5, 1).problem_data()
    assert data["open_routes"] is True and datasets.generate("cvrp", 5, 1).problem_data()["open_routes"] is False


@pytest.mark.parametrize("kind", VARIANTS)
def test_prompts_take_the_variant_text(kind):
    cls = PROBLEM_KINDS[kind]
    text = prompts.task_description(kind)
    assert cls.description in text and cls.data_description in text

