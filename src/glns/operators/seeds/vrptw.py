"""Seed operators for the VRPTW.

A solution is a list of routes, each a list of customer ids; the depot (node 0) is not
written. A route leaves the depot at time_windows[0][0], may wait at a customer it reaches
early, must start service at customer c no later than time_windows[c][1], serves for
service_times[c], and must be back at the depot by time_windows[0][1]. Removing customers
never needs a time check; inserting one does.
"""

import random

from glns.operators.seeds.vrp import random_removal, worst_removal

__all__ = ["random_removal", "worst_removal", "greedy_insertion", "route_in_time"]


def route_in_time(route, problem_data):
    """Whether the route keeps every time window (checked from the depot on)."""
    windows = problem_data["time_windows"]
    service = problem_data["service_times"]
    travel = problem_data["durations"]
    t, prev = windows[0][0], 0
    tol = 1e-9 * max(abs(windows[0][1]), 1.0)
    for c in route:
        t = max(t + travel[prev, c], windows[c][0])
        if t > windows[c][1] + tol:
            return False
        t += service[c]
        prev = c
    return t + travel[prev, 0] <= windows[0][1] + tol


def greedy_insertion(partial, removed, problem_data, rng=random):
    """Insert each removed customer, in the given order, at its cheapest position that keeps
    the capacity and every time window; in a new route if that is strictly cheaper (and the
    fleet has a vehicle left) or if no position is feasible."""
    d = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    vehicles = problem_data.get("vehicles")
    routes = [list(route) for route in partial]
    loads = [sum(int(demands[c]) for c in route) for route in routes]
    for c in removed:
        best, best_r, best_pos = float("inf"), -1, 0
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > capacity:
                continue
            for pos in range(len(route) + 1):
                a = route[pos - 1] if pos > 0 else 0
                b = route[pos] if pos < len(route) else 0
                delta = d[a, c] + d[c, b] - d[a, b]
                if delta < best and route_in_time(route[:pos] + [c] + route[pos:], problem_data):
                    best, best_r, best_pos = delta, r, pos
        vehicle_left = vehicles is None or len(routes) < vehicles
        if best_r < 0 or (d[0, c] + d[c, 0] < best and vehicle_left):
            routes.append([c])
            loads.append(int(demands[c]))
        else:
            routes[best_r].insert(best_pos, c)
            loads[best_r] += int(demands[c])
    return routes
