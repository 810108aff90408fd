"""Final testing of an evolution export with views and compilation on vs off.

The workload of the paper's final test: the 64 CVRP100 test instances
(``paper_instances("cvrp", 100)``) x 500 iterations, paper preset, run by ``glns.solve_many``
with one worker process per core. The operators are an evolution export (``best_operators.py``
written by ``glns.evolution.export.export_module``) holding 5 destroy and 5 repair Python
operators, passed as the module: the run uses all ten (its populations), as
``glns bench population:PATH`` does. Two operator sets:

- ``corpus``: the first five of each kind of the offline LLM's CVRP corpus (NumPy style);
- ``paper-style``: ``glns.offline_llm.paper_style`` (the paper's list style, ``dist_mat[a][b]``).

Modes, each in its own fresh pool and in alternation (``--rounds``):

- ``cold``: the defaults on an empty compile cache and no kept decisions (a new machine): the
  caller builds the compiled twins in the background while the workers start interpreted and
  decide each operator's form on its first calls;
- ``warm``: the defaults with the twins in the cache and the forms decided by an earlier run
  kept (after ``glns compile`` and one run): the workers negotiate nothing;
- ``off``: ``views="numpy", compile="off"`` (glns without negotiated views and compiled twins).

Printed per mode: the wall time, and the wall time of each worker's first task (instances 0
and 1 with two workers) against the median task. Every mode must give the same costs (checked). Usage::

    python bench/final_testing.py                         # both sets, 64 instances, 2 workers
    python bench/final_testing.py --sets paper-style --instances 16 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from glns import compiler
from glns.evolution import load_module
from glns.evolution.export import export_module
from glns.evolution.population import Member
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries

MODES = ("cold", "warm", "off")


def export(path: Path, style: str) -> Path:
    """An evolution export of 5 destroy and 5 repair operators of the given set."""
    if style == "corpus":
        picks = {k: [(e.source(), e.func.__name__) for e in good_entries("cvrp", k)[:5]]
                 for k in ("destroy", "repair")}
    else:
        funcs = {"destroy": paper_style.VRP_DESTROY, "repair": paper_style.VRP_REPAIR}
        picks = {k: list(zip(paper_style.SOURCES["vrp"][k], (f.__name__ for f in funcs[k])))
                 for k in ("destroy", "repair")}
    members = {k: [Member(f"{k[0]}{i}", k, src, fn, fn, "i1" if k == "destroy" else "i2")
                   for i, (src, fn) in enumerate(picks[k])] for k in picks}
    return export_module(path, members["destroy"], members["repair"], None, {"problem": "cvrp"})


CHILD = r"""
import json, sys, time
import glns
from glns.batch import solve_many
from glns.datasets import paper_instances
from glns.evolution import load_module
path, n, iterations, workers, plain = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
params = glns.SolveParams.paper(views="numpy", compile="off") if plain else glns.SolveParams.paper()
module = load_module(path)
t0 = time.perf_counter()
results = solve_many(paper_instances("cvrp", 100)[:n], module, iterations=iterations, seed=1, params=params,
                     workers=workers, progress=False)
print(json.dumps({"wall": time.perf_counter() - t0, "runtimes": [r.runtime for r in results],
                  "costs": [r.cost for r in results],
                  "forms": {s.name: s.form for s in results[0].destroy_stats + results[0].repair_stats}}))
"""


def run(path: Path, args: argparse.Namespace, mode: str, cache: str, instances: int | None = None) -> dict:
    """One solve_many in a new process whose workers (forked from a server of that process)
    see the cache directory `cache` (a worker pool keeps the environment it started with)."""
    env = dict(os.environ, GLNS_CACHE_DIR=cache, GLNS_DECISION_DIR=cache + "/decisions")
    env.pop("GLNS_COMPILE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(instances or args.instances),
                          str(args.iterations), str(args.workers), "1" if mode == "off" else "0"],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["corpus", "paper-style"], choices=["corpus", "paper-style"])
    ap.add_argument("--instances", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="timed runs per mode, alternating")
    args = ap.parse_args()
    print(f"{args.instances} x CVRP100 x {args.iterations} iterations, paper preset, "
          f"{args.workers} worker(s); compiler: {compiler.unavailable_reason() or 'available'}")
    for style in args.sets:
        with tempfile.TemporaryDirectory() as tmp:
            path = export(Path(tmp) / "best_operators.py", style)
            module = load_module(path)
            warm = tempfile.mkdtemp(prefix="glns-warm-")
            t0 = time.perf_counter()
            builds = [compiler.compile_source(op.source, cache_dir=warm) for op in module.DESTROY + module.REPAIR]
            print(f"\n{style}: compile {time.perf_counter() - t0:.1f} s for 10 operators "
                  f"({sum(not b.ok for b in builds)} failed)")
            run(path, args, "warm", warm, instances=args.workers)   # decides, and keeps the decisions
            walls: dict[str, list[float]] = {m: [] for m in MODES}
            firsts: dict[str, list[float]] = {m: [] for m in MODES}
            costs: dict[str, list[float]] = {}
            forms = None
            for _ in range(args.rounds):
                for mode in MODES:
                    got = run(path, args, mode, tempfile.mkdtemp(prefix="glns-cold-") if mode == "cold" else warm)
                    walls[mode].append(got["wall"])
                    task = statistics.median(got["runtimes"])
                    head = got["runtimes"][:args.workers]
                    firsts[mode].append(max(head) / task)
                    assert costs.setdefault(mode, got["costs"]) == got["costs"]
                    print(f"  {mode}: {got['wall']:.1f} s; first task of each worker "
                          f"{', '.join(f'{t:.2f}' for t in head)} s, median task {task:.2f} s; "
                          f"forms of the first task {sorted(got['forms'].values())}")
                    if mode == "warm":
                        forms = got["forms"]
            assert costs["warm"] == costs["off"] == costs["cold"], "views/compilation changed a result"
            off = statistics.median(walls["off"])
            for mode in ("cold", "warm"):
                on = statistics.median(walls[mode])
                print(f"{style} {mode}: off {off:.1f} s, {mode} {on:.1f} s (medians of {args.rounds}); "
                      f"off / {mode} = {off / on:.2f}x; slowest first task / median task "
                      f"{statistics.median(firsts[mode]):.2f}")
            print(f"{style}: identical costs (mean {statistics.mean(costs['off']):.4f}); warm forms {forms}")


if __name__ == "__main__":
    main()
