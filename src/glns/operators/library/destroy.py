"""Destroy operators of the native library, in plain Python (twins of ``_core/_destroy.pyx``).

A TSP solution is a tour (a list of cities, read as a cycle); a CVRP/OVRP solution is a list of
routes (lists of customers, depot not written). ``problem_data`` has ``"demands"`` only for
VRP, which is how the problem kind is told apart. Every function returns ``(removed,
partial)``: the removed nodes in removal order and the rest of the solution in order, with
empty routes dropped.

The neighbour lists are the core's: ``glns.neighbours.nearest_neighbours`` of the distance
matrix (or ``problem_data["neighbours"]`` when given, e.g. a shorter table in tests).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from glns.neighbours import nearest_neighbours
from glns.operators import seeds

__all__ = ["random_removal", "worst_removal", "string_removal", "related_removal", "route_removal",
           "segment_removal", "radial_removal"]


def _setup(x: Any, destroy_cnt: int, problem_data: dict) -> tuple[bool, list[list[int]], int, int]:
    """(is_tsp, routes as fresh lists, first routable node, k clamped to [1, routable nodes])."""
    tsp = "demands" not in problem_data
    routes = [list(x)] if tsp else [list(route) for route in x if len(route) > 0]
    first = 0 if tsp else 1
    m = len(problem_data["distance_matrix"]) - first
    return tsp, routes, first, max(1, min(int(destroy_cnt), m))


def _neighbours(problem_data: dict, first: int) -> np.ndarray:
    table = problem_data.get("neighbours")
    if table is None:
        table = nearest_neighbours(np.asarray(problem_data["distance_matrix"]), first)
    return table


def _result(tsp: bool, routes: list[list[int]], removed: list[int]) -> tuple[list[int], Any]:
    return removed, routes[0] if tsp else [route for route in routes if route]


def _locate(routes: list[list[int]], v: int) -> tuple[int, int]:
    """(route index, position) of routed node v, or (-1, -1)."""
    for r, route in enumerate(routes):
        if v in route:
            return r, route.index(v)
    return -1, -1


def _count(value: float, cap: int) -> int:
    """A count parameter as an int in [1, cap], as the core reads it."""
    return cap if value >= cap else (1 if value < 1 else int(value))


def random_removal(x, destroy_cnt, problem_data, rng=random):
    """The paper's seed operator of the problem kind (``glns.operators.seeds``): k nodes drawn
    uniformly."""
    return _seed_twins(problem_data).random_removal(x, destroy_cnt, problem_data, rng)


def worst_removal(x, destroy_cnt, problem_data, rng=random, randomness=3.0):
    """The paper's seed operator of the problem kind (``glns.operators.seeds``): nodes with
    the largest removal saving, randomised."""
    return _seed_twins(problem_data).worst_removal(x, destroy_cnt, problem_data, rng, randomness)


def _seed_twins(problem_data: dict) -> Any:
    return seeds.tsp if "demands" not in problem_data else seeds.vrp


def _cut_string(routes, tsp, c, lsmax, limit, split_rate, split_depth, rng) -> list[int]:
    """Cut one SISR string containing c from its route; returns its nodes in removal order."""
    r, p = _locate(routes, c)
    route = routes[r]
    size = len(route)
    length = 1 + rng.randrange(min(size, lsmax, limit))
    kept = 0   # the split variant keeps `kept` nodes in the middle of the window
    if rng.random() < split_rate and length >= 2:
        kept_max = min(size - length, lsmax)
        if kept_max >= 1:
            kept = 1
            while kept < kept_max and rng.random() >= split_depth:
                kept += 1
    window = length + kept
    if tsp:   # cyclic: every window position around c is valid
        start = (p - rng.randrange(window)) % size
    else:     # a path: the window must fit inside the route
        lo, hi = max(0, p - window + 1), min(p, size - window)
        start = lo + rng.randrange(hi - lo + 1)
    q = 1 + rng.randrange(length - 1) if kept > 0 else length
    cut = [route[(start + i) % size] for i in range(window) if not q <= i < q + kept]
    gone = set(cut)
    routes[r] = [v for v in route if v not in gone]
    return cut


def string_removal(x, destroy_cnt, problem_data, rng=random, max_string_len=10.0,
                   split_rate=0.5, split_depth=0.01):
    """SISR ruin (Christiaens & Vanden Berghe 2020): strings cut near a random seed customer.

    l_max = min(max_string_len, floor(mean route length)), at least 1. The number of strings
    k_s is uniform on 1..max(1, floor(4k / (1 + l_max)) - 1), so about k nodes go on average.
    The seed is a uniform node; its neighbour list (the seed first) is walked, and around each
    node still routed whose route is not ruined yet a string of l = 1 + randrange(min(|t|,
    l_max)) nodes is cut, placed uniformly among the windows that contain it. With
    probability split_rate (if l >= 2) it is a split string: a window of l + m nodes whose m
    middle nodes stay; m starts at 1 and grows while random() >= split_depth, up to
    min(|t| - l, l_max). VRP: one string per route, k_s routes. TSP: each string is its own
    unit; stop after k_s strings or k nodes (the last string is clipped to reach at most k).
    When the neighbour list runs out, strings go around uniform routed nodes of unruined routes.
    """
    tsp, routes, first, k = _setup(x, destroy_cnt, problem_data)
    m = len(problem_data["distance_matrix"]) - first
    neigh = _neighbours(problem_data, first)
    lsmax = max(1, min(m // len(routes) if routes else 1, _count(max_string_len, m + first)))
    ks = 1 + rng.randrange(max(1, (4 * k) // (1 + lsmax) - 1))
    ruined = [False] * len(routes)
    seed = first + rng.randrange(m)
    candidates = [seed] + [int(v) for v in neigh[seed]]
    removed: list[int] = []
    strings = 0
    while strings < ks and (not tsp or len(removed) < k):
        if candidates:
            c = candidates.pop(0)
            r, _ = _locate(routes, c)
            if r < 0 or (not tsp and ruined[r]):
                continue
        elif tsp:
            c = routes[0][rng.randrange(len(routes[0]))]
        else:
            pool = [v for r, route in enumerate(routes) if not ruined[r] for v in route]
            if not pool:
                break
            c = pool[rng.randrange(len(pool))]
        if not tsp:
            ruined[_locate(routes, c)[0]] = True
        limit = k - len(removed) if tsp else m + first
        removed += _cut_string(routes, tsp, c, lsmax, limit, split_rate, split_depth, rng)
        strings += 1
    return _result(tsp, routes, removed)


def related_removal(x, destroy_cnt, problem_data, rng=random, randomness=6.0):
    """Shaw removal by distance (no demand term): a uniform first node, then repeatedly a
    uniformly drawn removed node r and the routed node of rank floor(y**randomness * a) among
    the a still-routed nodes of r's neighbour list (nearest first); a uniform routed node when
    none of r's listed neighbours is routed."""
    tsp, routes, first, k = _setup(x, destroy_cnt, problem_data)
    n = len(problem_data["distance_matrix"])
    neigh = _neighbours(problem_data, first)
    routed = {v for route in routes for v in route}
    removed = [first + rng.randrange(n - first)]
    routed.discard(removed[0])
    while len(removed) < k:
        r = removed[rng.randrange(len(removed))]
        near = [int(v) for v in neigh[r] if int(v) in routed]
        if near:
            rank = min(int(rng.random() ** randomness * len(near)), len(near) - 1)
            v = near[rank]
        else:
            v = sorted(routed)[rng.randrange(len(routed))]
        removed.append(v)
        routed.discard(v)
    gone = set(removed)
    return _result(tsp, [[v for v in route if v not in gone] for route in routes], removed)


def route_removal(x, destroy_cnt, problem_data, rng=random):
    """VRP only: remove all customers of uniformly drawn routes (in route order) until at least
    destroy_cnt are removed; the last route may overshoot."""
    tsp, routes, _, k = _setup(x, destroy_cnt, problem_data)
    if tsp:
        raise ValueError("route_removal needs a CVRP or OVRP: a TSP tour is a single route")
    ids = list(range(len(routes)))
    removed: list[int] = []
    while len(removed) < k and ids:
        j = rng.randrange(len(ids))
        r = ids[j]
        ids[j] = ids[-1]   # swap-remove, as the core does
        ids.pop()
        removed += routes[r]
        routes[r] = []
    return _result(tsp, routes, removed)


def segment_removal(x, destroy_cnt, problem_data, rng=random, segments=1.0):
    """Remove exactly destroy_cnt nodes as g = min(segments, k) contiguous segments (segment i
    has k // g nodes, one more if i < k % g). TSP: each starts at a uniform position of the
    current tour and runs forward cyclically. VRP: around a uniform routed node, as far forward
    as the route allows; a segment longer than its route takes the whole route and continues
    around a new uniform routed node."""
    tsp, routes, _, k = _setup(x, destroy_cnt, problem_data)
    g = _count(segments, k)
    removed: list[int] = []
    for i in range(g):
        need = k // g + (1 if i < k % g else 0)
        while need > 0:
            if tsp:
                r, size = 0, len(routes[0])
                t, start = need, rng.randrange(size)
            else:
                p = rng.randrange(sum(len(route) for route in routes))
                r = 0
                while p >= len(routes[r]):
                    p -= len(routes[r])
                    r += 1
                size = len(routes[r])
                t = min(need, size)
                start = min(p, size - t)
            cut = [routes[r][(start + j) % size] for j in range(t)]
            gone = set(cut)
            routes[r] = [v for v in routes[r] if v not in gone]
            removed += cut
            need -= t
    return _result(tsp, routes, removed)


def radial_removal(x, destroy_cnt, problem_data, rng=random, spread=1.0):
    """Radial ruin: a uniform seed node, then k - 1 of the c = ceil(spread * (k - 1)) nodes
    nearest to it (within [k - 1, m - 1]; by the seed's distance row, ties by id), drawn by a
    partial Fisher-Yates over their ranks when c > k - 1, and removed nearest first."""
    tsp, routes, first, k = _setup(x, destroy_cnt, problem_data)
    n = len(problem_data["distance_matrix"])
    m = n - first
    seed = first + rng.randrange(m)
    spread_k = spread * (k - 1)
    c = m - 1 if not spread_k < m - 1 else math.ceil(spread_k)
    c = max(c, k - 1)
    neigh = _neighbours(problem_data, first)
    if c <= neigh.shape[1]:
        near = [int(v) for v in neigh[seed][:c]]
    else:
        row = problem_data["distance_matrix"][seed]
        near = sorted((v for v in range(first, n) if v != seed), key=lambda v: (row[v], v))[:c]
    ranks = list(range(c))
    if c > k - 1:
        for i in range(k - 1):
            j = i + rng.randrange(c - i)
            ranks[i], ranks[j] = ranks[j], ranks[i]
    chosen = set(ranks[:k - 1])
    removed = [seed] + [near[i] for i in range(c) if i in chosen]
    gone = set(removed)
    return _result(tsp, [[v for v in route if v not in gone] for route in routes], removed)
