"""Baseline solvers the benchmark compares glns with (optional extra ``bench``).

========  =============================  =========  ======================================
name      solver                         budget     problems
========  =============================  =========  ======================================
ortools   OR-Tools routing, GLS          time       tsp, cvrp, ovrp, vrptw (time_limit required)
pyvrp     PyVRP (HGS)                    time       tsp, cvrp, ovrp, vrptw (time_limit and/or
                                                    iterations; iterations alone is
                                                    reproducible)
lkh       LKH-3 through elkai            runs       tsp (iterations = LKH runs, default 10;
                                                    or time_limit: seconds, any number of runs)
alns      alns + glns seed operators     iterations tsp, cvrp, ovrp (iterations required;
                                                    time_limit optional, stops earlier)
hgs       HGS-CVRP (hygese)              time       cvrp (time_limit required; a dense
                                                    distance matrix)
========  =============================  =========  ======================================

Integer solvers get the distances scaled (1e6, or 1 for integer matrices; see
:func:`integer_distances`); returned solutions are in glns's format and exactly feasible, and
curve costs are the solver's objective divided back by the scale. :func:`run_baseline` is a
module-level function so a runner can ship it to worker processes.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
from dataclasses import dataclass

from glns.benchmark.baselines._common import BaselineRun, fleet_bound, integer_distances
from glns.problems import Problem

__all__ = ["Baseline", "BaselineRun", "BASELINES", "run_baseline", "integer_distances", "fleet_bound"]

_INSTALL_HINT = "pip install 'glns[bench]'"


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _short(version: str | None) -> str:
    return " " + ".".join(version.split(".")[:2]) if version else ""


@dataclass(frozen=True)
class Baseline:
    """A baseline solver: its name, display label, problems, import name and budget kind."""

    name: str
    label: str
    problems: tuple[str, ...]
    module: str
    budget: str  # "time", "iterations" or "runs" (LKH's restarts): the budget it honours

    def available(self) -> str | None:
        """None when the solver's package imports, else why not (with the install hint)."""
        try:
            importlib.import_module(self.module)
        except ImportError as exc:
            return f"{self.name} needs the {self.module!r} package ({exc}); {_INSTALL_HINT}"
        return None

    def version(self) -> str | None:
        """The installed package version, or None when the package is not usable."""
        if self.available() is not None:
            return None
        return _installed_version(self.module)


def _baselines() -> dict[str, Baseline]:
    v = {m: _installed_version(m) for m in ("ortools", "pyvrp", "elkai", "alns", "hygese")}
    elkai = f" (elkai {v['elkai']})" if v["elkai"] else " (elkai)"
    return {b.name: b for b in (
        Baseline("ortools", f"OR-Tools{_short(v['ortools'])} GLS", ("tsp", "cvrp", "ovrp", "vrptw"), "ortools", "time"),
        Baseline("pyvrp", f"PyVRP{_short(v['pyvrp'])} (HGS)", ("tsp", "cvrp", "ovrp", "vrptw"), "pyvrp", "time"),
        Baseline("lkh", f"LKH-3{elkai}", ("tsp",), "elkai", "runs"),
        Baseline("alns", f"alns{_short(v['alns'])} + seed operators", ("tsp", "cvrp", "ovrp"), "alns", "iterations"),
        Baseline("hgs", f"HGS-CVRP (hygese{_short(v['hygese'])})", ("cvrp",), "hygese", "time"),
    )}


#: name -> Baseline, in the order the benchmark tables list them
BASELINES: dict[str, Baseline] = _baselines()


def _check_budget(name: str, time_limit: float | None, iterations: int | None) -> None:
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0
                                       and math.isfinite(time_limit)):
        raise ValueError(f"time_limit must be a finite number > 0, got {time_limit!r}")
    if iterations is not None and (isinstance(iterations, bool) or int(iterations) != iterations
                                   or iterations < 1):
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
    if name in ("ortools", "hgs") and time_limit is None:
        raise ValueError(f"{name} needs a time_limit (seconds); it has no iteration budget")
    if name == "pyvrp" and time_limit is None and iterations is None:
        raise ValueError("pyvrp needs a time_limit (seconds) or iterations")
    if name == "alns" and iterations is None:
        raise ValueError("alns needs iterations")


def run_baseline(name: str, problem: Problem, *, time_limit: float | None = None,
                 iterations: int | None = None, seed: int = 0) -> BaselineRun:
    """Solve ``problem`` with baseline ``name`` and return the run.

    Budgets: ortools needs ``time_limit``; pyvrp takes ``time_limit`` and/or ``iterations``
    (whichever ends first); lkh maps ``iterations`` to LKH runs (default 10), or with
    ``time_limit`` runs for that many seconds (runs unlimited unless ``iterations`` is given;
    then it takes ``seed`` too); alns needs ``iterations`` (``time_limit`` may end it earlier).
    ortools, and lkh without a time limit, take no seed (deterministic; ``seed`` is ignored and
    ``info`` says so).

    Raises ValueError for an unknown name, a problem kind the baseline does not solve, or a
    missing/invalid budget; ImportError (with the install hint) when the package is missing;
    RuntimeError when the solver returns no feasible solution.
    """
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    baseline = BASELINES[name]
    if problem.kind not in baseline.problems:
        raise ValueError(f"baseline {name!r} does not solve {problem.kind!r} "
                         f"(it solves {', '.join(baseline.problems)})")
    _check_budget(name, time_limit, iterations)
    reason = baseline.available()
    if reason is not None:
        raise ImportError(reason)
    version = _installed_version(baseline.module)
    iterations = None if iterations is None else int(iterations)
    if name == "ortools":
        from glns.benchmark.baselines import or_tools

        return or_tools.solve(problem, float(time_limit), seed, version)  # type: ignore[arg-type]
    if name == "hgs":
        from glns.benchmark.baselines import hgs_cvrp

        return hgs_cvrp.solve(problem, float(time_limit), seed, version)  # type: ignore[arg-type]
    if name == "pyvrp":
        from glns.benchmark.baselines import pyvrp_hgs

        return pyvrp_hgs.solve(problem, time_limit, iterations, seed, version)
    if name == "lkh":
        from glns.benchmark.baselines import lkh

        return lkh.solve(problem, iterations, version, time_limit=time_limit, seed=seed)
    from glns.benchmark.baselines import alns_seeds

    return alns_seeds.solve(problem, iterations, time_limit, seed, version)  # type: ignore[arg-type]
