"""The random start against the space-filling start on large instances.

For every problem, size n and budget, one uniform instance (``glns.datasets.generate(problem,
n, seed)``) is solved twice with the default portfolio and ``time_limit``: with
``SolveParams(initial="random")`` (the paper's start) and with ``initial="space_filling"`` (what
"auto", the default, does from ``SPACE_FILLING_FROM`` customers on). ``--files`` runs instance
files instead (``glns.read``), each with the budget ``--time-per-100`` x n / 100 s, and gives
the gap to the best-known cost of its ``.sol`` file. The two runs go side by side, one child
process per core, each preparing its own ``problem.core`` first (not timed).
Per run: the wall time of the ``glns.solve`` call (the budget is checked between iterations, so
a long first iteration overruns it), the iterations, the first iteration's seconds, the cost
after the first iteration, and the final cost. Rows go to ``DIR/start.json`` and
``DIR/start.md``. Usage::

    python bench/start.py                                  # tsp cvrp, n = 5,000 10,000 30,000, 1 s and 10 s
    python bench/start.py --problems cvrp --sizes 10000 --seconds 1 --seeds 1 2 3 --out start-cvrp
    python bench/start.py --files ../shared/data/large/XXL/Ghent1.vrp --time-per-100 2.4 --out start-xxl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

STARTS = ("random", "space_filling")


def load(problem_kind: str, n: int, seed: int):
    """A generated instance, or the file `problem_kind` (n and seed unused) and its best-known
    cost (None for a generated one or without a .sol file)."""
    import glns
    from glns.datasets import generate

    if problem_kind not in ("tsp", "cvrp", "ovrp"):
        problem = glns.read(problem_kind)
        sol = Path(problem_kind).with_suffix(".sol")
        return problem, (glns.read_solution(sol)[1] if sol.exists() else None)
    return generate(problem_kind, n, seed), None


def run_one(problem_kind: str, n: int, seconds: float, seed: int, start: str) -> dict:
    """One solve in this (child) process."""
    import glns

    problem, best_known = load(problem_kind, n, seed)
    problem.core
    params = glns.SolveParams(initial=start)
    t = time.perf_counter()
    result = glns.solve(problem, time_limit=seconds, seed=seed, params=params)
    wall = time.perf_counter() - t
    return {"problem": problem_kind, "n": n, "seconds": seconds, "seed": seed, "start": start,
            "wall": wall, "iterations": result.iterations,
            "first_iteration": float(result.iteration_seconds[0]) if result.iterations else None,
            "after_first": float(result.current_curve[0]) if result.iterations else None,
            "cost": result.cost,
            "gap": 100 * (result.cost / best_known - 1) if best_known else None}


def table(rows: list[dict]) -> str:
    """Per problem, n and budget: medians over seeds of both starts, and the cost ratio."""
    lines = ["| problem | n | budget s | start | wall s | iterations | first iteration s | "
             "cost after it | final cost | final / random | gap % |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["problem"], r["n"], r["seconds"]) for r in rows})
    for problem, n, seconds in keys:
        group = [r for r in rows if (r["problem"], r["n"], r["seconds"]) == (problem, n, seconds)]
        by_seed = {}
        for r in group:
            by_seed.setdefault(r["seed"], {})[r["start"]] = r
        for start in STARTS:
            mine = [r for r in group if r["start"] == start]
            if not mine:
                continue
            ratios = [s[start]["cost"] / s["random"]["cost"] for s in by_seed.values()
                      if start in s and "random" in s]
            med = lambda key: statistics.median(r[key] for r in mine)  # noqa: E731
            gaps = [r["gap"] for r in mine if r["gap"] is not None]
            gap = f"{statistics.median(gaps):.2f}" if gaps else "–"
            lines.append(f"| {Path(problem).stem} | {n} | {seconds:g} | {start} | {med('wall'):.2f} | "
                         f"{med('iterations'):.0f} | {med('first_iteration'):.3f} | "
                         f"{med('after_first'):.4f} | {med('cost'):.4f} | "
                         f"{statistics.median(ratios):.4f} | {gap} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=["tsp", "cvrp"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[5000, 10000, 30000])
    ap.add_argument("--seconds", nargs="+", type=float, default=[1.0, 10.0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument("--files", nargs="+", default=[], help="instance files instead of generated ones")
    ap.add_argument("--time-per-100", type=float, default=2.4, help="with --files: seconds per 100 customers")
    ap.add_argument("--out", default="start-bench")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    if args.files:
        import glns

        sizes = {f: glns.read(f).n_customers for f in args.files}
        configs = [(f, sizes[f], sizes[f] / 100 * args.time_per_100) for f in args.files]
    else:
        configs = [(p, n, s) for p in args.problems for n in args.sizes for s in args.seconds]
    with ProcessPoolExecutor(max_workers=2) as pool:
        for problem, n, seconds in configs:
            for seed in args.seeds:
                # the two starts side by side, one process each
                futures = [pool.submit(run_one, problem, n, seconds, seed, start) for start in STARTS]
                for f in futures:
                    r = f.result()
                    rows.append(r)
                    print(f"{Path(problem).stem} n={n} {seconds:g} s seed {seed} {r['start']}: wall "
                          f"{r['wall']:.2f} s, {r['iterations']} iterations, first "
                          f"{r['first_iteration']:.3f} s, cost {r['cost']:.4f}", flush=True)
                (out / "start.json").write_text(json.dumps(rows, indent=1))
                (out / "start.md").write_text(table(rows) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
