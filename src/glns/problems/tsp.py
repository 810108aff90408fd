"""The travelling salesman problem: one closed tour over cities 0..n-1, no depot."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glns.problems.base import Problem, readonly

__all__ = ["TSP"]


class TSP(Problem):
    """Symmetric or asymmetric TSP over cities ``0..n-1``; the objective is the closed tour length.

    A solution is a list of city ids, a permutation of ``0..n-1``, read as a closed tour.

    Parameters
    ----------
    coords : array_like of shape (n, 2), optional
        City coordinates: distances are Euclidean (see `rounding`). Give coordinates, a
        distance matrix, or both (then the matrix is used and the coordinates are only
        positions).
    distances : array_like of shape (n, n), optional
        An explicit distance matrix: finite, non-negative, possibly asymmetric.
    name : str, default ""
        The instance's name.
    rounding : {"exact", "nint", "dimacs"}, default "exact"
        How distances follow from the coordinates when no matrix is given: the raw
        Euclidean distance, TSPLIB's ``nint(d) = floor(d + 0.5)``, or DIMACS's truncation to
        one decimal, ``floor(10 d) / 10``.

    Raises
    ------
    InvalidInstanceError
        When the data are malformed: coordinates not of shape (n, 2), a matrix that is not
        square, NaN or infinite values, negative distances, fewer than 2 nodes.
    """

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
        """A tour as a list of one route.

        Parameters
        ----------
        solution : list of int
            A tour: the cities in order.

        Returns
        -------
        list of list of int
            ``[tour]``.
        """
        return [[int(v) for v in solution]]

    @classmethod
    def solution_from_routes(cls, routes: Sequence[Sequence[int]]) -> list[int]:
        """The tour of a list of one route (the inverse of :meth:`routes_of`).

        Parameters
        ----------
        routes : sequence of sequence of int
            Exactly one route: the tour.

        Returns
        -------
        list of int
            The tour.

        Raises
        ------
        ValueError
            When `routes` is not exactly one route.
        """
        if len(routes) != 1:
            raise ValueError(f"a TSP solution is one tour, got {len(routes)} routes")
        return [int(v) for v in routes[0]]

    @classmethod
    def route_path(cls, route: Sequence[int]) -> list[int]:
        """The cities a tour travels through, back to its first city.

        Parameters
        ----------
        route : sequence of int
            The tour.

        Returns
        -------
        list of int
            The tour with its first city repeated at the end (empty for an empty tour).
        """
        return [*route, route[0]] if len(route) else []

    @classmethod
    def solution_shape(cls) -> str:
        """How a TSP solution is written, for error messages.

        Returns
        -------
        str
            "a list of cities".
        """
        return "a list of cities"

    @classmethod
    def from_parts(cls, coords: Any, distances: Any, demands: Any, capacity: Any,
                   name: str = "", rounding: str = "exact") -> "TSP":
        """A TSP from the parts every variant has (demands and capacity are ignored).

        Parameters
        ----------
        coords : array_like or None
            City coordinates, shape (n, 2).
        distances : array_like or None
            An explicit distance matrix, shape (n, n).
        demands : Any
            Ignored.
        capacity : Any
            Ignored.
        name : str, default ""
            The instance's name.
        rounding : {"exact", "nint", "dimacs"}, default "exact"
            How distances follow from the coordinates.

        Returns
        -------
        TSP
            The instance.
        """
        return cls(coords, distances=distances, name=name, rounding=rounding)
