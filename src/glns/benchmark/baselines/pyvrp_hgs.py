"""PyVRP (hybrid genetic search / iterated local search) on the integer-scaled matrix."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from glns.benchmark.baselines._common import (BaselineRun, best_so_far, fleet_bound, integer_distances,
                                              timed_integers)
from glns.problems import Problem

#: the largest arc PyVRP's default penalty range (0.1 .. 1e5 per unit of excess load, starting
#: at the midpoint) is tuned for: CVRPLIB-like integer data, coordinates up to ~1000
_PYVRP_TYPICAL_ARC = 1000.0


def solve(problem: Problem, time_limit: float | None, iterations: int | None, seed: int,
          version: str | None) -> BaselineRun:
    """Solve with pyvrp.solve until ``time_limit`` seconds or ``iterations`` iterations,
    whichever comes first (at least one is given). Only an iteration budget alone makes a run
    reproducible: under a time limit the number of iterations done depends on the machine."""
    import pyvrp
    from pyvrp.PenaltyManager import PenaltyParams
    from pyvrp.solve import SolveParams
    from pyvrp.stop import MaxIterations, MaxRuntime, MultipleCriteria

    start = time.perf_counter()
    data, scale, vehicles, top = (_timed_data(problem, pyvrp) if problem.timed
                                  else _problem_data(problem, pyvrp))
    # PyVRP's load penalties are absolute numbers (per unit of excess load): on a matrix scaled
    # to ~1e6 per arc they are far too cheap and the search can settle on overloaded routes
    # (PenaltyBoundWarning, no feasible solution on tiny capacity-tight instances). Scaling the
    # penalty range with the arcs makes the search the one PyVRP runs on the same instance in
    # CVRPLIB-like units (largest arc ~1000); integer data of that size keeps the defaults.
    # (time-window files in DIMACS units, scaled by 10, are the data PyVRP's own VRPTW
    # benchmarks run with its defaults: they keep them)
    dimacs = problem.timed and problem.rounding == "dimacs" and not problem.explicit_distances
    factor = 1.0 if dimacs else max(1.0, top / _PYVRP_TYPICAL_ARC)
    default = PenaltyParams()
    penalty = PenaltyParams(min_penalty=default.min_penalty * factor,
                            max_penalty=default.max_penalty * factor)
    criteria = []
    if time_limit is not None:
        criteria.append(MaxRuntime(time_limit))
    if iterations is not None:
        criteria.append(MaxIterations(iterations))
    stop = criteria[0] if len(criteria) == 1 else MultipleCriteria(criteria)
    result = pyvrp.solve(data, stop, seed=seed, collect_stats=True, display=False,
                         params=SolveParams(penalty=penalty))
    if not result.is_feasible():
        raise RuntimeError("PyVRP found no feasible solution within its budget")
    # a client activity's idx indexes data.clients(); its location is the glns node id
    clients = data.clients()
    routes = [[int(clients[a.idx].location) for a in route if a.is_client()]
              for route in result.best.routes()]
    routes = [route for route in routes if route]
    solution: Any = [0] + routes[0] if problem.kind == "tsp" else routes
    seconds = time.perf_counter() - start

    stats = result.stats
    elapsed = np.cumsum(stats.runtimes) if stats.runtimes else []
    curve = best_so_far(((i + 1, elapsed[i], datum.best_cost / scale)
                         for i, datum in enumerate(stats.data) if datum.best_feas), with_iterations=True)
    return BaselineRun(
        solution=solution, seconds=seconds, iterations=int(result.num_iterations), curve=curve,
        info={"version": version, "time_limit": time_limit, "max_iterations": iterations,
              "seed": seed, "scale": scale, "vehicles": vehicles, "penalty_factor": factor,
              "objective": result.cost() / scale})


def _problem_data(problem: Problem, pyvrp: Any) -> tuple[Any, float, int, float]:
    """ProblemData from the matrix: location i is node i, node 0 the depot. A TSP is one
    uncapacitated vehicle; an OVRP's matrix has free arcs into the depot."""
    dist, scale = integer_distances(problem)
    n = problem.n_nodes
    xy = problem.coords if problem.coords is not None else np.zeros((n, 2))
    locations = [pyvrp.Location(x=float(x), y=float(y)) for x, y in xy]
    vrp = problem.kind != "tsp"
    clients = [pyvrp.Client(location=i, delivery=[int(problem.demands[i])] if vrp else [])
               for i in range(1, n)]
    vehicles = fleet_bound(problem)
    vehicle = pyvrp.VehicleType(num_available=vehicles, capacity=[int(problem.capacity)] if vrp else [])
    data = pyvrp.ProblemData(locations, clients, [pyvrp.Depot(location=0)], [vehicle],
                             [dist], [np.zeros_like(dist)])
    return data, scale, vehicles, float(dist.max())


def _timed_data(problem: Problem, pyvrp: Any) -> tuple[Any, float, int, float]:
    """ProblemData of a VRPTW: distances, travel times, windows and service times on one
    integer scale (10 for DIMACS-rounded data, whose tenths it keeps exactly, as PyVRP's own
    VRPTW benchmarks do), the route cost as each vehicle's fixed cost; the fleet from the
    file, else one vehicle per customer."""
    dist, scale, dur, tw, service = timed_integers(problem)
    n = problem.n_nodes
    xy = problem.coords if problem.coords is not None else np.zeros((n, 2))
    locations = [pyvrp.Location(x=float(x), y=float(y)) for x, y in xy]
    clients = [pyvrp.Client(location=i, delivery=[int(problem.demands[i])],
                            service_duration=int(service[i]), tw_early=int(tw[i, 0]),
                            tw_late=int(tw[i, 1])) for i in range(1, n)]
    vehicles = problem.vehicles or problem.n_customers
    vehicle = pyvrp.VehicleType(num_available=vehicles, capacity=[int(problem.capacity)],
                                tw_early=int(tw[0, 0]), tw_late=int(tw[0, 1]),
                                fixed_cost=int(round(problem.route_cost * scale)))
    data = pyvrp.ProblemData(locations, clients, [pyvrp.Depot(location=0)], [vehicle], [dist], [dur])
    return data, scale, vehicles, float(dist.max())
