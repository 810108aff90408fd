"""Quality and speed of the default native portfolio, next to the paper's rows.

Three measurements, each printed as a Markdown table (and written to --json if given):

- ``iterations``: mean objective over the 64 test instances per size at the paper's budget
  (500 iterations), for ``glns.solve(instance)`` (the default portfolio) and for the paper preset
  with the seed operators, beside the paper's G-LNS and standard ALNS rows (SPEC §5).
- ``time``: the default portfolio with a wall-time limit per instance (1 s and 5 s) on CVRP100,
  CVRP200 and OVRP200, beside OR-Tools 5 s and PyVRP 5 s as measured on this machine on the same
  instances (SPEC §5; the per-instance PyVRP/OR-Tools best is the data's ``ref_obj``).
  Run it with nothing else loaded on the machine, with at most one worker per core.
- ``throughput``: iterations per second of the default portfolio on CVRP100 and TSP200, and how
  time per iteration grows with n (50, 200, 1000; generated instances).

Usage: python bench/portfolio_quality.py iterations [--sizes 10 20 50] [--problems tsp]
       python bench/portfolio_quality.py time [--limits 1 5] [--instances 64]
       python bench/portfolio_quality.py throughput
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

import glns
from glns.datasets import generate_cvrp, generate_tsp, paper_instances, reference_objectives

SIZES = [10, 20, 50, 100, 200]
PAPER_ROWS = {
    "tsp": {"paper G-LNS": [2.833, 3.826, 5.738, 7.899, 10.805],
            "paper standard ALNS": [2.840, 3.960, 6.040, 8.192, 11.290]},
    "cvrp": {"paper G-LNS": [3.141, 4.707, 8.250, 13.817, 24.774],
             "paper standard ALNS": [3.172, 4.818, 8.492, 14.291, 25.674]},
    "ovrp": {"paper G-LNS": [2.2890, 3.4371, 5.7163, 8.8979, 14.8841]},
}
# SPEC §5: measured on this machine on the same 64-instance sets, one solver process at a time.
MEASURED_5S = {
    ("cvrp", 100): {"OR-Tools 9.15 GLS 5 s": 13.6492, "PyVRP 0.14 5 s": 12.8963},
    ("cvrp", 200): {"OR-Tools 9.15 GLS 5 s": 24.5406, "PyVRP 0.14 5 s": 22.5804},
    ("ovrp", 200): {"OR-Tools 9.15 GLS 5 s": 14.8214, "PyVRP 0.14 5 s": 13.9599},
}
SEEDS = ("random_removal", "worst_removal")
# The paper's "standard ALNS" (Appendix: random, worst and related removal; greedy and regret-k
# insertion; Pisinger & Ropke's framework), rebuilt from native operators, paper preset.
STANDARD_DESTROY = ("random_removal", "worst_removal", "related_removal")
STANDARD_REPAIR = ("greedy_insertion", "regret_insertion", glns.operators.native("regret_insertion", k=3))
CONFIGS = {"default": "glns default portfolio", "paper": "glns seeds, paper preset",
           "standard": "standard ALNS operators, paper preset"}


@functools.lru_cache(maxsize=None)
def _instances(kind: str, n: int) -> list[glns.Problem]:
    # built once per process: paper_instances builds all 64 instances (distances, neighbour
    # lists; 0.1-0.3 s at n = 200), more than one 500-iteration solve of one of them
    return paper_instances(kind, n)


def _run_one(task: tuple[str, int, int, str, dict[str, Any]]) -> tuple[float, float, int]:
    kind, n, index, config, budget = task
    problem = _instances(kind, n)[index]
    t = time.perf_counter()
    if config == "default":
        res = glns.solve(problem, seed=index, **budget)
    elif config == "paper":
        res = glns.solve(problem, SEEDS, "greedy_insertion", seed=index,
                         params=glns.SolveParams.paper(), **budget)
    else:
        res = glns.solve(problem, STANDARD_DESTROY, STANDARD_REPAIR, seed=index,
                         params=glns.SolveParams.paper(), **budget)
    problem.check(res.solution)
    return res.cost, time.perf_counter() - t, res.iterations


def _batch(kind: str, n: int, config: str, budget: dict[str, Any], count: int,
           workers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tasks = [(kind, n, i, config, budget) for i in range(count)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            out = list(pool.map(_run_one, tasks))
    else:
        out = [_run_one(t) for t in tasks]
    costs, secs, iters = (np.array(col) for col in zip(*out))
    return costs, secs, iters


def _table(title: str, header: list[str], rows: dict[str, list[str]]) -> str:
    lines = [f"\n{title}\n", "| | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    lines += [f"| {label} | " + " | ".join(values) + " |" for label, values in rows.items()]
    return "\n".join(lines)


def iterations_mode(args: argparse.Namespace, report: dict[str, Any]) -> None:
    for kind in args.problems:
        rows: dict[str, list[str]] = {}
        for n in args.sizes:
            ref = reference_objectives(kind, n)
            for config, label in CONFIGS.items():
                costs, secs, _ = _batch(kind, n, config, {"iterations": args.iterations},
                                        args.instances, args.workers)
                gap = f" ({100 * (costs.mean() / ref[:len(costs)].mean() - 1):+.2f} %)" if ref is not None else ""
                rows.setdefault(label, []).append(f"{costs.mean():.4f}{gap}, {1000 * np.median(secs):.0f} ms")
                report.setdefault("iterations", {}).setdefault(kind, {}).setdefault(label, {})[n] = {
                    "mean": costs.mean(), "median_seconds": float(np.median(secs)), "costs": costs.tolist()}
            if ref is not None:
                rows.setdefault("reference (LKH-3 / best of OR-Tools, PyVRP 5 s)", []).append(
                    f"{ref[:args.instances].mean():.4f}")
        for label, values in PAPER_ROWS.get(kind, {}).items():
            rows[label] = [f"{values[SIZES.index(n)]:.4f}" for n in args.sizes]
        print(_table(f"{kind.upper()}: mean of {args.instances} instances at {args.iterations} iterations "
                     "(gap to reference, median time per instance)", [str(n) for n in args.sizes], rows))


def time_mode(args: argparse.Namespace, report: dict[str, Any]) -> None:
    cases = [("cvrp", 100), ("cvrp", 200), ("ovrp", 200)]
    rows: dict[str, list[str]] = {}
    for kind, n in cases:
        ref = reference_objectives(kind, n)
        for limit in args.limits:
            costs, _, iters = _batch(kind, n, "default", {"time_limit": limit}, args.instances, args.workers)
            rows.setdefault(f"glns default portfolio {limit:g} s", []).append(
                f"{costs.mean():.4f} ({100 * (costs.mean() / ref[:len(costs)].mean() - 1):+.2f} %), "
                f"{np.median(iters) / limit:.0f} it/s")
            report.setdefault("time", {}).setdefault(f"{kind}{n}", {})[limit] = {
                "mean": costs.mean(), "median_iterations": float(np.median(iters)), "costs": costs.tolist()}
        for label, value in MEASURED_5S[(kind, n)].items():
            rows.setdefault(label, []).append(f"{value:.4f}")
        rows.setdefault("reference: best of OR-Tools, PyVRP 5 s", []).append(f"{ref[:args.instances].mean():.4f}")
    print(_table(f"Equal time: mean of {args.instances} instances (gap to reference, median it/s)",
                 [f"{k.upper()}{n}" for k, n in cases], rows))


def throughput_mode(args: argparse.Namespace, report: dict[str, Any]) -> None:
    cases = [("cvrp", 100), ("tsp", 200), ("cvrp", 50), ("cvrp", 200), ("cvrp", 1000),
             ("tsp", 50), ("tsp", 1000)]
    rows: dict[str, list[str]] = {}
    for kind, n in cases:
        rates = []
        for seed in range(args.repeats):
            problem = (generate_tsp(n, seed) if kind == "tsp" else generate_cvrp(n, seed))
            res = glns.solve(problem, iterations=args.throughput_iterations, seed=seed)
            rates.append(res.iterations / res.runtime)
        rate = float(np.median(rates))
        rows[f"{kind.upper()}{n}"] = [f"{rate:,.0f}", f"{1e6 / rate:.1f}"]
        report.setdefault("throughput", {})[f"{kind}{n}"] = {"median_it_per_s": rate, "all": rates}
    print(_table(f"Throughput of the default portfolio, one core ({args.throughput_iterations} iterations, "
                 f"median of {args.repeats} generated instances)", ["iterations/s", "µs/iteration"], rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["iterations", "time", "throughput"])
    ap.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    ap.add_argument("--problems", nargs="+", default=["tsp", "cvrp", "ovrp"])
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--instances", type=int, default=64)
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 5.0])
    ap.add_argument("--workers", type=int, default=1, help="processes (each solve uses one core)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--throughput-iterations", type=int, default=5000)
    ap.add_argument("--json", help="write every figure to this file")
    args = ap.parse_args()
    report: dict[str, Any] = {"glns": glns.__version__, "args": vars(args)}
    {"iterations": iterations_mode, "time": time_mode, "throughput": throughput_mode}[args.mode](args, report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=float)


if __name__ == "__main__":
    main()
