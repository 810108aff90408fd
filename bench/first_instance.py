"""The first instance of a fresh process against the later ones: what recording and choosing
each Python operator's form costs (docs/fast-operators.md).

Each round starts new Python processes that solve N instances one after the other with the
same 5 + 5 Python operators (their compiled twins already in the cache, as after a first run or
``glns compile``), and reports the wall time of each instance. Three settings:

- ``kept``: the defaults, with the forms an earlier process decided kept on disk
  (``GLNS_DECISION_DIR``, filled once before the rounds): every process after the first;
- ``fresh``: the defaults with no kept decision (an empty ``GLNS_DECISION_DIR``): the first
  instance records every operator's first calls, replays them in the other forms and switches;
- ``plain``: ``views="numpy", compile="off"``, the control.

Printed: per round the first instance's time over the median of the later ones, then the
median of that ratio over the rounds.

    python bench/first_instance.py                       # paper-style CVRP100, 500 iterations
    python bench/first_instance.py --set corpus --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import glns
from glns import compiler
from glns.datasets import paper_instances
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries
style, n_inst, iterations, plain = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
if style == "corpus":
    d = [e.source() for e in good_entries("cvrp", "destroy")[:5]]
    r = [e.source() for e in good_entries("cvrp", "repair")[:5]]
else:
    d, r = list(paper_style.SOURCES["vrp"]["destroy"][:5]), list(paper_style.SOURCES["vrp"]["repair"][:5])
params = glns.SolveParams.paper(views="numpy", compile="off") if plain else glns.SolveParams.paper(compile="cached")
times, forms = [], None
for i, p in enumerate(paper_instances("cvrp", 100)[:n_inst]):
    t0 = time.perf_counter()
    res = glns.solve(p, d, r, iterations=iterations, seed=i, params=params)
    times.append(time.perf_counter() - t0)
    forms = [s.form for s in res.destroy_stats + res.repair_stats]
print(json.dumps({"times": times, "forms": forms}))
"""


def _warm_cache(style: str) -> None:
    """Build the compiled twins once (the runs measured take them from the cache)."""
    code = ("from glns import compiler\nfrom glns.offline_llm import paper_style\n"
            "from glns.offline_llm.corpus import good_entries\n"
            f"style = {style!r}\n"
            "srcs = ([e.source() for k in ('destroy', 'repair') for e in good_entries('cvrp', k)[:5]]\n"
            "        if style == 'corpus' else [s for k in ('destroy', 'repair') for s in "
            "paper_style.SOURCES['vrp'][k][:5]])\n"
            "print(sum(compiler.compile_source(s).ok for s in srcs), 'of', len(srcs), 'compiled')\n")
    print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="paper-style", choices=["paper-style", "corpus"])
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    _warm_cache(args.set)
    kept = tempfile.mkdtemp(prefix="glns-decisions-")

    def child(mode: str) -> dict:
        env = dict(os.environ, GLNS_DECISION_DIR=kept if mode == "kept" else tempfile.mkdtemp())
        out = subprocess.run([sys.executable, "-c", CHILD, args.set, str(args.instances),
                              str(args.iterations), "1" if mode == "plain" else "0"],
                             capture_output=True, text=True, check=True, env=env)
        return json.loads(out.stdout.strip().splitlines()[-1])

    child("kept")   # the process that decides and keeps the decisions
    ratios: dict[str, list[float]] = {"kept": [], "fresh": [], "plain": []}
    for rnd in range(args.rounds):
        for mode in ratios:
            run = child(mode)
            first, later = run["times"][0], statistics.median(run["times"][1:])
            ratios[mode].append(first / later)
            print(f"round {rnd + 1} {mode}: first {first:.3f} s, later median {later:.3f} s, "
                  f"ratio {first / later:.2f}; forms {run['forms']}")
    for mode, values in ratios.items():
        print(f"{mode}: first / later instance, median of {args.rounds} processes: "
              f"{statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
