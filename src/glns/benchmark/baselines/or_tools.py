"""OR-Tools routing: cheapest-arc first solution, then guided local search to a time limit
(the paper's OR-Tools baseline, 5 s per instance)."""

from __future__ import annotations

import time
from typing import Any

from glns.benchmark.baselines._common import (BaselineRun, best_so_far, fleet_bound, integer_distances,
                                              timed_integers)
from glns.problems import Problem


def solve(problem: Problem, time_limit: float, seed: int, version: str | None) -> BaselineRun:
    """Solve with OR-Tools GLS for ``time_limit`` seconds. OR-Tools takes no seed: ``seed`` is
    ignored (its search is deterministic; only how far it gets in the time limit varies)."""
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    start = time.perf_counter()
    if problem.timed:
        dist, scale, travel, windows, service = timed_integers(problem)
        vehicles = problem.vehicles or problem.n_customers
    else:
        dist, scale = integer_distances(problem)
        vehicles = fleet_bound(problem)
    n = problem.n_nodes
    manager = pywrapcp.RoutingIndexManager(n, vehicles, 0)
    routing = pywrapcp.RoutingModel(manager)
    # a matrix callback runs in C++ (a Python callback would cost most of the time limit); for
    # an OVRP its column 0 is zero, so the return to the depot (every route's end) is free
    arc = routing.RegisterTransitMatrix(dist.tolist())
    routing.SetArcCostEvaluatorOfAllVehicles(arc)
    if problem.timed and problem.route_cost:
        routing.SetFixedCostOfAllVehicles(int(round(problem.route_cost * scale)))
    if problem.kind != "tsp":
        load = routing.RegisterUnaryTransitVector([int(q) for q in problem.demands])
        routing.AddDimensionWithVehicleCapacity(load, 0, [int(problem.capacity)] * vehicles, True, "load")
    if problem.timed:
        _time_dimension(routing, manager, travel, windows, service, vehicles)

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(max(1, round(time_limit * 1000)))

    found: list[tuple[None, float, float]] = []
    # GLS reports every solution it moves to, improving or not; best_so_far keeps the
    # improvements. CostVar() exists only once the model is closed (inside the solve).
    routing.AddAtSolutionCallback(lambda: found.append(
        (None, time.perf_counter() - start, routing.CostVar().Value() / scale)))
    assignment = routing.SolveWithParameters(params)
    if assignment is None:
        raise RuntimeError(f"OR-Tools found no solution within {time_limit} s")
    solution = _read_routes(problem, routing, manager, assignment, vehicles)
    seconds = time.perf_counter() - start
    return BaselineRun(
        solution=solution, seconds=seconds, iterations=None,
        curve=best_so_far(found, with_iterations=False),
        info={"version": version, "time_limit": time_limit, "scale": scale, "vehicles": vehicles,
              "first_solution": "PATH_CHEAPEST_ARC", "metaheuristic": "GUIDED_LOCAL_SEARCH",
              "seed": None, "seed_note": "OR-Tools takes no seed; the seed argument is ignored",
              "objective": assignment.ObjectiveValue() / scale})


def _time_dimension(routing: Any, manager: Any, travel: Any, windows: Any, service: Any,
                    vehicles: int) -> None:
    """Time windows as a dimension: leaving i for j takes service[i] + travel[i][j]; waiting is
    slack; each node's cumulative time (its start of service) within its window; every route
    within the depot's."""
    transit = (service[:, None] + travel).tolist()
    horizon = int(windows[0, 1])
    callback = routing.RegisterTransitMatrix(transit)
    routing.AddDimension(callback, horizon, horizon, False, "time")
    time_dim = routing.GetDimensionOrDie("time")
    for node in range(1, len(service)):
        time_dim.CumulVar(manager.NodeToIndex(node)).SetRange(int(windows[node, 0]), int(windows[node, 1]))
    for v in range(vehicles):
        time_dim.CumulVar(routing.Start(v)).SetRange(int(windows[0, 0]), horizon)
        time_dim.CumulVar(routing.End(v)).SetRange(int(windows[0, 0]), horizon)


def _read_routes(problem: Problem, routing: Any, manager: Any, assignment: Any, vehicles: int) -> Any:
    routes = []
    for v in range(vehicles):
        route = []
        index = assignment.Value(routing.NextVar(routing.Start(v)))
        while not routing.IsEnd(index):
            route.append(manager.IndexToNode(index))
            index = assignment.Value(routing.NextVar(index))
        if route:
            routes.append(route)
    if problem.kind == "tsp":
        return [0] + (routes[0] if routes else [])
    return routes
