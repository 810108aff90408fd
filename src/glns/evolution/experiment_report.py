"""What an experiment (several runs of one setting) and an ablation study did, for people and
scripts: ``runs_summary.txt``/``.json`` and ``ablation_table.txt``/``.md``/``.json``.

Everything is read from the run directories (``config.json``, ``checkpoint.json`` and the
final-test cache ``final_test.json``), so the summaries can be rebuilt at any time and always
agree with the runs. Validation scores and test objectives are mean costs: lower is better.
Spreads are sample standard deviations (n - 1; none for a single value).

The multi-run curve is the best-so-far validation score after each cycle, on the x axis of
episodes (the paper's generations); a run contributes from its first validated cycle to its
last finished one, and mean, sd, min and max at each point are over the runs that have a value
there. The plot of it is :mod:`glns.plot.runs` (which reads ``runs_summary.json``).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Mapping, Sequence

from glns.evolution.final_testing import FinalTestSettings, cached_final_test
from glns.evolution.report import text_table
from glns.evolution.rundir import RunDirectory, atomic_write, atomic_write_json

__all__ = ["RUNS_SUMMARY", "ABLATION_TABLE", "run_state", "read_run", "stats", "curve",
           "summarise_runs", "runs_text", "write_runs_summary", "ablation_table", "ablation_text",
           "ablation_markdown", "write_ablation_table"]

#: file names (without suffix) in the experiment / ablation directory
RUNS_SUMMARY = "runs_summary"
ABLATION_TABLE = "ablation_table"

#: per-run numbers that get mean ± sd over the runs
_AGGREGATED = ("best_score", "test_mean", "test_gap", "episodes", "llm_calls", "tokens", "cost",
               "seconds")


# ============================================================================= one run


def run_state(run_dir: str | Path) -> str:
    """"pending" (not started), "unfinished" (stopped before its episode budget, or before its
    final outputs were written) or "finished"."""
    run_dir = Path(run_dir)
    if not (run_dir / RunDirectory.CONFIG).is_file():
        return "pending"
    checkpoint = RunDirectory(run_dir).read_checkpoint()
    if checkpoint is None:
        return "unfinished"
    budget = checkpoint.get("generations")
    if budget is None:
        budget = RunDirectory.read_run_config(run_dir)["evolution"]["generations"]
    done = int(checkpoint["episodes"]) >= int(budget) and (run_dir / "summary.txt").is_file()
    return "finished" if done else "unfinished"


def read_run(name: str, run_dir: str | Path, test: FinalTestSettings | None = None) -> dict[str, Any]:
    """The numbers of one run: seed, state, cycles, episodes, best validation score and pair,
    LLM calls, failures, tokens and cost (USD, where prices are configured), operators admitted and rejected, wall seconds, its
    best-so-far curve (``curve``: [[episodes, score or None], ...]) and, with `test`, its
    cached final test (``test_mean``, ``test_gap``, ``test_failed``; None when not tested)."""
    run_dir = Path(run_dir)
    out: dict[str, Any] = {"name": name, "path": str(run_dir), "state": run_state(run_dir)}
    if out["state"] == "pending":
        return out
    cfg = RunDirectory.read_run_config(run_dir)["evolution"]
    checkpoint = RunDirectory(run_dir).read_checkpoint() or {}
    counters = checkpoint.get("counters", {})
    best = checkpoint.get("best")
    history = checkpoint.get("history", [])
    out.update(
        seed=cfg["seed"], problem=cfg["problem"], cycles=int(checkpoint.get("cycle", 0)),
        episodes=int(checkpoint.get("episodes", 0)),
        generations=int(checkpoint.get("generations") or cfg["generations"]),
        best_score=float(best["score"]) if best else None,
        best_pair=f"{best['destroy']}+{best['repair']}" if best else None,
        best_cycle=best.get("cycle") if best else None,
        llm_calls=int(counters.get("llm_calls", 0)), llm_failures=int(counters.get("llm_failures", 0)),
        tokens=int(counters.get("prompt_tokens", 0)) + int(counters.get("completion_tokens", 0)),
        cost=float(counters.get("cost", 0.0)),
        admitted=int(counters.get("admitted", 0)), rejected=int(counters.get("rejected", 0)),
        seconds=round(float(checkpoint.get("elapsed", 0.0)), 3),
        curve=[[int(h["episodes"]), float(h["best"]["score"]) if h.get("best") else None] for h in history])
    record = cached_final_test(run_dir, test) if test is not None else None
    out.update(test_mean=record["mean"] if record else None,
               test_gap=record["mean_gap"] if record else None,
               test_reference=record["mean_reference"] if record else None,
               test_failed=record["failed"] if record else None)
    return out


# ============================================================================= statistics


def stats(values: Sequence[float | None]) -> dict[str, Any]:
    """mean, sd (sample; None below two values), min, max and n of the values that are not None
    (all None when there are none)."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    return {"mean": statistics.fmean(xs), "sd": statistics.stdev(xs) if len(xs) > 1 else None,
            "min": min(xs), "max": max(xs), "n": len(xs)}


def _value_at(points: Sequence[Sequence[Any]], x: int) -> float | None:
    """The run's best-so-far score after `x` episodes (None before its first validation or
    after its last finished cycle)."""
    if not points or x > points[-1][0]:
        return None
    value = None
    for episodes, score in points:
        if episodes > x:
            break
        value = score
    return value


def curve(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The multi-run best-so-far curve: ``episodes`` (the union of the runs' cycle ends),
    ``runs`` (name -> one value per point, None where the run has none) and ``mean``, ``sd``,
    ``min``, ``max``, ``n`` per point."""
    with_curve = [r for r in runs if r.get("curve")]
    xs = sorted({int(p[0]) for r in with_curve for p in r["curve"]})
    per_run = {r["name"]: [_value_at(r["curve"], x) for x in xs] for r in with_curve}
    columns = [stats([values[i] for values in per_run.values()]) for i in range(len(xs))]
    out: dict[str, Any] = {"x": "episodes", "episodes": xs, "runs": per_run}
    for key in ("mean", "sd", "min", "max", "n"):
        out[key] = [c[key] for c in columns]
    return out


# ============================================================================= an experiment


def summarise_runs(runs: Sequence[tuple[str, str | Path]], test: FinalTestSettings | None = None,
                   settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The content of ``runs_summary.json`` for the runs (name, directory) of an experiment:
    ``settings`` (as given: the experiment's settings), ``runs`` (:func:`read_run` without the
    curve), ``aggregate`` (:func:`stats` of best_score, test_mean, test_gap, episodes,
    llm_calls, tokens, cost and seconds over the runs) and ``curve`` (:func:`curve`)."""
    records = [read_run(name, path, test) for name, path in runs]
    return {
        "format": "glns-runs-summary/1",
        "settings": dict(settings or {}),
        "runs": [{k: v for k, v in r.items() if k != "curve"} for r in records],
        "aggregate": {k: stats([r.get(k) for r in records]) for k in _AGGREGATED},
        "curve": curve(records),
    }


def _num(x: Any, spec: str = ".4f") -> str:
    if x is None:
        return "-"
    text = format(x, spec)
    return format(0.0, spec) if float(text) == 0 else text   # no "-0.00" for a gap of -1e-12


def _pm(s: Mapping[str, Any], spec: str = ".4f") -> str:
    if s["mean"] is None:
        return "-"
    return _num(s["mean"], spec) + ("" if s["sd"] is None else f" ± {_num(s['sd'], spec)}")


def _grid(rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """Rows as aligned text columns (the first `left` columns left-aligned, numbers right)."""
    return text_table(rows, left=range(left))


def _describe(settings: Mapping[str, Any]) -> list[str]:
    """Header lines: what was run and tested (empty without settings)."""
    lines = []
    evo, seeds = settings.get("evolution"), settings.get("seeds")
    if evo and seeds:
        lines.append(f"{evo['problem'].upper()}: {len(seeds)} runs (seeds {', '.join(map(str, seeds))}), "
                     f"{evo['generations']} episodes each, validation {evo['validation_count']} x "
                     f"n={evo['validation_size']}, {evo['validation_iterations']} iterations")
    t = settings.get("test")
    if t:
        lines.append(f"Final test: the paper's {t['problem']}{t['size']} test set, {t['count']} instances, "
                     f"{t['iterations']} iterations each (seed {t['seed']}); gap: mean per-instance gap "
                     "to its reference objectives")
    return lines


def runs_text(summary: Mapping[str, Any]) -> str:
    """``runs_summary.txt``: one row per run, mean ± sd over the runs, then the curve table."""
    head = _describe(summary.get("settings", {}))
    cols = ("run", "seed", "state", "episodes", "best validation", "best pair", "test mean",
            "gap %", "LLM calls", "tokens", "seconds")
    rows = [cols]
    for r in summary["runs"]:
        failed = f" ({r['test_failed']} failed)" if r.get("test_failed") else ""
        rows.append((r["name"], str(r.get("seed", "-")), r["state"], str(r.get("episodes", "-")),
                     _num(r.get("best_score")), r.get("best_pair") or "-", _num(r.get("test_mean")) + failed,
                     _num(r.get("test_gap"), ".2f"), str(r.get("llm_calls", "-")), str(r.get("tokens", "-")),
                     _num(r.get("seconds"), ".1f")))
    agg = summary["aggregate"]
    rows.append(("mean ± sd", "", "", _pm(agg["episodes"], ".1f"), _pm(agg["best_score"]), "",
                 _pm(agg["test_mean"]), _pm(agg["test_gap"], ".2f"), _pm(agg["llm_calls"], ".1f"),
                 _pm(agg["tokens"], ".0f"), _pm(agg["seconds"], ".1f")))
    lines = head + ([""] if head else []) + _grid(rows, left=3)

    c = summary["curve"]
    lines += ["", "Best-so-far validation score after each cycle (over the runs)", ""]
    names = list(c["runs"])
    rows = [("episodes", *names, "mean", "sd", "min", "max")]
    for i, x in enumerate(c["episodes"]):
        rows.append((str(x), *(_num(c["runs"][n][i]) for n in names),
                     *(_num(c[k][i]) for k in ("mean", "sd", "min", "max"))))
    lines += _grid(rows) if c["episodes"] else ["(no cycle finished yet)"]
    return "\n".join(lines) + "\n"


def write_runs_summary(directory: str | Path, summary: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write ``runs_summary.txt`` and ``runs_summary.json`` into `directory` (atomically)."""
    directory = Path(directory)
    return (atomic_write(directory / f"{RUNS_SUMMARY}.txt", runs_text(summary)),
            atomic_write_json(directory / f"{RUNS_SUMMARY}.json", summary))


# ============================================================================= ablations


def ablation_table(summaries: Mapping[tuple[str, str], Mapping[str, Any]], variants: Sequence[str],
                   problems: Sequence[str], labels: Mapping[str, str], reference: str = "full",
                   test: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The content of ``ablation_table.json`` from the runs summaries of each (variant,
    problem): per cell the mean test objective over the runs (``mean``, ``sd``, ``runs``,
    ``tested``), the mean gap to the test set's reference objectives in % (``gap``, mean over
    the runs of their mean per-instance gap) and the difference to the `reference` variant
    (the full G-LNS) in % of its mean (``vs_full``)."""
    cells: dict[str, dict[str, Any]] = {}
    for v in variants:
        for p in problems:
            s = summaries.get((v, p))
            agg = s["aggregate"] if s else None
            cells.setdefault(v, {})[p] = {
                "mean": agg["test_mean"]["mean"] if agg else None,
                "sd": agg["test_mean"]["sd"] if agg else None,
                "gap": agg["test_gap"]["mean"] if agg else None,
                "runs": len(s["runs"]) if s else 0,
                "tested": agg["test_mean"]["n"] if agg else 0,
            }
    for p in problems:
        base = cells.get(reference, {}).get(p, {}).get("mean")
        for v in variants:
            mean = cells[v][p]["mean"]
            cells[v][p]["vs_full"] = (100.0 * (mean / base - 1.0)
                                      if mean is not None and base not in (None, 0) else None)
    return {"format": "glns-ablation-table/1", "variants": list(variants), "problems": list(problems),
            "labels": {v: labels.get(v, v) for v in variants}, "reference_variant": reference,
            "test": dict(test or {}), "cells": cells}


def _cell_rows(table: Mapping[str, Any], plus: str) -> list[list[str]]:
    rows = []
    for v in table["variants"]:
        row = [table["labels"][v]]
        for p in table["problems"]:
            c = table["cells"][v][p]
            obj = _num(c["mean"]) + ("" if c["sd"] is None else f" {plus} {_num(c['sd'])}")
            vs = "" if v == table["reference_variant"] else _num(c["vs_full"], "+.2f")
            row += [obj, _num(c["gap"], ".2f"), vs]
        rows.append(row)
    return rows


def _header(table: Mapping[str, Any], size: Any) -> list[str]:
    head = ["variant"]
    for p in table["problems"]:
        name = f"{p.upper()}{size or ''}"
        head += [f"{name} obj.", "gap %", "vs G-LNS %"]
    return head


def ablation_text(table: Mapping[str, Any]) -> str:
    """``ablation_table.txt``: rows variants, per problem the mean test objective (± sd over the
    runs), the gap to the reference objectives and the difference to the full G-LNS."""
    size = table["test"].get("size")
    lines = ["Ablations: mean test objective over the runs (± sd), mean gap to the test set's "
             "reference objectives, difference to the full G-LNS", ""]
    lines += _grid([_header(table, size), *_cell_rows(table, "±")])
    return "\n".join(lines) + "\n"


def ablation_markdown(table: Mapping[str, Any]) -> str:
    """``ablation_table.md``: the same table in Markdown."""
    head = _header(table, table["test"].get("size"))
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _cell_rows(table, "±")]
    return "\n".join(lines) + "\n"


def write_ablation_table(directory: str | Path, table: Mapping[str, Any]) -> list[Path]:
    """Write ``ablation_table.txt``, ``.md`` and ``.json`` into `directory` (atomically)."""
    directory = Path(directory)
    return [atomic_write(directory / f"{ABLATION_TABLE}.txt", ablation_text(table)),
            atomic_write(directory / f"{ABLATION_TABLE}.md", ablation_markdown(table)),
            atomic_write_json(directory / f"{ABLATION_TABLE}.json", table)]
