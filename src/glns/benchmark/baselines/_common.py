"""What every baseline adapter shares: the run record, integer distances, the fleet bound and
best-so-far curves."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from glns.problems import Problem

__all__ = ["BaselineRun", "integer_distances", "timed_integers", "fleet_bound", "best_so_far",
           "empty_curve"]

#: largest scaled distance handed to an integer solver. LKH multiplies every explicit weight by
#: its PRECISION (100) and keeps it in a C int, so 1e7 * 100 stays far below 2**31; the other
#: solvers (int64) are then safe too, and 1e7 still leaves about 7 significant digits per arc.
MAX_SCALED = 1e7
#: scale for non-integer matrices on the usual unit square (max ~1.4 -> ~1.4e6)
DEFAULT_SCALE = 1e6


@dataclass(frozen=True)
class BaselineRun:
    """One baseline solve.

    solution: glns operator format (TSP: list of all cities; VRP: list of routes of customer
        ids, depot not written), exactly feasible.
    seconds: wall time of building the solver's model and solving it (imports excluded).
    iterations: the solver's iteration count when it has one (alns, pyvrp), else None.
    curve: best-so-far at each improvement, ``{"iteration": list[int] | None,
        "seconds": list[float], "cost": list[float]}``, costs in the instance's own units (the
        solver's integer objective divided by the scale: approximate to about 1e-6).
    info: solver version, budget, scale and other settings of the run.
    """

    solution: Any
    seconds: float
    iterations: int | None
    curve: dict
    info: dict = field(default_factory=dict)


def timed_integers(problem: Problem) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray]:
    """(distances, scale, travel times, windows, service times) of a VRPTW, all as int64 on one
    scale: 10 for DIMACS-rounded coordinates (their tenths exactly, as PyVRP's own VRPTW
    benchmarks do), else :func:`integer_distances`' scale. Times that are not integers on that
    scale are rounded so that a schedule feasible in integers is feasible in the instance's
    floats: travel and service times and ready times up, due times down."""
    if problem.rounding == "dimacs" and not problem.explicit_distances:
        scale = 10.0
        dist = np.rint(problem.distances * scale).astype(np.int64)
    else:
        dist, scale = integer_distances(problem)

    def scaled(a: Any, up: bool) -> np.ndarray:
        v = np.asarray(a, dtype=np.float64) * scale
        near = np.rint(v)
        exact = np.abs(v - near) <= 1e-6 * np.maximum(1.0, np.abs(v))   # an integer up to noise
        return np.where(exact, near, np.ceil(v) if up else np.floor(v)).astype(np.int64)

    windows = np.column_stack([scaled(problem.time_windows[:, 0], True),
                               scaled(problem.time_windows[:, 1], False)])
    return (dist, scale, scaled(problem.durations, True), windows,
            scaled(problem.service_times, True))


def integer_distances(problem: Problem) -> tuple[np.ndarray, float]:
    """(int64 matrix, scale): the distances times ``scale``, rounded.

    An integer-valued matrix (TSPLIB/CVRPLIB ``nint``) keeps scale 1; any other matrix is scaled
    by 1e6, or by a smaller power of ten when its largest entry would exceed MAX_SCALED. For an
    OVRP every arc into the depot costs 0 (routes end at their last customer).
    """
    d = np.asarray(problem.distances, dtype=np.float64)
    top = float(d.max()) if d.size else 0.0
    if np.array_equal(d, np.round(d)) and top <= MAX_SCALED:
        scale = 1.0
    elif top <= 0:
        scale = DEFAULT_SCALE
    else:
        scale = min(DEFAULT_SCALE, 10.0 ** math.floor(math.log10(MAX_SCALED / top)))
    m = np.rint(d * scale).astype(np.int64)
    if not problem.closed_routes:   # an open route does not pay for going back
        m[:, 0] = 0
    return m, scale


def fleet_bound(problem: Problem) -> int:
    """A vehicle count that never cuts off an optimal solution (glns's fleet is unlimited).

    CVRP with d(a, b) <= d(a, 0) + d(0, b) for all customers a, b (true for any metric): two
    routes whose loads fit in one vehicle can be chained through that arc at no extra cost, so
    some optimum has every pair of routes over capacity, hence fewer than
    2 * ceil(total / capacity) routes. Otherwise (OVRP, where chaining can cost more, or a
    non-metric matrix) one vehicle per customer, which is always enough.
    """
    n = problem.n_customers
    if problem.kind == "tsp":
        return 1
    if problem.kind == "cvrp":
        d = problem.distances
        via_depot = d[1:, 0][:, None] + d[0, 1:][None, :]
        if np.all(d[1:, 1:] <= via_depot + 1e-9 * (1.0 + via_depot)):
            total = int(np.sum(problem.demands))
            return max(1, min(n, 2 * math.ceil(total / problem.capacity)))
    return max(1, n)


def empty_curve(with_iterations: bool) -> dict:
    return {"iteration": [] if with_iterations else None, "seconds": [], "cost": []}


def best_so_far(points: Iterable[tuple[int | None, float, float]], with_iterations: bool) -> dict:
    """The curve of strict improvements among (iteration, seconds, cost) points, in order."""
    curve = empty_curve(with_iterations)
    best = math.inf
    for it, sec, cost in points:
        if cost < best:
            best = cost
            if with_iterations:
                curve["iteration"].append(int(it))  # type: ignore[arg-type]
            curve["seconds"].append(float(sec))
            curve["cost"].append(float(cost))
    return curve
