"""Convergence curves: mean best-so-far cost against iterations or seconds, one line per solver.

Each run's curve is a step function (the best cost found so far, changing at each
improvement). A solver's line is the mean of its runs' step functions on a common grid: every
x where any of the runs improves, from the first x at which every run has a solution to the
end of the longest run (a run keeps its final best after it stops). Failed runs (``cost``
null or ``error`` set) have no curve; they are left out and counted in the legend.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from glns.plot._mpl import new_figure
from glns.plot.results import Runs, as_runs, select_runs

__all__ = ["step_values", "mean_curve", "convergence_figure", "XS"]

#: the x axes a convergence plot can have
XS = ("iteration", "seconds")


def step_values(xs: Sequence[float], ys: Sequence[float], grid: Sequence[float]) -> np.ndarray:
    """The step function through (xs, ys) (value ys[i] from xs[i] on) at each grid point;
    NaN before the first point."""
    xs_a, ys_a = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    idx = np.searchsorted(xs_a, np.asarray(grid, dtype=float), side="right") - 1
    out = ys_a[np.maximum(idx, 0)]
    out[idx < 0] = np.nan
    return out


def mean_curve(curves: Sequence[tuple[Sequence[float], Sequence[float], float]]) -> tuple[np.ndarray, np.ndarray]:
    """Mean of step curves given as (xs, ys, end): the grid and the mean value on it.

    The grid starts where every curve is defined (the largest first x), holds every later x
    of any curve and ends at the largest end."""
    if not curves:
        raise ValueError("no curve to average")
    start = max(float(xs[0]) for xs, _, _ in curves)
    end = max(max(float(e), float(xs[-1])) for xs, _, e in curves)
    points = {start, end}
    for xs, _, _ in curves:
        points.update(float(x) for x in xs if x >= start)
    grid = np.array(sorted(points))
    values = np.vstack([step_values(xs, ys, grid) for xs, ys, _ in curves])
    return grid, values.mean(axis=0)


def _failed(run: Mapping[str, Any]) -> bool:
    return run.get("error") is not None or run.get("cost") is None or not run.get("curve")


def _curve(run: Mapping[str, Any], x: str) -> tuple[list[float], list[float], float] | None:
    """(xs, costs, end) of a run along `x`; None when the solver records no such x."""
    curve = run["curve"]
    xs, costs = curve.get(x), curve.get("cost")
    if xs is None:
        return None
    where = f"run of {run['solver']!r} on {run['instance']!r}"
    if not isinstance(xs, list) or not isinstance(costs, list) or len(xs) != len(costs) or not xs:
        raise ValueError(f"{where}: curve {x!r} and 'cost' must be non-empty lists of equal length")
    xs_f, cs_f = [float(v) for v in xs], [float(v) for v in costs]
    if any(b < a for a, b in zip(xs_f, xs_f[1:])):
        raise ValueError(f"{where}: curve {x!r} is not sorted")
    total = run.get("iterations" if x == "iteration" else "seconds")
    end = max(float(total), xs_f[-1]) if total is not None else xs_f[-1]
    return xs_f, cs_f, end


def _reference(runs: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean reference objective over the group's instances (None unless every one has one)."""
    refs: dict[str, Any] = {}
    for r in runs:
        refs.setdefault(str(r["instance"]), r.get("reference"))
    if not refs or any(v is None for v in refs.values()):
        return None
    return float(np.mean([float(v) for v in refs.values()]))


def _panel(ax: Any, runs: Sequence[Mapping[str, Any]], data: Runs, solvers: list[str], x: str,
           title: str) -> None:
    colours = {s: f"C{i % 10}" for i, s in enumerate(solvers)}
    for solver in solvers:
        mine = [r for r in runs if r["solver"] == solver]
        if not mine:
            continue
        good = [r for r in mine if not _failed(r)]
        label = data.label(solver)
        curves = [_curve(r, x) for r in good]
        if good and any(c is None for c in curves):
            # e.g. OR-Tools or LKH in the iteration plot: they have no iteration counts
            ax.plot([], [], linestyle="none", label=f"{label}: no iteration counts (not shown)")
            continue
        note = f" ({len(mine) - len(good)} of {len(mine)} runs failed, left out)" if len(good) < len(mine) else ""
        if not good:
            ax.plot([], [], linestyle="none", label=f"{label}: every run failed")
            continue
        grid, mean = mean_curve([c for c in curves if c is not None])
        ax.step(grid, mean, where="post", color=colours[solver], linewidth=1.8,
                label=f"{label}{note}", gid=f"solver:{solver}")
    ref = _reference(runs)
    if ref is not None:
        ax.axhline(ref, color="0.3", linestyle="--", linewidth=1, label="reference (mean)", gid="reference")
    if x == "seconds":
        ax.set_xscale("log")
    ax.set_xlabel("iteration" if x == "iteration" else "seconds (log scale)")
    ax.set_ylabel("mean best cost")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")


def convergence_figure(runs: Any, x: str = "iteration", group: str | Iterable[str] | None = None,
                       solvers: str | Iterable[str] | None = None) -> Any:
    """Mean best cost against ``x`` (``"iteration"``, ``"seconds"`` (log axis) or ``"both"``),
    one line per solver, one panel per group (columns) and x axis (rows).

    `runs`: a results file (path or dict), a list of run records, a :class:`glns.Result`, a
    list of Results, or a dict solver -> Result(s). `group` / `solvers` choose groups and
    solvers (default all). A dashed line marks the mean reference objective of a group when
    every instance has one. Returns the matplotlib Figure. Raises ValueError for an unknown
    group or solver, a malformed curve, or an unknown ``x``; ImportError without matplotlib.
    """
    if x not in XS + ("both",):
        raise ValueError(f"x must be 'iteration', 'seconds' or 'both', got {x!r}")
    data = as_runs(runs)
    chosen = select_runs(data.runs, group=group, solver=solvers)
    if not chosen:
        raise ValueError("no runs to plot")
    groups = list(dict.fromkeys(str(r["group"]) for r in chosen))
    names = list(dict.fromkeys(str(r["solver"]) for r in chosen))
    xs = list(XS) if x == "both" else [x]
    fig = new_figure(5.6 * len(groups), 4.0 * len(xs))
    axes = fig.subplots(len(xs), len(groups), squeeze=False)
    for row, xk in enumerate(xs):
        for col, g in enumerate(groups):
            mine = [r for r in chosen if str(r["group"]) == g]
            problems = sorted({str(r.get("problem") or "").upper() for r in mine} - {""})
            n_inst = len({str(r["instance"]) for r in mine})
            title = " ".join(t for t in (g, f"({', '.join(problems)})" if problems else "") if t)
            title = f"{title}, {n_inst} instance{'s' if n_inst != 1 else ''}".lstrip(", ")
            _panel(axes[row][col], mine, data, names, xk, title)
    fig.tight_layout()
    return fig
