"""Time per iteration with time windows against without them, on the same data.

For each file the VRPTW (windows, service times, fleet; DIMACS rounding) and the CVRP on the
same coordinates, demands and capacity run the default portfolio for the same number of
iterations, side by side (one process each, on a 2-core machine one per core), with three
seeds one after the other (20,000 iterations each by default). Printed: median milliseconds per
iteration of each and their ratio per file, the median and largest ratio over the files and how
many exceed 1.5, and the routes of each last solution with their mean spare capacity: a repair
scans every route with room for a customer, so a CVRP whose routes are all nearly full
(C1_10_7's) scans far fewer routes per insertion than the VRPTW on the same data.

    python bench/vrptw_iteration_time.py                        # every 6th gh1000 file
    python bench/vrptw_iteration_time.py --every 1              # all 42 gh1000 files
    python bench/vrptw_iteration_time.py --group gh200 --every 10 --iterations 50000

Needs ``../shared/data/vrptw`` (or --data) and vrplib; says so when they are absent.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
from pathlib import Path

GROUPS = {"gh200": "*.txt", "gh400": "*.txt", "gh1000": "*.vrp"}
TARGET = 1.5        # the most time per iteration VRPTW may take, as a multiple of the CVRP's


def _run(job: tuple[str, str, int]) -> tuple[str, tuple[float, int, float]]:
    """(kind, (median ms per iteration, routes, mean spare capacity of the last seed's solution))."""
    path, kind, iterations = job
    import glns

    problem = glns.read(path)
    if kind == "cvrp":
        problem = glns.CVRP(problem.coords, problem.demands, problem.capacity, rounding=problem.rounding)
    times = []
    for seed in (1, 2, 3):
        result = glns.solve(problem, iterations=iterations, seed=seed)
        times.append(1e3 * result.runtime / max(result.iterations, 1))
    loads = [sum(int(problem.demands[v]) for v in route) for route in result.solution]
    spare = problem.capacity - statistics.mean(loads)
    return kind, (statistics.median(times), len(loads), spare)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", choices=sorted(GROUPS), default="gh1000")
    ap.add_argument("--every", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=20000,
                    help="per run (the start solution's construction is in the time: 3,000 left it a large share)")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "vrptw"))
    args = ap.parse_args()
    try:
        import vrplib  # noqa: F401
    except ImportError:
        print("needs vrplib: pip install 'glns[bench]'")
        return 2
    files = sorted((Path(args.data) / args.group).glob(GROUPS[args.group]))[::args.every]
    if not files:
        print(f"no {args.group} files in {args.data}: the VRPTW benchmark data is absent")
        return 2
    ctx = mp.get_context("spawn")
    ratios = []
    print(f"{'file':<12} {'vrptw ms':>9} {'cvrp ms':>9} {'ratio':>6}  {'routes (spare)':>15} {'cvrp':>13}"
          f"   ({args.iterations} iterations, median of 3 seeds, side by side)")
    for path in files:
        with ctx.Pool(2) as pool:
            out = dict(pool.map(_run, [(str(path), k, args.iterations) for k in ("vrptw", "cvrp")]))
        (tw_ms, tw_routes, tw_spare), (cv_ms, cv_routes, cv_spare) = out["vrptw"], out["cvrp"]
        ratios.append(tw_ms / cv_ms)
        print(f"{path.stem:<12} {tw_ms:>9.4f} {cv_ms:>9.4f} {ratios[-1]:>6.2f}  {tw_routes:>7} ({tw_spare:>5.1f})"
              f" {cv_routes:>5} ({cv_spare:>5.1f})", flush=True)
    print(f"\nratio vrptw / cvrp over {len(ratios)} files: median {statistics.median(ratios):.2f}, "
          f"max {max(ratios):.2f}; above {TARGET}x on {sum(r > TARGET for r in ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
