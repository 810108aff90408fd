"""Seed operators for the CVRP and the OVRP.

A solution is a list of routes, each a list of customer ids; the depot (node 0) is not
written. In an open VRP (problem_data["open_routes"]) a route ends at its last customer.
"""

import random


def _arc(d, a, b, open_routes):
    """Cost of a -> b; b is None at the end of a route (back to the depot unless open)."""
    if b is None:
        return 0.0 if open_routes else d[a, 0]
    return d[a, b]


def random_removal(x, destroy_cnt, problem_data, rng=random):
    """Remove destroy_cnt customers chosen uniformly at random."""
    n = len(problem_data["distance_matrix"])
    candidates = list(range(1, n))
    removed = []
    for i in range(min(destroy_cnt, n - 1)):
        j = i + rng.randrange(n - 1 - i)  # partial Fisher-Yates shuffle
        candidates[i], candidates[j] = candidates[j], candidates[i]
        removed.append(candidates[i])
    gone = set(removed)
    partial = [[c for c in route if c not in gone] for route in x]
    return removed, [route for route in partial if route]


def worst_removal(x, destroy_cnt, problem_data, rng=random, randomness=3.0):
    """Remove customers with large detours one by one: each time the customer of rank
    floor(y**randomness * m) when the m customers are sorted by saving (largest first)."""
    d = problem_data["distance_matrix"]
    open_routes = problem_data.get("open_routes", False)
    routes = [list(route) for route in x]
    removed = []
    for _ in range(min(destroy_cnt, sum(len(r) for r in routes))):
        scored = []
        for route in routes:
            for p, c in enumerate(route):
                a = route[p - 1] if p > 0 else 0
                b = route[p + 1] if p < len(route) - 1 else None
                if len(route) == 1:  # the route disappears
                    delta = -(_arc(d, 0, c, open_routes) + _arc(d, c, None, open_routes))
                else:
                    delta = _arc(d, a, b, open_routes) - _arc(d, a, c, open_routes) - _arc(d, c, b, open_routes)
                scored.append((delta, c, route))  # most negative delta = largest saving
        scored.sort(key=lambda item: (item[0], item[1]))
        rank = min(int(rng.random() ** randomness * len(scored)), len(scored) - 1)
        _, c, route = scored[rank]
        route.remove(c)
        removed.append(c)
    return removed, [route for route in routes if route]


def greedy_insertion(partial, removed, problem_data, rng=random):
    """Insert each removed customer, in the given order, at its cheapest position in a
    route with room for it, or in a new route if that is strictly cheaper or nothing fits."""
    d = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    open_routes = problem_data.get("open_routes", False)
    routes = [list(route) for route in partial]
    loads = [sum(int(demands[c]) for c in route) for route in routes]
    for c in removed:
        best, best_r, best_pos = float("inf"), -1, 0
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > capacity:
                continue
            for pos in range(len(route) + 1):
                a = route[pos - 1] if pos > 0 else 0
                b = route[pos] if pos < len(route) else None
                delta = _arc(d, a, c, open_routes) + _arc(d, c, b, open_routes) - _arc(d, a, b, open_routes)
                if delta < best:
                    best, best_r, best_pos = delta, r, pos
        # vehicles are unlimited: a new route wins when strictly cheaper (or nothing fits)
        if best_r < 0 or _arc(d, 0, c, open_routes) + _arc(d, c, None, open_routes) < best:
            routes.append([c])
            loads.append(int(demands[c]))
        else:
            routes[best_r].insert(best_pos, c)
            loads[best_r] += int(demands[c])
    return routes
