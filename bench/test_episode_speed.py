"""Wall time of one G-LNS evolution episode. See bench/README.md.

An episode is what the controller runs per generation step: the current 5 destroy x 5 repair
Python operators on the 16 training instances (CVRP, n = 50, ``generate_cvrp(50, 20000 + i)``),
100 iterations each, paper preset with the sandbox's per-call limit (``op_timeout=1.0``).
It is measured three ways in one run:

1. ``glns.sandbox.evaluate`` on a ``WorkerPool(1)``;
2. the same on a ``WorkerPool(2)``;
3. the plain-Python loop of the paper's evaluator (``glns.reference.reference_alns``: deep copy
   of the solution before each destroy, roulette selection, SA acceptance, weight/F/S updates,
   Python cost function), serially over the 16 instances.

Each pool is created once and warmed up by one untimed episode, as the controller keeps its pool
for a whole run (workers then hold the instances and compiled operators in their caches).

Operators: the first five destroy and the first five repair operators of the offline LLM's
corpus for CVRP (``good_entries("cvrp", kind)[:5]``, passed as source code). The corpus holds
seven of each kind, so no seed operators are added. The corpus operators draw from ``random``,
which the core reseeds from the run's stream before every Python call; the reference loop's
operators do the same (:func:`glns.reference.reseeding`), so all three ways replay the same trajectories and
the test checks that their best costs agree exactly: the timings compare identical work.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np
import pytest

import glns
from glns.datasets import generate_cvrp
from glns.offline_llm.corpus import good_entries
from glns.operators import from_source
from glns.reference import reference_alns, reseeding
from glns.sandbox import WorkerPool, evaluate

N_INSTANCES = 16
ITERATIONS = 100
ROUNDS = 5
PARAMS = glns.SolveParams.paper(op_timeout=1.0)
INSTANCES = [generate_cvrp(50, 20000 + i) for i in range(N_INSTANCES)]
SEEDS = list(range(N_INSTANCES))

DESTROY_ENTRIES = good_entries("cvrp", "destroy")[:5]
REPAIR_ENTRIES = good_entries("cvrp", "repair")[:5]
DESTROY_SOURCES = [e.source() for e in DESTROY_ENTRIES]
REPAIR_SOURCES = [e.source() for e in REPAIR_ENTRIES]

GROUP = "episode: 16 x CVRP50 x 100 iterations, 5 x 5 Python operators"

#: filled as the tests run (file order): medians and best costs, for the ratios in the last test
_MEDIANS: dict[str, float] = {}
_COSTS: dict[str, list[float]] = {}


@pytest.fixture(scope="module")
def pools():
    """One warmed-up pool per worker count, kept for the module like the controller keeps it."""
    made: dict[int, WorkerPool] = {}

    def get(workers: int) -> WorkerPool:
        if workers not in made:
            made[workers] = WorkerPool(workers)
            _sandbox_episode(made[workers])  # untimed: starts workers, fills their caches
        return made[workers]

    yield get
    for pool in made.values():
        pool.close()


def _sandbox_episode(pool: WorkerPool) -> list[Any]:
    outcomes = evaluate(INSTANCES, DESTROY_SOURCES, REPAIR_SOURCES, pool=pool,
                        iterations=ITERATIONS, seeds=SEEDS, params=PARAMS)
    bad = [(o.instance, o.status, o.error) for o in outcomes if not o.ok]
    assert not bad, bad
    return outcomes


REFERENCE_DESTROY = [reseeding(from_source(s, "destroy")) for s in DESTROY_SOURCES]
REFERENCE_REPAIR = [reseeding(from_source(s, "repair")) for s in REPAIR_SOURCES]


def _reference_episode() -> list[dict[str, Any]]:
    return [reference_alns(p, REFERENCE_DESTROY, REFERENCE_REPAIR, ITERATIONS, seed, PARAMS)
            for p, seed in zip(INSTANCES, SEEDS)]


@pytest.mark.parametrize("workers", [1, 2])
def test_episode_sandbox(benchmark, pools, workers):
    """(1), (2): glns.sandbox.evaluate on a warm pool of 1 or 2 workers."""
    pool = pools(workers)
    rounds: list[tuple[float, float, float]] = []  # (wall, inside operators, worker task time)

    def episode() -> list[Any]:
        start = time.perf_counter()
        outcomes = _sandbox_episode(pool)
        wall = time.perf_counter() - start
        inside = sum(s.seconds for o in outcomes
                     for s in o.result.destroy_stats + o.result.repair_stats)
        rounds.append((wall, inside, sum(o.seconds for o in outcomes)))
        return outcomes

    benchmark.group = GROUP
    outcomes = benchmark.pedantic(episode, rounds=ROUNDS, iterations=1)
    median = benchmark.stats.stats.median
    # share of the episode's wall time spent inside the operators, per worker
    share = statistics.median(inside / (workers * wall) for wall, inside, _ in rounds)
    # what the pool adds: parent wall time minus the workers' task time (per worker)
    overhead = statistics.median(wall - task / workers for wall, _, task in rounds)
    _MEDIANS[f"pool{workers}"] = median
    _COSTS[f"pool{workers}"] = [o.result.cost for o in outcomes]
    benchmark.extra_info["operator_share"] = share
    benchmark.extra_info["pool_overhead_seconds"] = overhead
    benchmark.extra_info["mean_objective"] = float(np.mean(_COSTS[f"pool{workers}"]))
    print(f"\nWorkerPool({workers}): median {median:.3f} s, inside operators "
          f"{100 * share:.1f} % of wall x workers, pool overhead ~{1000 * overhead:.0f} ms")


def test_episode_python_reference(benchmark):
    """(3): the deepcopy-based plain-Python loop, serially; ratios against (1) and (2)."""
    benchmark.group = GROUP
    runs = benchmark.pedantic(_reference_episode, rounds=ROUNDS, iterations=1)
    median = benchmark.stats.stats.median
    costs = [r["best_cost"] for r in runs]
    benchmark.extra_info["mean_objective"] = float(np.mean(costs))
    for key, other in _COSTS.items():  # same trajectories: the timings compare the same work
        assert other == costs, f"{key} and the reference loop disagree"
    line = f"\nreference loop: median {median:.3f} s"
    if "pool1" in _MEDIANS:
        benchmark.extra_info["reference_over_pool1"] = median / _MEDIANS["pool1"]
        line += f"; reference / pool(1) = {median / _MEDIANS['pool1']:.2f}"
    if "pool1" in _MEDIANS and "pool2" in _MEDIANS:
        benchmark.extra_info["pool1_over_pool2"] = _MEDIANS["pool1"] / _MEDIANS["pool2"]
        line += f"; pool(1) / pool(2) = {_MEDIANS['pool1'] / _MEDIANS['pool2']:.2f}"
    print(line)
