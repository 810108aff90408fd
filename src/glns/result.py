"""The result of a solve: best solution, curves and operator statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glns.problems import problem_class

__all__ = ["OperatorStats", "Result"]

OUTCOMES = ("best", "better", "accepted", "rejected")


@dataclass(frozen=True)
class OperatorStats:
    """What one operator did in a run. outcomes counts sigma1..sigma4 (failures are in sigma4).

    form: how it ran: "native", or for a Python operator its data view and whether compiled
    ("numpy", "python", "compiled+numpy", "compiled+python"); form_reason: why (the probe
    result, compile status). See docs/fast-operators.md.
    """

    name: str
    kind: str
    calls: int
    outcomes: tuple[int, int, int, int]
    failures: int
    seconds: float
    weight: float
    fitness: float
    last_error: str | None
    form: str = "native"
    form_reason: str = ""


@dataclass(frozen=True)
class Result:
    """Outcome of :func:`glns.solve`.

    solution: best solution in the operator format (TSP: list of cities; VRP: list of routes).
    cost: its objective, exactly as ``problem.cost(solution)`` gives it.
    best_curve / current_curve: the best and current cost after the iterations listed in
    `curve_iterations`, as the search summed them (on a run that searched a renumbered copy,
    SolveParams.renumber, the last bits of a float cost can differ from `cost`: the copy sums
    the same arcs in another order). Every iteration (``curve_iterations`` = 1, 2, ..., n)
    unless the run was longer than ``glns.TRACE_SAMPLES`` iterations with the default
    ``statistics="bounded"``: then every k-th, k a power of two, so that memory stays bounded.
    iteration_seconds: wall time of each of those iterations; curve_seconds: seconds since the
    run started at the end of each. improvements: (k, 3) rows of iteration, seconds and cost:
    the start (iteration 0) and every new best, all of them whatever the run's length.
    synergy: S[d, r] (docs/method.md).
    restarts: how often the run went back to its best solution after a stall (SolveParams.restart).
    stop_reason: why the run stopped: "iterations", "time_limit", "no_improvement",
    "target_cost", "interrupted" (Ctrl-C) or "callback" (a callback or stop criterion).
    """

    problem_kind: str
    solution: Any
    cost: float
    iterations: int
    runtime: float
    seed: int
    best_curve: np.ndarray
    current_curve: np.ndarray
    iteration_seconds: np.ndarray
    destroy_stats: tuple[OperatorStats, ...]
    repair_stats: tuple[OperatorStats, ...]
    synergy: np.ndarray
    initial_temperature: float
    restarts: int = 0
    stop_reason: str = ""
    curve_iterations: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64), compare=False)
    curve_seconds: np.ndarray = field(default_factory=lambda: np.empty(0), compare=False)
    improvements: np.ndarray = field(default_factory=lambda: np.empty((0, 3)), compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def num_routes(self) -> int:
        """Routes in the best solution (1 for a TSP)."""
        return len(problem_class(self.problem_kind).routes_of(self.solution))

    def solution_array(self) -> np.ndarray:
        """The best solution as one int array: the tour (TSP), or routes joined by depot 0
        with a 0 at both ends (VRP), e.g. [0, 3, 1, 0, 2, 0]."""
        if not problem_class(self.problem_kind).has_depot:
            return np.asarray(self.solution, dtype=np.int64)
        flat = [0]
        for route in self.solution:
            flat.extend(route)
            flat.append(0)
        return np.asarray(flat, dtype=np.int64)

    def routes(self) -> list[np.ndarray]:
        """The best solution as a list of int arrays (one per route)."""
        return [np.asarray(r, dtype=np.int64) for r in problem_class(self.problem_kind).routes_of(self.solution)]

    def summary(self) -> str:
        """A short human-readable report."""
        lines = [f"cost {self.cost:.6f}, {self.num_routes} route(s), {self.iterations} iterations "
                 f"in {self.runtime:.3f} s ({self.iterations / max(self.runtime, 1e-12):,.0f} it/s)"]
        for st in self.destroy_stats + self.repair_stats:
            lines.append(f"  {st.kind:7s} {st.name:24s} calls {st.calls:7d}  "
                         f"best/better/acc/rej {'/'.join(map(str, st.outcomes))}  "
                         f"failures {st.failures}  {st.seconds:.3f} s")
        return "\n".join(lines)
