"""LKH-3 through elkai, for the TSP."""

from __future__ import annotations

import time

import numpy as np

from glns.benchmark.baselines._common import BaselineRun, best_so_far, integer_distances
from glns.problems import Problem, euclidean_distances

#: LKH runs (independent restarts) when no iteration budget is given (elkai's own default)
DEFAULT_RUNS = 10
#: LKH runs under a time limit: more than any limit allows, so TOTAL_TIME_LIMIT ends the search
TIMED_RUNS = 1_000_000


def solve(problem: Problem, runs: int | None, version: str | None, time_limit: float | None = None,
          seed: int | None = None) -> BaselineRun:
    """Solve with ``runs`` LKH runs (default 10), or for ``time_limit`` seconds.

    elkai's API takes only ``runs`` (no seed, no time limit; LKH's fixed internal seed makes
    the result deterministic). With ``time_limit``, the LKH-3 parameter string goes to elkai's
    own entry point ``elkai._elkai.solve_problem`` (the one ``DistanceMatrix.solve_tsp`` calls)
    with ``TOTAL_TIME_LIMIT`` (LKH-3: seconds over all runs, counted from LKH's start, its
    preprocessing included, and checked between trials, so a run can end slightly late),
    ``SEED`` and ``runs`` (default: unlimited) -- the same LKH on the same distances, stopped
    by time. Building LKH's input text is not counted in its limit (it is in ``seconds``).
    """
    start = time.perf_counter()
    dist, scale = integer_distances(problem)
    n = problem.n_nodes
    if n < 3:  # LKH needs 3 cities; with fewer every tour is the same cycle
        tour = list(range(n))
    else:
        closed = (_timed(problem, dist, scale, runs, time_limit, seed) if time_limit is not None
                  else _by_runs(dist, runs))
        tour = [int(c) for c in closed[:-1]]  # closed tour: [0, ..., 0]
        k = tour.index(0)
        tour = tour[k:] + tour[:k]
    seconds = time.perf_counter() - start
    cost = sum(int(dist[tour[i], tour[(i + 1) % n]]) for i in range(n)) / scale
    info = {"version": version, "runs": runs or DEFAULT_RUNS, "scale": scale, "seed": None,
            "seed_note": "elkai takes no seed (LKH's fixed seed); the seed argument is ignored",
            "objective": cost}
    if time_limit is not None:
        info.update(runs=runs or TIMED_RUNS, time_limit=time_limit, seed=seed, seed_note="LKH-3 SEED parameter")
    return BaselineRun(solution=tour, seconds=seconds, iterations=None,
                       curve=best_so_far([(None, seconds, cost)], with_iterations=False), info=info)


def _by_runs(dist: np.ndarray, runs: int | None) -> list[int]:
    import elkai

    return elkai.DistanceMatrix(dist.tolist()).solve_tsp(runs=DEFAULT_RUNS if runs is None else runs)


def _timed(problem: Problem, dist: np.ndarray, scale: float, runs: int | None, time_limit: float,
           seed: int | None) -> list[int]:
    """The closed tour (0-based) of LKH-3 stopped after ``time_limit`` seconds."""
    from elkai import _elkai

    # SEED = 0 would make LKH-3 seed from the clock; 1 is its default
    params = (f"RUNS = {runs or TIMED_RUNS}\nTOTAL_TIME_LIMIT = {time_limit:.3f}\n"
              f"SEED = {int(seed) if seed else 1}\nPROBLEM_FILE = :stdin:\n")
    tour = [int(c) - 1 for c in _elkai.solve_problem(params, _problem_text(problem, dist, scale))]
    if len(tour) != len(dist):   # LKH answers nothing when the limit ends it before its first tour
        raise RuntimeError(f"LKH-3 found no tour within {time_limit:g} s (its preprocessing, the "
                           "subgradient ascent, did not finish)")
    return tour + tour[:1]


def _problem_text(problem: Problem, dist: np.ndarray, scale: float) -> str:
    """The TSPLIB text LKH reads: the scaled coordinates with EUC_2D or CEIL_2D when LKH's
    rounding of them gives exactly ``dist`` (TSPLIB files, generated instances), so LKH neither
    parses nor stores an n x n matrix (n = 6000: 36 M numbers); else the matrix."""
    n = len(dist)
    head = f"TYPE : TSP\nDIMENSION : {n}\n"
    if problem.coords is not None:
        xy = np.asarray(problem.coords, dtype=np.float64) * scale
        exact = euclidean_distances(xy)
        for kind, rounded in (("EUC_2D", np.floor(exact + 0.5)), ("CEIL_2D", np.ceil(exact))):
            if np.array_equal(rounded, dist):
                rows = "".join(f"{i + 1} {x!r} {y!r}\n" for i, (x, y) in enumerate(xy.tolist()))
                return f"{head}EDGE_WEIGHT_TYPE : {kind}\nNODE_COORD_SECTION\n{rows}EOF\n"
    rows = "\n".join(" ".join(map(str, row)) for row in dist.tolist())
    return f"{head}EDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : FULL_MATRIX\nEDGE_WEIGHT_SECTION\n{rows}\nEOF\n"
