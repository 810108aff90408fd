"""Multi-run convergence: the best-so-far validation score of several evolution runs against
episodes (the paper's generations), as in the paper's convergence figure.

- :func:`runs_figure`: one experiment (``glns evolve --runs N``): the mean over the runs as a
  thick line with a shaded band (min to max over the runs, or ± one sd), each run as a thin
  line; one point per finished cycle (the best-so-far score after that many episodes);
- :func:`ablation_figure`: an ablation study (``glns evolve --ablations``): one panel per
  problem, one mean line and band per variant.

Both read the ``runs_summary.json`` files the experiments write (their ``curve`` entry, see
:mod:`glns.evolution.experiment_report`), not the run directories, so the figure always shows
what the summary tables say.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from glns.plot._mpl import new_figure, save_figure

__all__ = ["BANDS", "load_summary", "runs_figure", "ablation_figure", "plot_runs"]

#: what the shaded band spans
BANDS = ("minmax", "sd")
_SUMMARY = "runs_summary.json"
_ABLATIONS = "ablations.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} not found: is {path.parent} a glns experiment "
                         "(glns evolve --runs N) that finished a run?") from None


def load_summary(source: str | os.PathLike | Mapping[str, Any]) -> dict[str, Any]:
    """The runs summary of an experiment: from its directory, its ``runs_summary.json`` or the
    dict itself. ValueError when it has no curve."""
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        p = Path(source)
        data = _read(p / _SUMMARY if p.is_dir() else p)
    if "curve" not in data:
        raise ValueError("not a glns runs summary (no 'curve'): give an experiment directory "
                         "or its runs_summary.json")
    return data


def _array(values: Any) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _band(curve: Mapping[str, Any], band: str) -> tuple[np.ndarray, np.ndarray]:
    if band == "minmax":
        return _array(curve["min"]), _array(curve["max"])
    mean, sd = _array(curve["mean"]), np.nan_to_num(_array(curve["sd"]))
    return mean - sd, mean + sd


def _draw(ax: Any, curve: Mapping[str, Any], color: str, label: str, band: str, runs: bool) -> None:
    x = np.array(curve["episodes"], dtype=float)
    if runs:
        for values in curve["runs"].values():
            ax.plot(x, _array(values), color=color, linewidth=0.8, alpha=0.45)
    low, high = _band(curve, band)
    ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
    ax.plot(x, _array(curve["mean"]), color=color, linewidth=2.2, marker="o" if len(x) <= 30 else None,
            markersize=3.5, label=label)


def _check_band(band: str) -> None:
    if band not in BANDS:
        raise ValueError(f"band must be one of {BANDS}, got {band!r}")


def runs_figure(source: str | os.PathLike | Mapping[str, Any], *, band: str = "minmax",
                title: str | None = None) -> Any:
    """The experiment's best-so-far validation curves: thin lines per run, the mean (thick)
    and a band (`band`: "minmax" over the runs, or "sd": mean ± one sample sd).

    source: an experiment directory, its ``runs_summary.json`` or the summary dict.
    ValueError when no cycle has finished."""
    _check_band(band)
    summary = load_summary(source)
    curve = summary["curve"]
    if not curve["episodes"]:
        raise ValueError("nothing to plot: no run of the experiment finished a cycle")
    fig = new_figure(6.4, 4.0)
    ax = fig.add_subplot()
    n = len(curve["runs"])
    spread = "min-max" if band == "minmax" else "± sd"
    _draw(ax, curve, "C0", f"mean of {n} run{'s' if n != 1 else ''} ({spread} shaded)", band, runs=True)
    ax.plot([], [], color="C0", linewidth=0.8, alpha=0.45, label="single runs")
    evo = summary.get("settings", {}).get("evolution", {})
    if title is None and evo:
        title = f"G-LNS {evo['problem'].upper()}{evo.get('train_size', '')}: best-so-far validation"
    _finish(ax, title)
    fig.tight_layout()
    return fig


def _finish(ax: Any, title: str | None) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("episodes (generations)")
    ax.set_ylabel("best validation objective")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)


def ablation_figure(directory: str | os.PathLike, *, band: str = "minmax") -> Any:
    """One panel per problem of the ablation study in `directory`: the mean best-so-far
    validation curve of each variant with its band. ValueError when nothing has finished."""
    _check_band(band)
    directory = Path(directory)
    settings = _read(directory / _ABLATIONS)
    problems, variants = settings["problems"], settings["variants"]
    labels = _read_labels(directory)
    fig = new_figure(5.2 * len(problems), 4.0)
    drawn = 0
    for k, problem in enumerate(problems):
        ax = fig.add_subplot(1, len(problems), k + 1)
        for j, variant in enumerate(variants):
            file = directory / f"{variant}-{problem}" / _SUMMARY
            if not file.is_file():
                continue
            curve = load_summary(file)["curve"]
            if curve["episodes"]:
                _draw(ax, curve, f"C{j % 10}", labels.get(variant, variant), band, runs=False)
                drawn += 1
        _finish(ax, problem.upper())
    if not drawn:
        raise ValueError(f"nothing to plot: no experiment in {directory} finished a cycle")
    fig.tight_layout()
    return fig


def _read_labels(directory: Path) -> dict[str, str]:
    table = directory / "ablation_table.json"
    return dict(_read(table).get("labels", {})) if table.is_file() else {}


def plot_runs(source: str | os.PathLike, path: str | os.PathLike, *, band: str = "minmax") -> Path:
    """Write the figure of an experiment directory (:func:`runs_figure`) or of an ablation
    study's directory (:func:`ablation_figure`) to `path` (.png, .svg or .pdf)."""
    source = Path(source)
    if (source / _ABLATIONS).is_file():
        fig = ablation_figure(source, band=band)
    else:
        fig = runs_figure(source, band=band)
    return save_figure(fig, path)
