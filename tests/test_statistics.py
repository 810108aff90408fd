"""Bounded statistics (glns._core._trace): every new best, and curves of every iteration up to a
limit, then evenly thinned; checked against a plain-Python twin of the thinning and against
the same run recorded in full."""

import numpy as np
import pytest

import glns
from glns import datasets

CVRP = datasets.generate_cvrp(40, 2)


def thinned_iterations(n: int, limit: int) -> list[int]:
    """Plain-Python twin of the trace: sample after every stride-th iteration; when `limit`
    samples are kept, keep every second one and double the stride."""
    kept, stride = [], 1
    for it in range(1, n + 1):
        if it % stride:
            continue
        kept.append(it)
        if len(kept) >= limit:
            kept, stride = kept[1::2], stride * 2
    return kept


def test_a_short_run_keeps_every_iteration():
    bounded = glns.solve(CVRP, iterations=700, seed=1)
    full = glns.solve(CVRP, iterations=700, seed=1, statistics="full")
    assert 700 < glns.TRACE_SAMPLES
    for r in (bounded, full):
        np.testing.assert_array_equal(r.curve_iterations, np.arange(1, 701))
    np.testing.assert_array_equal(bounded.best_curve, full.best_curve)
    np.testing.assert_array_equal(bounded.current_curve, full.current_curve)
    assert np.all(np.diff(bounded.curve_seconds) >= 0) and bounded.curve_seconds[-1] <= bounded.runtime


@pytest.mark.parametrize("limit, n", [(2, 9), (8, 100), (64, 1000), (100, 777)])
def test_thinning_keeps_even_samples_of_the_full_run(limit, n):
    full = glns.solve(CVRP, iterations=n, seed=3, statistics="full")
    r = glns.solve(CVRP, iterations=n, seed=3, statistics=limit)
    expected = thinned_iterations(n, limit)
    assert r.curve_iterations.tolist() == expected and len(expected) < limit
    idx = np.asarray(expected) - 1
    np.testing.assert_array_equal(r.best_curve, full.best_curve[idx])
    np.testing.assert_array_equal(r.current_curve, full.current_curve[idx])
    assert r.solution == full.solution and r.cost == full.cost
    # the strides are powers of two, evenly spaced
    steps = np.diff(r.curve_iterations)
    assert len(set(steps.tolist())) <= 1 and (steps.size == 0 or (steps[0] & (steps[0] - 1)) == 0)


def test_improvements_are_every_new_best_whatever_the_limit():
    full = glns.solve(CVRP, iterations=1500, seed=5, statistics="full")
    r = glns.solve(CVRP, iterations=1500, seed=5, statistics=16)
    np.testing.assert_array_equal(r.improvements[:, [0, 2]], full.improvements[:, [0, 2]])
    it, cost = r.improvements[:, 0].astype(int), r.improvements[:, 2]
    assert it[0] == 0 and np.all(np.diff(it) > 0) and np.all(np.diff(cost) < 0)
    assert len(it) == 1 + sum(s.outcomes[0] for s in r.destroy_stats)
    np.testing.assert_array_equal(cost[1:], full.best_curve[it[1:] - 1])
    # the best curve is the step function of the improvements
    steps = np.searchsorted(it, np.arange(1, 1501), side="right") - 1
    np.testing.assert_array_equal(full.best_curve, cost[steps])


def test_memory_does_not_grow_with_the_run():
    short = glns.solve(datasets.generate_tsp(8, 1), iterations=20_000, seed=1, statistics=512)
    long = glns.solve(datasets.generate_tsp(8, 1), iterations=400_000, seed=1, statistics=512)
    for r in (short, long):
        assert len(r.curve_iterations) < 512 and len(r.best_curve) == len(r.curve_iterations)
        assert r.curve_iterations[-1] <= r.iterations < r.curve_iterations[-1] + 2 * np.diff(r.curve_iterations)[0]
    assert long.improvements.shape[0] < 100       # a tiny tour improves only a few times


def test_none_keeps_nothing_and_changes_nothing():
    r = glns.solve(CVRP, iterations=300, seed=2, statistics="none")
    same = glns.solve(CVRP, iterations=300, seed=2)
    assert r.solution == same.solution and r.cost == same.cost and r.iterations == 300
    assert r.best_curve.size == r.current_curve.size == r.curve_iterations.size == 0
    assert r.improvements.shape == (0, 3)


@pytest.mark.parametrize("bad", ["some", 1, 0, -1, True, 2.5])
def test_a_bad_statistics_setting_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="statistics must be"):
        glns.solve(CVRP, iterations=5, statistics=bad)


def test_bench_records_work_from_bounded_statistics():
    from glns.benchmark.runner import glns_curve

    full = glns.solve(CVRP, iterations=2000, seed=4, statistics="full")
    r = glns.solve(CVRP, iterations=2000, seed=4, statistics=8)
    a, b = glns_curve(full), glns_curve(r)
    assert a["iteration"] == b["iteration"] and a["cost"] == b["cost"]
