"""The vehicle routing problem with time windows: CVRP routes that keep every customer's window."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from glns.exceptions import InvalidInstanceError
from glns.problems.base import euclidean_distances, readonly
from glns.problems.cvrp import CVRP

__all__ = ["VRPTW", "schedule", "plain_check"]


class VRPTW(CVRP):
    """VRP with time windows: depot 0, customers ``1..n``, vehicles of one capacity.

    A route leaves the depot no earlier than the depot's window opens, travels (travel time =
    the distance, unless ``durations`` is given), waits at a customer it reaches before the
    customer's window opens, starts service there no later than the window's due time, serves
    for the customer's service time and is back at the depot before the depot's window closes.
    The total demand of a route is within the capacity. The objective is the total distance
    (the DIMACS convention), plus ``route_cost`` per route when one is given (a cost per
    vehicle used, so that fewer vehicles come first when it is large). ``vehicles`` bounds the
    number of routes when given.

    Parameters
    ----------
    coords : array_like of shape (n+1, 2), optional
        Node coordinates, the depot first, as for :class:`CVRP`.
    demands : array_like of shape (n+1,)
        Integer demand of each node, the depot first with demand 0, as for :class:`CVRP`.
    capacity : int
        The vehicle capacity, a positive integer.
    time_windows : array_like of shape (n+1, 2)
        The earliest and latest start of service at each node; row 0 is the depot's window,
        the planning horizon. Required.
    service_times : array_like of shape (n+1,) or float, default 0.0
        Service durations, or one number for every customer; the depot's is 0.
    vehicles : int or None, optional
        The most routes a solution may have (None: unlimited).
    distances : array_like of shape (n+1, n+1), optional
        An explicit distance matrix, as for :class:`CVRP`.
    durations : array_like of shape (n+1, n+1), optional
        Travel times, when they are not the distances.
    route_cost : float, default 0.0
        A fixed cost per route (finite, >= 0). The objective counts it as half on each arc
        from or to the depot (:attr:`arc_costs`, and ``problem_data["distance_matrix"]`` for
        operators); travel times never include it.
    name : str, default ""
        The instance's name.
    rounding : {"exact", "nint", "dimacs"}, default "exact"
        As for :class:`CVRP`; ``"dimacs"`` truncates distances (and so travel times) to one
        decimal, as the DIMACS challenge and the published Solomon / Gehring-Homberger
        results do.

    Raises
    ------
    InvalidInstanceError
        When the data are malformed (as for :class:`CVRP`, and time windows, service times,
        durations, fleet or route cost that are missing, of the wrong shape or out of range),
        or when a customer cannot be served in time even by a route of its own.
    """

    kind = "vrptw"
    label = "VRPTW"
    core_code = 3
    timed = True
    description = (
        "Vehicle routing problem with time windows (VRPTW). Node 0 is the depot, the customers "
        "are 1..n, each with a demand, a time window [ready, due] and a service time; vehicles "
        "have one capacity. A solution is a list of routes, each a list of customer ids; the "
        "depot is not written. A route leaves the depot at time ready[0], travels (travel time = "
        "distance), may wait at a customer it reaches before ready[c], must START service at "
        "each customer no later than due[c], serves for service[c], and must be back at the "
        "depot no later than due[0]. Every customer is in exactly one route, exactly once; the "
        "total demand of a route must not exceed the capacity; if a fleet size is given, there "
        "are at most that many routes. Objective: minimise the total length of the routes, "
        "depot -> first customer -> ... -> last customer -> depot (waiting costs nothing), "
        "plus route_cost for every route."
    )
    data_description = CVRP.data_description + (
        '\n- "time_windows": (n+1) x 2 float numpy array, [ready, due] per node; row 0 is the '
        "depot's window (leave no earlier than ready, be back no later than due).\n"
        '- "service_times": 1-D float numpy array of length n+1 (0 at the depot).\n'
        '- "durations": (n+1) x (n+1) float numpy array of travel times (equal to the distances '
        "unless the instance says otherwise).\n"
        '- "vehicles": int, the most routes allowed, or None (unlimited).\n'
        '- "route_cost": float, the fixed cost of every route (often 0). It is already in '
        "distance_matrix: half of it on every arc from or to the depot, so the objective is the "
        "sum of distance_matrix over the arcs of the routes; durations never include it."
    )

    def __init__(self, coords: Any = None, demands: Sequence[int] | np.ndarray | None = None,
                 capacity: int | None = None, time_windows: Any = None, service_times: Any = 0.0,
                 *, vehicles: int | None = None, distances: Any = None, durations: Any = None,
                 route_cost: float = 0.0, name: str = "", rounding: str = "exact") -> None:
        super().__init__(coords, demands, capacity, distances=distances, name=name, rounding=rounding)
        n = self.n_nodes
        self.time_windows = readonly(_check_windows(time_windows, n))
        self.service_times = readonly(_check_service(service_times, n))
        self.vehicles = _check_vehicles(vehicles)
        self._durations = readonly(_check_durations(durations, n)) if durations is not None else None
        self.route_cost = _check_route_cost(route_cost)
        self._arc_costs: np.ndarray | None = None
        self._check_reachable()

    @property
    def durations(self) -> np.ndarray:
        """Travel times (n+1, n+1): the given matrix, or the distances."""
        return self._durations if self._durations is not None else self.distances

    @property
    def arc_costs(self) -> np.ndarray:
        """The (n+1, n+1) costs the objective sums over a solution's arcs: the distances, plus
        half the route cost on every arc from or to the depot."""
        if not self.route_cost:
            return self.distances
        if self._arc_costs is None:
            from glns._core._instance import with_depot_fee

            self._arc_costs = with_depot_fee(self.distances, self.route_cost / 2.0)
        return self._arc_costs

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), "_arc_costs": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("route_cost", 0.0)      # pickled before routes could cost
        state.setdefault("_arc_costs", None)
        super().__setstate__(state)

    def _check_reachable(self) -> None:
        """Every customer can be served by a route of its own (else no solution exists)."""
        ready, due = self.time_windows[:, 0], self.time_windows[:, 1]
        for c in range(1, self.n_nodes):
            t_out, t_back = self._travel(0, c), self._travel(c, 0)
            start = max(ready[0] + t_out, ready[c])
            if start > due[c]:
                raise InvalidInstanceError(
                    f"customer {c} cannot be served in time: a vehicle leaving the depot at "
                    f"{ready[0]:g} reaches it at {ready[0] + t_out:g}, after its due time {due[c]:g}")
            if start + self.service_times[c] + t_back > due[0]:
                raise InvalidInstanceError(
                    f"customer {c} cannot be served in time: a route serving only it is back at "
                    f"the depot at {start + self.service_times[c] + t_back:g}, after the depot "
                    f"closes at {due[0]:g}")

    def _travel(self, a: int, b: int) -> float:
        if self._durations is not None:
            return float(self._durations[a, b])
        if self._explicit or self.coords is None:
            return float(self.distances[a, b])
        return float(euclidean_distances(self.coords[[a, b]], self.rounding)[0, 1])

    def core_extras(self) -> dict[str, Any]:
        """What the core's instance takes beyond the common parts: the time data.

        Returns
        -------
        dict
            The windows, service times, durations, fleet and route cost.
        """
        return {"windows": self.time_windows, "service": self.service_times,
                "durations": self._durations, "fleet": self.vehicles or 0,
                "route_cost": self.route_cost}

    def extra_parts(self) -> dict[str, Any]:
        """The parts of a VRPTW beyond coordinates, distances, demands and capacity.

        Returns
        -------
        dict
            ``time_windows``, ``service_times``, ``vehicles``, ``durations`` (None when they
            are the distances) and ``route_cost``, as :meth:`from_parts` takes them.
        """
        return {"time_windows": self.time_windows, "service_times": self.service_times,
                "vehicles": self.vehicles, "durations": self._durations,
                "route_cost": self.route_cost}

    @classmethod
    def from_parts(cls, coords: Any, distances: Any, demands: Any, capacity: Any,
                   name: str = "", rounding: str = "exact", **extra: Any) -> "VRPTW":
        """A VRPTW from the parts every variant has and its own (as :meth:`extra_parts` gives them).

        Parameters
        ----------
        coords : array_like or None
            Node coordinates, shape (n+1, 2), the depot first.
        distances : array_like or None
            An explicit distance matrix, shape (n+1, n+1).
        demands : array_like
            Demands per node, the depot first.
        capacity : int
            The vehicle capacity.
        name : str, default ""
            The instance's name.
        rounding : {"exact", "nint", "dimacs"}, default "exact"
            How distances follow from the coordinates.
        **extra : Any
            ``time_windows`` (required), ``service_times``, ``vehicles``, ``durations`` and
            ``route_cost``, as for the constructor.

        Returns
        -------
        VRPTW
            The instance.
        """
        return cls(coords, demands, capacity, extra.get("time_windows"),
                   extra.get("service_times", 0.0), vehicles=extra.get("vehicles"),
                   distances=distances, durations=extra.get("durations"),
                   route_cost=extra.get("route_cost", 0.0), name=name, rounding=rounding)

    def with_route_cost(self, route_cost: float) -> "VRPTW":
        """This instance with another fixed cost per route.

        Parameters
        ----------
        route_cost : float
            The fixed cost of every route (finite, >= 0).

        Returns
        -------
        VRPTW
            A new instance, otherwise the same as this one.
        """
        return type(self).from_parts(self.coords, self.distances if self._explicit else None,
                                     self.demands, self.capacity, name=self.name,
                                     rounding=self.rounding,
                                     **{**self.extra_parts(), "route_cost": route_cost})

    def problem_data(self) -> dict[str, Any]:
        """The ``problem_data`` dict Python operators get (docs/operator-contract.md).

        Returns
        -------
        dict
            A fresh dict: the entries of :meth:`CVRP.problem_data` (``"distance_matrix"`` is
            the :attr:`arc_costs`), and ``"time_windows"``, ``"service_times"``,
            ``"durations"``, ``"vehicles"`` and ``"route_cost"``.
        """
        return {**super().problem_data(), "time_windows": self.time_windows,
                "service_times": self.service_times, "durations": self.durations,
                "vehicles": self.vehicles, "route_cost": self.route_cost}

    def schedule(self, route: Sequence[int]) -> list[tuple[int, float, float]]:
        """Arrival and start of service at each customer of a route.

        Computed in plain Python from the instance's data (independent of the core), from the
        depot's opening time, waiting where a customer's window has not opened yet.

        Parameters
        ----------
        route : sequence of int
            The customers of one route, in order.

        Returns
        -------
        list of tuple of (int, float, float)
            (customer, arrival, start of service) for each customer of `route`.
        """
        return schedule(self, route)


def plain_check(problem: VRPTW, routes: Sequence[Sequence[int]]) -> tuple[str | None, float]:
    """(first violation or None, objective: total distance plus the route costs) of a
    solution, computed in plain Python from the instance's arrays, sharing no code with the
    core: the benchmarks recheck every solution, glns's and the baselines', with it."""
    dist = problem.distances.tolist()
    travel = problem.durations.tolist()
    tw = problem.time_windows.tolist()
    service = problem.service_times.tolist()
    demands = problem.demands.tolist()
    seen = sorted(int(c) for route in routes for c in route)
    if seen != list(range(1, problem.n_nodes)):
        return "not every customer exactly once", math.nan
    if problem.vehicles is not None and len(routes) > problem.vehicles:
        return f"{len(routes)} routes, more than the fleet of {problem.vehicles}", math.nan
    tol = 1e-9 * max(abs(tw[0][1]), 1.0)
    total = 0.0
    for k, route in enumerate(routes):
        if sum(demands[c] for c in route) > problem.capacity:
            return f"route {k}: capacity exceeded", math.nan
        t, prev = tw[0][0], 0
        for c in route:
            total += dist[prev][c]
            t = max(t + travel[prev][c], tw[c][0])
            if t > tw[c][1] + tol:
                return f"route {k}: customer {c} served at {t:g}, after its due time {tw[c][1]:g}", math.nan
            t += service[c]
            prev = c
        total += dist[prev][0]
        if t + travel[prev][0] > tw[0][1] + tol:
            return f"route {k}: back at the depot after it closes", math.nan
    return None, total + problem.route_cost * sum(1 for route in routes if len(route))


def schedule(problem: VRPTW, route: Sequence[int]) -> list[tuple[int, float, float]]:
    """(customer, arrival, start of service) at each customer of `route`, from the depot's
    opening time, waiting where a customer's window has not opened yet."""
    ready = problem.time_windows[:, 0]
    t, prev, out = float(ready[0]), 0, []
    for c in route:
        arrive = t + problem._travel(prev, int(c))
        start = max(arrive, float(ready[c]))
        out.append((int(c), arrive, start))
        t = start + float(problem.service_times[c])
        prev = int(c)
    return out


def _check_route_cost(route_cost: Any) -> float:
    try:
        value = float(route_cost)
    except (TypeError, ValueError):
        raise InvalidInstanceError(f"route_cost must be a number, got {route_cost!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise InvalidInstanceError(f"route_cost must be finite and >= 0, got {route_cost!r}")
    return value


def _check_windows(windows: Any, n: int) -> np.ndarray:
    if windows is None:
        raise InvalidInstanceError("time_windows are required")
    try:
        w = np.asarray(windows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(f"time windows are not numeric: {exc}") from None
    if w.shape != (n, 2):
        raise InvalidInstanceError(f"time_windows must have shape ({n}, 2) with the depot first, got {w.shape}")
    if not np.isfinite(w).all():
        i = int(np.argwhere(~np.isfinite(w))[0][0])
        raise InvalidInstanceError(f"time window of node {i} is not finite: {w[i].tolist()}")
    if (w[:, 1] < w[:, 0]).any():
        i = int(np.argwhere(w[:, 1] < w[:, 0])[0][0])
        what = "the depot's window" if i == 0 else f"the window of customer {i}"
        raise InvalidInstanceError(f"{what} closes at {w[i, 1]:g}, before it opens at {w[i, 0]:g}")
    return w


def _check_service(service: Any, n: int) -> np.ndarray:
    try:
        s = np.asarray(service, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(f"service times are not numeric: {exc}") from None
    if s.ndim == 0:
        s = np.full(n, float(s))
        s[0] = 0.0
    if s.shape != (n,):
        raise InvalidInstanceError(f"service_times must have shape ({n},) with the depot first, got {s.shape}")
    if not np.isfinite(s).all():
        i = int(np.argwhere(~np.isfinite(s))[0][0])
        raise InvalidInstanceError(f"service time of node {i} is not finite: {s[i]}")
    if (s < 0).any():
        i = int(np.argwhere(s < 0)[0][0])
        raise InvalidInstanceError(f"service time of customer {i} is negative: {s[i]:g}")
    if s[0] != 0:
        raise InvalidInstanceError(f"the depot (node 0) must have service time 0, got {s[0]:g}")
    return s


def _check_vehicles(vehicles: Any) -> int | None:
    if vehicles is None:
        return None
    if isinstance(vehicles, (bool, np.bool_)) or not float(vehicles).is_integer() or int(vehicles) < 1:
        raise InvalidInstanceError(f"vehicles must be a positive integer or None, got {vehicles!r}")
    return int(vehicles)


def _check_durations(durations: Any, n: int) -> np.ndarray:
    try:
        d = np.asarray(durations, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(f"durations are not numeric: {exc}") from None
    if d.shape != (n, n):
        raise InvalidInstanceError(f"durations must have shape ({n}, {n}), got {d.shape}")
    if not np.isfinite(d).all() or (d < 0).any():
        i, j = (int(x) for x in np.argwhere(~np.isfinite(d) | (d < 0))[0])
        raise InvalidInstanceError(f"duration ({i}, {j}) is not a finite non-negative number: {d[i, j]}")
    return d
