"""Problem instances: TSP, CVRP and OVRP (SPEC §1), validated on construction.

Instances are built from coordinates (float Euclidean distances, no rounding) or from an
explicit distance matrix. Every array an instance exposes is read-only; the core keeps its
own private copy, so nothing an operator does to the arrays it is given can reach the solver.
"""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from glns.exceptions import InfeasibleSolutionError, InvalidInstanceError

__all__ = ["Problem", "TSP", "CVRP", "OVRP", "euclidean_distances"]

KIND_CODES = {"tsp": 0, "cvrp": 1, "ovrp": 2}


def euclidean_distances(coords: np.ndarray) -> np.ndarray:
    """Pairwise Euclidean distance matrix (float64) of an (n, 2) coordinate array."""
    diff = coords[:, None, :] - coords[None, :, :]
    with np.errstate(over="ignore"):  # huge coordinates give inf, which callers reject
        return np.sqrt((diff * diff).sum(axis=-1))


def _readonly(a: np.ndarray) -> np.ndarray:
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


def _integer_capacity(capacity: Any) -> int:
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
    """Common part of TSP, CVRP and OVRP. Use the subclasses."""

    kind: ClassVar[str]
    #: first node id that must be visited (TSP 0, VRP 1: node 0 is the depot)
    first_node: ClassVar[int]

    coords: np.ndarray | None
    distances: np.ndarray
    demands: np.ndarray
    capacity: int
    name: str

    def __init__(self) -> None:  # pragma: no cover - abstract
        raise TypeError("use TSP, CVRP or OVRP")

    def _set_geometry(self, coords: Any, distances: Any) -> None:
        if coords is None and distances is None:
            raise InvalidInstanceError("give coordinates or a distance matrix")
        xy = _check_coords(coords) if coords is not None else None
        if distances is not None:
            dist = _check_distances(distances)
            if xy is not None and xy.shape[0] != dist.shape[0]:
                raise InvalidInstanceError(
                    f"{xy.shape[0]} coordinates but a {dist.shape[0]}x{dist.shape[0]} distance matrix"
                )
        else:
            dist = euclidean_distances(xy)
            if not np.isfinite(dist).all():
                raise InvalidInstanceError("coordinates are too large: a distance overflows to inf")
        if dist.shape[0] < 2:
            raise InvalidInstanceError(f"an instance needs at least 2 nodes, got {dist.shape[0]}")
        self.coords = _readonly(xy) if xy is not None else None
        self.distances = _readonly(dist)
        self._core = None

    @property
    def n_nodes(self) -> int:
        """Number of nodes, the depot included for VRP."""
        return self.distances.shape[0]

    @property
    def n_customers(self) -> int:
        """Number of nodes to route: cities (TSP) or customers (VRP)."""
        return self.n_nodes - self.first_node

    @property
    def core(self):
        """The core's private copy of this instance (built once)."""
        if self._core is None:
            from glns._core._instance import CoreInstance

            self._core = CoreInstance(KIND_CODES[self.kind], self.distances, self.demands, self.capacity)
        return self._core

    def __getstate__(self) -> dict[str, Any]:
        # the core's copy is a C structure: rebuilt on demand after unpickling
        return {**self.__dict__, "_core": None}

    def problem_data(self) -> dict[str, Any]:
        """The ``problem_data`` dict of SPEC §3 (fresh dict, read-only arrays)."""
        data: dict[str, Any] = {"distance_matrix": self.distances, "coordinates": self.coords}
        if self.kind != "tsp":
            data.update(demands=self.demands, capacity=self.capacity, depot_idx=0,
                        open_routes=self.kind == "ovrp")
        return data

    def violation(self, solution: Any) -> str | None:
        """The first constraint violation of a complete solution, or None if it is feasible."""
        from glns._core._solution import check

        return check(self.core, solution)

    def check(self, solution: Any) -> None:
        """Raise InfeasibleSolutionError naming the first violation, if any."""
        err = self.violation(solution)
        if err is not None:
            raise InfeasibleSolutionError(err)

    def cost(self, solution: Any) -> float:
        """Objective of a feasible solution (SPEC §1); raises InfeasibleSolutionError otherwise."""
        from glns._core._solution import Solution

        sol = Solution(self.core)
        try:
            sol.load(solution)
        except ValueError as exc:
            raise InfeasibleSolutionError(str(exc)) from None
        return sol.cost()

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<{type(self).__name__}{label} with {self.n_customers} {'cities' if self.kind == 'tsp' else 'customers'}>"


class TSP(Problem):
    """Symmetric or asymmetric TSP over cities ``0..n-1``; the objective is the closed tour length."""

    kind = "tsp"
    first_node = 0

    def __init__(self, coords: Any = None, *, distances: Any = None, name: str = "") -> None:
        self._set_geometry(coords, distances)
        self.demands = _readonly(np.zeros(self.n_nodes, dtype=np.int64))
        self.capacity = 0
        self.name = name


class CVRP(Problem):
    """Capacitated VRP: depot 0, customers ``1..n``, unlimited vehicles of one capacity."""

    kind = "cvrp"
    first_node = 1

    def __init__(self, coords: Any = None, demands: Sequence[int] | np.ndarray | None = None,
                 capacity: int | None = None, *, distances: Any = None, name: str = "") -> None:
        self._set_geometry(coords, distances)
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
        cap = _integer_capacity(capacity)
        if (q < 0).any():
            i = int(np.argwhere(q < 0)[0][0])
            raise InvalidInstanceError(f"demand of node {i} is negative: {q[i]}")
        if q[0] != 0:
            raise InvalidInstanceError(f"the depot (node 0) must have demand 0, got {q[0]}")
        if (q > cap).any():
            i = int(np.argwhere(q > cap)[0][0])
            raise InvalidInstanceError(f"demand of node {i} ({q[i]}) exceeds the capacity {cap}")
        q = q.astype(np.int64)
        self.demands = _readonly(q)
        self.capacity = cap
        self.name = name


class OVRP(CVRP):
    """Open VRP: as CVRP, but a route ends at its last customer (no return to the depot)."""

    kind = "ovrp"
