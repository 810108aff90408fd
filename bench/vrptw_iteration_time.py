"""Time per iteration with time windows against without them, on the same data.

For each file the VRPTW (windows, service times, fleet; DIMACS rounding) and the CVRP on the
same coordinates, demands and capacity run the default portfolio for the same number of
iterations with `--seeds` seeds (1, 2, ...). Two processes run side by side (on a 2-core
machine one per core), and each runs both problems, seed by seed, one right after the other,
alternating which goes first (the other process the other way round). Measured: the process
time of each solve (the CPU time the solve took; the machine's other work is not in it).

The ratio of a file is the median over its pairs (seeds x processes) of the pair's VRPTW time
over its CVRP time: the two solves of a pair ran on one core one after the other, so a core
or a stretch of time that is slower than the rest (on this virtual machine the same solve has
taken from 0.10 to 0.17 ms an iteration) slows both. Printed: the median milliseconds per
iteration of each problem, the ratio, the spread of the pair ratios (lowest-highest), the
median and largest ratio over the files and how many exceed 1.5, the ratio of the medians of
wall time as well, and the routes of each last solution with their mean spare capacity: a
repair scans every route with room for a customer, so a CVRP whose routes are all nearly full
(C1_10_7's) scans far fewer routes per insertion than the VRPTW on the same data.

    python bench/vrptw_iteration_time.py                        # every 6th gh1000 file
    python bench/vrptw_iteration_time.py --every 1              # all 42 gh1000 files
    python bench/vrptw_iteration_time.py --group gh400 --every 1
    python bench/vrptw_iteration_time.py --group gh200 --every 10 --iterations 50000

Needs ``../shared/data/vrptw`` (or --data) and vrplib; says so when they are absent.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

GROUPS = {"gh200": "*.txt", "gh400": "*.txt", "gh1000": "*.vrp"}
TARGET = 1.5        # the most time per iteration VRPTW may take, as a multiple of the CVRP's


def _run(job: tuple[str, int, int, int]) -> dict[str, list[tuple[float, float, int, float]]]:
    """Both problems of one file, seeds 1..seeds, the first of each pair alternating with
    `order`: per problem a list, in seed order, of (process ms per iteration, wall ms per
    iteration, routes, mean spare capacity of the solution)."""
    path, iterations, order, seeds = job
    import glns

    vrptw = glns.read(path)
    cvrp = glns.CVRP(vrptw.coords, vrptw.demands, vrptw.capacity, rounding=vrptw.rounding)
    out: dict[str, list[tuple[float, float, int, float]]] = {"vrptw": [], "cvrp": []}
    for seed in range(1, seeds + 1):
        kinds = ("vrptw", "cvrp") if (seed + order) % 2 else ("cvrp", "vrptw")
        for kind in kinds:
            problem = vrptw if kind == "vrptw" else cvrp
            cpu, wall = time.process_time(), time.perf_counter()
            result = glns.solve(problem, iterations=iterations, seed=seed)
            its = max(result.iterations, 1)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            loads = [sum(int(problem.demands[v]) for v in route) for route in result.solution]
            out[kind].append((1e3 * cpu / its, 1e3 * wall / its, len(loads),
                              problem.capacity - statistics.mean(loads)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", choices=sorted(GROUPS), default="gh1000")
    ap.add_argument("--every", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=20000,
                    help="per run (the start solution's construction is in the time: 3,000 left it a large share)")
    ap.add_argument("--seeds", type=int, default=3, help="pairs of solves per process")
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
    ratios, wall_ratios = [], []
    print(f"{'file':<12} {'vrptw ms':>9} {'cvrp ms':>9} {'ratio':>6} {'pairs':>11} {'wall':>6}  "
          f"{'routes (spare)':>15} {'cvrp':>13}   ({args.iterations} iterations; process time; "
          f"medians over {args.seeds} seeds x 2 processes)")
    for path in files:
        with ctx.Pool(2) as pool:
            outs = pool.map(_run, [(str(path), args.iterations, order, args.seeds) for order in (0, 1)])
        runs = {kind: [x for out in outs for x in out[kind]] for kind in ("vrptw", "cvrp")}
        pairs = [tw[0] / cv[0] for tw, cv in zip(runs["vrptw"], runs["cvrp"])]
        tw_ms, cv_ms = (statistics.median(x[0] for x in runs[k]) for k in ("vrptw", "cvrp"))
        tw_wall, cv_wall = (statistics.median(x[1] for x in runs[k]) for k in ("vrptw", "cvrp"))
        (_, _, tw_routes, tw_spare), (_, _, cv_routes, cv_spare) = runs["vrptw"][-1], runs["cvrp"][-1]
        ratios.append(statistics.median(pairs))
        wall_ratios.append(tw_wall / cv_wall)
        spread = f"{min(pairs):.2f}-{max(pairs):.2f}"
        print(f"{path.stem:<12} {tw_ms:>9.4f} {cv_ms:>9.4f} {ratios[-1]:>6.2f} {spread:>11} {wall_ratios[-1]:>6.2f}"
              f"  {tw_routes:>7} ({tw_spare:>5.1f}) {cv_routes:>5} ({cv_spare:>5.1f})", flush=True)
    print(f"\nratio vrptw / cvrp over {len(ratios)} files: median {statistics.median(ratios):.2f}, "
          f"max {max(ratios):.2f}; above {TARGET}x on {sum(r > TARGET for r in ratios)} "
          f"(wall time: median {statistics.median(wall_ratios):.2f}, max {max(wall_ratios):.2f}, "
          f"above {TARGET}x on {sum(r > TARGET for r in wall_ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
