"""The travelling salesman problem: one closed tour over cities 0..n-1, no depot."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glns.problems.base import Problem, readonly

__all__ = ["TSP"]


class TSP(Problem):
    """Symmetric or asymmetric TSP over cities ``0..n-1``; the objective is the closed tour length."""

    kind = "tsp"
    label = "TSP"
    first_node = 0
    node_word = "city"
    closed_routes = True
    capacitated = False
    has_depot = False
    core_code = 0
    description = (
        "Travelling salesman problem (TSP). There are n cities with ids 0..n-1 and no depot. A "
        "solution is a list of city ids, a permutation of 0..n-1 (every city exactly once), "
        "read as a closed tour: after the last city the tour returns to the first. Objective: "
        "minimise the tour length, the sum of distance_matrix[a, b] over consecutive cities "
        "including the closing edge from the last city to the first."
    )
    data_description = (
        '- "distance_matrix": n x n float numpy array, distance_matrix[a, b] for cities a, b.\n'
        '- "coordinates": n x 2 float numpy array of city positions (None if the instance has '
        "only a distance matrix)."
    )

    def __init__(self, coords: Any = None, *, distances: Any = None, name: str = "",
                 rounding: str = "exact") -> None:
        self._set_geometry(coords, distances, rounding)
        self.demands = readonly(np.zeros(self.n_nodes, dtype=np.int64))
        self.capacity = 0
        self.name = name

    @classmethod
    def routes_of(cls, solution: Any) -> list[list[int]]:
        return [[int(v) for v in solution]]

    @classmethod
    def solution_from_routes(cls, routes: Sequence[Sequence[int]]) -> list[int]:
        if len(routes) != 1:
            raise ValueError(f"a TSP solution is one tour, got {len(routes)} routes")
        return [int(v) for v in routes[0]]

    @classmethod
    def route_path(cls, route: Sequence[int]) -> list[int]:
        return [*route, route[0]] if len(route) else []

    @classmethod
    def solution_shape(cls) -> str:
        return "a list of cities"

    @classmethod
    def from_parts(cls, coords: Any, distances: Any, demands: Any, capacity: Any,
                   name: str = "", rounding: str = "exact") -> "TSP":
        return cls(coords, distances=distances, name=name, rounding=rounding)
