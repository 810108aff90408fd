"""Do restarts from the best solution help long runs? (issue 13, point 1)

For each chosen CVRPLIB X file, side by side with one worker process per core, ways to spend
the same wall-time budget B (default T/10 = n x 0.24 s):

- ``single``: one ``glns.solve(problem, time_limit=B)``, the default: annealing tied to the
  budget, cooling from T0 to T0/100, and a restart from the best solution at T0/10 after a
  fifth of the budget without a new best (``glns.Restart``);
- ``no-restart``: the same with ``restart=None`` (the default before session 18);
- ``restart-S``: S runs of B/S each without stall restarts, every run after the first starting
  from the best solution so far (``initial_solution``), its temperature schedule started again
  at T0 (reheating);
- ``restart-S-cool``: the same, but the later runs start at T0/10 (a reheat that keeps the
  search near the best solution).

Prints the gap of each to the file's best-known value (nint distances) and writes DIR/rows.json.
Needs ../shared/data (or $GLNS_DATA) with cvrplib/X and large/X; says so and stops otherwise.

Usage: python bench/restarts.py --every 16 --max-nodes 700 --first-seed 1 --seeds 1 --out results/restarts
       python bench/restarts.py --strategies single no-restart --files X-n214-k11 --seeds 16
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import glns
from glns.params import AutoTemperature

STRATEGIES = ("single", "no-restart", "restart-4", "restart-4-cool")


def _solve(problem: Any, budget: float, seed: int, strategy: str) -> float:
    if strategy == "single":
        return glns.solve(problem, time_limit=budget, seed=seed).cost
    if strategy == "no-restart":
        return glns.solve(problem, time_limit=budget, seed=seed, params=glns.SolveParams(restart=None)).cost
    segments = int(strategy.split("-")[1])
    cool = strategy.endswith("-cool")
    best = None
    for s in range(segments):
        params = glns.SolveParams(restart=None)
        if s > 0 and cool:
            default = glns.SolveParams().temperature
            params = glns.SolveParams(restart=None, temperature=AutoTemperature(
                worse=default.worse / 10, accept=default.accept, end_ratio=default.end_ratio * 10,
                reference_nodes=default.reference_nodes))
        result = glns.solve(problem, time_limit=budget / segments, seed=seed + 1000 * s,
                            params=params, initial_solution=best.solution if best else None)
        if best is None or result.cost < best.cost:
            best = result
    return best.cost


def _job(args: tuple[str, str, float, int, str]) -> dict[str, Any]:
    from glns.benchmark.instances import load_instance
    locator, name, budget, seed, strategy = args
    problem = load_instance(locator)
    t0 = time.perf_counter()
    cost = _solve(problem, budget, seed, strategy)
    return {"file": name, "seed": seed, "strategy": strategy, "cost": cost,
            "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=16, help="every k-th X file by size")
    parser.add_argument("--files", nargs="+", help="these X files (by name) instead of --every")
    parser.add_argument("--max-nodes", type=int, default=700)
    parser.add_argument("--fraction", type=float, default=0.1, help="budget as a fraction of T")
    parser.add_argument("--seeds", type=int, default=1, help="how many seeds per file")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strategies", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    parser.add_argument("--out", default="results/restarts")
    args = parser.parse_args(argv)
    strategies = tuple(args.strategies)

    from glns.benchmark.suites import library_groups
    try:
        (group,) = library_groups(["cvrplib"], sets=["X"], every=None if args.files else args.every,
                                  max_nodes=None if args.files else args.max_nodes)
    except FileNotFoundError as exc:
        print(f"restarts: {exc}", file=sys.stderr)
        return 2
    names = [loc.rsplit("/", 1)[-1].split(".")[0] for loc in group.locators]
    refs = dict(zip(names, group.references))
    group_files = list(zip(group.locators, names, group.instances))
    if args.files:
        missing = sorted(set(args.files) - set(names))
        if missing:
            print(f"restarts: no such X file: {', '.join(missing)}", file=sys.stderr)
            return 2
        group_files = [f for f in group_files if f[1] in args.files]
        names = [f[1] for f in group_files]
    jobs = []
    for loc, name, problem in group_files:
        budget = problem.n_customers * 2.4 * args.fraction
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            jobs += [(loc, name, budget, seed, strategy) for strategy in strategies]
    jobs.sort(key=lambda j: -j[2])          # longest first: the two workers finish together
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(_job, jobs))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rows.json").write_text(json.dumps(rows, indent=1))
    gaps: dict[str, list[float]] = {s: [] for s in strategies}
    print("| file | seed | " + " | ".join(strategies) + " |")
    print("|---|---|" + "---|" * len(strategies))
    for name in names:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            cells = []
            for strategy in strategies:
                (row,) = [r for r in rows if r["file"] == name and r["seed"] == seed
                          and r["strategy"] == strategy]
                gap = 100 * (row["cost"] / refs[name] - 1)
                gaps[strategy].append(gap)
                cells.append(f"{gap:.2f} %")
            print(f"| {name} | {seed} | " + " | ".join(cells) + " |")
    print("| mean | | " + " | ".join(f"{statistics.mean(g):.2f} %" for g in gaps.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
