"""Do restarts from the best solution help long runs, and is a longer run never worse?

For each chosen CVRPLIB X file, side by side with one worker process per core, ways to spend
the same wall-time budget B (default T/10 = n x 0.24 s):

- ``single``: one ``glns.solve(problem, time_limit=B)``, the default: annealing in epochs of
  iterations that do not depend on B (``glns.Epochs``: 20 n, 40 n, 80 n ... iterations, each
  from the best solution, reheated to T0), so a longer B replays a shorter one;
- ``stretched``: ``epochs=None``, the earlier default: one annealing stretched over
  the wall time, from T0 to T0/100, and a restart from the best solution at T0/10 after a
  fifth of the budget without a new best (``glns.Restart``);
- ``no-restart``: the same without the restarts (the earliest default);
- ``restart-S``: S runs of B/S each without stall restarts, every run after the first starting
  from the best solution so far (``initial_solution``), its temperature schedule started again
  at T0 (reheating);
- ``restart-S-cool``: the same, but the later runs start at T0/10 (a reheat that keeps the
  search near the best solution).

With several ``--fractions`` each run is repeated at each budget with the same seed, and the
last lines count, per strategy, the (file, seed) pairs whose run at the largest budget is
worse than at a smaller one.

Prints the gap of each to the file's best-known value (nint distances) and writes DIR/rows.json.
Needs ../shared/data (or $GLNS_DATA) with cvrplib/X and large/X; says so and stops otherwise.

Usage: python bench/restarts.py --every 16 --max-nodes 700 --first-seed 1 --seeds 1 --out results/restarts
       python bench/restarts.py --strategies single stretched --files X-n214-k11 --seeds 8 \
           --fractions 0.1 0.01
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

STRATEGIES = ("single", "stretched", "no-restart", "restart-4", "restart-4-cool")


def _solve(problem: Any, budget: float, seed: int, strategy: str) -> float:
    if strategy == "single":
        return glns.solve(problem, time_limit=budget, seed=seed).cost
    if strategy == "stretched":
        return glns.solve(problem, time_limit=budget, seed=seed, params=glns.SolveParams(epochs=None)).cost
    if strategy == "no-restart":
        return glns.solve(problem, time_limit=budget, seed=seed,
                          params=glns.SolveParams(restart=None, epochs=None)).cost
    segments = int(strategy.split("-")[1])
    cool = strategy.endswith("-cool")
    best = None
    for s in range(segments):
        params = glns.SolveParams(restart=None, epochs=None)
        if s > 0 and cool:
            default = glns.SolveParams().temperature
            params = glns.SolveParams(restart=None, epochs=None, temperature=AutoTemperature(
                worse=default.worse / 10, accept=default.accept, end_ratio=default.end_ratio * 10,
                reference_nodes=default.reference_nodes))
        result = glns.solve(problem, time_limit=budget / segments, seed=seed + 1000 * s,
                            params=params, initial_solution=best.solution if best else None)
        if best is None or result.cost < best.cost:
            best = result
    return best.cost


def _job(args: tuple[str, str, float, float, int, str]) -> dict[str, Any]:
    from glns.benchmark.instances import load_instance
    locator, name, fraction, budget, seed, strategy = args
    problem = load_instance(locator)
    t0 = time.perf_counter()
    cost = _solve(problem, budget, seed, strategy)
    return {"file": name, "fraction": fraction, "seed": seed, "strategy": strategy, "cost": cost,
            "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=16, help="every k-th X file by size")
    parser.add_argument("--files", nargs="+", help="these X files (by name) instead of --every")
    parser.add_argument("--max-nodes", type=int, default=700)
    parser.add_argument("--fractions", nargs="+", type=float, default=[0.1],
                        help="budgets as fractions of T (each run at each, with the same seed)")
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
    fractions = sorted(set(args.fractions), reverse=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(loc, name, f, problem.n_customers * 2.4 * f, seed, strategy)
            for loc, name, problem in group_files for f in fractions for seed in seeds
            for strategy in strategies]
    jobs.sort(key=lambda j: -j[3])          # longest first: the two workers finish together
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(_job, jobs))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rows.json").write_text(json.dumps(rows, indent=1))
    gap = {(r["file"], r["fraction"], r["seed"], r["strategy"]): 100 * (r["cost"] / refs[r["file"]] - 1)
           for r in rows}
    print("| file | T x | seed | " + " | ".join(strategies) + " |")
    print("|---|---|---|" + "---|" * len(strategies))
    for name in names:
        for f in fractions:
            for seed in seeds:
                cells = " | ".join(f"{gap[name, f, seed, s]:.2f} %" for s in strategies)
                print(f"| {name} | {f:g} | {seed} | {cells} |")
    for f in fractions:
        means = [statistics.mean(gap[name, f, seed, s] for name in names for seed in seeds) for s in strategies]
        print(f"| mean | {f:g} | | " + " | ".join(f"{m:.3f} %" for m in means) + " |")
    for shorter in fractions[1:]:
        worse = [sum(gap[name, fractions[0], seed, s] > gap[name, shorter, seed, s]
                     for name in names for seed in seeds) for s in strategies]
        print(f"| worse at T x {fractions[0]:g} than at T x {shorter:g} (same seed) | | | "
              + " | ".join(f"{w} / {len(names) * len(seeds)}" for w in worse) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
