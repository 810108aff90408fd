"""glns against PyVRP on the Gehring-Homberger VRPTW files, side by side at equal time.

For each file the two solvers run at the same time, one process each (a 2-core machine: one
solver per core), with DIMACS rounding and the fleet from the file. Every solution is checked
again, and its distance recomputed, by plain Python code that shares nothing with either solver
(`check` below: distances from the coordinates, truncated to one decimal). Printed: one line per
file and a summary per group (mean distance; for gh1000 the mean gap to the best-known
distances of the .sol files, which are distance-only under DIMACS rounding). The gh200/gh400
best solutions minimise vehicles first, so those groups compare the two solvers only.

    python bench/vrptw_pyvrp.py --group gh1000 --seconds 60 --every 6
    python bench/vrptw_pyvrp.py --group gh200 --per-100 6 --every 10
    python bench/vrptw_pyvrp.py --group gh1000 --seconds 600 --every 21 --offset 15   # R1_10_2, RC2_10_2

Needs ``../shared/data/vrptw`` (or --data) and the bench extra (pyvrp, vrplib); says so and
stops when they are absent.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import statistics
import sys
from pathlib import Path

GROUPS = {"gh200": "*.txt", "gh400": "*.txt", "gh1000": "*.vrp"}


def _better(a: float, b: float) -> bool:
    """a shorter than b at the precision of DIMACS distances (sums in another order differ in
    the last bits)."""
    return round(a, 1) < round(b, 1)


def check(path: str, routes: list) -> tuple[bool, float, str]:
    """(feasible, distance, why not) of a solution of the file, from the file alone: its
    coordinates, demands, windows, service times and fleet as vrplib reads them, DIMACS
    distances floor(10 d) / 10 computed here."""
    import vrplib

    fmt = "solomon" if path.endswith(".txt") else "vrplib"
    inst = vrplib.read_instance(path, instance_format=fmt, compute_edge_weights=False)
    xy, q, tw = inst["node_coord"], inst["demand"], inst["time_window"]
    n = len(xy)
    service = inst.get("service_time", 0)
    service = [0.0] + ([float(service)] * (n - 1) if not hasattr(service, "__len__")
                       else [float(s) for s in list(service)[1:]])

    def d(a: int, b: int) -> float:
        return math.floor(10.0 * math.hypot(xy[a][0] - xy[b][0], xy[a][1] - xy[b][1])) / 10.0

    if sorted(c for r in routes for c in r) != list(range(1, n)):
        return False, math.nan, "not every customer exactly once"
    if len(routes) > int(inst["vehicles"]):
        return False, math.nan, f"{len(routes)} routes > {inst['vehicles']} vehicles"
    total = 0.0
    for route in routes:
        if sum(int(q[c]) for c in route) > int(inst["capacity"]):
            return False, math.nan, "capacity"
        t, prev = float(tw[0][0]), 0
        for c in route:
            total += d(prev, c)
            t = max(t + d(prev, c), float(tw[c][0]))
            if t > float(tw[c][1]) + 1e-6:
                return False, math.nan, f"customer {c} served at {t} > {tw[c][1]}"
            t += service[c]
            prev = c
        total += d(prev, 0)
        if t + d(prev, 0) > float(tw[0][1]) + 1e-6:
            return False, math.nan, "late back at the depot"
    return True, total, ""


def _run(job: tuple[str, str, float, int]) -> tuple[str, list, float, int]:
    solver, path, seconds, seed = job
    import glns

    problem = glns.read(path)       # DIMACS rounding, the file's fleet
    if solver == "glns":
        result = glns.solve(problem, time_limit=seconds, seed=seed)
        return solver, result.solution, result.runtime, result.iterations
    from glns.benchmark.baselines import pyvrp_hgs

    run = pyvrp_hgs.solve(problem, seconds, None, seed, None)
    return solver, run.solution, run.seconds, run.iterations or 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", choices=sorted(GROUPS), default="gh1000")
    ap.add_argument("--seconds", type=float, help="time per instance (default: --per-100 x n/100)")
    ap.add_argument("--per-100", type=float, default=6.0, help="seconds per 100 customers")
    ap.add_argument("--every", type=int, default=1, help="every k-th file, sorted by name")
    ap.add_argument("--offset", type=int, default=0, help="start at this file of the sorted list")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "vrptw"))
    ap.add_argument("--json", help="write the per-file records here")
    args = ap.parse_args()
    folder = Path(args.data) / args.group
    try:
        import pyvrp  # noqa: F401
        import vrplib  # noqa: F401
    except ImportError as exc:
        print(f"needs the bench extra ({exc.name} missing): pip install 'glns[bench]'")
        return 2
    files = sorted(folder.glob(GROUPS[args.group]))[args.offset::args.every]
    if not files:
        print(f"no {args.group} files in {folder}: the VRPTW benchmark data is absent")
        return 2
    n = {"gh200": 200, "gh400": 400, "gh1000": 1000}[args.group]
    seconds = args.seconds or args.per_100 * n / 100
    ctx = mp.get_context("spawn")
    records = []
    print(f"{args.group}: {len(files)} files, {seconds:g} s each, seed {args.seed}, "
          "one process per solver")
    print(f"{'file':<12} {'glns':>10} {'routes':>6} {'iters':>8} {'pyvrp':>10} {'routes':>6} "
          f"{'iters':>8} {'best':>10}")
    for path in files:
        with ctx.Pool(2) as pool:
            out = pool.map(_run, [(s, str(path), seconds, args.seed) for s in ("glns", "pyvrp")])
        rec = {"file": path.stem}
        for solver, routes, secs, iters in out:
            ok, dist, why = check(str(path), routes)
            if not ok:
                print(f"{path.stem}: {solver} solution infeasible: {why}")
            rec[solver] = {"distance": dist if ok else None, "routes": len(routes),
                           "seconds": secs, "iterations": iters, "feasible": ok}
        sol = path.with_suffix(".sol")
        best = None
        if args.group == "gh1000" and sol.is_file():
            for line in sol.read_text(errors="replace").splitlines():
                if line.lower().startswith("cost"):
                    best = float(line.split()[1])
        rec["best_known"] = best
        records.append(rec)
        g, p = rec["glns"], rec["pyvrp"]
        print(f"{path.stem:<12} {g['distance'] or math.nan:>10.1f} {g['routes']:>6} {g['iterations']:>8} "
              f"{p['distance'] or math.nan:>10.1f} {p['routes']:>6} {p['iterations']:>8} "
              f"{best or math.nan:>10.1f}", flush=True)
    ok = [r for r in records if r["glns"]["feasible"] and r["pyvrp"]["feasible"]]
    mean = {s: statistics.fmean(r[s]["distance"] for r in ok) for s in ("glns", "pyvrp")} if ok else {}
    print(f"\nfeasible: glns {sum(r['glns']['feasible'] for r in records)}/{len(records)}, "
          f"pyvrp {sum(r['pyvrp']['feasible'] for r in records)}/{len(records)}")
    if mean:
        print(f"mean distance: glns {mean['glns']:.1f}, pyvrp {mean['pyvrp']:.1f} "
              f"(glns / pyvrp {mean['glns'] / mean['pyvrp']:.4f}); glns better on "
              f"{sum(_better(r['glns']['distance'], r['pyvrp']['distance']) for r in ok)}, PyVRP on "
              f"{sum(_better(r['pyvrp']['distance'], r['glns']['distance']) for r in ok)} of {len(ok)} files")
    gapped = [r for r in ok if r["best_known"]]
    if gapped:
        for s in ("glns", "pyvrp"):
            gaps = [100 * (r[s]["distance"] / r["best_known"] - 1) for r in gapped]
            print(f"mean gap to best known, {s}: {statistics.fmean(gaps):.2f} %")
    if args.json:
        Path(args.json).write_text(json.dumps({"group": args.group, "seconds": seconds,
                                               "seed": args.seed, "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
