"""What every problem variant has: geometry (coordinates and/or a distance matrix, validated),
the core's private copy, feasibility checks and costs, and the variant interface (see
:class:`Problem`). Every array an instance exposes is read-only; the core keeps its own copy,
so nothing an operator does to the arrays it is given can reach the solver.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Sequence

import numpy as np

from glns.exceptions import InfeasibleSolutionError, InvalidInstanceError, MatrixTooLargeError
from glns.neighbours import euclidean_rows

__all__ = ["Problem", "euclidean_distances", "plural", "ROUNDINGS", "MAX_MATRIX_BYTES"]


#: rules for distances computed from coordinates: raw Euclidean, TSPLIB's nint(d) = floor(d + 0.5),
#: or DIMACS's truncation to one decimal, floor(10 d) / 10 (the VRPTW benchmarks' convention)
ROUNDINGS = ("exact", "nint", "dimacs")
#: the largest dense matrix :attr:`Problem.distances` builds for a coordinate instance, in bytes
#: (environment ``GLNS_MAX_MATRIX_GB``); the solver itself never needs it
MAX_MATRIX_BYTES = int(float(os.environ.get("GLNS_MAX_MATRIX_GB", "2")) * 2**30)
#: coordinate instances up to this many nodes get a dense matrix in the core: while it fits
#: in cache a lookup beats computing the distance (measured: 1.3-1.6x at n = 100-300, even
#: at n = 500, 2x slower at n = 1,000)
DENSE_CORE_NODES = 600
_ROWS_PER_BLOCK = 256      # rows of the matrix computed at a time: bounded scratch memory


def euclidean_distances(coords: np.ndarray, rounding: str = "exact") -> np.ndarray:
    """Pairwise Euclidean distance matrix (float64) of an (n, 2) coordinate array, with
    ``rounding="nint"`` rounded as TSPLIB does, floor(d + 0.5), and with ``"dimacs"``
    truncated to one decimal, floor(10 d) / 10. The core computes the same floats on demand
    (``glns._core._distance``)."""
    coords = np.asarray(coords, dtype=np.float64)
    n = coords.shape[0]
    out = np.empty((n, n), dtype=np.float64)
    for lo in range(0, n, _ROWS_PER_BLOCK):
        out[lo:lo + _ROWS_PER_BLOCK] = euclidean_rows(coords, lo, min(n, lo + _ROWS_PER_BLOCK), rounding)
    return out


def readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a).copy()
    a.flags.writeable = False
    return a


def _check_coords(coords: Any) -> np.ndarray:
    try:
        arr = np.asarray(coords, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(f"coordinates are not numeric: {exc}") from None
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InvalidInstanceError(f"coordinates must have shape (n, 2), got {arr.shape}")
    if not np.isfinite(arr).all():
        i = int(np.argwhere(~np.isfinite(arr))[0][0])
        raise InvalidInstanceError(f"coordinates of node {i} are not finite: {arr[i].tolist()}")
    return arr


def _check_distances(distances: Any) -> np.ndarray:
    try:
        arr = np.asarray(distances, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(f"distance matrix is not numeric: {exc}") from None
    if arr.ndim != 2:
        raise InvalidInstanceError(f"distance matrix must be 2-D, got {arr.ndim}-D")
    if arr.shape[0] != arr.shape[1]:
        raise InvalidInstanceError(f"distance matrix must be square, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise InvalidInstanceError(f"distance ({i}, {j}) is not finite: {arr[i, j]}")
    if (arr < 0).any():
        i, j = (int(x) for x in np.argwhere(arr < 0)[0])
        raise InvalidInstanceError(f"distance ({i}, {j}) is negative: {arr[i, j]}")
    return arr


def integer_capacity(capacity: Any) -> int:
    if isinstance(capacity, (bool, np.bool_)):
        raise InvalidInstanceError(f"capacity must be an integer, got {capacity!r}")
    try:
        value = float(capacity)
    except (TypeError, ValueError):
        raise InvalidInstanceError(f"capacity must be an integer, got {capacity!r}") from None
    if not np.isfinite(value) or value != np.floor(value):
        raise InvalidInstanceError(f"capacity must be an integer, got {capacity!r}")
    cap = int(capacity) if not isinstance(capacity, (float, np.floating)) else int(value)
    if cap <= 0:
        raise InvalidInstanceError(f"capacity must be positive, got {cap}")
    return cap


class Problem:
    """Common part of TSP, CVRP, OVRP and VRPTW; use the subclasses.

    A subclass is a problem variant: it says what its solutions look like (:meth:`routes_of`,
    :meth:`solution_from_routes`, :meth:`route_path`), what operators are given
    (:meth:`problem_data`), how it is built from its parts (:meth:`from_parts`) and how it is
    named to users and in prompts (``label``, ``node_word``). Code outside this module asks
    these instead of comparing ``kind`` strings; a new variant is a new subclass registered in
    ``glns.problems.PROBLEM_KINDS``.

    Every array an instance exposes is read-only; the core keeps its own copy, so nothing an
    operator does to the arrays it is given can reach the solver.
    """

    kind: ClassVar[str]
    #: the name users and prompts see: "TSP", "CVRP", "OVRP"
    label: ClassVar[str]
    #: first node id that must be visited (TSP 0, VRP 1: node 0 is the depot)
    first_node: ClassVar[int]
    #: what the visited nodes are called ("city", "customer")
    node_word: ClassVar[str]
    #: a route goes back to where it started (TSP tour, CVRP route; not an OVRP route)
    closed_routes: ClassVar[bool]
    #: routes are limited by a vehicle capacity on the nodes' demands
    capacitated: ClassVar[bool]
    #: node 0 is a depot every route starts from, not a node to visit
    has_depot: ClassVar[bool]
    #: routes keep time windows (VRPTW)
    timed: ClassVar[bool] = False
    #: the code of this variant in the compiled core
    core_code: ClassVar[int]
    #: the problem as the LLM is told it: nodes, solution format, objective
    description: ClassVar[str]
    #: the ``problem_data`` entries as the LLM is told them
    data_description: ClassVar[str]

    coords: np.ndarray | None
    #: how distances follow from the coordinates when no matrix was given ("exact", "nint" or
    #: "dimacs")
    rounding: str
    demands: np.ndarray
    capacity: int
    name: str

    def __init__(self) -> None:  # pragma: no cover - abstract
        raise TypeError("use TSP, CVRP, OVRP or VRPTW")

    def _set_geometry(self, coords: Any, distances: Any, rounding: str = "exact") -> None:
        if coords is None and distances is None:
            raise InvalidInstanceError("give coordinates or a distance matrix")
        if rounding not in ROUNDINGS:
            raise InvalidInstanceError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
        xy = _check_coords(coords) if coords is not None else None
        if distances is not None:
            dist = _check_distances(distances)
            if xy is not None and xy.shape[0] != dist.shape[0]:
                raise InvalidInstanceError(
                    f"{xy.shape[0]} coordinates but a {dist.shape[0]}x{dist.shape[0]} distance matrix"
                )
            n = dist.shape[0]
        else:
            # distances follow from the coordinates: none of them overflows if the longest
            # possible one (the bounding box's diagonal) does not
            dist = None
            n = xy.shape[0]
            span = np.ptp(xy, axis=0) if n else np.zeros(2)
            with np.errstate(over="ignore"):
                if not np.isfinite(span[0] * span[0] + span[1] * span[1]):
                    raise InvalidInstanceError("coordinates are too large: a distance overflows to inf")
        if n < 2:
            raise InvalidInstanceError(f"an instance needs at least 2 nodes, got {n}")
        self.coords = readonly(xy) if xy is not None else None
        self.rounding = rounding
        self._matrix = readonly(dist) if dist is not None else None
        self._explicit = dist is not None
        self._n = n
        self._core = None
        self._renumbered = None     # glns.problems.renumber's copy, built on first use

    @property
    def explicit_distances(self) -> bool:
        """The instance was given a distance matrix (else distances follow from the coordinates)."""
        return self._explicit

    @property
    def distances(self) -> np.ndarray:
        """The dense (n, n) read-only distance matrix. For a coordinate instance it is built on
        first use and kept; MatrixTooLargeError when it would take more than
        ``MAX_MATRIX_BYTES`` (the solver's native operators never need it)."""
        if self._matrix is None:
            need = 8 * self._n * self._n
            if need > MAX_MATRIX_BYTES:
                raise MatrixTooLargeError(
                    f"the distance matrix of {self._n} nodes takes {need / 2**30:.1f} GiB, more than "
                    f"the limit of {MAX_MATRIX_BYTES / 2**30:.1f} GiB (GLNS_MAX_MATRIX_GB); native "
                    "operators compute distances from the coordinates and do not need it")
            self._matrix = readonly(euclidean_distances(self.coords, self.rounding))
        return self._matrix

    @property
    def arc_costs(self) -> np.ndarray:
        """The (n, n) costs the objective sums over a solution's arcs: the distances, plus half
        the route cost on every arc from or to the depot when the instance has a route cost
        (VRPTW's ``route_cost``: a closed route has two such arcs)."""
        return self.distances

    @property
    def n_nodes(self) -> int:
        """Number of nodes, the depot included for VRP."""
        return self._n

    @property
    def n_customers(self) -> int:
        """Number of nodes to route: cities (TSP) or customers (VRP)."""
        return self.n_nodes - self.first_node

    @property
    def customers_per_route(self) -> float | None:
        """The customers of an average route at the fewest routes the capacity allows
        (n / ceil(total demand / capacity)); None for a problem without capacity."""
        if not self.capacitated:
            return None
        routes = max(1, -(-int(np.sum(self.demands[self.first_node:])) // int(self.capacity)))
        return self.n_customers / routes

    @property
    def core(self):
        """The core's private copy of this instance (built once): a dense matrix when the
        instance was given one or is small (``DENSE_CORE_NODES``), else coordinates with
        distances computed on demand; the same distances either way. A tour computed on demand
        gets candidate lists with neighbours in every quadrant (``CoreInstance.near``): on
        clustered instances a city's nearest neighbours all lie in its own cluster."""
        if self._core is None:
            from glns._core._instance import CoreInstance, coordinate_insertion_floor

            if self._explicit or self._n <= DENSE_CORE_NODES:
                extras = self.core_extras()
                if not self._explicit:      # the matrix comes from the coordinates
                    extras["insertion_floor"] = coordinate_insertion_floor(
                        self.coords, self.rounding, extras.get("route_cost", 0.0))
                self._core = CoreInstance(self.core_code, self.distances, self.demands, self.capacity,
                                          **extras)
            else:
                self._core = CoreInstance(self.core_code, None, self.demands, self.capacity,
                                          coords=self.coords, rounding=self.rounding,
                                          quadrant=not self.has_depot, **self.core_extras())
        return self._core

    def __getstate__(self) -> dict[str, Any]:
        # the core's copy is a C structure, rebuilt on demand after unpickling; a matrix built
        # from the coordinates is rebuilt too, rather than shipped to worker processes
        state = {**self.__dict__, "_core": None, "_renumbered": None}
        if not self._explicit:
            state["_matrix"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "distances" in state:       # pickled before distances could be on demand
            state["_matrix"] = state.pop("distances")
            state["_n"] = state["_matrix"].shape[0]
            state["_explicit"] = True
            state.setdefault("rounding", "exact")
        self.__dict__.update(state)

    def problem_data(self) -> dict[str, Any]:
        """The ``problem_data`` dict Python operators get (docs/operator-contract.md).

        Returns
        -------
        dict
            A fresh dict of read-only arrays and plain values: ``"distance_matrix"`` (the
            :attr:`arc_costs`) and ``"coordinates"`` (None without coordinates), plus the
            variant's own entries.
        """
        return {"distance_matrix": self.arc_costs, "coordinates": self.coords}

    @classmethod
    def routes_of(cls, solution: Any) -> list[list[int]]:
        """A solution of this variant as a list of routes of node ids.

        Parameters
        ----------
        solution : list
            A solution in the operator format of this variant.

        Returns
        -------
        list of list of int
            Its routes (a TSP tour is one route).

        Raises
        ------
        TypeError, ValueError
            When `solution` does not have the variant's shape.
        """
        return [[int(v) for v in route] for route in solution]

    @classmethod
    def solution_from_routes(cls, routes: Sequence[Sequence[int]]) -> Any:
        """The inverse of :meth:`routes_of`: routes in the solution format of this variant.

        Parameters
        ----------
        routes : sequence of sequence of int
            Routes of node ids.

        Returns
        -------
        list
            The solution in the operator format of this variant.
        """
        return [[int(v) for v in route] for route in routes]

    @classmethod
    def route_path(cls, route: Sequence[int]) -> list[int]:
        """The nodes a route travels through in order, with the depot / the return to the start.

        Parameters
        ----------
        route : sequence of int
            One route of a solution (as :meth:`routes_of` gives it).

        Returns
        -------
        list of int
            The route's path: from the depot, and back to it when routes are closed.
        """
        return [0, *route, 0] if cls.closed_routes else [0, *route]

    @classmethod
    def solution_shape(cls) -> str:
        """How a solution is written, for error messages.

        Returns
        -------
        str
            E.g. "a list of routes (lists of customers)".
        """
        return "a list of routes (lists of customers)"

    @classmethod
    def from_parts(cls, coords: Any, distances: Any, demands: Any, capacity: Any,
                   name: str = "", rounding: str = "exact", **extra: Any) -> "Problem":
        """An instance of this variant from its parts.

        The parts every variant has are given (those it does not use are ignored), and the
        parts of its own as :meth:`extra_parts` returns them.

        Parameters
        ----------
        coords : array_like or None
            Node coordinates, shape (n, 2).
        distances : array_like or None
            An explicit distance matrix, shape (n, n).
        demands : array_like
            Demands per node (the depot first), for a capacitated variant.
        capacity : int
            The vehicle capacity, for a capacitated variant.
        name : str, default ""
            The instance's name.
        rounding : {"exact", "nint", "dimacs"}, default "exact"
            How distances follow from the coordinates.
        **extra : Any
            The variant's own parts (VRPTW: time windows, service times, fleet, durations,
            route cost).

        Returns
        -------
        Problem
            A new instance of this variant.
        """
        return cls(coords, demands, capacity, distances=distances, name=name, rounding=rounding)

    def extra_parts(self) -> dict[str, Any]:
        """The parts of this variant beyond coordinates, distances, demands and capacity.

        Returns
        -------
        dict
            The parts as :meth:`from_parts` takes them (VRPTW: windows, service times, fleet,
            durations, route cost); empty for TSP, CVRP and OVRP.
        """
        return {}

    def extra_parts_of(self, nodes: np.ndarray) -> dict[str, Any]:
        """:meth:`extra_parts` for the instance on a subset of this one's nodes.

        Parameters
        ----------
        nodes : numpy.ndarray
            Node ids of this instance, depot first: node i of the new instance is ``nodes[i]``.

        Returns
        -------
        dict
            The parts: per-node arrays indexed by `nodes`, per-pair matrices on both axes,
            the rest as it is.
        """
        n = self.n_nodes
        out: dict[str, Any] = {}
        for key, value in self.extra_parts().items():
            if isinstance(value, np.ndarray) and value.shape[:1] == (n,):
                value = value[np.ix_(nodes, nodes)] if value.shape == (n, n) else value[nodes]
            out[key] = value
        return out

    def core_extras(self) -> dict[str, Any]:
        """What the core's instance takes beyond the common parts.

        Returns
        -------
        dict
            Keyword arguments of the core's instance (VRPTW: its time data); empty for TSP,
            CVRP and OVRP.
        """
        return {}

    def violation(self, solution: Any) -> str | None:
        """The first constraint violation of a complete solution.

        Parameters
        ----------
        solution : list
            A solution in the operator format (TSP: a list of cities; VRP: a list of routes).

        Returns
        -------
        str or None
            The first violation, or None if the solution is feasible.
        """
        from glns._core._solution import check

        return check(self.core, solution)

    def check(self, solution: Any) -> None:
        """Check that a solution is feasible.

        Parameters
        ----------
        solution : list
            A solution in the operator format (TSP: a list of cities; VRP: a list of routes).

        Raises
        ------
        InfeasibleSolutionError
            Naming the first violation, if any.
        """
        err = self.violation(solution)
        if err is not None:
            raise InfeasibleSolutionError(err)

    def cost(self, solution: Any) -> float:
        """Objective of a feasible solution (docs/method.md).

        Parameters
        ----------
        solution : list
            A solution in the operator format (TSP: a list of cities; VRP: a list of routes).

        Returns
        -------
        float
            Its objective.

        Raises
        ------
        InfeasibleSolutionError
            When the solution is not feasible.
        """
        from glns._core._solution import Solution

        sol = Solution(self.core)
        try:
            sol.load(solution)
        except ValueError as exc:
            raise InfeasibleSolutionError(str(exc)) from None
        return sol.cost()

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<{type(self).__name__}{label} with {self.n_customers} {plural(self.node_word)}>"


def plural(word: str) -> str:
    """'city' -> 'cities', 'customer' -> 'customers'."""
    return word[:-1] + "ies" if word.endswith("y") else word + "s"
