"""HGS-CVRP (Vidal's hybrid genetic search with SWAP*) through the ``hygese`` package."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from glns.benchmark.baselines._common import BaselineRun, best_so_far, fleet_bound
from glns.problems import Problem

#: HGS restarts after this many iterations without improvement while its time limit lasts
#: (its default, as published)
NB_ITER = 20000


def solve(problem: Problem, time_limit: float, seed: int, version: str | None) -> BaselineRun:
    """Solve a CVRP with HGS-CVRP for ``time_limit`` seconds (restarting after ``NB_ITER``
    iterations without improvement, HGS's own rule under a time limit).

    HGS gets the instance's own distance matrix (floats; exact for TSPLIB-rounded files),
    dense: ``Problem.distances``, which refuses instances whose matrix exceeds
    ``MAX_MATRIX_BYTES``. Coordinates, shifted to be non-negative, serve only its polar
    sectors (SWAP*'s route pairs)."""
    import hygese

    start = time.perf_counter()
    if problem.n_customers == 1:    # HGS never returns on a single customer; there is one answer
        routes1 = [[1]]
        return BaselineRun(solution=routes1, seconds=time.perf_counter() - start, iterations=None,
                           curve=best_so_far([(None, 0.0, problem.cost(routes1))], with_iterations=False),
                           info={"version": version, "time_limit": time_limit, "seed": seed,
                                 "note": "one customer: HGS not called"})
    dist = np.ascontiguousarray(problem.distances, dtype=np.float64)
    n = problem.n_nodes
    xy = (np.zeros((n, 2)) if problem.coords is None
          else problem.coords - np.minimum(problem.coords.min(axis=0), 0.0))
    data = {"distance_matrix": dist, "x_coordinates": xy[:, 0], "y_coordinates": xy[:, 1],
            "demands": np.asarray(problem.demands, dtype=np.float64), "vehicle_capacity": int(problem.capacity),
            "num_vehicles": fleet_bound(problem), "depot": 0}
    params = hygese.AlgorithmParameters(timeLimit=float(time_limit), seed=int(seed), nbIter=NB_ITER)
    result = hygese.Solver(parameters=params, verbose=False).solve_cvrp(data)
    routes: Any = [[int(c) for c in route] for route in result.routes if len(route)]
    if not routes:
        raise RuntimeError("HGS-CVRP found no feasible solution within its budget")
    seconds = time.perf_counter() - start
    cost = problem.cost(routes)
    curve = best_so_far([(None, seconds, cost)], with_iterations=False)
    return BaselineRun(solution=routes, seconds=seconds, iterations=None, curve=curve,
                       info={"version": version, "time_limit": time_limit, "seed": seed,
                             "nb_iter": NB_ITER, "vehicles": data["num_vehicles"],
                             "objective": float(result.cost)})
