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

- ``on``: the defaults (views negotiated; compiled twins: the export is compiled into the
  cache first by ``glns compile``-equivalent calls, timed separately, as a user would run
  ``glns compile`` once);
- ``off``: ``views="numpy", compile="off"`` (glns without negotiated views and compiled twins).

Every mode must give the same costs (checked). Usage::

    python bench/final_testing.py                         # both sets, 64 instances, 2 workers
    python bench/final_testing.py --sets paper-style --instances 16 --rounds 1
"""

from __future__ import annotations

import argparse
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

MODES = {"on": dict(), "off": dict(views="numpy", compile="off")}


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
            t0 = time.perf_counter()
            builds = [compiler.compile_source(op.source) for op in module.DESTROY + module.REPAIR]
            print(f"\n{style}: compile {time.perf_counter() - t0:.1f} s for 10 operators "
                  f"({sum(b.status == 'cached' for b in builds)} already cached, "
                  f"{sum(not b.ok for b in builds)} failed)")
            walls: dict[str, list[float]] = {m: [] for m in MODES}
            costs: dict[str, list[float]] = {}
            forms = None
            for _ in range(args.rounds):
                for mode, settings in MODES.items():
                    params = glns.SolveParams.paper(**settings)
                    t0 = time.perf_counter()
                    results = solve_many(instances, module, iterations=args.iterations, seed=1,
                                         params=params, workers=args.workers, progress=False)
                    walls[mode].append(time.perf_counter() - t0)
                    got = [r.cost for r in results]
                    assert costs.setdefault(mode, got) == got
                    if mode == "on":
                        forms = {s.name: s.form for s in results[0].destroy_stats + results[0].repair_stats}
            assert costs["on"] == costs["off"], "views/compilation changed a result"
            on, off = statistics.median(walls["on"]), statistics.median(walls["off"])
            print(f"{style}: off {off:.1f} s, on {on:.1f} s (medians of {args.rounds}); "
                  f"off / on = {off / on:.2f}x; identical costs (mean {statistics.mean(costs['on']):.4f})")
            print(f"{style}: forms {forms}")


if __name__ == "__main__":
    main()
