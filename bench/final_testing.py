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
import os
import statistics
import tempfile
import time
from pathlib import Path

import glns
from glns import compiler
from glns.batch import solve_many
from glns.datasets import paper_instances
from glns.evolution import load_module
from glns.evolution.export import export_module
from glns.evolution.population import Member
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries

MODES = {"cold": dict(), "warm": dict(), "off": dict(views="numpy", compile="off")}


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["corpus", "paper-style"], choices=["corpus", "paper-style"])
    ap.add_argument("--instances", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="timed runs per mode, alternating")
    args = ap.parse_args()
    instances = paper_instances("cvrp", 100)[: args.instances]
    print(f"{args.instances} x CVRP100 x {args.iterations} iterations, paper preset, "
          f"{args.workers} worker(s); compiler: {compiler.unavailable_reason() or 'available'}")
    for style in args.sets:
        with tempfile.TemporaryDirectory() as tmp:
            path = export(Path(tmp) / "best_operators.py", style)
            module = load_module(path)
            warm_dir = tempfile.mkdtemp(prefix="glns-warm-")
            os.environ.update(GLNS_CACHE_DIR=warm_dir, GLNS_DECISION_DIR=warm_dir + "/decisions")
            t0 = time.perf_counter()
            builds = [compiler.compile_source(op.source) for op in module.DESTROY + module.REPAIR]
            print(f"\n{style}: compile {time.perf_counter() - t0:.1f} s for 10 operators "
                  f"({sum(not b.ok for b in builds)} failed)")
            solve_many(instances[:2], module, iterations=args.iterations, seed=1,   # keeps the decisions
                       params=glns.SolveParams.paper(), workers=args.workers, progress=False)
            walls: dict[str, list[float]] = {m: [] for m in MODES}
            firsts: dict[str, list[float]] = {m: [] for m in MODES}
            costs: dict[str, list[float]] = {}
            forms = None
            for _ in range(args.rounds):
                for mode, settings in MODES.items():
                    where = tempfile.mkdtemp(prefix="glns-cold-") if mode == "cold" else warm_dir
                    os.environ.update(GLNS_CACHE_DIR=where, GLNS_DECISION_DIR=where + "/decisions")
                    params = glns.SolveParams.paper(**settings)
                    t0 = time.perf_counter()
                    results = solve_many(instances, module, iterations=args.iterations, seed=1,
                                         params=params, workers=args.workers, progress=False)
                    walls[mode].append(time.perf_counter() - t0)
                    task = statistics.median(r.runtime for r in results)
                    firsts[mode].append(max(r.runtime for r in results[:args.workers]) / task)
                    got = [r.cost for r in results]
                    assert costs.setdefault(mode, got) == got
                    print(f"  {mode}: {walls[mode][-1]:.1f} s; first task of each worker "
                          f"{', '.join(f'{r.runtime:.2f}' for r in results[:args.workers])} s, "
                          f"median task {task:.2f} s")
                    if mode == "warm":
                        forms = {s.name: s.form for s in results[0].destroy_stats + results[0].repair_stats}
            assert costs["warm"] == costs["off"] == costs["cold"], "views/compilation changed a result"
            off = statistics.median(walls["off"])
            for mode in ("cold", "warm"):
                on = statistics.median(walls[mode])
                print(f"{style} {mode}: off {off:.1f} s, {mode} {on:.1f} s (medians of {args.rounds}); "
                      f"off / {mode} = {off / on:.2f}x; slowest first task / median task "
                      f"{statistics.median(firsts[mode]):.2f}")
            print(f"{style}: identical costs (mean {statistics.mean(costs['off']):.4f})")
            print(f"{style}: forms {forms}")


if __name__ == "__main__":
    main()
