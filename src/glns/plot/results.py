"""Benchmark results for the plots: reading a ``glns bench`` file, choosing runs, and turning a
:class:`glns.Result` into the same per-run record.

A results file (format ``glns-bench/1``) holds ``settings``, ``solvers`` (name -> info with a
``label``) and ``runs``: one record per solver run with ``group``, ``problem``, ``instance``,
``locator``, ``solver``, ``seed``, ``cost`` (null when the run failed), ``reference``, ``gap``,
``seconds``, ``iterations``, ``solution``, ``curve`` (best-so-far cost at each improvement:
``iteration`` (null for solvers without iterations), ``seconds``, ``cost``), ``operators``
(null, or names, weights, calls and the synergy matrix) and ``error``. The plots read only
these fields, so a hand-written file or a list of such records works as well.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence


from glns.benchmark.report import FORMAT, check_format, read_results
from glns.benchmark.runner import glns_curve, operator_stats
from glns.result import Result

__all__ = ["FORMAT", "Runs", "load_results", "select_runs", "run_record", "as_runs"]


_REQUIRED = ("group", "solver", "instance")


@dataclass
class Runs:
    """Run records and display labels of their solvers (solver name -> label)."""

    runs: list[dict[str, Any]]
    labels: dict[str, str] = field(default_factory=dict)

    def label(self, solver: str) -> str:
        """The display label of `solver` (its name when the file gives none)."""
        return self.labels.get(solver, solver)


def _check_runs(runs: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(runs, list):
        raise ValueError(f"{where}: 'runs' must be a list of run records")
    for i, run in enumerate(runs):
        if not isinstance(run, Mapping):
            raise ValueError(f"{where}: run {i} is not a JSON object")
        missing = [k for k in _REQUIRED if k not in run]
        if missing:
            raise ValueError(f"{where}: run {i} has no {', '.join(repr(k) for k in missing)}")
    return [dict(r) for r in runs]


def load_results(source: str | os.PathLike | Mapping[str, Any]) -> Runs:
    """Read a ``glns bench`` results file (a path, its directory, or the already parsed dict).

    Raises ValueError for a missing file, malformed JSON, another format or malformed runs.
    """
    if isinstance(source, Mapping):
        data, where = source, "results"
        check_format(data, where)
    else:
        data, where = read_results(source), str(source)
    runs = _check_runs(data.get("runs"), where)
    solvers = data.get("solvers") or {}
    labels = {name: str(info.get("label") or name) for name, info in solvers.items()
              if isinstance(info, Mapping)}
    return Runs(runs, labels)


def _names(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value)
    return names or None


def _known(kind: str, wanted: list[str] | None, present: list[str]) -> None:
    for name in wanted or ():
        if name not in present:
            have = ", ".join(present) if present else "none"
            raise ValueError(f"no {kind} {name!r} in the results ({kind}s: {have})")


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def select_runs(runs: Sequence[Mapping[str, Any]], group: str | Iterable[str] | None = None,
                solver: str | Iterable[str] | None = None,
                instance: str | Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The runs of the given groups, solvers and instances (None: all), in file order.

    Every name asked for must occur (ValueError listing the names there are); each filter
    narrows the one before, so a solver must have runs in the chosen groups.
    """
    chosen = [dict(r) for r in runs]
    for kind, wanted in (("group", _names(group)), ("solver", _names(solver)),
                         ("instance", _names(instance))):
        _known(kind, wanted, _ordered(str(r[kind]) for r in chosen))
        if wanted is not None:
            chosen = [r for r in chosen if str(r[kind]) in wanted]
    return chosen


def run_record(result: Result, solver: str = "glns", group: str = "", instance: str = "run",
               reference: float | None = None) -> dict[str, Any]:
    """One run record (the results-file schema) from a :func:`glns.solve` result.

    The curve is :func:`glns.benchmark.runner.glns_curve` (iteration 1, every improvement of
    the best cost, and the last iteration), as ``glns bench`` records it.
    """
    gap = None if not reference else 100.0 * (result.cost - reference) / reference
    return {
        "group": group, "problem": result.problem_kind, "instance": instance, "locator": None,
        "solver": solver, "seed": result.seed, "cost": result.cost, "reference": reference,
        "gap": gap, "seconds": result.runtime, "iterations": result.iterations,
        "solution": result.solution, "curve": glns_curve(result), "operators": operator_stats(result),
        "error": None,
    }


def _from_results(items: Sequence[Result], solver: str, group: str) -> list[dict[str, Any]]:
    return [run_record(r, solver=solver, group=group, instance=f"run {i}") for i, r in enumerate(items)]


def as_runs(source: Any, group: str = "") -> Runs:
    """Run records from any accepted source.

    - a results file path or its parsed dict (``format`` ``glns-bench/1``);
    - a list of run records;
    - a :class:`glns.Result`, a list of them (solver ``"glns"``), or a dict solver name ->
      Result or list of Results (several solvers in one figure).
    """
    if isinstance(source, Result):
        return Runs(_from_results([source], "glns", group))
    if isinstance(source, (str, os.PathLike)):
        return load_results(source)
    if isinstance(source, Mapping):
        if "runs" in source or "format" in source:
            return load_results(source)
        runs: list[dict[str, Any]] = []
        for name, value in source.items():
            items = [value] if isinstance(value, Result) else list(value)
            if not all(isinstance(r, Result) for r in items):
                raise ValueError(f"solver {name!r}: expected a glns.Result or a list of them")
            runs += _from_results(items, str(name), group)
        return Runs(runs)
    if isinstance(source, Sequence):
        items = list(source)
        if items and all(isinstance(r, Result) for r in items):
            return Runs(_from_results(items, "glns", group))
        return Runs(_check_runs(items, "runs"))
    raise ValueError(f"cannot plot a {type(source).__name__}: give a results file, run records "
                     "or glns.Result objects")
