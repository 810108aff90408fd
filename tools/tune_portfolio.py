"""Compare native operator portfolios on generated tuning instances (never the test sets).

The default portfolio of ``glns.solve`` was chosen with this script: every candidate runs on
the same generated instances (seeds 10_000 + i, disjoint from the paper's test and training
sets), at the paper's budget of 500 iterations and, with --time-limit, at a wall-time budget.

Usage: python tools/tune_portfolio.py --problem cvrp --sizes 50 100 --instances 16 \
           --candidates default seeds-paper sisr sisr-ls
       python tools/tune_portfolio.py --sizes 300 --capacity 35 --instances 6 \
           --time-limit 36 --workers 2 --candidates default k60    # short routes
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

import numpy as np

import glns
from glns import operators as ops
from glns.datasets import generate_cvrp, generate_ovrp, generate_tsp

TUNING_SEED = 10_000


def _instance(kind: str, n: int, i: int, capacity: int | None = None) -> glns.Problem:
    gen: Callable[..., glns.Problem] = {"tsp": generate_tsp, "cvrp": generate_cvrp, "ovrp": generate_ovrp}[kind]
    return gen(n, TUNING_SEED + i) if capacity is None else gen(n, TUNING_SEED + i, capacity=capacity)


def candidates(kind: str) -> dict[str, Callable[[], dict[str, Any]]]:
    """Named solve() keyword sets, built lazily. Edit freely: this is a lab bench, not an API."""
    vrp = kind != "tsp"
    P = glns.SolveParams
    ls = dict(local_search=1)
    small = dict(destroy_fraction=(0.05, 0.2), max_destroy=30)
    return {
        "default": lambda: {},
        # the default without large_destroy's cap below 400 customers (on short routes too)
        "k60": lambda: dict(params=P(large_destroy=(400, 60))),
        "seeds-paper": lambda: dict(destroy=["random_removal", "worst_removal"],
                                    repair="greedy_insertion", params=P.paper()),
        "sisr": lambda: dict(destroy="string_removal", repair=ops.native("blink_insertion", order=4),
                             params=P(**small)),
        "sisr-ls": lambda: dict(destroy="string_removal",
                                repair=ops.native("blink_insertion", order=4, **ls), params=P(**small)),
        "mix-ls": lambda: dict(
            destroy=["string_removal", "related_removal", "random_removal"] + (["route_removal"] if vrp else []),
            repair=[ops.native("blink_insertion", order=4, **ls), ops.native("regret_insertion", k=2, **ls)],
            params=P(destroy_fraction=(0.05, 0.25), max_destroy=30)),
    }


def _run(task: tuple[str, int, int, str, dict[str, Any], int | None]) -> tuple[float, float, int]:
    kind, n, i, name, budget, capacity = task
    problem = _instance(kind, n, i, capacity)
    kwargs = candidates(kind)[name]()
    t = time.perf_counter()
    res = glns.solve(problem, seed=i, **kwargs, **budget)
    problem.check(res.solution)
    return res.cost, time.perf_counter() - t, res.iterations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="cvrp", choices=["tsp", "cvrp", "ovrp"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--instances", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--candidates", nargs="+", default=None)
    ap.add_argument("--capacity", type=int, default=None,
                    help="vehicle capacity of the generated VRPs (default: the paper's for n)")
    args = ap.parse_args()
    names = args.candidates or list(candidates(args.problem))
    budget = {"time_limit": args.time_limit} if args.time_limit else {"iterations": args.iterations}
    capacity = f", capacity {args.capacity}" if args.capacity else ""
    print(f"{args.problem.upper()}, {args.instances} tuning instances{capacity}, budget {budget}")
    print("| candidate | " + " | ".join(str(n) for n in args.sizes) + " |")
    print("|---|" + "---|" * len(args.sizes))
    for name in names:
        cells = []
        for n in args.sizes:
            tasks = [(args.problem, n, i, name, budget, args.capacity) for i in range(args.instances)]
            if args.workers > 1:
                with ProcessPoolExecutor(args.workers) as pool:
                    out = list(pool.map(_run, tasks))
            else:
                out = [_run(t) for t in tasks]
            costs, secs, iters = (np.array(c) for c in zip(*out))
            cells.append(f"{costs.mean():.4f} ({1000 * np.median(secs):.0f} ms, {np.median(iters):.0f} it)")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
