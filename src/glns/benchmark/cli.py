"""``glns bench``: final-testing runs of glns and baselines, with tables and a full record.

    glns bench synthetic [--problems cvrp] [--sizes 50 100] [--solvers default paper ortools]
    glns bench library [--libraries tsplib cvrplib xxl tsp-large] [--sets A X] [--rounding nint|exact|both]
    glns bench paper                  # the paper's main table, side by side with ours
    glns bench library --libraries cvrplib --sets X --time-per-100 2.4 --every 4
                                      # S x n/100 seconds per run, every 4th file by size
    glns bench compare DIR_A DIR_B    # instances where B's run (e.g. the longer) is worse than A's
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

from glns.ablation import ablated_parts
from glns.benchmark import compare, paper, report, suites
from glns.benchmark.runner import Settings, run_benchmark
from glns.benchmark.solvers import BASELINE_NAMES, GLNS_SOLVERS, SolverSpec, parse_solver
from glns.problems import PROBLEM_KINDS

QUICK = {"instances": 4, "sizes": [10, 20], "iterations": 100, "time_limit": 1.0, "max_nodes": 60}
DEFAULT_SOLVERS = {"synthetic": ["default", "paper"], "library": ["default", "paper"],
                   "paper": ["default", "paper", "standard", "baselines"]}


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: the paper suite's implied baselines run where the paper's table has them: TSP against LKH-3,
#: CVRP/OVRP against OR-Tools (and PyVRP and HGS-CVRP, the stronger references); alns everywhere
PAPER_BASELINE_PROBLEMS = {"ortools": ("cvrp", "ovrp"), "pyvrp": ("cvrp", "ovrp"), "hgs": ("cvrp",)}


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
        for flag, value in (("--every", args.every), ("--short-routes", args.short_routes)):
            if value is not None:
                raise ValueError(f"{flag} selects files of the library suite")
        return suites.synthetic_groups(args.problems, args.sizes, args.instances)
    roundings = ["nint", "exact"] if args.rounding == "both" else [args.rounding]
    groups = []
    for rounding in roundings:
        groups += suites.library_groups(args.libraries, args.data, args.sets, rounding,
                                        args.max_nodes, args.instances, args.every, args.short_routes)
    return groups


def _budget_note(spec: SolverSpec, settings: Settings) -> str:
    """What a baseline's row title adds about its budget ("5 s", "10 runs", "2.4 s per 100")."""
    if spec.kind != "baseline":
        return ""
    if settings.scaled(spec):
        word = "cities" if spec.problems == ("tsp",) else "customers"
        return f" {settings.time_per_100:g} s per 100 {word}"
    return {"time": f" {settings.time_limit:g} s", "runs": f", {settings.lkh_runs} runs"}.get(spec.budget, "")


def _previous(out: Path, document: dict[str, Any]) -> dict[tuple[str, str], list[dict]]:
    """Batches of an earlier run in the same directory with the same settings (to skip)."""
    if not (out / "results.json").exists():
        return {}
    old = report.read_results(out)
    # workers and the kill deadline change where and how runs go, not what they compute; a
    # setting left at None is the same as one an older record does not have (time_per_100)
    def identity(doc: dict[str, Any]) -> tuple:
        settings = {k: v for k, v in doc.get("settings", {}).items()
                    if k not in ("workers", "task_timeout") and v is not None}
        return doc.get("suite"), settings, doc.get("groups")

    if identity(old) != identity(document):
        raise ValueError(f"{out} holds results of a different benchmark (suite, settings or instances "
                         "differ); choose another --out directory")
    done: dict[tuple[str, str], list[dict]] = {}
    for r in old["runs"]:
        done.setdefault((r["group"], r["solver"]), []).append(r)
    return done


def cmd_bench(args: argparse.Namespace) -> int:
    if args.suite == "compare":
        return compare.cmd_compare(args.paths, args.tolerance)
    if args.paths:
        raise ValueError(f"unexpected arguments {' '.join(args.paths)} (only 'glns bench compare' takes paths)")
    if args.time_per_100 is not None and (args.time_limit is not None or args.glns_time_limit is not None):
        raise ValueError("--time-per-100 sets the time of glns and of the time-based baselines; "
                         "leave out --time-limit and --glns-time-limit")
    if args.quick:
        args.instances = args.instances or QUICK["instances"]
        args.sizes = args.sizes or QUICK["sizes"]
        args.iterations = args.iterations or QUICK["iterations"]
        args.time_limit = args.time_limit or QUICK["time_limit"]
        args.max_nodes = args.max_nodes or QUICK["max_nodes"]
    args.sizes = args.sizes or list(suites.SYNTHETIC_SIZES)
    args.problems = args.problems or (["tsp", "cvrp"] if args.suite == "paper" else list(PROBLEM_KINDS))
    settings = Settings(iterations=args.iterations or 500, time_limit=args.time_limit or 5.0,
                        lkh_runs=args.lkh_runs, glns_time_limit=args.glns_time_limit, seed=args.seed, workers=args.workers, sandbox=args.sandbox,
                        task_timeout=args.task_timeout, time_per_100=args.time_per_100)
    specs, skipped = _solvers(args.solvers or DEFAULT_SOLVERS[args.suite], args.suite)
    for name, why in skipped.items():
        _log(f"glns bench: skipping {name}: {why}")
    groups = _groups(args)
    out = Path(args.out or f"glns-bench/{args.suite}-{time.strftime('%Y%m%d-%H%M%S')}")
    off = ablated_parts()      # GLNS_ABLATE: parts of glns turned off, in its rows' labels
    labels = {s.name: s.label + (f" without {'+'.join(off)}" if off and s.kind == "glns" else "")
              + _budget_note(s, settings) for s in specs}
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

    for g in groups:
        for note in g.notes:
            _log(f"glns bench: {g.name}: {note}")
    _log(f"glns bench {args.suite}: {len(groups)} groups x {len(specs)} solvers, "
         f"{sum(len(g) for g in groups)} instances; results in {out}")
    try:
        run_benchmark(groups, specs, settings, done=done, on_batch=save, progress=not args.no_progress)
    except KeyboardInterrupt:
        save()
        _log(f"glns bench: interrupted; the finished batches are saved in {out}: the same command "
             "runs the others")
        return 130
    markdown = save()
    print(markdown, end="")
    print(f"\nfull results: {out / 'results.json'}, {out / 'summary.md'}, {out / 'summary.csv'}")
    return 0


def add_bench_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``glns bench`` on the CLI's subparsers."""
    b = sub.add_parser("bench", help="benchmark glns and baseline solvers (tables, CSV, JSON)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("suite", choices=["synthetic", "library", "paper", "compare"], nargs="?", default="synthetic",
                   help="synthetic: the paper's test sets; library: TSPLIB/CVRPLIB files; "
                        "paper: the paper's main table (TSP and CVRP, sizes 10-200) side by side; "
                        "compare DIR_A DIR_B: runs of B worse than A's on the same instance")
    b.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
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
    b.add_argument("--time-per-100", type=float, metavar="S",
                   help="every run of glns, OR-Tools, PyVRP and LKH-3 gets S x n/100 seconds, n = customers "
                        "(TSP: cities); the kill deadline follows (2 x that + 60 s). alns keeps --iterations")
    b.add_argument("--seed", type=int, default=0, help="master seed (instance i runs with run_seed(seed, i))")
    b.add_argument("--workers", type=int, help="processes, one run each (default: all cores)")
    b.add_argument("--sandbox", nargs="?", const="auto", default="off", choices=["auto", "strict", "off"],
                   help="run glns configurations in confined processes (for operators that are "
                   "untrusted code; docs/sandbox.md): auto (the flag alone), strict or off (default)")
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
    lib.add_argument("--libraries", nargs="+", choices=list(suites.LIBRARIES), default=["tsplib", "cvrplib"],
                     help="tsplib, cvrplib (set X: cvrplib/X and large/X), xxl (large/XXL), "
                          "tsp-large (large/TSP) (default: tsplib cvrplib)")
    lib.add_argument("--sets", nargs="+", choices=list(suites.CVRPLIB_SETS), default=list(suites.CVRPLIB_SETS))
    lib.add_argument("--rounding", choices=["nint", "exact", "both"], default="nint",
                     help="nint: the libraries' convention (default); exact: raw coordinates")
    lib.add_argument("--max-nodes", type=int, help="skip files with more nodes")
    lib.add_argument("--every", type=int, metavar="K",
                     help="every K-th file by size per group (positions 0, K, 2K, ... sorted by DIMENSION, name)")
    lib.add_argument("--short-routes", type=float, metavar="L",
                     help="only files whose names give n / k < L (X-n101-k25: 4.04), i.e. routes of "
                          "fewer than about L customers")
    cmp = b.add_argument_group("compare")
    cmp.add_argument("--tolerance", type=float, default=1e-9,
                     help="relative difference of costs below which two runs count as equal (default 1e-9)")
    b.set_defaults(func=cmd_bench)
