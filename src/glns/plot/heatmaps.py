"""Operator weight and synergy heatmaps, from benchmark runs, an evolution run or a solve.

Sources and what is drawn:

- benchmark runs (a results file, its dict or run records): per group and solver, the mean
  over its runs of each operator's final weight, and the mean synergy matrix S[d][r];
- an evolution run directory: the populations' global fitness F per member and cycle (from
  ``populations/cycle_NNN.json``; blank where a member was not in the population) and the
  synergy matrix of one cycle (default the last);
- a :class:`glns.Result`: the final weights and its synergy matrix.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from glns.plot._mpl import new_figure
from glns.plot.results import Runs, as_runs, select_runs
from glns.result import Result

__all__ = ["Heat", "weight_tables", "synergy_tables", "weights_figure", "synergy_figure",
           "is_run_directory"]

#: matrices with at most this many cells get their values written in the cells
ANNOTATE_MAX = 144


@dataclass
class Heat:
    """One heatmap: values[i, j] for row label i and column label j (NaN: no value)."""

    title: str
    values: np.ndarray
    rows: list[str]
    cols: list[str]
    ylabel: str = ""
    xlabel: str = ""


# ---------------------------------------------------------------------------- sources
def is_run_directory(path: str | os.PathLike) -> bool:
    """True for a directory that holds a glns evolution run (its config.json)."""
    p = Path(path)
    return p.is_dir() and (p / "config.json").is_file()


def _populations(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The per-cycle population records of an evolution run, in cycle order."""
    p = Path(path)
    if not is_run_directory(p):
        raise ValueError(f"{p} is not a glns evolution run directory (no config.json)")
    files = sorted((p / "populations").glob("cycle_*.json"))
    if not files:
        raise ValueError(f"{p}: the run has no finished cycle yet (no populations/cycle_NNN.json)")
    out = []
    for f in files:
        try:
            rec = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{f} is not valid JSON: {exc.msg}") from None
        if not all(k in rec for k in ("cycle", "destroy", "repair", "scores")):
            raise ValueError(f"{f} is not a population record (needs cycle, destroy, repair, scores)")
        out.append(rec)
    return sorted(out, key=lambda r: int(r["cycle"]))


def _member_key(member_id: str) -> tuple[str, int, str]:
    m = re.fullmatch(r"([a-z]+)(\d+)", member_id)
    return (m.group(1), int(m.group(2)), "") if m else (member_id, -1, member_id)


def _ids(members: Sequence[Any]) -> list[str]:
    return [str(m["id"]) if isinstance(m, Mapping) else str(m) for m in members]


def _rundir_weights(path: str | os.PathLike) -> list[Heat]:
    pops = _populations(path)
    cols = [f"{int(p['cycle'])}" for p in pops]
    heats = []
    for kind in ("destroy", "repair"):
        ids = sorted({i for p in pops for i in _ids(p[kind])}, key=_member_key)
        values = np.full((len(ids), len(pops)), np.nan)
        for j, p in enumerate(pops):
            fitness = p["scores"].get("fitness", {})
            for i_id in _ids(p[kind]):
                values[ids.index(i_id), j] = float(fitness.get(i_id, 0.0))
        heats.append(Heat(f"{kind}: fitness F per cycle", values, ids, cols, ylabel=kind, xlabel="cycle"))
    return heats


def _rundir_synergy(path: str | os.PathLike, cycle: int | None) -> list[Heat]:
    pops = _populations(path)
    if cycle is None:
        rec = pops[-1]
    else:
        found = [p for p in pops if int(p["cycle"]) == int(cycle)]
        if not found:
            raise ValueError(f"{Path(path)}: no cycle {cycle} (finished cycles: "
                             f"{', '.join(str(p['cycle']) for p in pops)})")
        rec = found[0]
    d_ids, r_ids = _ids(rec["destroy"]), _ids(rec["repair"])
    syn = rec["scores"].get("synergy", {})
    # pairs never run together have no entry: S is 0 for them (as in the controller)
    values = np.array([[float(syn.get(f"{d}|{r}", 0.0)) for r in r_ids] for d in d_ids]).reshape(len(d_ids), len(r_ids))
    return [Heat(f"synergy S, cycle {int(rec['cycle'])}", values, d_ids, r_ids,
                 ylabel="destroy", xlabel="repair")]


def _result_weights(result: Result) -> list[Heat]:
    return [Heat(f"{kind}: final weight", np.array([[s.weight] for s in stats]).reshape(len(stats), 1),
                 [s.name for s in stats], ["weight"], ylabel=kind)
            for kind, stats in (("destroy", result.destroy_stats), ("repair", result.repair_stats))]


def _result_synergy(result: Result) -> list[Heat]:
    values = np.asarray(result.synergy, dtype=float)
    return [Heat("synergy S", values, [s.name for s in result.destroy_stats],
                 [s.name for s in result.repair_stats], ylabel="destroy", xlabel="repair")]


def _combos(data: Runs, group: Any, solver: Any) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(group, solver, runs with operator statistics) for every selected pair that has some."""
    chosen = select_runs(data.runs, group=group, solver=solver)
    out = []
    for g in dict.fromkeys(str(r["group"]) for r in chosen):
        for s in dict.fromkeys(str(r["solver"]) for r in chosen):
            runs = [r for r in chosen if str(r["group"]) == g and str(r["solver"]) == s
                    and r.get("operators") and r.get("error") is None]
            if runs:
                out.append((g, s, runs))
    if not out:
        solvers = ", ".join(dict.fromkeys(str(r["solver"]) for r in chosen)) or "none"
        raise ValueError(f"no run in the selection records operator statistics (solvers: {solvers})")
    return out


def _ops(run: Mapping[str, Any], key: str) -> list:
    value = run["operators"].get(key)
    if not isinstance(value, list):
        raise ValueError(f"run of {run['solver']!r} on {run['instance']!r}: operators.{key} must be a list")
    return value


def _runs_weights(data: Runs, group: Any, solver: Any) -> list[Heat]:
    combos = _combos(data, group, solver)
    cols = [f"{g}\n{data.label(s)}" if g else data.label(s) for g, s, _ in combos]
    heats = []
    for kind in ("destroy", "repair"):
        names = list(dict.fromkeys(n for _, _, runs in combos for r in runs for n in _ops(r, kind)))
        values = np.full((len(names), len(combos)), np.nan)
        for j, (_, _, runs) in enumerate(combos):
            sums: dict[str, list[float]] = {}
            for r in runs:
                ops, weights = _ops(r, kind), _ops(r, f"{kind}_weights")
                if len(ops) != len(weights):
                    raise ValueError(f"run of {r['solver']!r} on {r['instance']!r}: {len(ops)} {kind} "
                                     f"operators but {len(weights)} weights")
                for name, w in zip(ops, weights):
                    sums.setdefault(name, []).append(float(w))
            for name, ws in sums.items():
                values[names.index(name), j] = float(np.mean(ws))
        heats.append(Heat(f"{kind}: mean final weight", values, names, cols, ylabel=kind))
    return heats


def _runs_synergy(data: Runs, group: Any, solver: Any) -> list[Heat]:
    heats = []
    for g, s, runs in _combos(data, group, solver):
        d, r = _ops(runs[0], "destroy"), _ops(runs[0], "repair")
        mats = []
        for run in runs:
            if _ops(run, "destroy") != d or _ops(run, "repair") != r:
                raise ValueError(f"solver {s!r} in group {g!r} ran different operators in different "
                                 "runs; their synergy matrices cannot be averaged")
            mat = np.asarray(_ops(run, "synergy"), dtype=float)
            if mat.shape != (len(d), len(r)):
                raise ValueError(f"run of {s!r} on {run['instance']!r}: synergy has shape {mat.shape}, "
                                 f"expected {(len(d), len(r))} (destroy x repair)")
            mats.append(mat)
        title = f"{g}: {data.label(s)}" if g else data.label(s)
        heats.append(Heat(f"{title}\nmean synergy S over {len(runs)} runs", np.mean(mats, axis=0),
                          list(d), list(r), ylabel="destroy", xlabel="repair"))
    return heats


def _evolution_dir(source: Any) -> bool:
    """A directory that is not a ``glns bench`` output (those hold results.json) is read as an
    evolution run directory (which says so precisely if it is not one either)."""
    return (isinstance(source, (str, os.PathLike)) and Path(source).is_dir()
            and not (Path(source) / "results.json").is_file())


def _no_selection(path: Any, group: Any, solver: Any) -> None:
    if group is not None or solver is not None:
        raise ValueError(f"{path} is a directory: groups and solvers apply to a bench results file")


def weight_tables(source: Any, group: str | Iterable[str] | None = None,
                  solver: str | Iterable[str] | None = None) -> list[Heat]:
    """The weight heatmaps (a destroy and a repair one) of `source`: a results file, its dict
    or run records (mean final weight per group and solver), an evolution run directory
    (fitness F per member and cycle) or a glns.Result (final weights)."""
    if isinstance(source, Result):
        return _result_weights(source)
    if _evolution_dir(source):
        _no_selection(source, group, solver)
        return _rundir_weights(source)
    return _runs_weights(as_runs(source), group, solver)


def synergy_tables(source: Any, group: str | Iterable[str] | None = None,
                   solver: str | Iterable[str] | None = None, cycle: int | None = None) -> list[Heat]:
    """The synergy heatmaps of `source`: one per group and solver for benchmark runs (mean S
    over their runs), the S of one cycle (default the last) of an evolution run directory, or
    a glns.Result's S."""
    if _evolution_dir(source):
        _no_selection(source, group, solver)
        return _rundir_synergy(source, cycle)
    if cycle is not None:
        raise ValueError("a cycle can only be chosen for an evolution run directory")
    if isinstance(source, Result):
        return _result_synergy(source)
    return _runs_synergy(as_runs(source), group, solver)


# ---------------------------------------------------------------------------- drawing
def _draw(ax: Any, fig: Any, heat: Heat) -> None:
    from matplotlib import colormaps

    cmap = colormaps["viridis"].with_extremes(bad="0.92")
    values = np.ma.masked_invalid(heat.values)
    im = ax.imshow(values, cmap=cmap, aspect="auto", interpolation="nearest")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xticks(range(len(heat.cols)), heat.cols, rotation=30 if max(map(len, heat.cols or [""])) > 6 else 0,
                  ha="right" if max(map(len, heat.cols or [""])) > 6 else "center", fontsize="small")
    ax.set_yticks(range(len(heat.rows)), heat.rows, fontsize="small")
    ax.set_title(heat.title, fontsize="medium")
    if heat.xlabel:
        ax.set_xlabel(heat.xlabel)
    if heat.ylabel:
        ax.set_ylabel(heat.ylabel)
    if 0 < heat.values.size <= ANNOTATE_MAX:
        finite = heat.values[np.isfinite(heat.values)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
        for (i, j), v in np.ndenumerate(heat.values):
            if np.isfinite(v):
                # dark text on the light (high) end of viridis, white on the dark end
                light = hi > lo and (v - lo) / (hi - lo) > 0.6
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize="x-small",
                        color="black" if light else "white")


def _figure(heats: Sequence[Heat]) -> Any:
    # wide maps (many groups/solvers or cycles) go one under the other
    ncols = 1 if max(len(h.cols) for h in heats) > 4 else min(len(heats), 2 if len(heats) <= 4 else 3)
    nrows = -(-len(heats) // ncols)
    width = max(3.2, 1.0 + 0.75 * max(len(h.cols) for h in heats)) + 2.2
    height = max(2.6, 1.3 + 0.42 * max(len(h.rows) for h in heats))
    fig = new_figure(width * ncols, height * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, heat in zip(axes, heats):
        _draw(ax, fig, heat)
    for ax in axes[len(heats):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def weights_figure(source: Any, group: str | Iterable[str] | None = None,
                   solver: str | Iterable[str] | None = None) -> Any:
    """Heatmaps of the operator weights (destroy and repair panels); see :func:`weight_tables`
    for the sources. Values are written in the cells of small maps. Returns the Figure."""
    return _figure(weight_tables(source, group=group, solver=solver))


def synergy_figure(source: Any, group: str | Iterable[str] | None = None,
                   solver: str | Iterable[str] | None = None, cycle: int | None = None) -> Any:
    """Heatmaps of the synergy matrix S[d][r] (destroy rows, repair columns); see
    :func:`synergy_tables` for the sources. Returns the Figure."""
    return _figure(synergy_tables(source, group=group, solver=solver, cycle=cycle))
