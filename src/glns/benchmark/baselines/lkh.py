"""LKH-3 through elkai, for the TSP."""

from __future__ import annotations

import time

from glns.benchmark.baselines._common import BaselineRun, best_so_far, integer_distances
from glns.problems import Problem

#: LKH runs (independent restarts) when no iteration budget is given (elkai's own default)
DEFAULT_RUNS = 10


def solve(problem: Problem, runs: int | None, version: str | None) -> BaselineRun:
    """Solve with ``runs`` LKH runs (default 10). elkai exposes neither a seed nor a time limit:
    LKH's fixed internal seed makes the result deterministic."""
    import elkai

    runs = DEFAULT_RUNS if runs is None else runs
    start = time.perf_counter()
    dist, scale = integer_distances(problem)
    n = problem.n_nodes
    if n < 3:  # LKH needs 3 cities; with fewer every tour is the same cycle
        tour = list(range(n))
    else:
        closed = elkai.DistanceMatrix(dist.tolist()).solve_tsp(runs=runs)
        tour = [int(c) for c in closed[:-1]]  # elkai closes the tour: [0, ..., 0]
        k = tour.index(0)
        tour = tour[k:] + tour[:k]
    seconds = time.perf_counter() - start
    cost = sum(int(dist[tour[i], tour[(i + 1) % n]]) for i in range(n)) / scale
    return BaselineRun(
        solution=tour, seconds=seconds, iterations=None,
        curve=best_so_far([(None, seconds, cost)], with_iterations=False),
        info={"version": version, "runs": runs, "scale": scale, "seed": None,
              "seed_note": "elkai takes no seed (LKH's fixed seed); the seed argument is ignored",
              "objective": cost})
