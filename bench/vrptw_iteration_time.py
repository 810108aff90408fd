"""Time per iteration with time windows against without them, on the same data.

For each file the VRPTW (windows, service times, fleet; DIMACS rounding) and the CVRP on the
same coordinates, demands and capacity run the default portfolio for the same number of
iterations, side by side (one process each, on a 2-core machine one per core), with three
seeds one after the other. Printed: median milliseconds per iteration of each and their ratio
per file, and the median ratio over the files.

    python bench/vrptw_iteration_time.py                        # every 6th gh1000 file
    python bench/vrptw_iteration_time.py --group gh200 --every 10 --iterations 5000

Needs ``../shared/data/vrptw`` (or --data) and vrplib; says so when they are absent.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
from pathlib import Path

GROUPS = {"gh200": "*.txt", "gh400": "*.txt", "gh1000": "*.vrp"}


def _run(job: tuple[str, str, int]) -> tuple[str, float]:
    path, kind, iterations = job
    import glns

    problem = glns.read(path)
    if kind == "cvrp":
        problem = glns.CVRP(problem.coords, problem.demands, problem.capacity, rounding=problem.rounding)
    times = []
    for seed in (1, 2, 3):
        result = glns.solve(problem, iterations=iterations, seed=seed)
        times.append(1e3 * result.runtime / max(result.iterations, 1))
    return kind, statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", choices=sorted(GROUPS), default="gh1000")
    ap.add_argument("--every", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=3000)
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
    print(f"{'file':<12} {'vrptw ms':>9} {'cvrp ms':>9} {'ratio':>6}   ({args.iterations} iterations, "
          "median of 3 seeds, side by side)")
    for path in files:
        with ctx.Pool(2) as pool:
            out = dict(pool.map(_run, [(str(path), k, args.iterations) for k in ("vrptw", "cvrp")]))
        ratios.append(out["vrptw"] / out["cvrp"])
        print(f"{path.stem:<12} {out['vrptw']:>9.4f} {out['cvrp']:>9.4f} {ratios[-1]:>6.2f}", flush=True)
    print(f"\nmedian ratio vrptw / cvrp: {statistics.median(ratios):.2f} over {len(ratios)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
