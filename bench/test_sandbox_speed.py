"""What OS-level confinement costs: the same work in confined and unconfined worker pools.

Two workloads, each measured in alternating rounds on two warm pools of 2 workers that differ
only in ``sandbox=`` (docs/sandbox.md):

1. the evolution episode of ``test_episode_speed.py``: 16 x CVRP50 x 100 iterations, the
   first 5 + 5 Python operators of the offline LLM's corpus, ``glns.sandbox.evaluate``;
2. final testing: the 64 CVRP100 test instances x 500 iterations (paper preset), the
   paper-style population (``glns.offline_llm.paper_style``, compiled twins from the cache),
   ``glns.sandbox.evaluate`` as ``glns evolve``'s final test runs it.

The costs must be identical (checked). Run with ``-s`` to see the ratios::

    python -m pytest bench/test_sandbox_speed.py --benchmark-columns=median,iqr,rounds -q -s
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

import glns
from glns import compiler
from glns.datasets import generate_cvrp, paper_instances
from glns.executors import confinement
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries
from glns.sandbox import WorkerPool, evaluate
from glns.sandbox.confine import sandbox_confinement

ROUNDS = 5
EPISODE = dict(instances=[generate_cvrp(50, 20000 + i) for i in range(16)], iterations=100,
               destroy=[e.source() for e in good_entries("cvrp", "destroy")[:5]],
               repair=[e.source() for e in good_entries("cvrp", "repair")[:5]])
FINAL = dict(instances=paper_instances("cvrp", 100), iterations=500,
             destroy=list(paper_style.SOURCES["vrp"]["destroy"]),
             repair=list(paper_style.SOURCES["vrp"]["repair"]))
PARAMS = glns.SolveParams.paper(op_timeout=1.0, compile="cached")


def _run(pool: WorkerPool, work: dict[str, Any]) -> list[float]:
    out = evaluate(work["instances"], work["destroy"], work["repair"], pool=pool,
                   iterations=work["iterations"], seeds=list(range(len(work["instances"]))), params=PARAMS)
    assert all(o.ok for o in out), [o.error for o in out if not o.ok][:3]
    return [o.result.cost for o in out]


@pytest.mark.parametrize("name", ["episode", "final-testing"])
def test_confined_against_unconfined(benchmark, name):
    work = EPISODE if name == "episode" else FINAL
    for src in work["destroy"] + work["repair"]:     # compiled twins, as glns evolve builds them
        compiler.compile_source(src)
    walls: dict[str, list[float]] = {"off": [], "on": []}
    costs: dict[str, list[float]] = {}
    with WorkerPool(workers=2) as off, WorkerPool(workers=2, sandbox=sandbox_confinement("auto")) as on:
        pools = {"off": off, "on": on}
        for mode, pool in pools.items():             # untimed: start workers, fill their caches
            costs[mode] = _run(pool, work)
        assert costs["on"] == costs["off"], "confinement changed a result"

        def round_() -> None:
            for mode, pool in pools.items():
                t0 = time.perf_counter()
                assert _run(pool, work) == costs[mode]
                walls[mode].append(time.perf_counter() - t0)

        benchmark.group = f"sandbox: {name}"
        benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
        applied = on.run(confinement.applied, timeout=10).value
    off_m, on_m = statistics.median(walls["off"]), statistics.median(walls["on"])
    pairs = [b / a for a, b in zip(walls["off"], walls["on"])]
    benchmark.extra_info.update(off=off_m, on=on_m, ratio=on_m / off_m,
                                layers=[k for k in ("seccomp", "landlock", "rlimits") if applied.get(k)])
    print(f"\n{name}: unconfined {off_m:.3f} s, confined {on_m:.3f} s (medians of {ROUNDS}); "
          f"confined / unconfined = {on_m / off_m:.3f} (per-round pairs {min(pairs):.3f}-"
          f"{max(pairs):.3f}); layers {benchmark.extra_info['layers']}; identical costs")
