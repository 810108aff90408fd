"""What a run leaves besides its log and checkpoints: the best-so-far operator module
(rewritten after every cycle) and, at the end, the summary table and the convergence plot."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Mapping, Sequence

from glns.evolution import report
from glns.evolution.config import EvolutionConfig
from glns.evolution.export import export_module
from glns.evolution.population import Member
from glns.evolution.rundir import RunDirectory
from glns.evolution.state import RunState
from glns.evolution.usage_report import usage_tables

__all__ = ["export_best", "write_final_reports"]

logger = logging.getLogger(__name__)


def export_best(cfg: EvolutionConfig, state: RunState, run_path: Path,
                forms: Mapping[str, str], destroy: Sequence[Member] | None = None,
                repair: Sequence[Member] | None = None) -> Path:
    """Write ``best_operators.py``: the populations (default the state's; a cycle closed while
    the next one is being refilled passes its own), the best pair and how each operator ran."""
    destroy = list(state.destroy if destroy is None else destroy)
    repair = list(state.repair if repair is None else repair)
    d, r = state.best_members()
    best = state.best
    meta = {"problem": cfg.problem, "run_dir": str(run_path), "seed": cfg.seed,
            "cycle": state.cycle, "episodes": state.episodes,
            "best_score": best["score"] if best else None,
            "best_cycle": best["cycle"] if best else None,
            "validation": f"{cfg.validation_count} x n={cfg.validation_size}, "
                          f"{cfg.validation_iterations} iterations, mean best cost",
            "operator_forms": {m.id: forms[m.id] for m in destroy + repair if m.id in forms}}
    return export_module(run_path / "best_operators.py", destroy, repair,
                         (d, r) if d is not None else None, meta)


def write_final_reports(cfg: EvolutionConfig, state: RunState, rundir: RunDirectory,
                        progress: Callable[[str], None], stopped: Exception | None = None) -> None:
    """``summary.txt`` (cycles, LLM usage, and why a budget stopped the run) and
    ``convergence.png`` (skipped, with a log event, without matplotlib)."""
    parts = [report.summary_table(state.history, state.members)]
    usage = usage_tables(state.history, state.members)
    if usage:
        parts.append(usage)
    if stopped is not None:
        parts.append(f"Stopped after cycle {state.cycle}: {stopped}.")
    (rundir.path / "summary.txt").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    if not state.history:
        return
    try:
        report.plot_convergence(state.history, rundir.path / "convergence.png",
                                title=f"G-LNS {cfg.problem.upper()} (seed {cfg.seed})")
    except ImportError as exc:
        rundir.log("plot_skipped", reason=str(exc))
        progress(f"no convergence plot: {exc}")
        logger.info("no convergence plot: %s", exc)
