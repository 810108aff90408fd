"""Command line: ``glns solve`` (more subcommands arrive with the evolution and bench issues)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import glns


def _instance(args: argparse.Namespace) -> glns.Problem:
    from glns import datasets

    if args.instance:
        return datasets.read(args.instance, rounding=args.rounding, problem=args.problem)
    make = {"tsp": datasets.generate_tsp, "cvrp": datasets.generate_cvrp,
            "ovrp": datasets.generate_ovrp}[args.problem or "cvrp"]
    return make(args.size, args.instance_seed)


def _cmd_solve(args: argparse.Namespace) -> int:
    problem = _instance(args)
    params = glns.SolveParams.paper() if args.paper else glns.SolveParams()
    result = glns.solve(problem, args.destroy, args.repair, iterations=args.iterations,
                        time_limit=args.time_limit, seed=args.seed, params=params)
    if args.json:
        print(json.dumps({"instance": repr(problem), "cost": result.cost,
                          "routes": result.num_routes, "iterations": result.iterations,
                          "runtime": result.runtime, "solution": result.solution}))
    else:
        print(f"instance   {problem!r}")
        print(f"cost       {result.cost:.6f}")
        print(f"routes     {result.num_routes}")
        print(f"iterations {result.iterations}")
        print(f"time       {result.runtime:.3f} s")
        if args.verbose:
            print(result.summary())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glns", description=glns.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"glns {glns.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve one instance (default: a generated CVRP100)")
    s.add_argument("instance", nargs="?", help="a TSPLIB .tsp or CVRPLIB .vrp file (needs vrplib)")
    s.add_argument("--problem", choices=["tsp", "cvrp", "ovrp"], help="problem type (default cvrp)")
    s.add_argument("--size", type=int, default=100, help="size of the generated instance")
    s.add_argument("--instance-seed", type=int, default=0, help="seed of the generated instance")
    s.add_argument("--rounding", choices=["nint", "exact"], default="nint",
                   help="distances of benchmark files: TSPLIB nint (default) or raw floats")
    s.add_argument("--destroy", nargs="+", default=None, help="native destroy operator names")
    s.add_argument("--repair", nargs="+", default=None, help="native repair operator names")
    s.add_argument("--iterations", type=int, default=None)
    s.add_argument("--time-limit", type=float, default=None, help="seconds")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--paper", action="store_true", help="use the paper's parameter preset")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("-v", "--verbose", action="store_true", help="print operator statistics")
    s.set_defaults(func=_cmd_solve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, ImportError, OSError) as exc:
        print(f"glns: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
