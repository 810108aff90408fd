"""Mean objective at 500 iterations with the native seed operators on the paper's test sets,
next to the paper's rows (SPEC §5). Usage: python bench/seed_quality.py [--sizes 10 20 ...]"""

from __future__ import annotations

import argparse
import time

import numpy as np

import glns
from glns.datasets import paper_instances, reference_objectives

PAPER_ROWS = {
    "tsp": {"standard ALNS": [2.840, 3.960, 6.040, 8.192, 11.290],
            "G-LNS": [2.833, 3.826, 5.738, 7.899, 10.805]},
    "cvrp": {"standard ALNS": [3.172, 4.818, 8.492, 14.291, 25.674],
             "G-LNS": [3.141, 4.707, 8.250, 13.817, 24.774]},
    "ovrp": {"G-LNS": [2.2890, 3.4371, 5.7163, 8.8979, 14.8841]},
}
SIZES = [10, 20, 50, 100, 200]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    ap.add_argument("--problems", nargs="+", default=["tsp", "cvrp", "ovrp"])
    ap.add_argument("--iterations", type=int, default=500)
    args = ap.parse_args()
    for kind in args.problems:
        rows: dict[str, list[str]] = {}
        for n in args.sizes:
            insts = paper_instances(kind, n)
            ref = reference_objectives(kind, n)
            for label, params in (("glns seeds, paper preset", glns.SolveParams.paper()),
                                  ("glns seeds, default params", glns.SolveParams())):
                t = time.perf_counter()
                costs = [glns.solve(p, iterations=args.iterations, seed=i, params=params).cost
                         for i, p in enumerate(insts)]
                secs = (time.perf_counter() - t) / len(insts)
                gap = f" ({100 * (np.mean(costs) / np.mean(ref) - 1):+.2f} %)" if ref is not None else ""
                rows.setdefault(label, []).append(f"{np.mean(costs):.4f}{gap} {1000 * secs:.0f} ms")
            if ref is not None:
                rows.setdefault("reference (LKH-3 / best of OR-Tools, PyVRP)", []).append(f"{np.mean(ref):.4f}")
        for label, values in PAPER_ROWS.get(kind, {}).items():
            rows[f"paper {label}"] = [f"{values[SIZES.index(n)]:.4f}" for n in args.sizes]
        print(f"\n{kind.upper()}, mean of 64 instances, {args.iterations} iterations (time per instance)\n")
        print("| | " + " | ".join(str(n) for n in args.sizes) + " |")
        print("|---|" + "---|" * len(args.sizes))
        for label, values in rows.items():
            print(f"| {label} | " + " | ".join(values) + " |")


if __name__ == "__main__":
    main()
