"""Route-exchange crossover of two VRP solutions: the plain-Python twin of ``_crossover.pyx``.

The child of parents ``a`` and ``b`` is ``a`` with a few routes of ``b`` put in place of the
routes of ``a`` that share the most customers with them (after the selective route exchange,
SREX, of Nagata and Kobayashi). With the same stream it draws what the native crossover draws
and returns the same child; the core uses it to begin an epoch (``glns.params.Epochs``).
"""

from __future__ import annotations

from typing import Any, Sequence

from glns.operators.library.local_search import local_search
from glns.operators.library.repair import regret_insertion

__all__ = ["route_crossover"]


def route_crossover(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]], problem_data: dict,
                    rng: Any, near: Any, level: int = 2,
                    fleet: int | None = None) -> list[list[int]] | None:
    """The child of complete VRP solutions `a` and `b`, or None when it needs more than `fleet`
    routes.

    Two draws from `rng` (a ``glns.rng.SplitMix64``): a customer x, and how many routes of b
    to take, m in 1..max(1, routes of b // 2). B's routes are those of x and of x's candidates
    (row x of `near`, the core's candidate table, nearest first), the first m distinct ones; A's
    routes are the m routes of a that hold the most of their customers (ties: the earlier
    route; none that holds none). The child is a without A's routes and without B's customers,
    then B's routes appended in the order found; the customers of A's routes that are not in
    B's go back by regret-2 insertion, and the local search at `level` (0: none) starts from
    B's customers and those.
    """
    a = [list(r) for r in a if r]
    b = [list(r) for r in b if r]
    n = len(problem_data["distance_matrix"])
    x = 1 + rng.randrange(n - 1)
    m = 1 + rng.randrange(max(1, len(b) // 2))
    route_of_b = {v: i for i, route in enumerate(b) for v in route}
    route_of_a = {v: i for i, route in enumerate(a) for v in route}
    picked: list[int] = []
    for y in [x, *map(int, near[x])]:
        r = route_of_b.get(y)
        if r is not None and r not in picked:
            picked.append(r)
            if len(picked) == m:
                break
    in_b = {v for r in picked for v in b[r]}
    moved = [v for r in picked for v in b[r]]
    overlap = [0] * len(a)
    for v in moved:
        overlap[route_of_a[v]] += 1
    dropped: set[int] = set()
    for _ in picked:
        best = max((i for i in range(len(a)) if i not in dropped and overlap[i] > 0),
                   key=lambda i: (overlap[i], -i), default=None)
        if best is None:
            break
        dropped.add(best)
    left = [v for i, route in enumerate(a) if i in dropped for v in route if v not in in_b]
    gone = in_b | set(left)
    child = [[v for v in route if v not in gone] for route in a]
    child = [route for route in child if route] + [list(b[r]) for r in picked]
    child = regret_insertion(child, left, problem_data, k=2)
    if fleet and len(child) > fleet:
        return None
    if level > 0:
        child = local_search(child, problem_data, moved + left, level=level)
    return [list(route) for route in child if route]
