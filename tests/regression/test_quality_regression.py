"""Quality regression checks: fixed-seed objectives against baseline.json (bench/README.md).

A given seed gives the same result on one platform; QUALITY_RTOL (1e-6 relative) only absorbs
floating-point differences between platforms. A failure means the search behaves differently:
if that is intended, refresh with ``python tools/refresh_regression_baseline.py --quality``.
"""

from __future__ import annotations

import pytest

import regress

BASELINE = regress.load_baseline()


def test_baseline_covers_every_run():
    assert sorted(BASELINE["quality"]) == sorted(regress.QUALITY_RUNS)
    assert BASELINE["quality_rtol"] == regress.QUALITY_RTOL


@pytest.mark.parametrize("name", sorted(regress.QUALITY_RUNS))
def test_objective(name):
    cost = regress.QUALITY_RUNS[name]()
    stored = BASELINE["quality"][name]
    assert cost == pytest.approx(stored, rel=regress.QUALITY_RTOL), (
        f"{name}: objective {cost!r}, stored {stored!r} (relative change {cost / stored - 1:+.3e})")
