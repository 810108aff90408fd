"""CI regression checks: speed normalised by a calibration workload, and fixed-seed quality.

Used by the tests next to this file and by ``tools/refresh_regression_baseline.py``; the method,
the thresholds and what a failure means are in bench/README.md ("CI regression checks").

Speed. Every workload (a ``glns.solve`` call) is timed against a calibration workload that is
measured in the same run, interleaved: c0 w0 c1 w1 ... c(k-1) w(k-1) ck. Each w_i is divided by
the mean of its neighbours c_i and c(i+1), and the median of these k ratios is the workload's
normalised cost. Time is the process's CPU time (``time.process_time``), not wall time, so
the time the process spends waiting while other processes hold the 2 cores does not count.
The check fails when the ratio exceeds ``baseline * THRESHOLD``, and only when a second,
independent measurement exceeds it too: a real regression fails both, a noise spike rarely does.

Calibrations: native workloads are normalised by ``bz2.compress`` of a fixed payload (scalar,
branchy C code of a library unchanged for years, so it tracks the speed of compiled code on a
machine and does not depend on NumPy's SIMD dispatch); the Python-operator bridge by a fixed
pure-Python routine (list and dict work like an operator's), which tracks the interpreter.

Quality. Fixed-seed runs are deterministic on one platform; their costs must stay within
``QUALITY_RTOL`` (relative) of the stored values.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


import glns
from glns import regression
from glns.datasets import generate_cvrp, generate_ovrp, generate_tsp
from glns.operators import from_callable
from glns.operators.seeds import BY_PROBLEM

#: where the stored ratios and objectives live (rewritten by tools/refresh_regression_baseline.py)
BASELINE_PATH = Path(__file__).with_name("baseline.json")
#: a workload fails when its normalised ratio exceeds baseline * THRESHOLD (twice in a row).
#: 1.8: measured noise on a loaded 2-core machine is within about +-7 % (bench/README.md), the
#: rest is room for a different CI machine; a 2x slowdown of the measured code exceeds it.
THRESHOLD = 1.8
#: interleaved (calibration, workload) pairs per measurement; the median of their ratios counts
REPEATS = 7
#: relative tolerance of the fixed-seed objectives: floating-point summation order and libm
#: differences across platforms change costs in the last digits only; a changed search trajectory
#: (any behaviour change) moves them by far more
QUALITY_RTOL = 1e-6
#: test hook: GLNS_REGRESSION_SLOWDOWN=2.5 makes every timed workload take 2.5x its CPU time
SLOWDOWN_ENV = "GLNS_REGRESSION_SLOWDOWN"

PAPER = glns.SolveParams.paper()
SEEDS = (["random_removal", "worst_removal"], ["greedy_insertion"])


# --- calibration workloads: glns.regression's (the same for users' suites) ----------------

CALIBRATIONS = regression.CALIBRATIONS


# --- measured workloads --------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """One timed ``glns.solve`` call and the calibration it is normalised by."""

    name: str
    calibration: str          # key of CALIBRATIONS
    run: Callable[[], float]  # returns the best cost (so the work cannot be skipped)
    what: str


def _python_seeds(kind: str) -> tuple[list, list]:
    twins = BY_PROBLEM[kind]
    return ([from_callable(twins.random_removal, "destroy"), from_callable(twins.worst_removal, "destroy")],
            [from_callable(twins.greedy_insertion, "repair")])


def _workloads() -> dict[str, Workload]:
    tsp100, cvrp100, ovrp100 = generate_tsp(100, 1), generate_cvrp(100, 1), generate_ovrp(100, 2)
    cvrp30, tsp30 = generate_cvrp(30, 3), generate_tsp(30, 3)
    py_cvrp, py_tsp = _python_seeds("cvrp"), _python_seeds("tsp")

    def solve(problem, ops=(None, None), **kw) -> Callable[[], float]:
        return lambda: glns.solve(problem, ops[0], ops[1], seed=1, **kw).cost

    items = [
        Workload("core_seeds_tsp100", "c", solve(tsp100, SEEDS, iterations=8000, params=PAPER),
                 "core loop, native seed operators, paper preset: TSP100 x 8000 iterations"),
        Workload("core_seeds_cvrp100", "c", solve(cvrp100, SEEDS, iterations=8000, params=PAPER),
                 "core loop, native seed operators, paper preset: CVRP100 x 8000 iterations"),
        Workload("default_tsp100", "c", solve(tsp100, iterations=1200),
                 "default native portfolio (glns.solve defaults): TSP100 x 1200 iterations"),
        Workload("default_cvrp100", "c", solve(cvrp100, iterations=1500),
                 "default native portfolio: CVRP100 x 1500 iterations"),
        Workload("default_ovrp100", "c", solve(ovrp100, iterations=1500),
                 "default native portfolio: OVRP100 x 1500 iterations"),
        Workload("bridge_cvrp30", "python", solve(cvrp30, py_cvrp, iterations=800, params=PAPER),
                 "Python seed operators through from_callable, paper preset: CVRP30 x 800 iterations"),
        Workload("bridge_tsp30", "python", solve(tsp30, py_tsp, iterations=1000, params=PAPER),
                 "Python seed operators through from_callable, paper preset: TSP30 x 1000 iterations"),
    ]
    return {w.name: w for w in items}


WORKLOADS = _workloads()


# --- measuring -----------------------------------------------------------------------------

def env_slowdown() -> float:
    """The slowdown factor injected through the GLNS_REGRESSION_SLOWDOWN test hook (1: none)."""
    value = float(os.environ.get(SLOWDOWN_ENV, "1") or 1)
    if not value >= 1:
        raise ValueError(f"{SLOWDOWN_ENV} must be >= 1, got {value}")
    return value


Measurement = regression.Measurement


def measure(name: str, repeats: int = REPEATS, slowdown: float | None = None) -> Measurement:
    """Measure workload `name` against its calibration, interleaved, `repeats` pairs.

    slowdown: test hook; the workload's CPU time is stretched by this factor (default: the
    GLNS_REGRESSION_SLOWDOWN environment variable, else 1).
    """
    work = WORKLOADS[name]
    factor = env_slowdown() if slowdown is None else float(slowdown)
    return regression.measure(name, work.run, CALIBRATIONS[work.calibration], repeats, factor)


@dataclass(frozen=True)
class Check:
    """Outcome of a speed check: passed unless every measurement exceeded the limit."""

    name: str
    baseline: float
    limit: float
    measurements: list[Measurement] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return min(m.ratio for m in self.measurements) <= self.limit

    def describe(self) -> str:
        got = ", ".join(f"{m.ratio:.4g}" for m in self.measurements)
        slower = min(m.ratio for m in self.measurements) / self.baseline
        return (f"{self.name}: ratio {got} vs baseline {self.baseline:.4g} (x{slower:.2f}), "
                f"limit {self.limit:.4g} = baseline x {self.limit / self.baseline:g}; "
                f"{WORKLOADS[self.name].what}")


def check(name: str, baseline: float, threshold: float = THRESHOLD, slowdown: float | None = None,
          repeats: int = REPEATS) -> Check:
    """Measure `name`; when it exceeds baseline * threshold, measure once more to confirm."""
    result = Check(name, baseline, baseline * threshold, [measure(name, repeats, slowdown)])
    if not result.ok:
        result.measurements.append(measure(name, repeats, slowdown))
    return result


# --- quality -------------------------------------------------------------------------------

def _quality_runs() -> dict[str, Callable[[], float]]:
    problems = {"tsp100": generate_tsp(100, 11), "cvrp100": generate_cvrp(100, 12),
                "ovrp100": generate_ovrp(100, 13)}
    runs: dict[str, Callable[[], float]] = {}
    for label, p in problems.items():
        runs[f"{label}_default_300it_seed3"] = (
            lambda p=p: glns.solve(p, iterations=300, seed=3).cost)
        runs[f"{label}_paper_seeds_1000it_seed3"] = (
            lambda p=p: glns.solve(p, *SEEDS, iterations=1000, seed=3, params=PAPER).cost)
    return runs


QUALITY_RUNS = _quality_runs()


# --- baseline file -------------------------------------------------------------------------

def load_baseline(path: Path = BASELINE_PATH) -> dict:
    return json.loads(path.read_text())


#: where a baseline was measured (stored beside it, for humans reading a failure)
environment = regression.environment