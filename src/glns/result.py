"""The result of a solve: best solution, curves and operator statistics; to and from JSON,
and its tables as CSV (for spreadsheets, pandas and plotting tools)."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from glns.problems import problem_class

__all__ = ["OperatorStats", "Result", "to_json", "from_json", "curves_to_csv", "improvements_to_csv",
           "operators_to_csv", "RESULT_FORMAT"]

OUTCOMES = ("best", "better", "accepted", "rejected")


@dataclass(frozen=True)
class OperatorStats:
    """What one operator did in a run (an entry of ``Result.destroy_stats`` / ``repair_stats``).

    Parameters
    ----------
    name : str
        The operator's name.
    kind : str
        "destroy" or "repair".
    calls : int
        How often it was called.
    outcomes : tuple of 4 ints
        The calls by outcome, sigma1..sigma4: new best, better, accepted, rejected (failures
        are in sigma4).
    failures : int
        Calls that failed: raised an exception, ran past the time limit or returned output
        that breaks the operator contract (docs/operator-contract.md).
    seconds : float
        Time spent in the operator.
    weight : float
        Its adaptive weight at the end of the run.
    fitness : float
        Its fitness F at the end of the run (docs/method.md).
    last_error : str or None
        The error of its last failed call, or None.
    form : str, default "native"
        How it ran: "native", or for a Python operator its data view and whether compiled
        ("numpy", "python", "compiled+numpy", "compiled+python"); see docs/fast-operators.md.
    form_reason : str, default ""
        Why it ran in that form (the probe result, compile status).
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

    The curves hold the best and current cost after the iterations listed in
    `curve_iterations`, as the search summed them (on a run that searched a renumbered copy,
    ``SolveParams.renumber``, the last bits of a float cost can differ from `cost`: the copy
    sums the same arcs in another order). They have every iteration (`curve_iterations` = 1,
    2, ..., n) unless the run was longer than ``glns.TRACE_SAMPLES`` iterations with the
    default ``statistics="bounded"``: then every k-th, k a power of two, so that memory stays
    bounded.

    Parameters
    ----------
    problem_kind : str
        The problem's kind: "tsp", "cvrp", "ovrp" or "vrptw".
    solution : list
        The best solution in the operator format (TSP: list of cities; VRP: list of routes).
    cost : float
        Its objective, exactly as ``problem.cost(solution)`` gives it.
    iterations : int
        Iterations run.
    runtime : float
        Wall time of the run in seconds.
    seed : int
        The run's seed.
    best_curve : numpy.ndarray
        The best cost after each iteration of `curve_iterations`.
    current_curve : numpy.ndarray
        The current cost after each iteration of `curve_iterations`.
    iteration_seconds : numpy.ndarray
        Wall time of each of those iterations.
    destroy_stats : tuple of OperatorStats
        What each destroy operator did.
    repair_stats : tuple of OperatorStats
        What each repair operator did.
    synergy : numpy.ndarray
        The synergy matrix S[d, r] of destroy and repair operators (docs/method.md).
    initial_temperature : float
        The start temperature T0.
    restarts : int, default 0
        How often the run went back to its best solution after a stall
        (``SolveParams.restart``) or at a new epoch.
    stop_reason : str, default ""
        Why the run stopped: "iterations", "time_limit", "no_improvement", "target_cost",
        "interrupted" (Ctrl-C) or "callback" (a callback or stop criterion).
    curve_iterations : numpy.ndarray, optional
        The iterations the curves were sampled after (int64).
    curve_seconds : numpy.ndarray, optional
        Seconds since the run started at the end of each of those iterations.
    improvements : numpy.ndarray, optional
        (k, 3) rows of iteration, seconds and cost: the start (iteration 0) and every new
        best, all of them whatever the run's length.
    extra : dict, optional
        Further information (:func:`glns.solve_many` adds ``"task_seconds"`` and
        ``"attempts"``).
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
        """The best solution as one int array.

        Returns
        -------
        numpy.ndarray
            The tour (TSP), or the routes joined by depot 0 with a 0 at both ends (VRP),
            e.g. ``[0, 3, 1, 0, 2, 0]``.
        """
        if not problem_class(self.problem_kind).has_depot:
            return np.asarray(self.solution, dtype=np.int64)
        flat = [0]
        for route in self.solution:
            flat.extend(route)
            flat.append(0)
        return np.asarray(flat, dtype=np.int64)

    def routes(self) -> list[np.ndarray]:
        """The best solution as a list of int arrays.

        Returns
        -------
        list of numpy.ndarray
            One array of node ids per route (a TSP tour is one route).
        """
        return [np.asarray(r, dtype=np.int64) for r in problem_class(self.problem_kind).routes_of(self.solution)]

    def to_json(self, path: str | os.PathLike | None = None, indent: int | None = None) -> str:
        """This result as JSON text, written to a file too when `path` is given.

        :meth:`from_json` reads it back with every field equal (floats exact).

        Parameters
        ----------
        path : str or os.PathLike or None, optional
            A file to write the JSON to (UTF-8).
        indent : int or None, optional
            Indentation of the JSON text (None: one line).

        Returns
        -------
        str
            The JSON text.
        """
        return to_json(self, path, indent)

    @classmethod
    def from_json(cls, source: str | os.PathLike) -> "Result":
        """A result from the JSON text or file :meth:`to_json` wrote.

        Parameters
        ----------
        source : str or os.PathLike
            JSON text (a str starting with ``{``) or the path of a file holding it.

        Returns
        -------
        Result
            The result, every field equal to the one written.

        Raises
        ------
        ValueError
            When the text is not a glns result's JSON, or one of a newer format version.
        """
        return from_json(source)

    def curves_to_csv(self, path: str | os.PathLike) -> None:
        """Write the curves as CSV: iteration, seconds, best, current, iteration_seconds.

        One row per kept iteration (every iteration unless the statistics were thinned).

        Parameters
        ----------
        path : str or os.PathLike
            The CSV file to write.
        """
        curves_to_csv(self, path)

    def improvements_to_csv(self, path: str | os.PathLike) -> None:
        """Write the start and every new best as CSV: iteration, seconds, cost.

        Parameters
        ----------
        path : str or os.PathLike
            The CSV file to write.
        """
        improvements_to_csv(self, path)

    def operators_to_csv(self, path: str | os.PathLike) -> None:
        """Write one CSV row per operator.

        The columns: kind, name, calls, the four outcome counts, failures, seconds, final
        weight, fitness, form and last error.

        Parameters
        ----------
        path : str or os.PathLike
            The CSV file to write.
        """
        operators_to_csv(self, path)

    def summary(self) -> str:
        """A short human-readable report.

        Returns
        -------
        str
            The cost, routes, iterations and speed, then one line per operator.
        """
        lines = [f"cost {self.cost:.6f}, {self.num_routes} route(s), {self.iterations} iterations "
                 f"in {self.runtime:.3f} s ({self.iterations / max(self.runtime, 1e-12):,.0f} it/s)"]
        for st in self.destroy_stats + self.repair_stats:
            lines.append(f"  {st.kind:7s} {st.name:24s} calls {st.calls:7d}  "
                         f"best/better/acc/rej {'/'.join(map(str, st.outcomes))}  "
                         f"failures {st.failures}  {st.seconds:.3f} s")
        return "\n".join(lines)


#: the "format" entry of a result's JSON, with its version
RESULT_FORMAT = ("glns-result", 1)

_ARRAYS = ("best_curve", "current_curve", "iteration_seconds", "curve_iterations", "curve_seconds",
           "improvements", "synergy")


def _plain(value: Any) -> Any:
    """JSON for what ``json`` does not know: NumPy arrays and scalars, tuples; else its str."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def to_dict(result: Result) -> dict[str, Any]:
    """The result as plain JSON-ready values (arrays as lists)."""
    out: dict[str, Any] = {"format": list(RESULT_FORMAT)}
    for name in Result.__dataclass_fields__:
        value = getattr(result, name)
        if name in ("destroy_stats", "repair_stats"):
            value = [{k: getattr(s, k) for k in OperatorStats.__dataclass_fields__} for s in value]
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        out[name] = value
    return out


def from_dict(data: dict[str, Any]) -> Result:
    """The inverse of :func:`to_dict`; ValueError when `data` is not a glns result."""
    fmt = data.get("format") if isinstance(data, dict) else None
    if not (isinstance(fmt, list) and len(fmt) == 2 and fmt[0] == RESULT_FORMAT[0]):
        raise ValueError("not a glns result: its JSON has no \"format\": [\"glns-result\", N] entry")
    if fmt[1] > RESULT_FORMAT[1]:
        raise ValueError(f"a glns result of format version {fmt[1]}: this glns reads up to "
                         f"{RESULT_FORMAT[1]} (a newer glns wrote it)")
    fields = {k: v for k, v in data.items() if k in Result.__dataclass_fields__}
    for name in ("destroy_stats", "repair_stats"):
        fields[name] = tuple(OperatorStats(**{**s, "outcomes": tuple(s["outcomes"])}) for s in fields[name])
    for name in _ARRAYS:
        if name in fields:
            dtype = np.int64 if name == "curve_iterations" else np.float64
            fields[name] = np.asarray(fields[name], dtype=dtype)
    if "improvements" in fields:
        fields["improvements"] = fields["improvements"].reshape(-1, 3)
    return Result(**fields)


def to_json(result: Result, path: str | os.PathLike | None = None, indent: int | None = None) -> str:
    """The result as JSON text (floats exact: they read back to the same values); written to
    `path` too when given."""
    text = json.dumps(to_dict(result), default=_plain, indent=indent)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def from_json(source: str | os.PathLike) -> Result:
    """A result from JSON text or from a file written by :func:`to_json`."""
    text = source if isinstance(source, str) and source.lstrip().startswith("{") else \
        Path(source).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a glns result: {exc}") from None
    return from_dict(data)


def _write_rows(path: str | os.PathLike, header: list[str], rows: Any) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def curves_to_csv(result: Result, path: str | os.PathLike) -> None:
    """One row per kept iteration: iteration, seconds since the start, best and current cost,
    the seconds that iteration took (every iteration unless the statistics were thinned)."""
    rows = zip(result.curve_iterations.tolist(), result.curve_seconds.tolist(), result.best_curve.tolist(),
               result.current_curve.tolist(), result.iteration_seconds.tolist())
    _write_rows(path, ["iteration", "seconds", "best", "current", "iteration_seconds"], rows)


def improvements_to_csv(result: Result, path: str | os.PathLike) -> None:
    """One row for the start and for every new best: iteration, seconds, cost."""
    rows = ((int(it), s, c) for it, s, c in result.improvements.tolist())
    _write_rows(path, ["iteration", "seconds", "cost"], rows)


def operators_to_csv(result: Result, path: str | os.PathLike) -> None:
    """One row per operator: kind, name, calls, the four outcome counts, failures, seconds,
    final weight, fitness, form and last error."""
    rows = ([s.kind, s.name, s.calls, *s.outcomes, s.failures, s.seconds, s.weight, s.fitness, s.form,
             s.last_error or ""] for s in result.destroy_stats + result.repair_stats)
    _write_rows(path, ["kind", "name", "calls", *OUTCOMES, "failures", "seconds", "weight", "fitness",
                       "form", "last_error"], rows)
