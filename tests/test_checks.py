"""One validation of seeds, counts and durations for every entry point."""

from __future__ import annotations

import numpy as np
import pytest

from glns.checks import MAX_SEED, check_count, check_seconds, check_seed


@pytest.mark.parametrize("good", [0, 1, MAX_SEED, np.int64(7), 3.0, np.uint64(2**63)])
def test_seeds_accepted(good):
    assert check_seed(good) == int(good)


@pytest.mark.parametrize("bad", [-1, 2**64, 2.5, True, "3", None, float("nan"), float("inf")])
def test_seeds_refused(bad):
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer, got .* \(largest: 2\*\*64 - 1\)"):
        check_seed(bad)


def test_counts():
    assert check_count(0, "iterations", minimum=0) == 0
    assert check_count(np.int32(5), "workers") == 5
    with pytest.raises(ValueError, match="iterations must be a non-negative integer, got -1"):
        check_count(-1, "iterations", minimum=0)
    with pytest.raises(ValueError, match="workers must be a positive integer, got 0"):
        check_count(0, "workers")
    with pytest.raises(ValueError, match="retries must be an integer >= 2, got 1.5"):
        check_count(1.5, "retries", minimum=2)
    with pytest.raises(ValueError, match="workers must be a positive integer, got False"):
        check_count(False, "workers")


def test_seconds():
    assert check_seconds(2, "time_limit") == 2.0
    for bad in (0, -1.0, float("inf"), float("nan"), True, "1"):
        with pytest.raises(ValueError, match="time_limit must be a finite number of seconds > 0"):
            check_seconds(bad, "time_limit")
