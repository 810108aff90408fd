"""Plain-Python reference of the native local search (``glns._core._local_search``).

:func:`local_search` makes the same moves in the same order as the native code: the same
neighbour lists, the same FIFO queue of nodes with a clear don't-look bit, the same move order
and first-improvement rule, and the same float expressions (so the same rounding). Tests compare
the two solution for solution. :func:`improving_moves` is an independent brute-force checker:
it builds every move of the same neighbourhoods over all node pairs as a new solution, prices it
by a full recomputation and lists the ones that improve; on instances where the neighbour lists
cover every node a result of the local search must have none.

Neighbourhoods (see the native module for the full rules):

* TSP: 2-opt, and or-opt of a segment of 1..3 cities next to a neighbour in both orientations;
  from ``level`` 2, then sequential 3-opt by Lin-Kernighan's positive-gain rule (two
  adjacent paths swap places, or both are reversed in place, or a 2-opt move followed by a
  second one from its closing arc). On an asymmetric matrix only or-opt without reversal (the
  other moves reverse a path, whose cost backwards differs).
* CVRP/OVRP: relocate (next to a neighbour in any route with room, or alone in a new route),
  swap of two customers of different routes, intra-route 2-opt (segment reversal, symmetric
  matrices only; in an OVRP also reversing a whole route), 2-opt* (tail exchange of two
  routes), from ``level`` 3 SWAP* (two customers of different routes exchanged, each going
  to its cheapest position in the other route; the reference scans both routes in full), and
  from ``level`` 4 string relocation (a string of 2 or 3 customers with a node at one end put
  next to a neighbour of that node, in any route with room, forward or reversed).

With ``load_weight`` (CVRP/OVRP), the penalised search of a run with
``SolveParams(load_penalty=...)``: a move may overload a route, priced at its distance change
plus the weight times the change of the routes' excess loads, and an overloaded result is
searched again from the overloaded routes' nodes at 10 and then 100 times the weight.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Sequence

import numpy as np

from glns.neighbours import MAX_NEIGHBOURS, nearest_neighbours, time_neighbours
from glns.operators.seeds.vrptw import route_in_time
from glns.problems.solutions import matrix_cost

__all__ = ["LS_NEIGHBOURS", "LS_REL_EPS", "LoadPenalty", "local_search", "improving_moves"]

#: neighbour-list columns the moves of a node are built from (the native LS_NEIGHBOURS)
LS_NEIGHBOURS = 20
#: a move is taken when its delta is below -LS_REL_EPS * (cost at the start)
LS_REL_EPS = 1e-12
#: penalised loads: repairs of an overloaded result, each at this many times the weight before;
#: every LOAD_WINDOW searches the weight times LOAD_UP (share feasible < target - LOAD_SLACK)
#: or LOAD_DOWN (> target + LOAD_SLACK)
LOAD_REPAIRS = 2
LOAD_REPAIR_FACTOR = 10.0
LOAD_WINDOW = 100
LOAD_SLACK = 0.05
LOAD_UP = 1.2
LOAD_DOWN = 0.85

END = -1  # the end of a VRP route: the depot for CVRP, nothing for OVRP


class _Search:
    """State of one local search run, laid out like the native Sol (routes, route_of, pos_of)."""

    def __init__(self, solution: Any, problem_data: dict, neighbours: np.ndarray | None,
                 level: int = 1, load_weight: float | None = None) -> None:
        self.three_opt = level >= 2     # used on a tour
        self.swap_star = level >= 3     # used on VRP routes
        self.strings = level >= 4       # used on VRP routes
        dist = np.asarray(problem_data["distance_matrix"], dtype=np.float64)
        self.n = n = dist.shape[0]
        self.dist = dist
        self.d = dist.tolist()      # list indexing is much faster in the move loops
        self.tsp = "demands" not in problem_data
        self.open = bool(problem_data.get("open_routes", False))
        self.first = 0 if self.tsp else 1
        self.sym = bool(np.array_equal(dist, dist.T))
        if self.tsp:
            self.q = [0] * n
            self.cap = 0
            self.routes = [list(solution)]
        else:
            self.q = [int(x) for x in problem_data["demands"]]
            self.cap = int(problem_data["capacity"])
            self.routes = [list(r) for r in solution if len(r) > 0]
        # penalised loads: a route may carry more than cap at lam per unit of excess, but never
        # more customers than the core's rows hold (the smallest demands that fit)
        self.penalised = load_weight is not None and not self.tsp and "time_windows" not in problem_data
        self.lam = float(load_weight) if self.penalised else 0.0
        if self.penalised:
            fits = int(np.searchsorted(np.cumsum(np.sort(self.q[1:])), self.cap, side="right"))
            self.stride = max(1, fits)
        if neighbours is None and "time_windows" in problem_data:   # the core's lists
            neighbours = time_neighbours(lambda lo, hi: dist[lo:hi],
                                         np.asarray(problem_data["time_windows"]),
                                         np.asarray(problem_data["service_times"]), 1, MAX_NEIGHBOURS)
        elif neighbours is None:
            neighbours = nearest_neighbours(dist, self.first, MAX_NEIGHBOURS)
        k = min(LS_NEIGHBOURS, neighbours.shape[1])
        self.neigh = [list(map(int, row[:k])) for row in neighbours]
        self.route_of = [-1] * n
        self.pos_of = [-1] * n
        self.load: list[int] = []
        self.pre = [0] * n
        for r in range(len(self.routes)):
            self._index(r)
        self.eps = LS_REL_EPS * self.cost()
        # time windows (VRPTW): a move that improves is taken only if the routes it changes keep
        # every window, checked here from scratch (the core: O(1) between routes)
        self.timed = "time_windows" in problem_data
        self.problem_data = problem_data
        self.vehicles = problem_data.get("vehicles")
        self.free: set[int] | None = None     # penalised: the nodes that may add excess load
        self.queue: deque[int] = deque()
        self.inq = [False] * n

    # -- bookkeeping ---------------------------------------------------------------------
    def _index(self, r: int) -> None:
        """Refresh route_of, pos_of, the load and the prefix loads of route r."""
        while len(self.load) <= r:
            self.load.append(0)
        acc = 0
        for i, x in enumerate(self.routes[r]):
            self.route_of[x] = r
            self.pos_of[x] = i
            acc += self.q[x]
            self.pre[x] = acc
        self.load[r] = acc

    def cost(self) -> float:
        """Objective summed in the core's canonical order."""
        return matrix_cost(self.dist, self.routes[0] if self.tsp else self.routes, self.tsp, self.open)

    def push(self, v: int) -> None:
        if v < self.first or self.inq[v]:
            return
        self.inq[v] = True
        self.queue.append(v)

    def in_time(self, *routes: list[int]) -> bool:
        """Every route given keeps every time window (always without windows)."""
        return not self.timed or all(route_in_time(route, self.problem_data) for route in routes)

    def arc(self, a: int, b: int) -> float:
        if b == END:
            return 0.0 if self.open else self.d[a][0]
        return self.d[a][b]

    def result(self) -> Any:
        if self.tsp:
            return list(self.routes[0])
        return [list(r) for r in self.routes if r]

    # -- driver --------------------------------------------------------------------------
    def excess(self, load: int) -> float:
        return (load - self.cap) * self.lam if load > self.cap else 0.0

    def load_delta(self, new_a: int, old_a: int, new_b: int, old_b: int) -> float:
        ex = self.excess
        return (ex(new_a) - ex(old_a)) + (ex(new_b) - ex(old_b))

    def tails_fit(self, len_v: int, len_u: int, new_v: int, old_v: int, new_u: int,
                  old_u: int, held: bool) -> tuple[bool, float]:
        """Whether a 2-opt* leaving these lengths and loads may be made (held: not if it adds
        excess load), and its penalty change."""
        if self.penalised:
            pd = self.load_delta(new_v, old_v, new_u, old_u)
            return len_v <= self.stride and len_u <= self.stride and not (held and pd > 0), pd
        return new_v <= self.cap and new_u <= self.cap, 0.0

    def overloaded(self, queue: bool) -> int:
        """The routes above the capacity; with `queue`, their nodes are queued."""
        over = 0
        for r, route in enumerate(self.routes):
            if self.load[r] > self.cap:
                over += 1
                if queue:
                    for x in route:
                        self.push(x)
        return over

    def penalised_run(self, touched: Iterable[int] | None) -> tuple[bool, bool]:
        """The search at lam, then up to LOAD_REPAIRS repairs from the overloaded routes'
        nodes at LOAD_REPAIR_FACTOR times the weight before: (every load fitted before the
        repairs, every load fits at the end). From a touched list, only its nodes may add
        excess load."""
        if touched is not None:
            touched = list(touched)
            self.free = {v for v in touched if 0 <= v < self.n}
        self.run(touched)
        first = fits = self.overloaded(False) == 0
        for _ in range(LOAD_REPAIRS):
            if fits:
                break
            self.lam *= LOAD_REPAIR_FACTOR
            self.overloaded(True)
            self.run(())
            fits = self.overloaded(False) == 0
        return first, fits

    def run(self, touched: Iterable[int] | None) -> None:
        full = touched is None
        for v in (range(self.first, self.n) if full else touched):
            if 0 <= v < self.n:
                self.push(v)
        improved = False
        while True:
            while self.queue:
                v = self.queue.popleft()
                self.inq[v] = False
                if self.tsp_try(v) if self.tsp else self.vrp_try(v):
                    improved = True
            if not full or not improved:
                break
            improved = False  # confirm with a sweep over every node
            for v in range(self.first, self.n):
                self.push(v)

    # -- TSP -----------------------------------------------------------------------------
    def at(self, p: int) -> int:
        t = self.routes[0]
        return t[p % len(t)]

    def two_opt(self, x: int, y: int) -> None:
        """Arcs (x, succ x), (y, succ y) -> (x, y), (succ x, succ y); reverse the shorter side."""
        t, pos = self.routes[0], self.pos_of
        L = len(t)
        i, j = (pos[x] + 1) % L, pos[y]
        m = (j - i + L) % L + 1
        if 2 * m > L:
            i, j, m = (pos[y] + 1) % L, pos[x], L - m
        for k in range(m // 2):
            a, b = (i + k) % L, (j - k + L) % L
            t[a], t[b] = t[b], t[a]
            pos[t[a]], pos[t[b]] = a, b

    def move_segment(self, s0: int, length: int, a: int, rev: bool) -> None:
        t = self.routes[0]
        L = len(t)
        p0 = self.pos_of[s0]
        seg = [t[(p0 + k) % L] for k in range(length)]
        if rev:
            seg.reverse()
        out = []
        for idx in range(L):
            if (idx - p0 + L) % L < length:
                continue
            out.append(t[idx])
            if t[idx] == a:
                out.extend(seg)
        t[:] = out
        for idx, x in enumerate(t):
            self.pos_of[x] = idx

    def tsp_try(self, v: int) -> bool:
        d, pos, sym, eps = self.d, self.pos_of, self.sym, self.eps
        L = len(self.routes[0])
        if L < 3:
            return False
        segs = []
        for length in range(1, 4):
            if L < length + 2:
                break
            for back in ((False, True) if length > 1 else (False,)):
                if back:
                    se, s0 = v, self.at(pos[v] - (length - 1))
                else:
                    s0, se = v, self.at(pos[v] + length - 1)
                p, nx = self.at(pos[s0] - 1), self.at(pos[se] + 1)
                gain = d[p][s0] + d[se][nx] - d[p][nx]
                segs.append((s0, se, p, nx, length, not back, gain))
        sv, pv = self.at(pos[v] + 1), self.at(pos[v] - 1)
        for u in self.neigh[v]:
            su, pu = self.at(pos[u] + 1), self.at(pos[u] - 1)
            if sym and u != sv and u != pv:
                delta = d[v][u] + d[sv][su] - d[v][sv] - d[u][su]
                if delta < -eps:
                    self.two_opt(v, u)
                    for x in (v, sv, u, su):
                        self.push(x)
                    return True
                delta = d[v][u] + d[pv][pu] - d[pv][v] - d[pu][u]
                if delta < -eps:
                    self.two_opt(pv, pu)
                    for x in (v, pv, u, pu):
                        self.push(x)
                    return True
            for s0, se, p, nx, length, fwd, gain in segs:
                if (pos[u] - pos[s0] + L) % L < length:
                    continue
                for after in (True, False):
                    if after:
                        if u == p:
                            continue
                        a, b, rev = u, su, not fwd
                    else:
                        if u == nx:
                            continue
                        a, b, rev = pu, u, fwd
                    if rev and not sym:
                        continue
                    if rev:
                        add = d[a][se] + d[s0][b] - d[a][b]
                    else:
                        add = d[a][s0] + d[se][b] - d[a][b]
                    if add - gain < -eps:
                        self.move_segment(s0, length, a, rev)
                        for x in (p, nx, s0, se, a, b):
                            self.push(x)
                        return True
        if self.three_opt and sym and L >= 6:
            return self.three_opt_try(v, 1) or self.three_opt_try(v, -1)
        return False

    def exchange(self, a: int, b: int, c: int, d: int) -> None:
        """Arcs (a, b), (c, d) -> (a, c), (b, d); b follows a and d follows c the same way."""
        if self.at(self.pos_of[a] + 1) == b:
            self.two_opt(a, c)
        else:
            self.two_opt(b, d)

    def three_opt_try(self, t1: int, step: int) -> bool:
        """The first improving 3-opt move from t1 in direction step (the native
        _tsp_three_opt: positive-gain sequential 3-opt, t4 after t3 then before it)."""
        d, pos = self.d, self.pos_of
        L = len(self.routes[0])
        t2 = self.at(pos[t1] + step)
        p2 = pos[t2]
        d12 = d[t1][t2]
        for t3 in self.neigh[t2]:
            if t3 == t1:
                continue
            d23 = d[t2][t3]
            if d12 - d23 <= 0:
                break  # nearest first: no later candidate gains either
            off3 = ((pos[t3] - p2) * step + L) % L
            args = (t1, t2, t3, p2, off3, step, d12, d23)
            if self._split(*args) or self._valid(*args):
                return True
        return False

    def _apply3(self, exchanges: list[tuple[int, int, int, int]], cities: tuple[int, ...]) -> bool:
        for arcs in exchanges:
            self.exchange(*arcs)
        for x in cities:
            self.push(x)
        return True

    def _split(self, t1: int, t2: int, t3: int, p2: int, off3: int, step: int, d12: float,
               d23: float) -> bool:
        """t4 after t3 (native _three_opt_split)."""
        d, pos, eps = self.d, self.pos_of, self.eps
        L = len(self.routes[0])
        t4 = self.at(p2 + (off3 + 1) * step)
        if t4 == t1:
            return False
        d34 = d[t3][t4]
        g = d12 - d23 + d34
        for t5 in self.neigh[t4]:
            if t5 == t3:
                continue
            d45 = d[t4][t5]
            if g - d45 <= 0:
                break
            off5 = ((pos[t5] - p2) * step + L) % L
            if off5 > off3:
                continue
            for swap in (True, False):
                if swap:
                    if off5 == off3:
                        continue
                    t6 = self.at(p2 + (off5 + 1) * step)
                else:
                    if off5 == 0:
                        continue
                    t6 = self.at(p2 + (off5 - 1) * step)
                if d23 + d45 + d[t6][t1] - d12 - d34 - d[t5][t6] < -eps:
                    if swap:
                        moves = [(t1, t2, t3, t4), (t1, t3, t6, t5), (t3, t5, t2, t4)]
                    else:
                        moves = [(t1, t2, t6, t5), (t2, t5, t3, t4)]
                    return self._apply3(moves, (t1, t2, t3, t4, t5, t6))
        return False

    def _valid(self, t1: int, t2: int, t3: int, p2: int, off3: int, step: int, d12: float,
               d23: float) -> bool:
        """t4 before t3: a 2-opt move then a second one from its closing arc (native
        _three_opt_valid)."""
        d, pos, eps = self.d, self.pos_of, self.eps
        L = len(self.routes[0])
        if off3 < 2:
            return False
        t4 = self.at(p2 + (off3 - 1) * step)
        d34 = d[t3][t4]
        g = d12 - d23 + d34
        for t5 in self.neigh[t4]:
            if t5 == t3 or t5 == t1:
                continue
            d45 = d[t4][t5]
            if g - d45 <= 0:
                break
            off5 = ((pos[t5] - p2) * step + L) % L
            if off5 == off3 - 2:
                continue
            t6 = self.at(p2 + (off5 + 1 if off5 < off3 else off5 - 1) * step)
            if d23 + d45 + d[t6][t1] - d12 - d34 - d[t5][t6] < -eps:
                return self._apply3([(t1, t2, t4, t3), (t1, t4, t6, t5)], (t1, t2, t3, t4, t5, t6))
        return False

    # -- VRP -----------------------------------------------------------------------------
    def around(self, x: int) -> tuple[int, int, int, int, list[int]]:
        """Route, position, predecessor (0 = depot) and successor (END) of customer x."""
        r = self.route_of[x]
        row = self.routes[r]
        i = self.pos_of[x]
        return r, i, (row[i - 1] if i > 0 else 0), (row[i + 1] if i < len(row) - 1 else END), row

    def try_reverse(self, r: int, lo: int, hi: int) -> bool:
        row = self.routes[r]
        a = row[lo - 1] if lo > 0 else 0
        b = row[hi + 1] if hi < len(row) - 1 else END
        x, y = row[lo], row[hi]
        delta = self.arc(a, y) + self.arc(x, b) - self.arc(a, x) - self.arc(y, b)
        if delta < -self.eps and self.in_time(row[:lo] + row[lo:hi + 1][::-1] + row[hi + 1:]):
            row[lo:hi + 1] = row[lo:hi + 1][::-1]
            self._index(r)
            for z in (a, x, y, b):
                self.push(z)
            return True
        return False

    def vrp_try(self, v: int) -> bool:
        arc, q, cap, eps, pre, load = self.arc, self.q, self.cap, self.eps, self.pre, self.load
        rv, i, pv, nv, rowv = self.around(v)
        Lv = len(rowv)
        if Lv == 1:
            rem = -(arc(0, v) + arc(v, END))
        else:
            rem = arc(pv, nv) - arc(pv, v) - arc(v, nv)
        qv = q[v]
        pz = self.penalised
        held = pz and self.free is not None and v not in self.free
        for u in self.neigh[v]:
            ru, j, pu, nu, rowu = self.around(u)
            qu = q[u]
            load_v, load_u = load[rv], load[ru]
            pd = 0.0
            if ru == rv:
                room = True
            elif pz:
                pd = self.load_delta(load_u + qv, load_u, load_v - qv, load_v)
                room = len(rowu) < self.stride and not (held and pd > 0)
            else:
                room = load_u + qv <= cap
            if room:
                if u != pv:
                    delta = (rem + pd) + (arc(u, v) + arc(v, nu) - arc(u, nu))
                    if delta < -eps and self.in_time(*self.relocated(v, u, True)):
                        self.relocate(v, u, True)
                        for x in (v, pv, nv, u, nu):
                            self.push(x)
                        return True
                if u != nv:
                    delta = (rem + pd) + (arc(pu, v) + arc(v, u) - arc(pu, u))
                    if delta < -eps and self.in_time(*self.relocated(v, u, False)):
                        self.relocate(v, u, False)
                        for x in (v, pv, nv, pu, u):
                            self.push(x)
                        return True
            if self.strings and self.try_strings(v, u, held):
                return True
            if ru == rv:
                if not self.sym:
                    continue
                lo, hi = (i + 1, j) if i < j else (j + 1, i)
                if hi > lo and self.try_reverse(rv, lo, hi):
                    return True
                lo, hi = (i, j - 1) if i < j else (j, i - 1)
                if hi > lo and self.try_reverse(rv, lo, hi):
                    return True
                continue
            new_v, new_u = load_v - qv + qu, load_u - qu + qv
            pd = self.load_delta(new_v, load_v, new_u, load_u) if pz else 0.0
            if (pd <= 0 or not held) if pz else (new_v <= cap and new_u <= cap):
                delta = pd + ((arc(pv, u) + arc(u, nv) - arc(pv, v) - arc(v, nv))
                              + (arc(pu, v) + arc(v, nu) - arc(pu, u) - arc(u, nu)))
                if delta < -eps and self.in_time(rowv[:i] + [u] + rowv[i + 1:],
                                                  rowu[:j] + [v] + rowu[j + 1:]):
                    rowv[i], rowu[j] = u, v
                    self._index(rv)
                    self._index(ru)
                    for x in (v, u, pv, nv, pu, nu):
                        self.push(x)
                    return True
            Lu = len(rowu)
            head_u = pre[u] - qu
            new_v, new_u = pre[v] + (load_u - head_u), head_u + (load_v - pre[v])
            room, pd = self.tails_fit(i + 1 + Lu - j, j + Lv - i - 1, new_v, load_v, new_u, load_u, held)
            if room:
                delta = pd + (arc(v, u) + self.gap(pu, nv) - arc(v, nv) - arc(pu, u))
                if delta < -eps and self.in_time(rowv[:i + 1] + rowu[j:], rowu[:j] + rowv[i + 1:]):
                    self.exchange_tails(rv, i + 1, ru, j)
                    for x in (v, nv, u, pu):
                        self.push(x)
                    return True
            head_v = pre[v] - qv
            new_u, new_v = pre[u] + (load_v - head_v), head_v + (load_u - pre[u])
            room, pd = self.tails_fit(i + Lu - j - 1, j + 1 + Lv - i, new_v, load_v, new_u, load_u, held)
            if room:
                delta = pd + (arc(u, v) + self.gap(pv, nu) - arc(pv, v) - arc(u, nu))
                if delta < -eps and self.in_time(rowu[:j + 1] + rowv[i:], rowv[:i] + rowu[j + 1:]):
                    self.exchange_tails(ru, j + 1, rv, i)
                    for x in (v, pv, u, nu):
                        self.push(x)
                    return True
            if self.swap_star:
                new_v, new_u = load_v - qv + qu, load_u - qu + qv
                if pz:
                    pd = self.load_delta(new_v, load_v, new_u, load_u)
                    if not (held and pd > 0) and self.try_swap_star(v, u, rem + pd):
                        return True
                elif new_v <= cap and new_u <= cap and self.try_swap_star(v, u, rem):
                    return True
        if Lv > 1 and (self.vehicles is None or len(self.routes) < self.vehicles):
            pd = self.load_delta(load[rv] - qv, load[rv], 0, 0) if pz else 0.0
            delta = (rem + pd) + (arc(0, v) + arc(v, END))
            if delta < -eps and self.in_time(rowv[:i] + rowv[i + 1:]):
                rowv.pop(i)
                self.routes.append([v])
                self._index(rv)
                self._index(len(self.routes) - 1)
                for x in (v, pv, nv):
                    self.push(x)
                return True
        if self.open and self.sym and Lv > 1 and i == Lv - 1:
            if self.try_reverse(rv, 0, Lv - 1):
                return True
        return False

    def gap(self, x: int, y: int) -> float:
        """The arc x -> y an insertion between x and y replaces (an empty route costs nothing)."""
        return 0.0 if (x == 0 and y == END) else self.arc(x, y)

    def best_gap(self, v: int, rest: list[int]) -> tuple[float, int]:
        """(cost, index) of the cheapest insertion of v into the route `rest` (lowest index
        among equal costs)."""
        arc, gap = self.arc, self.gap
        best, best_p, prev = 0.0, 0, 0
        for p, x in enumerate(rest):
            c = arc(prev, v) + arc(v, x) - gap(prev, x)
            if p == 0 or c < best:
                best, best_p = c, p
            prev = x
        c = arc(prev, v) + arc(v, END) - gap(prev, END)
        if not rest or c < best:
            best, best_p = c, len(rest)
        return best, best_p

    def try_swap_star(self, v: int, u: int, rem_v: float) -> bool:
        """SWAP*: v to its cheapest position in u's route without u, u to its cheapest in v's
        route without v; applied if it improves (and keeps every window)."""
        rv, i, pv, nv, rowv = self.around(v)
        ru, j, pu, nu, rowu = self.around(u)
        rest_v, rest_u = rowv[:i] + rowv[i + 1:], rowu[:j] + rowu[j + 1:]
        ins_v, at_v = self.best_gap(v, rest_u)
        ins_u, at_u = self.best_gap(u, rest_v)
        if len(rowu) == 1:
            rem_u = -(self.arc(0, u) + self.arc(u, END))
        else:
            rem_u = self.arc(pu, nu) - self.arc(pu, u) - self.arc(u, nu)
        delta = rem_v + rem_u + ins_v + ins_u
        if not delta < -self.eps:
            return False
        new_v = rest_v[:at_u] + [u] + rest_v[at_u:]
        new_u = rest_u[:at_v] + [v] + rest_u[at_v:]
        if not self.in_time(new_v, new_u):
            return False
        self.routes[rv], self.routes[ru] = new_v, new_u
        self._index(rv)
        self._index(ru)
        for x in (v, u, pv, nv, pu, nu,
                  new_u[at_v - 1] if at_v > 0 else 0, new_u[at_v + 1] if at_v < len(new_u) - 1 else END,
                  new_v[at_u - 1] if at_u > 0 else 0, new_v[at_u + 1] if at_u < len(new_v) - 1 else END):
            self.push(x)
        return True

    def try_strings(self, v: int, u: int, held: bool) -> bool:
        """String relocation: a string of 2 or 3 customers of v's route with v at one end goes
        next to u, v beside u (lengths 2 then 3; for each, v first: forward after u, reversed
        before u; v last: forward before u, reversed after u; reversed only when symmetric)."""
        i, size = self.pos_of[v], len(self.routes[self.route_of[v]])
        for length in (2, 3):
            if i + length <= size:
                if self.try_string(v, u, i, length, True, False, held):
                    return True
                if self.sym and self.try_string(v, u, i, length, False, True, held):
                    return True
            if i - length + 1 >= 0:
                if self.try_string(v, u, i - length + 1, length, False, False, held):
                    return True
                if self.sym and self.try_string(v, u, i - length + 1, length, True, True, held):
                    return True
        return False

    def try_string(self, v: int, u: int, a: int, length: int, after: bool, rev: bool,
                   held: bool) -> bool:
        """Move positions a..a+length-1 of v's route next to u (after or before it, reversed
        or not) if that improves and keeps loads and windows; True if it did."""
        arc = self.arc
        rv, ru = self.route_of[v], self.route_of[u]
        rowv, rowu = self.routes[rv], self.routes[ru]
        b, j = a + length - 1, self.pos_of[u]
        p = rowv[a - 1] if a > 0 else 0
        n = rowv[b + 1] if b < len(rowv) - 1 else END
        if ru == rv and a <= j <= b:
            return False
        if after:
            x, y = u, (rowu[j + 1] if j < len(rowu) - 1 else END)
        else:
            x, y = (rowu[j - 1] if j > 0 else 0), u
        if ru == rv and (x == p or y == n):
            return False
        piece = rowv[a:b + 1][::-1] if rev else rowv[a:b + 1]
        qs = sum(self.q[c] for c in piece)
        pd = 0.0
        if ru != rv:
            if self.penalised:
                if len(rowu) + length > self.stride:
                    return False
                pd = self.load_delta(self.load[ru] + qs, self.load[ru], self.load[rv] - qs, self.load[rv])
                if held and pd > 0:
                    return False
            elif self.load[ru] + qs > self.cap:
                return False
        delta = ((pd + (self.gap(p, n) - arc(p, rowv[a]) - arc(rowv[b], n)))
                 + (arc(x, piece[0]) + arc(piece[-1], y) - arc(x, y)))
        if not delta < -self.eps:
            return False
        rest = rowv[:a] + rowv[b + 1:]
        target = rest if ru == rv else rowu
        at = target.index(u) + (1 if after else 0)
        placed = target[:at] + piece + target[at:]
        changed = [placed] if ru == rv else [rest, placed]
        if not self.in_time(*changed):
            return False
        if ru == rv:
            self.routes[rv] = placed
        else:
            self.routes[rv], self.routes[ru] = rest, placed
        self._index(rv)
        self._index(ru)
        for z in (v, piece[0] if piece[0] != v else piece[-1], p, n, x, y):
            self.push(z)
        return True

    def relocated(self, v: int, u: int, after: bool) -> list[list[int]]:
        """The routes a relocation of v next to u would leave (one when they share a route)."""
        rv, ru = self.route_of[v], self.route_of[u]
        without = [x for x in self.routes[rv] if x != v]
        target = without if ru == rv else list(self.routes[ru])
        at = target.index(u) + (1 if after else 0)
        target = target[:at] + [v] + target[at:]
        return [target] if ru == rv else [without, target]

    def relocate(self, v: int, u: int, after: bool) -> None:
        rv, ru = self.route_of[v], self.route_of[u]
        self.routes[rv].pop(self.pos_of[v])
        self._index(rv)
        row = self.routes[ru]
        row.insert(self.pos_of[u] + 1 if after else self.pos_of[u], v)
        self._index(ru)
        self.route_of[v] = ru

    def exchange_tails(self, r1: int, c1: int, r2: int, c2: int) -> None:
        a, b = self.routes[r1], self.routes[r2]
        self.routes[r1], self.routes[r2] = a[:c1] + b[c2:], b[:c2] + a[c1:]
        self._index(r1)
        self._index(r2)


def local_search(solution: Any, problem_data: dict, touched: Sequence[int] | None = None,
                 neighbours: np.ndarray | None = None, level: int = 1,
                 load_weight: float | None = None) -> Any:
    """Improve a complete feasible solution as the native local search does; returns a new one.

    touched: the nodes whose don't-look bits start clear, in scan order (None: all nodes, and
    the result is a local optimum). neighbours: the core's candidate table (its first
    LS_NEIGHBOURS columns are used); by default the nearest neighbours, as the core has them
    except on a tour computed on demand (pass ``problem.core.near`` there). level: a repair's
    ``local_search`` setting: from 2 on a tour also the sequential 3-opt moves, from 3 on VRP
    routes also SWAP* (as the native search unless ``set_swap_star(False)`` or GLNS_ABLATE
    turned it off), from 4 also string relocation. load_weight: a penalised search (CVRP and OVRP): loads may exceed the
    capacity at that cost per unit of excess, then up to two repairs at 10x and 100x the
    weight start from the overloaded routes' nodes (as the native search with a load penalty);
    the result may still be overloaded.
    """
    search = _Search(solution, problem_data, neighbours, level, load_weight)
    start = None if touched is None else list(touched)
    if search.penalised:
        search.penalised_run(start)
    else:
        search.run(start)
    return search.result()


class LoadPenalty:
    """A run's penalised loads as the core keeps them (``SolveParams(load_penalty=target)``).

    Parameters
    ----------
    target : float
        The share of searches that should end within the capacity before a repair.
    weight : float
        The start weight (the core: the start solution's cost per unit of total demand).
    """

    def __init__(self, target: float, weight: float) -> None:
        self.target = target
        self.weight = weight
        self.low, self.high = weight * 1e-3, weight * 1e3
        self.calls = self.feasible = 0
        self.stats = {"searches": 0, "feasible": 0, "repaired": 0, "dropped": 0}

    def search(self, solution: Any, problem_data: dict, touched: Sequence[int] | None,
               level: int = 1, neighbours: np.ndarray | None = None) -> tuple[Any, bool]:
        """The penalised search at the current weight, its repairs and the weight's update.

        Returns
        -------
        tuple
            The result and whether every load fits (without penalised loads on this problem:
            the plain search's result and True).
        """
        search = _Search(solution, problem_data, neighbours, level, self.weight)
        start = None if touched is None else list(touched)
        if not search.penalised:
            search.run(start)
            return search.result(), True
        first, fits = search.penalised_run(start)
        self.calls += 1
        self.feasible += first
        self.stats["searches"] += 1
        self.stats["feasible"] += first
        self.stats["repaired"] += fits and not first
        self.stats["dropped"] += not fits
        if self.calls >= LOAD_WINDOW:
            share = self.feasible / self.calls
            if share < self.target - LOAD_SLACK:
                self.weight = min(self.weight * LOAD_UP, self.high)
            elif share > self.target + LOAD_SLACK:
                self.weight = max(self.weight * LOAD_DOWN, self.low)
            self.calls = self.feasible = 0
        return search.result(), fits


# ---------------------------------------------------------------------------------- checker

def _tsp_moves(tour: list[int], sym: bool, three_opt: bool = False):
    L = len(tour)
    if sym:  # 2-opt: every pair of non-adjacent edges (i, i+1), (j, j+1)
        for i in range(L):
            for j in range(i + 2, L):
                if i == 0 and j == L - 1:
                    continue
                yield ("2-opt", tour[i], tour[j]), tour[:i + 1] + tour[i + 1:j + 1][::-1] + tour[j + 1:]
    for length in range(1, 4):  # or-opt: every segment to every other gap
        if L < length + 2:
            break
        for start in range(L):
            seg = [tour[(start + k) % L] for k in range(length)]
            rest = [tour[(start + length + k) % L] for k in range(L - length)]  # nx .. p
            for g in range(len(rest) - 1):  # gap between rest[g] and rest[g + 1]; not (p, nx)
                for rev in ((False, True) if sym else (False,)):
                    piece = seg[::-1] if rev else seg
                    yield ("or-opt", tuple(seg), rest[g], rev), rest[:g + 1] + piece + rest[g + 1:]
    if three_opt and sym:  # or-3opt: two adjacent paths swap places (tour[i+1..j], tour[j+1..k])
        for i in range(L):
            t = tour[i + 1:] + tour[:i + 1]     # rotated so that tour[i] is last
            for j in range(1, L - 2):
                for k in range(j + 1, L - 1):
                    yield ("or-3opt", tour[i], t[j - 1], t[k - 1]), t[j:k] + t[:j] + t[k:]


def _string_moves(routes: list[list[int]], q: Sequence[int], cap: int, sym: bool,
                  loads: list[int]):
    """Every string of 2 or 3 customers to every other place in any route with room, forward
    and (symmetric only) reversed."""
    for r, route in enumerate(routes):
        for length in (2, 3):
            for a in range(len(route) - length + 1):
                seg = route[a:a + length]
                rest = route[:a] + route[a + length:]
                qs = sum(int(q[c]) for c in seg)
                for rev in ((False, True) if sym else (False,)):
                    piece = seg[::-1] if rev else seg
                    for r2 in range(len(routes)):
                        if r2 != r and loads[r2] + qs > cap:
                            continue
                        target = rest if r2 == r else routes[r2]
                        for pos in range(len(target) + 1):
                            if r2 == r and pos == a and not rev:
                                continue
                            new = [list(x) for x in routes]
                            new[r] = list(rest)
                            new[r2] = target[:pos] + piece + target[pos:]
                            yield ("string", tuple(seg), rev, r2, pos), new


def _vrp_moves(routes: list[list[int]], q: Sequence[int], cap: int, sym: bool, open_routes: bool,
               swap_star: bool = False, strings: bool = False):
    R = len(routes)
    loads = [sum(int(q[c]) for c in r) for r in routes]
    if strings:
        yield from _string_moves(routes, q, cap, sym, loads)
    for r, route in enumerate(routes):
        for i, v in enumerate(route):
            rest = route[:i] + route[i + 1:]
            for r2 in range(R):  # relocate v to any other position of any route with room
                if r2 != r and loads[r2] + q[v] > cap:
                    continue
                target = rest if r2 == r else routes[r2]
                for pos in range(len(target) + 1):
                    if r2 == r and pos == i:
                        continue
                    new = [list(x) for x in routes]
                    new[r] = list(rest)
                    new[r2] = (rest if r2 == r else routes[r2])[:pos] + [v] + target[pos:]
                    yield ("relocate", v, r2, pos), new
            if len(route) > 1:  # alone in a new route
                new = [list(x) for x in routes]
                new[r] = list(rest)
                yield ("new route", v), new + [[v]]
        if sym:  # intra-route 2-opt: reverse any segment (the whole route only in an OVRP)
            for lo in range(len(route)):
                for hi in range(lo + 1, len(route)):
                    if lo == 0 and hi == len(route) - 1 and not open_routes:
                        continue
                    new = [list(x) for x in routes]
                    new[r] = route[:lo] + route[lo:hi + 1][::-1] + route[hi + 1:]
                    yield ("2-opt", r, lo, hi), new
    for r1 in range(R):
        for r2 in range(r1 + 1, R):
            a, b = routes[r1], routes[r2]
            for i, v in enumerate(a):  # swap
                for j, u in enumerate(b):
                    if loads[r1] - q[v] + q[u] <= cap and loads[r2] - q[u] + q[v] <= cap:
                        new = [list(x) for x in routes]
                        new[r1][i], new[r2][j] = u, v
                        yield ("swap", v, u), new
            for i, v in enumerate(a if swap_star else ()):  # SWAP*: each anywhere in the other route
                for j, u in enumerate(b):
                    if loads[r1] - q[v] + q[u] > cap or loads[r2] - q[u] + q[v] > cap:
                        continue
                    rest_a, rest_b = a[:i] + a[i + 1:], b[:j] + b[j + 1:]
                    for pa in range(len(rest_a) + 1):
                        for pb in range(len(rest_b) + 1):
                            new = [list(x) for x in routes]
                            new[r1] = rest_a[:pa] + [u] + rest_a[pa:]
                            new[r2] = rest_b[:pb] + [v] + rest_b[pb:]
                            yield ("swap*", v, u, pa, pb), new
            for c1 in range(len(a) + 1):  # 2-opt*: exchange tails
                for c2 in range(len(b) + 1):
                    if (c1, c2) in ((0, 0), (len(a), len(b))):
                        continue
                    x, y = a[:c1] + b[c2:], b[:c2] + a[c1:]
                    if sum(int(q[c]) for c in x) > cap or sum(int(q[c]) for c in y) > cap:
                        continue
                    new = [list(z) for z in routes]
                    new[r1], new[r2] = x, y
                    yield ("2-opt*", r1, c1, r2, c2), new


def improving_moves(solution: Any, problem_data: dict, tol: float = 1e-9,
                    limit: int | None = None, level: int = 1) -> list[tuple[Any, float]]:
    """Every move of the local search's neighbourhoods, over all node pairs (not just the
    neighbour lists), that lowers the cost by more than tol * cost: (move, gain) pairs.
    level: from 2 on a tour also every swap of two adjacent paths (or-3opt's first kind; the
    search finds each such move from one of its cities by the positive-gain rule); from 3 on
    VRP routes also every SWAP* (two customers of different routes exchanged, each put anywhere
    in the other); from 4 also every string of 2 or 3 customers moved anywhere (reversed too
    on a symmetric matrix).

    Brute force (each move is built as a new solution and priced by a full recomputation), for
    small instances only. ``limit`` stops after that many improving moves.
    """
    d = np.asarray(problem_data["distance_matrix"], dtype=np.float64)
    tsp = "demands" not in problem_data
    open_routes = bool(problem_data.get("open_routes", False))
    sym = bool(np.array_equal(d, d.T))
    if tsp:
        moves = _tsp_moves(list(solution), sym, level >= 2)
    else:
        q = [int(x) for x in problem_data["demands"]]
        moves = _vrp_moves([list(r) for r in solution if r], q, int(problem_data["capacity"]),
                           sym, open_routes, level >= 3, level >= 4)
    base = matrix_cost(d, solution, tsp, open_routes)
    found = []
    for move, new in moves:
        gain = base - matrix_cost(d, new, tsp, open_routes)
        if gain > tol * base:
            found.append((move, gain))
            if limit is not None and len(found) >= limit:
                break
    return found
