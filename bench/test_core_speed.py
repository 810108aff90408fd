"""Speed of the core with the seed operators. See bench/README.md."""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

import glns
from glns.datasets import paper_instances
from glns.operators.seeds import BY_PROBLEM
from glns.reference import reference_alns

ITERATIONS = 500
PAPER = glns.SolveParams.paper()
#: the paper's native seed operators (the native twins of glns.operators.seeds)
SEED_DESTROY = ["random_removal", "worst_removal"]
SEED_REPAIR = ["greedy_insertion"]


def _solve_all(instances, destroy=SEED_DESTROY, repair=SEED_REPAIR):
    return [glns.solve(p, destroy, repair, iterations=ITERATIONS, seed=i, params=PAPER)
            for i, p in enumerate(instances)]


@pytest.mark.parametrize("kind", ["tsp", "cvrp"])
@pytest.mark.parametrize("n", [50, 100, 200])
def test_native_solve(benchmark, kind, n):
    instances = paper_instances(kind, n)
    results = benchmark.pedantic(_solve_all, args=(instances,), rounds=3, iterations=1)
    benchmark.extra_info["instances"] = len(instances)
    benchmark.extra_info["ms_per_instance_median"] = 1000 * benchmark.stats.stats.median / len(instances)
    benchmark.extra_info["mean_objective"] = float(np.mean([r.cost for r in results]))
    benchmark.extra_info["iterations_per_second"] = len(instances) * ITERATIONS / benchmark.stats.stats.median


@pytest.mark.parametrize("kind,n,count", [("tsp", 100, 4), ("cvrp", 100, 4), ("cvrp", 50, 8)])
def test_native_vs_python_twin(benchmark, kind, n, count):
    """Same operators, same seeds, same trajectory: native core vs plain-Python loop."""
    instances = paper_instances(kind, n)[:count]
    twins = BY_PROBLEM[kind]
    native = benchmark.pedantic(_solve_all, args=(instances,), rounds=5, iterations=1)
    python_times = []
    for _ in range(3):
        start = time.perf_counter()
        ref = [reference_alns(p, [twins.random_removal, twins.worst_removal], [twins.greedy_insertion],
                              ITERATIONS, i, PAPER) for i, p in enumerate(instances)]
        python_times.append(time.perf_counter() - start)
    # identical work: the trajectories agree exactly
    assert [r.cost for r in native] == [x["best_cost"] for x in ref]
    ratio = statistics.median(python_times) / benchmark.stats.stats.median
    benchmark.extra_info["python_twin_seconds_median"] = statistics.median(python_times)
    benchmark.extra_info["speedup_vs_python_twin"] = ratio
    print(f"\n{kind}{n}: native {benchmark.stats.stats.median:.4f} s, python twin "
          f"{statistics.median(python_times):.3f} s, ratio {ratio:.0f}x")


def test_python_operator_overhead(benchmark):
    """CVRP100 with the Python seed operators: core time outside the operators per iteration."""
    instances = paper_instances("cvrp", 100)[:8]
    twins = BY_PROBLEM["cvrp"]
    destroy = [twins.random_removal, twins.worst_removal]
    repair = [twins.greedy_insertion]
    results = benchmark.pedantic(_solve_all, args=(instances, destroy, repair), rounds=3, iterations=1)
    inside = sum(sum(s.seconds for s in r.destroy_stats + r.repair_stats) for r in results)
    total = sum(float(r.iteration_seconds.sum()) for r in results)
    overhead = (total - inside) / inside
    its = sum(r.iterations for r in results)
    benchmark.extra_info["operator_seconds"] = inside
    benchmark.extra_info["iteration_seconds"] = total
    benchmark.extra_info["overhead_fraction"] = overhead
    benchmark.extra_info["overhead_us_per_iteration"] = 1e6 * (total - inside) / its
    print(f"\ncvrp100 python seeds: inside operators {inside:.3f} s, iterations {total:.3f} s, "
          f"core overhead {100 * overhead:.2f} % ({1e6 * (total - inside) / its:.1f} us/iteration)")
    assert overhead < 0.10
