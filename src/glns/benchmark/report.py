"""Benchmark output: per-(group, solver) summaries, Markdown and CSV tables, the JSON record
with every run and the environment."""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import re
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from glns.ablation import ablated_parts
from glns.executors import usable_cores
from glns.version import __version__

__all__ = ["FORMAT", "summarise", "markdown_tables", "csv_text", "environment", "write_outputs",
           "read_results"]

FORMAT = "glns-bench/1"
_PACKAGES = ("numpy", "ortools", "pyvrp", "elkai", "alns", "vrplib", "matplotlib", "ray")


def summarise(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One summary per (group, solver), in first-seen order.

    mean_cost, mean_reference: over the runs that succeeded (and, for the reference, have one);
    group_reference: mean reference of all the group's instances (None if one has none).
    gap_of_means: 100 (mean_cost / mean_reference - 1); mean_gap: mean of the per-instance gaps
    (over ``gaps`` runs).
    mean_seconds: wall time per run in its worker; batch_seconds: wall time of the whole batch.
    """
    order: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        order.setdefault((r["group"], r["solver"]), []).append(r)
    out = []
    for (group, solver), runs in order.items():
        ok = [r for r in runs if r["cost"] is not None]
        costs = np.array([r["cost"] for r in ok], dtype=float)
        with_ref = [r for r in ok if r["reference"] is not None]
        gaps = [r["gap"] for r in with_ref]
        mean_cost = float(costs.mean()) if ok else None
        ref_mean = float(np.mean([r["reference"] for r in with_ref])) if with_ref else None
        all_refs = [r["reference"] for r in runs if r["reference"] is not None]
        cost_on_ref = float(np.mean([r["cost"] for r in with_ref])) if with_ref else None
        iters = [r["iterations"] for r in ok if r.get("iterations") is not None]
        not_k = sum(1 for r in ok if _routes_not_k(r))
        out.append({
            "group": group, "problem": runs[0]["problem"], "solver": solver, "instances": len(runs),
            "solved": len(ok), "failed": len(runs) - len(ok),
            "mean_cost": mean_cost, "mean_reference": ref_mean,
            "group_reference": float(np.mean(all_refs)) if len(all_refs) == len(runs) else None,
            "gap_of_means": 100.0 * (cost_on_ref / ref_mean - 1.0) if ref_mean else None,
            "mean_gap": float(np.mean(gaps)) if gaps else None, "gaps": len(gaps),
            "mean_seconds": float(np.mean([r["seconds"] for r in ok])) if ok else None,
            "mean_iterations": float(np.mean(iters)) if iters else None,
            "batch_seconds": runs[0].get("batch_seconds"), "not_k": not_k,
        })
    return out


_FLEET = re.compile(r"-k(\d+)$")


def _routes_not_k(run: Mapping[str, Any]) -> bool:
    """A CVRPLIB run whose number of routes is not the k in the file's name (A-n32-k5). Some
    sets fix the fleet at exactly k and their best-known values respect it; glns's fleet is
    unlimited, so such a run can cost less (P-n55-k8 with 7 routes: 576 against 588)."""
    m = _FLEET.search(str(run["instance"]))
    return bool(m) and run["problem"] != "tsp" and len(run["solution"] or []) != int(m.group(1))


def _fmt(x: float | None, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def _cell(s: Mapping[str, Any]) -> str:
    if s["mean_cost"] is None:
        return f"failed ({s['failed']})"
    gap = f" ({_gap(s['mean_gap'])} %)" if s["mean_gap"] is not None else ""
    return f"{s['mean_cost']:.4f}{gap}, {_seconds(s['mean_seconds'])}{_flags(s)}"


def _gap(x: float | None, digits: int = 2) -> str:
    """A signed percentage; rounding noise below the shown digits is not given a sign."""
    if x is None:
        return "–"
    return format(0.0 if abs(x) < 0.5 * 10**-digits else x, f"+.{digits}f")


def _seconds(x: float | None) -> str:
    if x is None:
        return "–"
    if x < 0.01:
        return f"{x * 1000:.1f} ms"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _flags(s: Mapping[str, Any]) -> str:
    """Counts a cell must show beside its figures: failed runs, runs with other than k routes."""
    return ((f" [{s['failed']} failed]" if s["failed"] else "")
            + (f" [{s['not_k']} ≠ k]" if s.get("not_k") else ""))


def markdown_tables(summaries: Sequence[Mapping[str, Any]], labels: Mapping[str, str],
                    reference_labels: Mapping[str, str], suite: str,
                    extra_rows: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
                    extra_count: int = 64) -> str:
    """Markdown: synthetic suite, a table per problem (rows: solvers, columns: sizes; cells: mean
    objective, mean gap to the reference, mean wall time per instance); library suite, one
    table (rows: groups, columns: solvers; cells: mean gap, mean time).

    extra_rows: problem -> row label -> group -> value, rows of published figures shown under the
    measured ones (synthetic) or as extra columns (library), with the gap of their value to the
    mean reference when the groups have all ``extra_count`` instances the figures are over.
    """
    extra_rows = extra_rows or {}
    if suite == "library":
        extras = {label: vals for rows in extra_rows.values() for label, vals in rows.items()}
        return _library_table(summaries, labels, extras)
    blocks = [_problem_table(problem, [s for s in summaries if s["problem"] == problem], labels,
                             reference_labels.get(problem, ""), extra_rows.get(problem, {}), extra_count)
              for problem in dict.fromkeys(s["problem"] for s in summaries)]
    return "\n\n".join(blocks) + "\n"


def _library_table(summaries: Sequence[Mapping[str, Any]], labels: Mapping[str, str],
                   extras: Mapping[str, Mapping[str, float]]) -> str:
    groups = list(dict.fromkeys(s["group"] for s in summaries))
    solvers = list(dict.fromkeys(s["solver"] for s in summaries))
    by = {(s["group"], s["solver"]): s for s in summaries}
    rows = []
    for g in groups:
        first = next(s for s in summaries if s["group"] == g)
        row = [g, str(first["instances"])]
        for solver in solvers:
            s = by.get((g, solver))
            row.append("–" if s is None else f"{_gap(s['mean_gap'])} %, {_seconds(s['mean_seconds'])}{_flags(s)}")
        row += [f"{vals[g]:+.1f} %" if g in vals else "–" for vals in extras.values()]
        rows.append(row)
    if len(groups) > 1:
        rows.append(["all", str(sum(next(s for s in summaries if s["group"] == g)["instances"] for g in groups)),
                     *(_overall([s for s in summaries if s["solver"] == solver]) for solver in solvers),
                     *("–" for _ in extras)])
    header = ["set", "files", *[labels.get(s, s) for s in solvers], *extras]
    blocks = ["Mean gap to the best-known value (per file), mean wall time per file\n\n" + _table(header, rows)]
    if any(s["not_k"] for s in summaries):
        blocks.append("[n ≠ k]: runs whose number of routes is not the k in the file name. Some sets "
                      "fix the fleet at exactly k and their best-known values respect it; glns's "
                      "fleet is unlimited (as in the paper), so such runs can go below them.")
    return "\n\n".join(blocks) + "\n"


def _overall(mine: Sequence[Mapping[str, Any]]) -> str:
    """A solver's cell over all its groups: mean gap over every file with one, mean time."""
    gaps = sum(s.get("gaps", 0) for s in mine)
    solved = sum(s["solved"] for s in mine)
    gap = sum(s["mean_gap"] * s["gaps"] for s in mine if s.get("gaps")) / gaps if gaps else None
    secs = sum(s["mean_seconds"] * s["solved"] for s in mine if s["solved"]) / solved if solved else None
    failed = sum(s["failed"] for s in mine)
    return f"{_gap(gap)} %, {_seconds(secs)}" + (f" [{failed} failed]" if failed else "")


def _problem_table(problem: str, mine: Sequence[Mapping[str, Any]], labels: Mapping[str, str],
                   reference_label: str, extras: Mapping[str, Mapping[str, float]], extra_count: int) -> str:
    groups = list(dict.fromkeys(s["group"] for s in mine))
    by = {(s["group"], s["solver"]): s for s in mine}
    rows = [[labels.get(solver, solver), *(_cell(by[g, solver]) if (g, solver) in by else "–" for g in groups)]
            for solver in dict.fromkeys(s["solver"] for s in mine)]
    refs = {g: next((s["group_reference"] for s in mine if s["group"] == g), None) for g in groups}
    rows.append([f"reference: {reference_label}", *(_fmt(refs[g], ".4f") for g in groups)])
    count = max(s["instances"] for s in mine)
    # published means are over all 64 instances: a gap to a subset's reference means nothing
    full = count == extra_count
    for label, vals in extras.items():
        rows.append([label, *(("–" if g not in vals else
                               f"{vals[g]:.4f}" + (f" ({_gap(100 * (vals[g] / refs[g] - 1))} %)" if refs[g] and full else ""))
                              for g in groups)])
    return (f"{problem.upper()}: mean objective over {count} instances (mean gap to the reference), "
            f"mean wall time per instance\n\n" + _table([problem.upper(), *groups], rows))


CSV_FIELDS = ("problem", "group", "solver", "label", "instances", "solved", "failed", "mean_cost",
              "mean_reference", "mean_gap", "gap_of_means", "mean_seconds", "mean_iterations", "batch_seconds",
              "not_k")


def csv_text(summaries: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> str:
    """The summaries as CSV, one row per (group, solver); empty cells for missing values."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for s in summaries:
        w.writerow({k: ("" if v is None else v) for k, v in
                    {**s, "label": labels.get(s["solver"], s["solver"])}.items() if k in CSV_FIELDS})
    return buf.getvalue()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict[str, Any]:
    """Versions (Python, glns, numpy and the baselines' packages, None when absent), CPU model,
    usable cores, memory, OS."""

    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    try:
        memory_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        memory_gb = None
    return {"glns": __version__, "python": sys.version.split()[0], "packages": versions,
            "cpu": _cpu_model(), "cores": usable_cores(), "memory_gb": memory_gb,
            "platform": platform.platform(), "hostname": platform.node(),
            "ablated": list(ablated_parts())}


def write_outputs(out_dir: str | os.PathLike, document: Mapping[str, Any], markdown: str, csv_data: str) -> dict[str, Path]:
    """Write results.json, summary.md and summary.csv into out_dir (atomically each)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"json": out / "results.json", "markdown": out / "summary.md", "csv": out / "summary.csv"}
    texts = {"json": json.dumps(document, indent=1, default=_json_default) + "\n",
             "markdown": markdown, "csv": csv_data}
    for key, path in files.items():
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(texts[key], encoding="utf-8")
        os.replace(tmp, path)
    return files


def _json_default(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot write {type(x).__name__} to JSON")


def read_results(path: str | os.PathLike) -> dict[str, Any]:
    """A results.json (or the directory holding it), parsed; ValueError for a missing file,
    malformed JSON or a file that is not a glns bench record."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    if not p.is_file():
        raise ValueError(f"no such results file: {p}")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{p} is not a text (JSON) file") from None
    check_format(doc, str(p))
    return doc


def check_format(doc: Any, where: str) -> None:
    """ValueError unless ``doc`` is a glns bench record (by its format tag)."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, Mapping) else type(doc).__name__
        raise ValueError(f"{where} is not a glns bench results file (format {found!r}, expected {FORMAT!r})")


def timestamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
