"""Good VRPTW operators for the offline LLM, written the way an LLM answers a G-LNS prompt.

A solution is a list of routes of customer ids (the depot, node 0, is not written). Removing
customers never breaks a time window (with the usual travel times), so VRPTW prompts also get
the VRP destroy operators (corpus.good_entries); this module adds one whose relatedness
accounts for time. Every repair checks the capacity and the windows of each position it
takes, and opens a new route when nothing fits.
"""

import math
import random

import numpy as np



def time_shaw_removal(x, destroy_cnt, problem_data):
    """Remove customers related to a random seed customer, relatedness mixing distance and the distance between their time windows, choosing among the most related with a bias."""
    d = problem_data["distance_matrix"]
    tw = problem_data["time_windows"]
    routed = [c for route in x for c in route]
    if not routed:
        return [], [list(r) for r in x]
    span = max(float(tw[0][1] - tw[0][0]), 1e-9)
    scale = max(float(np.max(d)), 1e-9)
    seed = random.choice(routed)
    removed = [seed]
    pool = set(routed) - {seed}
    while len(removed) < min(destroy_cnt, len(routed)) and pool:
        ref = random.choice(removed)
        ranked = sorted(pool, key=lambda c: d[ref][c] / scale
                        + (abs(tw[ref][0] - tw[c][0]) + abs(tw[ref][1] - tw[c][1])) / span)
        pick = ranked[int(random.random() ** 4 * len(ranked))]
        removed.append(pick)
        pool.discard(pick)
    gone = set(removed)
    partial = [[c for c in route if c not in gone] for route in x]
    return removed, [r for r in partial if r]


def due_first_insertion(partial, removed, problem_data):
    """Insert the removed customers by increasing due time, each at its cheapest position that keeps capacity and every time window, so that the most urgent customers shape the routes."""
    d = problem_data["distance_matrix"]
    tw = problem_data["time_windows"]
    service = problem_data["service_times"]
    travel = problem_data["durations"]
    demands, capacity = problem_data["demands"], problem_data["capacity"]

    def in_time(route):
        t, prev = tw[0][0], 0
        for c in route:
            t = max(t + travel[prev][c], tw[c][0])
            if t > tw[c][1] + 1e-9:
                return False
            t += service[c]
            prev = c
        return t + travel[prev][0] <= tw[0][1] + 1e-9

    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]
    for c in sorted(removed, key=lambda c: (tw[c][1], random.random())):
        best, where = math.inf, None
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > capacity:
                continue
            for pos in range(len(route) + 1):
                a = route[pos - 1] if pos > 0 else 0
                b = route[pos] if pos < len(route) else 0
                delta = d[a][c] + d[c][b] - d[a][b]
                if delta < best and in_time(route[:pos] + [c] + route[pos:]):
                    best, where = delta, (r, pos)
        if where is None:
            routes.append([c])
            loads.append(demands[c])
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += demands[c]
    return routes


def regret_time_insertion(partial, removed, problem_data):
    """Insert next the customer with the largest regret between its cheapest feasible route and its second cheapest (a new route counts as an option), at its cheapest position that keeps capacity and every time window."""
    d = problem_data["distance_matrix"]
    tw = problem_data["time_windows"]
    service = problem_data["service_times"]
    travel = problem_data["durations"]
    demands, capacity = problem_data["demands"], problem_data["capacity"]

    def in_time(route):
        t, prev = tw[0][0], 0
        for c in route:
            t = max(t + travel[prev][c], tw[c][0])
            if t > tw[c][1] + 1e-9:
                return False
            t += service[c]
            prev = c
        return t + travel[prev][0] <= tw[0][1] + 1e-9

    def options(c):
        out = [(d[0][c] + d[c][0], None)]           # a new route
        for r, route in enumerate(routes):
            if loads[r] + demands[c] > capacity:
                continue
            best, where = math.inf, None
            for pos in range(len(route) + 1):
                a = route[pos - 1] if pos > 0 else 0
                b = route[pos] if pos < len(route) else 0
                delta = d[a][c] + d[c][b] - d[a][b]
                if delta < best and in_time(route[:pos] + [c] + route[pos:]):
                    best, where = delta, (r, pos)
            if where is not None:
                out.append((best, where))
        return sorted(out, key=lambda item: item[0])

    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]
    todo = list(removed)
    while todo:
        pick, pick_key, pick_where = None, None, None
        for c in todo:
            opts = options(c)
            regret = opts[1][0] - opts[0][0] if len(opts) > 1 else math.inf
            key = (regret, -opts[0][0])
            if pick_key is None or key > pick_key:
                pick, pick_key, pick_where = c, key, opts[0][1]
        if pick_where is None:
            routes.append([pick])
            loads.append(demands[pick])
        else:
            routes[pick_where[0]].insert(pick_where[1], pick)
            loads[pick_where[0]] += demands[pick]
        todo.remove(pick)
    return routes


DESTROY = [time_shaw_removal]
REPAIR = [due_first_insertion, regret_time_insertion]
