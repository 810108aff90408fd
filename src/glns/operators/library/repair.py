"""Library repair operators: SISR blink insertion and regret-k insertion (twins of ``_repair.pyx``).

Both follow docs/operator-contract.md, ``repair(partial, removed, problem_data) -> complete``,
with a TSP tour (a list) or a VRP route list, plus ``rng=random`` and the native parameters as
keywords. Internally a tour is one cyclic route, exactly as in the core, and every insertion
cost is the core's ``insertion_delta`` evaluated in the same floating-point order.

VRP rules (as greedy_insertion): capacity must hold; vehicles are unlimited, so opening a new
route is a candidate costing ``new_route_cost`` (in an open VRP it can be the cheapest) and the
fallback when a node fits nowhere. Ties go to the first route, then the first position.

Granular option (``neighbours = G > 0``): a node is only tried at the positions directly before
or after one of its G nearest neighbours (``glns.neighbours.nearest_neighbours``, the core's
table) plus the new-route option; when none of those positions is available (the neighbours
are unrouted or their routes lack room) the full scan is used instead. On a tour, a city whose
G nearest are all unrouted is first tried next to its routed neighbours among the whole table
(``MAX_NEIGHBOURS`` columns), and only then at every position. The core reads the
first G entries of its candidate table (``CoreInstance.near``) when G is within its width:
the same lists, except on tours computed on demand, whose candidates have neighbours in every
quadrant. Pass that table as ``candidates`` to make the same choices there.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from glns.neighbours import nearest_neighbours, time_neighbours
from glns.operators import seeds

__all__ = ["greedy_insertion", "blink_insertion", "regret_insertion", "ORDER_RANDOM", "ORDER_DEMAND", "ORDER_FAR",
           "ORDER_CLOSE", "ORDER_SISR"]

#: blink_insertion orders: random shuffle, demand descending (TSP: random), distance to the
#: depot descending (TSP: to node 0), distance ascending, one of those four drawn per call
ORDER_RANDOM, ORDER_DEMAND, ORDER_FAR, ORDER_CLOSE, ORDER_SISR = range(5)


def greedy_insertion(partial, removed, problem_data, rng=random):
    """The paper's seed operator of the problem kind (``glns.operators.seeds``): each removed
    node in the given order at its cheapest position."""
    twins = (seeds.tsp if "demands" not in problem_data else
             seeds.vrptw if "time_windows" in problem_data else seeds.vrp)
    return twins.greedy_insertion(partial, removed, problem_data, rng)


class _Partial:
    """A partial solution being completed, with the core's insertion costs and node index."""

    def __init__(self, partial: Any, problem_data: dict[str, Any], neighbours: float,
                 candidates: np.ndarray | None = None) -> None:
        self.d = problem_data["distance_matrix"]
        self.vrp = "demands" in problem_data
        self.open = bool(problem_data.get("open_routes", False))
        if self.vrp:
            self.q = [int(x) for x in problem_data["demands"]]
            self.capacity = int(problem_data["capacity"])
            # the core drops the empty routes of a partial solution when it loads it
            self.routes = [list(route) for route in partial if len(route) > 0]
            self.loads = [sum(self.q[c] for c in route) for route in self.routes]
        else:
            self.routes = [list(partial)]
            self.loads = [0]
        # time windows (VRPTW): each kept position is checked from scratch (the core: O(1))
        self.timed = "time_windows" in problem_data
        self.problem_data = problem_data
        self.vehicles = problem_data.get("vehicles")
        self.where: dict[int, tuple[int, int]] = {}   # routed node -> (route, index)
        for r in range(len(self.routes)):
            self._index(r)
        self.neigh: list[list[int]] = []
        self.wide: list[list[int]] = []     # tours: the whole table, when wider than neigh
        if neighbours > 0:
            full = None
            if candidates is not None and int(neighbours) <= candidates.shape[1]:
                table = np.asarray(candidates)
            elif self.timed:     # the core's lists of a time-window instance
                d = np.asarray(self.d)
                table = full = time_neighbours(lambda lo, hi: d[lo:hi],
                                               np.asarray(problem_data["time_windows"]),
                                               np.asarray(problem_data["service_times"]), 1)
            else:
                table = full = nearest_neighbours(np.asarray(self.d), 1 if self.vrp else 0)
            g = min(int(neighbours), table.shape[1])
            if g > 0:
                self.neigh = table[:, :g].tolist()
                if not self.vrp:
                    if full is None:
                        full = nearest_neighbours(np.asarray(self.d), 0)
                    if full.shape[1] > g:
                        self.wide = full.tolist()

    def _index(self, r: int) -> None:
        for i, c in enumerate(self.routes[r]):
            self.where[c] = (r, i)

    def fits(self, v: int, r: int) -> bool:
        return not self.vrp or self.loads[r] + self.q[v] <= self.capacity

    def arc(self, a: int, b: int | None) -> float:
        """a -> b; b is None at the end of a VRP route (back to the depot unless open)."""
        if b is None:
            return 0.0 if self.open else self.d[a, 0]
        return self.d[a, b]

    def new_route_cost(self, v: int) -> float:
        return self.arc(0, v) + self.arc(v, None)

    def in_time(self, v: int, r: int, pos: int) -> bool:
        """v at index pos of route r keeps every time window (always without windows)."""
        if not self.timed:
            return True
        route = self.routes[r]
        return seeds.vrptw.route_in_time(route[:pos] + [v] + route[pos:], self.problem_data)

    def vehicle_left(self) -> bool:
        """Another route may be opened within the fleet."""
        return self.vehicles is None or len(self.routes) < self.vehicles

    def keep(self, best: tuple, v: int, r: int, pos: int) -> tuple:
        """The better of `best` and v at (r, pos) if that keeps the windows: (cost, route,
        position), ties to the first route and position; windows checked only when better."""
        option = (self.delta(v, r, pos), r, pos)
        return option if option < best and self.in_time(v, r, pos) else best

    def opens(self, v: int, cost: float, r: int) -> bool:
        """v goes to a new route: nothing else is left, or it is strictly cheaper and the fleet
        has a vehicle left."""
        return r < 0 or (self.new_route_cost(v) < cost and self.vehicle_left())

    def delta(self, v: int, r: int, pos: int) -> float:
        """Cost change of putting v at index pos of route r (the core's insertion_delta)."""
        route = self.routes[r]
        n = len(route)
        if not self.vrp:
            if n == 0:
                return self.d[v, v]
            a = route[pos - 1] if pos > 0 else route[n - 1]
            b = route[pos] if pos < n else route[0]
            return self.d[a, v] + self.d[v, b] - self.d[a, b]
        if n == 0:
            return self.new_route_cost(v)
        a = route[pos - 1] if pos > 0 else 0
        b = route[pos] if pos < n else None
        return self.arc(a, v) + self.arc(v, b) - self.arc(a, b)

    def positions(self, r: int) -> range:
        """Distinct positions of route r; in a tour, position len closes the edge of position 0."""
        n = len(self.routes[r])
        return range(n if (not self.vrp and n > 0) else n + 1)

    def after(self, r: int, p: int) -> tuple[int, int | None]:
        """The position after index p of route r and the node there (None: the route end)."""
        route = self.routes[r]
        q = p + 1
        if not self.vrp:
            q = q % len(route)
            return q, route[q]
        return q, (route[q] if q < len(route) else None)

    def insert(self, v: int, r: int, pos: int) -> None:
        """Route v at index pos of route r; r == number of routes opens a new route."""
        if r == len(self.routes):
            self.routes.append([])
            self.loads.append(0)
        self.routes[r].insert(pos, v)
        if self.vrp:
            self.loads[r] += self.q[v]
        self._index(r)

    def result(self) -> Any:
        return [list(route) for route in self.routes] if self.vrp else list(self.routes[0])


# ------------------------------------------------------------------------------------------
# blink insertion (SISR recreate)

def _insertion_order(st: _Partial, removed: list[int], order: int, rng: Any) -> list[int]:
    if order == ORDER_SISR:
        order = rng.randrange(4)
    if order == ORDER_DEMAND and not st.vrp:
        order = ORDER_RANDOM
    todo = list(removed)
    if order == ORDER_RANDOM:
        for i in range(len(todo) - 1, 0, -1):
            j = rng.randrange(i + 1)
            todo[i], todo[j] = todo[j], todo[i]
        return todo
    if order == ORDER_DEMAND:
        return sorted(todo, key=lambda v: (-st.q[v], v))
    sign = -1.0 if order == ORDER_FAR else 1.0
    return sorted(todo, key=lambda v: (sign * st.d[0, v], v))


def _blinks(rate: float, rng: Any) -> bool:
    return rate > 0 and rng.random() < rate


def _blink_scan_all(st: _Partial, v: int, rate: float, rng: Any, best: tuple) -> tuple:
    for r in range(len(st.routes)):
        if not st.fits(v, r):
            continue
        for pos in st.positions(r):
            if not _blinks(rate, rng):
                best = st.keep(best, v, r, pos)     # ties: first route, position
    return best


def _blink_scan_granular(st: _Partial, v: int, near: list[int], rate: float, rng: Any,
                         best: tuple) -> tuple:
    marked = set(near)
    for x in near:
        if x not in st.where:
            continue
        r, p = st.where[x]
        if not st.fits(v, r):
            continue
        if not _blinks(rate, rng):
            best = st.keep(best, v, r, p)
        q, nxt = st.after(r, p)
        if nxt in marked:      # that position is the one before nxt: offered there
            continue
        if not _blinks(rate, rng):
            best = st.keep(best, v, r, q)
    return best


def blink_insertion(partial, removed, problem_data, rng=random, order=ORDER_SISR, blink_rate=0.01,
                    neighbours=0, *, candidates=None):
    """Insert the removed nodes one by one, in a sorted order, each at its cheapest position,
    where every position considered is skipped ("blinks") with probability blink_rate.

    This is the recreate step of SISR (Christiaens & Vanden Berghe, 2020). order: 0 random,
    1 demand descending, 2 farthest from the depot first, 3 closest first, 4 one of these drawn
    uniformly per call (SISR weighs them 4:4:2:1); ties by node id. One random number per evaluated position (none if the rate is
    0); the new-route option never blinks. When every position blinks, a customer opens a new
    route and a city takes its cheapest position.
    """
    st = _Partial(partial, problem_data, neighbours, candidates)
    for v in _insertion_order(st, list(removed), int(order), rng):
        if not st.vrp and not st.routes[0]:
            st.insert(v, 0, 0)
            continue
        best = (math.inf, -1, 0)
        if st.neigh:
            best = _blink_scan_granular(st, v, st.neigh[v], blink_rate, rng, best)
            if best[1] < 0 and st.wide:
                best = _blink_scan_granular(st, v, st.wide[v], blink_rate, rng, best)
        if best[1] < 0:
            best = _blink_scan_all(st, v, blink_rate, rng, best)
        if best[1] < 0 and not st.vrp:
            best = _blink_scan_all(st, v, 0.0, rng, best)
        cost, r, pos = best
        if st.vrp and st.opens(v, cost, r):
            r, pos = len(st.routes), 0
        st.insert(v, r, pos)
    return st.result()


# ------------------------------------------------------------------------------------------
# regret insertion

#: which candidates a regret option list comes from (the native trace's "granular" values)
CAND_ALL, CAND_NEAR, CAND_WIDE = 0, 1, 2


def _next_to(st: _Partial, v: int, near: list[int]) -> set[tuple[int, int]]:
    """The positions directly before and after each routed node of `near` whose route has room."""
    out = set()
    for x in near:
        if x in st.where:
            r, p = st.where[x]
            if st.fits(v, r):
                out.add((r, p))
                out.add((r, st.after(r, p)[0]))
    return out


def _candidates(st: _Partial, v: int) -> tuple[set[tuple[int, int]], int]:
    """v's candidate (route, position) pairs, and which they are (CAND_*).

    Granular: the positions next to v's routed nearest neighbours whose route has room; on a
    tour with none, next to its routed neighbours among the whole table; else every position
    of every route with room.
    """
    if st.neigh:
        near = _next_to(st, v, st.neigh[v])
        if near:
            return near, CAND_NEAR
        if st.wide:
            near = _next_to(st, v, st.wide[v])
            if near:
                return near, CAND_WIDE
    return ({(r, pos) for r in range(len(st.routes)) if st.fits(v, r) for pos in st.positions(r)},
            CAND_ALL)


def _regret_options(st: _Partial, v: int, k: int) -> tuple[list, int]:
    """VRP: per route v's cheapest (cost, position), None where v has no candidate.
    TSP: v's k cheapest (cost, position). Ties by position. Also which candidates (CAND_*)."""
    cands, granular = _candidates(st, v)
    scored = sorted((st.delta(v, r, pos), r, pos) for r, pos in cands)
    if not st.vrp:
        return [(cost, pos) for cost, _, pos in scored[:k]], granular
    per_route: list = [None] * len(st.routes)
    for cost, r, pos in scored:
        if per_route[r] is None and st.in_time(v, r, pos):
            per_route[r] = (cost, pos)
    return per_route, granular


def _regret_score(st: _Partial, v: int, options: list, k: int) -> tuple[int, float, float]:
    """(missing, regret, c_1): regret = sum_{j=2..k} (c_j - c_1) over v's cheapest options
    (VRP: one per route plus a new route), each missing c_j counted as a large constant M,
    which is kept apart as the count `missing` (so M never swamps the float sum)."""
    values = [cost for cost, _ in (o for o in options if o is not None)]
    if st.vrp:
        values.append(st.new_route_cost(v))
    values.sort()
    c1 = values[0]
    acc, missing = 0.0, 0
    for j in range(1, k):
        if j < len(values):
            acc += values[j] - c1
        else:
            missing += 1
            acc -= c1
    return missing, acc, c1


def regret_reference(solution, nodes, problem_data, k=2, neighbours=0):
    """Full recomputation of what regret_insertion caches for each of `nodes` (unrouted) in
    `solution`: {node: (options, granular, (missing, regret, c_1))}, options as in
    _regret_options. Tests compare the native cache with it."""
    st = _Partial(solution, problem_data, neighbours)
    out = {}
    for v in nodes:
        options, granular = _regret_options(st, v, int(k))
        out[v] = (options, granular, _regret_score(st, v, options, int(k)))
    return out


def regret_insertion(partial, removed, problem_data, rng=random, k=2, neighbours=0, *,
                     candidates=None):
    """Regret-k insertion: repeatedly insert the node whose best option beats its k-1 next
    best options by the most, at its best option.

    Options are the cheapest feasible position in each route plus a new route (VRP), or the k
    cheapest positions of the tour (TSP). Ties: smaller cheapest cost, then node id; the
    insertion goes to the first route / first position among equals, and to a new route only
    when strictly cheaper or nothing fits. Deterministic: rng is accepted for the contract but
    never drawn from. This twin recomputes everything each step; the native operator caches.
    """
    k = int(k)
    st = _Partial(partial, problem_data, neighbours, candidates)
    todo = list(removed)
    while todo:
        best_key, chosen = None, None
        for v in todo:
            options, _ = _regret_options(st, v, k)
            missing, regret, c1 = _regret_score(st, v, options, k)
            key = (-missing, -regret, c1, v)     # largest regret first
            if best_key is None or key < best_key:
                best_key, chosen = key, (v, options)
        v, options = chosen
        todo.remove(v)
        if st.vrp:
            entries = [(o[0], r, o[1]) for r, o in enumerate(options) if o is not None]
            cost, r, pos = min(entries) if entries else (math.inf, -1, 0)
            if st.opens(v, cost, r):
                r, pos = len(st.routes), 0
        else:
            r, pos = 0, options[0][1]
        st.insert(v, r, pos)
    return st.result()
