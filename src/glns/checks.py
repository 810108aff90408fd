"""Validation of the plain values every entry point takes (seeds, budgets, counts), written
once so that ``solve``, ``solve_many``, ``evaluate``, the evolution and the benchmarks accept
and refuse the same values with the same messages."""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["check_seed", "check_count", "check_seconds", "MAX_SEED"]

#: seeds are unsigned 64-bit integers
MAX_SEED = 2**64 - 1


def _integer(value: Any) -> int | None:
    """value as an int if it is an integral number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        as_int = int(value)
    except (OverflowError, ValueError):
        return None
    return as_int if as_int == value else None


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed: an integer in 0..2**64 - 1; ValueError otherwise."""
    seed = _integer(value)
    if seed is None or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r} (largest: 2**64 - 1)")
    return seed


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """An integer count >= minimum (iterations: minimum 0; workers, retries ...); ValueError otherwise."""
    count = _integer(value)
    if count is None or count < minimum:
        what = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return count


def check_seconds(value: Any, name: str) -> float:
    """A duration in seconds: a finite number > 0; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    return float(value)
