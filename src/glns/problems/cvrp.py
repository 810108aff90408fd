"""The capacitated vehicle routing problem: routes from depot 0 and back, within a capacity."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glns.exceptions import InvalidInstanceError
from glns.problems.base import Problem, integer_capacity, readonly

__all__ = ["CVRP"]


class CVRP(Problem):
    """Capacitated VRP: depot 0, customers ``1..n``, unlimited vehicles of one capacity.

    A solution is a list of routes, each a list of customer ids (the depot is not written); a
    route starts at the depot and returns to it, and its total demand is within the capacity.
    The objective is the total length of the routes.

    Parameters
    ----------
    coords : array_like of shape (n+1, 2), optional
        Node coordinates, the depot first: distances are Euclidean (see `rounding`). Give
        coordinates, a distance matrix, or both (then the matrix is used).
    demands : array_like of shape (n+1,)
        Integer demand of each node, the depot first with demand 0; each at most `capacity`.
        Required.
    capacity : int
        The vehicle capacity, a positive integer. Required.
    distances : array_like of shape (n+1, n+1), optional
        An explicit distance matrix (finite, non-negative); row and column 0 are the depot.
    name : str, default ""
        The instance's name.
    rounding : {"exact", "nint", "dimacs"}, default "exact"
        How distances follow from the coordinates when no matrix is given: the raw
        Euclidean distance, TSPLIB's ``nint(d) = floor(d + 0.5)``, or DIMACS's truncation to
        one decimal, ``floor(10 d) / 10``.

    Raises
    ------
    InvalidInstanceError
        When the data are malformed: coordinates or a matrix of the wrong shape, NaN or
        infinite values, negative distances or demands, non-integer demands, a depot demand
        other than 0, a demand above the capacity, a capacity that is not a positive integer,
        missing demands or capacity, fewer than 2 nodes.
    """

    kind = "cvrp"
    label = "CVRP"
    first_node = 1
    node_word = "customer"
    closed_routes = True
    capacitated = True
    has_depot = True
    core_code = 1
    description = (
        "Capacitated vehicle routing problem (CVRP). Node 0 is the depot, the customers are "
        "1..n, each with a demand; vehicles have one capacity and their number is unlimited. A "
        "solution is a list of routes, each a list of customer ids; the depot is not written. "
        "A route starts at the depot, visits its customers in order and returns to the depot. "
        "Every customer is in exactly one route, exactly once, and the total demand of a route "
        "must not exceed the capacity. Objective: minimise the total length of the routes, "
        "depot -> first customer -> ... -> last customer -> depot."
    )
    data_description = (
        '- "distance_matrix": (n+1) x (n+1) float numpy array; row and column 0 are the depot.\n'
        '- "coordinates": (n+1) x 2 float numpy array of node positions, depot first (None if '
        "the instance has only a distance matrix).\n"
        '- "demands": 1-D int numpy array of length n+1, demands[0] = 0 (the depot).\n'
        '- "capacity": int, the vehicle capacity.\n'
        '- "depot_idx": 0.\n'
        '- "open_routes": False.'
    )

    def __init__(self, coords: Any = None, demands: Sequence[int] | np.ndarray | None = None,
                 capacity: int | None = None, *, distances: Any = None, name: str = "",
                 rounding: str = "exact") -> None:
        self._set_geometry(coords, distances, rounding)
        if demands is None:
            raise InvalidInstanceError("demands are required")
        if capacity is None:
            raise InvalidInstanceError("capacity is required")
        q = np.asarray(demands)
        if q.ndim != 1 or q.shape[0] != self.n_nodes:
            raise InvalidInstanceError(
                f"demands must have shape ({self.n_nodes},) with the depot first, got {q.shape}"
            )
        if q.dtype.kind == "f":
            if not np.isfinite(q).all():
                raise InvalidInstanceError(f"demand of node {int(np.argwhere(~np.isfinite(q))[0][0])} is not finite")
            if (q != np.round(q)).any():
                raise InvalidInstanceError(f"demand of node {int(np.argwhere(q != np.round(q))[0][0])} is not an integer")
        elif q.dtype.kind not in "iub":
            raise InvalidInstanceError(f"demands must be integers, got dtype {q.dtype}")
        cap = integer_capacity(capacity)
        if (q < 0).any():
            i = int(np.argwhere(q < 0)[0][0])
            raise InvalidInstanceError(f"demand of node {i} is negative: {q[i]}")
        if q[0] != 0:
            raise InvalidInstanceError(f"the depot (node 0) must have demand 0, got {q[0]}")
        if (q > cap).any():
            i = int(np.argwhere(q > cap)[0][0])
            raise InvalidInstanceError(f"demand of node {i} ({q[i]}) exceeds the capacity {cap}")
        q = q.astype(np.int64)
        self.demands = readonly(q)
        self.capacity = cap
        self.name = name

    def problem_data(self) -> dict[str, Any]:
        """The ``problem_data`` dict Python operators get (docs/operator-contract.md).

        Returns
        -------
        dict
            A fresh dict: ``"distance_matrix"``, ``"coordinates"``, ``"demands"``,
            ``"capacity"``, ``"depot_idx"`` (0) and ``"open_routes"``.
        """
        return {**super().problem_data(), "demands": self.demands, "capacity": self.capacity,
                "depot_idx": 0, "open_routes": not self.closed_routes}
