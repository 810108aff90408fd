"""The space-filling start of large instances (docs/method.md, "Initial solution").

The paper starts from a random permutation. On a large instance that makes the first
iteration's local search a descent from a tour that crosses the whole plane at every step: at
30,000 cities that one iteration took about 5 s, so a one-second budget ran for five. Points
that follow each other along a Hilbert curve lie close together, so the cities in curve order
(for VRP: the customers in curve order, cut greedily by capacity, as the random start is)
start within tens of percent of a good solution, in O(n log n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glns.problems.base import Problem
from glns.problems.solutions import cut_by_capacity

__all__ = ["INITIAL_SETTINGS", "SPACE_FILLING_FROM", "HILBERT_ORDER", "hilbert_keys", "curve_order",
           "space_filling_solution", "start_solution"]

#: the values of SolveParams.initial: "auto" (space-filling from SPACE_FILLING_FROM customers on
#: when the instance has coordinates, else random), "random" (the paper's), "space_filling"
INITIAL_SETTINGS = ("auto", "random", "space_filling")
#: customers from which "auto" starts on the curve. There a random start's first local search
#: costs a tenth of a second or more (10,000 cities: 0.6 s; 30,000: 5 s); below it the random
#: start costs little and the paper tables (n <= 200) keep the paper's start.
SPACE_FILLING_FROM = 5000
#: the curve's grid has 2**HILBERT_ORDER cells a side
HILBERT_ORDER = 16


def hilbert_keys(ix: np.ndarray, iy: np.ndarray, order: int = HILBERT_ORDER) -> np.ndarray:
    """The index along a Hilbert curve of each cell (ix, iy) of a 2**order x 2**order grid
    (integers in [0, 2**order)); consecutive indices are cells that share a side."""
    side = 1 << order
    x = np.asarray(ix, dtype=np.int64)      # rebound below, never written in place
    y = np.asarray(iy, dtype=np.int64)
    if x.shape != y.shape or (x.size and (min(x.min(), y.min()) < 0 or max(x.max(), y.max()) >= side)):
        raise ValueError(f"cells must be two equal-shaped arrays of integers in [0, {side})")
    key = np.zeros_like(x)
    s = side >> 1
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        key += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        # rotate the quadrant so that the curve inside it runs the standard way
        turn = ~ry
        flip = turn & rx
        x = np.where(flip, side - 1 - x, x)
        y = np.where(flip, side - 1 - y, y)
        x, y = np.where(turn, y, x), np.where(turn, x, y)
        s >>= 1
    return key


def curve_order(coords: np.ndarray, first: int = 0) -> list[int]:
    """Node ids first .. n-1 in Hilbert-curve order of their coordinates (the grid spans the
    points' bounding square; points in one cell keep id order)."""
    xy = np.asarray(coords, dtype=np.float64)[first:]
    if len(xy) == 0:
        return []
    lo = xy.min(axis=0)
    span = float(np.max(xy.max(axis=0) - lo))
    side = 1 << HILBERT_ORDER
    if span > 0:
        cells = np.minimum(((xy - lo) / span * side).astype(np.int64), side - 1)
    else:
        cells = np.zeros(xy.shape, dtype=np.int64)
    keys = hilbert_keys(cells[:, 0], cells[:, 1])
    return (np.argsort(keys, kind="stable") + first).tolist()


def space_filling_solution(problem: Problem) -> Any:
    """The cities in curve order (TSP), or the customers in curve order cut greedily into
    routes by capacity (VRP). ValueError when the instance has no coordinates."""
    if problem.coords is None:
        raise ValueError("a space-filling start needs coordinates; this instance has only a distance matrix")
    order = curve_order(problem.coords, problem.first_node)
    return cut_by_capacity(problem, order) if problem.has_depot else order


def start_solution(problem: Problem, initial: str) -> Any:
    """The solution a run starts from under ``SolveParams.initial``, or None for the random
    start (the core draws it from the run's stream). Time windows: always None (the core's
    start by insertion keeps them; a curve cut into routes would not); "space_filling" is
    then a ValueError."""
    if initial not in INITIAL_SETTINGS:
        raise ValueError(f"initial must be one of {INITIAL_SETTINGS}, got {initial!r}")
    if problem.timed:
        if initial == "space_filling":
            raise ValueError("initial='space_filling' cuts a curve into routes, which breaks time "
                             "windows; a VRPTW starts by insertion (initial='auto' or 'random')")
        return None
    if initial == "space_filling" or (
            initial == "auto" and problem.coords is not None and problem.n_customers >= SPACE_FILLING_FROM):
        return space_filling_solution(problem)
    return None
