"""``glns bench``: final-testing runs of glns and baselines, with tables and a full record.

    glns bench synthetic [--problems cvrp] [--sizes 50 100] [--solvers default paper ortools]
    glns bench library [--libraries tsplib cvrplib] [--sets A X] [--rounding nint|exact|both]
    glns bench paper                  # the paper's main table, side by side with ours
    glns bench ... --quick            # a smoke run: few small instances, small budgets
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from glns.benchmark import paper, report, suites
from glns.benchmark.runner import Settings, run_benchmark
from glns.benchmark.solvers import BASELINE_NAMES, GLNS_SOLVERS, SolverSpec, parse_solver
from glns.problems import PROBLEM_KINDS

QUICK = {"instances": 4, "sizes": [10, 20], "iterations": 100, "time_limit": 1.0, "max_nodes": 60}
DEFAULT_SOLVERS = {"synthetic": ["default", "paper"], "library": ["default", "paper"],
                   "paper": ["default", "paper", "standard", "baselines"]}


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: the paper suite's implied baselines run where the paper's table has them: TSP against LKH-3,
#: CVRP/OVRP against OR-Tools (and PyVRP, the stronger reference); alns everywhere
PAPER_BASELINE_PROBLEMS = {"ortools": ("cvrp", "ovrp"), "pyvrp": ("cvrp", "ovrp")}


def _solvers(names: list[str], suite: str = "synthetic") -> tuple[list[SolverSpec], dict[str, str]]:
    """The solver specs; "baselines" stands for every installed baseline, "all" for every glns
    configuration and installed baseline. Named baselines that are not installed are an error;
    implied ones are skipped with a reason. In the paper suite, implied baselines run only on
    the problems of :data:`PAPER_BASELINE_PROBLEMS` (name one to run it everywhere)."""
    expanded: list[tuple[str, bool]] = []
    for name in names:
        if name == "all":
            expanded += [(n, False) for n in GLNS_SOLVERS] + [(n, True) for n in BASELINE_NAMES]
        elif name == "baselines":
            expanded += [(n, True) for n in BASELINE_NAMES]
        else:
            expanded.append((name, False))
    specs, skipped = [], {}
    for name, implied in dict.fromkeys(expanded):
        if name in BASELINE_NAMES:
            from glns.benchmark.baselines import BASELINES

            why = BASELINES[name].available()
            if why is not None:
                if not implied:
                    raise ImportError(f"solver {name!r} is not available: {why}")
                skipped[name] = why
                continue
        spec = parse_solver(name)
        if implied and suite == "paper" and name in PAPER_BASELINE_PROBLEMS:
            spec.problems = PAPER_BASELINE_PROBLEMS[name]
        if spec.name not in {s.name for s in specs}:
            specs.append(spec)
    return specs, skipped


def _groups(args: argparse.Namespace) -> list[suites.Group]:
    if args.suite in ("synthetic", "paper"):
        return suites.synthetic_groups(args.problems, args.sizes, args.instances)
    roundings = ["nint", "exact"] if args.rounding == "both" else [args.rounding]
    groups = []
    for rounding in roundings:
        groups += suites.library_groups(args.libraries, args.data, args.sets, rounding,
                                        args.max_nodes, args.instances)
    return groups


def _previous(out: Path, document: dict[str, Any]) -> dict[tuple[str, str], list[dict]]:
    """Batches of an earlier run in the same directory with the same settings (to skip)."""
    if not (out / "results.json").exists():
        return {}
    old = report.read_results(out)
    # workers and the kill deadline change where and how runs go, not what they compute
    def identity(doc: dict[str, Any]) -> tuple:
        settings = {k: v for k, v in doc.get("settings", {}).items() if k not in ("workers", "task_timeout")}
        return doc.get("suite"), settings, doc.get("groups")

    if identity(old) != identity(document):
        raise ValueError(f"{out} holds results of a different benchmark (suite, settings or instances "
                         "differ); choose another --out directory")
    done: dict[tuple[str, str], list[dict]] = {}
    for r in old["runs"]:
        done.setdefault((r["group"], r["solver"]), []).append(r)
    return done


def cmd_bench(args: argparse.Namespace) -> int:
    if args.quick:
        args.instances = args.instances or QUICK["instances"]
        args.sizes = args.sizes or QUICK["sizes"]
        args.iterations = args.iterations or QUICK["iterations"]
        args.time_limit = args.time_limit or QUICK["time_limit"]
        args.max_nodes = args.max_nodes or QUICK["max_nodes"]
    args.sizes = args.sizes or list(suites.SYNTHETIC_SIZES)
    args.problems = args.problems or (["tsp", "cvrp"] if args.suite == "paper" else list(PROBLEM_KINDS))
    settings = Settings(iterations=args.iterations or 500, time_limit=args.time_limit or 5.0,
                        lkh_runs=args.lkh_runs, glns_time_limit=args.glns_time_limit, seed=args.seed, workers=args.workers,
                        task_timeout=args.task_timeout)
    specs, skipped = _solvers(args.solvers or DEFAULT_SOLVERS[args.suite], args.suite)
    for name, why in skipped.items():
        _log(f"glns bench: skipping {name}: {why}")
    groups = _groups(args)
    out = Path(args.out or f"glns-bench/{args.suite}-{time.strftime('%Y%m%d-%H%M%S')}")
    budget_note = {"time": f" {settings.time_limit:g} s", "runs": f", {settings.lkh_runs} runs"}
    labels = {s.name: s.label + (budget_note.get(s.budget, "") if s.kind == "baseline" else "") for s in specs}
    document: dict[str, Any] = {
        "format": report.FORMAT, "suite": args.suite, "created": report.timestamp(),
        "command": "glns " + " ".join(shlex.quote(a) for a in args.argv),
        "environment": report.environment(), "settings": dataclasses.asdict(settings),
        "solvers": {s.name: {"label": labels[s.name], "kind": s.kind, "budget": settings.budget_of(s), **s.info}
                    for s in specs},
        "skipped": skipped,
        "groups": [{"name": g.name, "problem": g.problem, "size": g.size, "instances": len(g),
                    "reference": g.reference_label, "notes": g.notes} for g in groups],
        "runs": [],
    }
    done = _previous(out, document)
    if args.retry_failed:   # batches with a failed run are run again, whole (seeds are per instance)
        done = {k: v for k, v in done.items() if all(r["error"] is None for r in v)}
    if done:
        _log(f"glns bench: {len(done)} batches already in {out}; running the others")
    extra = (paper.main_table_rows(args.problems, args.sizes) if args.suite == "paper"
             else paper.library_rows(args.rounding if args.rounding != "both" else "nint")
             if args.suite == "library" else {})
    suite = "library" if args.suite == "library" else "synthetic"
    ref_labels = {g.problem: g.reference_label for g in groups}
    runs: list[dict] = [r for batch in done.values() for r in batch]
    position = {(g.name, s.name): (i, j) for i, g in enumerate(groups) for j, s in enumerate(specs)}

    def save(group: Any = None, spec: Any = None, batch: list[dict] | None = None, wall: float = 0.0) -> str:
        if batch:
            runs.extend(batch)
        # table order: groups, then solvers, as asked (a stable sort keeps instance order)
        ordered = sorted((r for r in runs if (r["group"], r["solver"]) in position),
                         key=lambda r: position[r["group"], r["solver"]])
        summaries = report.summarise(ordered)
        document.update(runs=ordered, summary=summaries)
        markdown = report.markdown_tables(summaries, labels, ref_labels, suite, extra) if summaries else ""
        report.write_outputs(out, document, markdown, report.csv_text(summaries, labels))
        return markdown

    _log(f"glns bench {args.suite}: {len(groups)} groups x {len(specs)} solvers, "
         f"{sum(len(g) for g in groups)} instances; results in {out}")
    run_benchmark(groups, specs, settings, done=done, on_batch=save, progress=not args.no_progress)
    markdown = save()
    print(markdown, end="")
    print(f"\nfull results: {out / 'results.json'}, {out / 'summary.md'}, {out / 'summary.csv'}")
    return 0


def add_bench_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``glns bench`` on the CLI's subparsers."""
    b = sub.add_parser("bench", help="benchmark glns and baseline solvers (tables, CSV, JSON)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("suite", choices=["synthetic", "library", "paper"], nargs="?", default="synthetic",
                   help="synthetic: the paper's test sets; library: TSPLIB/CVRPLIB files; "
                        "paper: the paper's main table (TSP and CVRP, sizes 10-200) side by side")
    b.add_argument("--solvers", nargs="+",
                   help="default, paper, standard, module:PATH, population:PATH, ortools, pyvrp, lkh, "
                        "alns, 'baselines' (all installed) or 'all' (default: default paper; "
                        "paper suite: default paper standard baselines)")
    b.add_argument("--problems", nargs="+", choices=list(PROBLEM_KINDS))
    b.add_argument("--sizes", type=int, nargs="+", help="synthetic sizes (default 10 20 50 100 200)")
    b.add_argument("--instances", type=int, help="first N instances per size / files per set (default all)")
    b.add_argument("--iterations", type=int, help="iterations per run of glns and alns (default 500)")
    b.add_argument("--time-limit", type=float, help="seconds per run of OR-Tools and PyVRP (default 5)")
    b.add_argument("--lkh-runs", type=int, default=10, help="LKH-3 runs per instance (default 10)")
    b.add_argument("--glns-time-limit", type=float, help="run glns for this many seconds instead of --iterations")
    b.add_argument("--seed", type=int, default=0, help="master seed (instance i runs with run_seed(seed, i))")
    b.add_argument("--workers", type=int, help="processes, one run each (default: all cores)")
    b.add_argument("--task-timeout", type=float, help="kill a run after this many seconds (recorded as failed)")
    b.add_argument("--out", help="output directory (default glns-bench/<suite>-<time>); an existing "
                                 "one with the same settings is completed, not redone")
    b.add_argument("--retry-failed", action="store_true",
                   help="when completing an --out directory, also rerun its batches that have failed runs")
    b.add_argument("--quick", action="store_true",
                   help="smoke run: 4 instances, sizes 10 20, 100 iterations, 1 s limits, files <= 60 nodes")
    b.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    lib = b.add_argument_group("library suite")
    lib.add_argument("--data", help="folder with tsplib/ and cvrplib/ (default ../shared/data or $GLNS_DATA)")
    lib.add_argument("--libraries", nargs="+", choices=["tsplib", "cvrplib"], default=["tsplib", "cvrplib"])
    lib.add_argument("--sets", nargs="+", choices=list(suites.CVRPLIB_SETS), default=list(suites.CVRPLIB_SETS))
    lib.add_argument("--rounding", choices=["nint", "exact", "both"], default="nint",
                     help="nint: the libraries' convention (default); exact: raw coordinates")
    lib.add_argument("--max-nodes", type=int, help="skip files with more nodes")
    b.set_defaults(func=cmd_bench)
