"""``glns plot``: convergence curves, route drawings and operator heatmaps as image files.

::

    glns plot convergence RESULTS.json [--x iteration|seconds|both] [--group G ...] [--solver S ...] -o FILE
    glns plot routes RESULTS.json --instance NAME [--solver S] -o FILE
    glns plot routes --file INSTANCE.vrp|.tsp|.txt [--rounding nint|exact|dimacs] [--iterations N] -o FILE
    glns plot weights|synergy (RESULTS.json [--group G ...] [--solver S ...] | RUN_DIR) -o FILE
    glns plot lineage RUN_DIR [-o FILE] [--text] [--dot FILE.dot]   (the operators' family tree)
    glns plot runs EXPERIMENT_DIR [--band minmax|sd] -o FILE   (several runs: mean and spread)

The image format comes from the output file's suffix (.png, .svg, .pdf). Errors are raised as
ValueError with the reason; ``glns.cli.main`` prints them and exits with status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glns.problems import PROBLEM_KINDS

__all__ = ["add_plot_parser"]


def _write(fig: Any, path: str) -> int:
    from glns.plot._mpl import save_figure

    print(f"wrote {save_figure(fig, path)}")
    return 0


def _cmd_convergence(args: argparse.Namespace) -> int:
    from glns.plot.convergence import convergence_figure

    return _write(convergence_figure(args.results, x=args.x, group=args.group, solvers=args.solver), args.output)


def _run_for_instance(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """(problem, solution, title) of the best run of --instance (and --solver) in the results."""
    from glns.benchmark.instances import load_instance
    from glns.plot.results import load_results, select_runs

    data = load_results(args.results)
    runs = select_runs(data.runs, instance=args.instance, solver=args.solver)
    solved = [r for r in runs if r.get("error") is None and r.get("cost") is not None
              and r.get("solution") is not None]
    solvers = list(dict.fromkeys(str(r["solver"]) for r in solved))
    if not solved:
        raise ValueError(f"no run solved instance {args.instance!r}"
                         + (f" with solver {args.solver!r}" if args.solver else ""))
    if len(solvers) > 1:
        raise ValueError(f"instance {args.instance!r} was solved by several solvers "
                         f"({', '.join(solvers)}); choose one with --solver")
    best = min(solved, key=lambda r: float(r["cost"]))
    if not best.get("locator"):
        raise ValueError(f"the run of {solvers[0]!r} on {args.instance!r} records no instance locator")
    problem = load_instance(best["locator"])
    title = f"{args.instance}: {data.label(solvers[0])}, cost {float(best['cost']):.6g}"
    return problem, best["solution"], title


def _cmd_routes(args: argparse.Namespace) -> int:
    from glns.plot.routes import route_figure

    if args.file and (args.results or args.instance or args.solver):
        raise ValueError("give either RESULTS.json --instance NAME [--solver S] or --file INSTANCE, not both")
    if args.file:
        from glns import datasets
        from glns.solve import solve

        problem = datasets.read(args.file, rounding=args.rounding, problem=args.problem)
        result = solve(problem, iterations=args.iterations, seed=args.seed)
        name = problem.name or args.file
        title = f"{name}: glns, {result.iterations} iterations, cost {result.cost:.6g}"
        if problem.has_depot:
            title += f", {result.num_routes} route{'s' if result.num_routes != 1 else ''}"
        return _write(route_figure(problem, result.solution, title=title), args.output)
    if not args.results or not args.instance:
        raise ValueError("glns plot routes needs RESULTS.json --instance NAME, or --file INSTANCE")
    problem, solution, title = _run_for_instance(args)
    return _write(route_figure(problem, solution, title=title), args.output)


def _cmd_weights(args: argparse.Namespace) -> int:
    from glns.plot.heatmaps import weights_figure

    return _write(weights_figure(args.source, group=args.group, solver=args.solver), args.output)


def _cmd_synergy(args: argparse.Namespace) -> int:
    from glns.plot.heatmaps import synergy_figure

    return _write(synergy_figure(args.source, group=args.group, solver=args.solver, cycle=args.cycle),
                  args.output)


def _cmd_lineage(args: argparse.Namespace) -> int:
    from glns.evolution.lineage import lineage_text, read_lineage

    if not (args.output or args.text or args.dot):
        raise ValueError("glns plot lineage needs -o FILE, --text or --dot FILE")
    lineage = read_lineage(args.run_dir)
    if args.text:
        print(lineage_text(lineage))
    if args.dot:
        dot = Path(args.dot)
        dot.parent.mkdir(parents=True, exist_ok=True)
        dot.write_text(lineage.to_dot(), encoding="utf-8")
        print(f"wrote {dot}")
    if args.output:
        from glns.plot.lineage import lineage_figure

        return _write(lineage_figure(lineage), args.output)
    return 0


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="image file; the format comes from the suffix (.png, .svg, .pdf)")


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--group", nargs="+", action="extend", metavar="G", help="only these groups (default all)")
    p.add_argument("--solver", nargs="+", action="extend", metavar="S", help="only these solvers (default all)")


def add_plot_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``glns plot`` with its five kinds of plot to the ``glns`` sub-command parsers."""
    p = subparsers.add_parser("plot", help="plot benchmark results, routes and operator statistics",
                              description="Write plots as PNG/SVG/PDF (needs matplotlib: "
                              "pip install 'glns[plot]').")
    kinds = p.add_subparsers(dest="plot_kind", required=True, metavar="KIND")

    c = kinds.add_parser("convergence", help="mean best cost vs iteration and/or time, one line per solver")
    c.add_argument("results", metavar="RESULTS.json", help="a glns bench results file")
    c.add_argument("--x", choices=["iteration", "seconds", "both"], default="both",
                   help="x axis (default both: one row of panels each)")
    _selection(c)
    _output(c)
    c.set_defaults(func=_cmd_convergence)

    r = kinds.add_parser("routes", help="draw a solution: from a results file, or solve an instance file")
    r.add_argument("results", nargs="?", metavar="RESULTS.json", help="a glns bench results file")
    r.add_argument("--instance", metavar="NAME", help="instance name in the results file")
    r.add_argument("--solver", metavar="S", help="solver whose solution to draw (needed when several solved it)")
    r.add_argument("--file", metavar="INSTANCE", help="a TSPLIB .tsp, CVRPLIB .vrp or Solomon / VRPLIB "
                   "time-window file to solve and draw")
    r.add_argument("--rounding", choices=["nint", "exact", "dimacs"], default=None,
                   help="distances of --file: the file's convention (default: TSPLIB nint, DIMACS "
                        "tenths for time windows), or as given")
    r.add_argument("--problem", choices=list(PROBLEM_KINDS), help="read --file as this problem")
    r.add_argument("--iterations", type=int, default=1000, help="iterations for --file (default 1000)")
    r.add_argument("--seed", type=int, default=0, help="solver seed for --file")
    _output(r)
    r.set_defaults(func=_cmd_routes)

    for name, func, what in (("weights", _cmd_weights, "operator weights (evolution run: fitness F per cycle)"),
                             ("synergy", _cmd_synergy, "synergy matrix S of destroy x repair")):
        h = kinds.add_parser(name, help=f"heatmap of the {what}")
        h.add_argument("source", metavar="RESULTS.json|RUN_DIR",
                       help="a glns bench results file or a glns evolve run directory")
        _selection(h)
        if name == "synergy":
            h.add_argument("--cycle", type=int, help="evolution run: the cycle to show (default the last)")
        _output(h)
        h.set_defaults(func=func)

    g = kinds.add_parser("lineage", help="family tree of an evolution run's operators (image, text or DOT)")
    g.add_argument("run_dir", metavar="RUN_DIR", help="a glns evolve run directory (finished or not)")
    g.add_argument("-o", "--output", metavar="FILE",
                   help="image file; the format comes from the suffix (.png, .svg, .pdf)")
    g.add_argument("--text", action="store_true", help="print the lineage as a table")
    g.add_argument("--dot", metavar="FILE", help="write Graphviz DOT text (render with dot -Tsvg)")
    g.set_defaults(func=_cmd_lineage)

    _add_runs_parser(kinds)
    return p


# ----------------------------------------------------------------------------- glns plot runs


def _cmd_runs(args: argparse.Namespace) -> int:
    from glns.plot.runs import plot_runs

    print(f"wrote {plot_runs(args.directory, args.output, band=args.band)}")
    return 0


def _add_runs_parser(kinds: argparse._SubParsersAction) -> None:
    """``glns plot runs DIR -o FILE``: the multi-run convergence of an experiment (or, for an
    ablation study's directory, one panel per problem with a line per variant)."""
    from glns.plot.runs import BANDS

    r = kinds.add_parser("runs", help="best-so-far validation of several runs: mean, band, single runs")
    r.add_argument("directory", metavar="EXPERIMENT_DIR",
                   help="a glns evolve --runs N directory (or an --ablations directory)")
    r.add_argument("--band", choices=BANDS, default="minmax",
                   help="shaded band: min to max over the runs (default) or mean ± one sd")
    _output(r)
    r.set_defaults(func=_cmd_runs)
