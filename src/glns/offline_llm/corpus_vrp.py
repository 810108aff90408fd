"""Good CVRP/OVRP operators served by the offline LLM (plain Python in the paper's style).

A solution is a list of routes, each a list of customer ids (the depot, node 0, is not written).
Every operator reads ``problem_data.get("open_routes", False)``: in an open VRP a route ends at
its last customer, so the arc back to the depot costs nothing. Repairs respect the capacity and
open a new route when nothing fits (vehicles are unlimited). As in :mod:`.corpus_tsp`, each
function is a complete answer, with its helpers defined inside.
"""

import math
import random

import numpy as np


def route_removal(x, destroy_cnt, problem_data):
    """Remove whole random routes until destroy_cnt customers are out, taking a random part of the last route touched, so that customers can be regrouped into new routes."""
    routes = [list(r) for r in x if len(r) > 0]
    k = max(0, min(int(destroy_cnt), sum(len(r) for r in routes)))
    random.shuffle(routes)
    removed = []
    kept = []
    for route in routes:
        room = k - len(removed)
        if room >= len(route):
            removed.extend(route)
        elif room > 0:
            out = set(random.sample(route, room))
            removed.extend(c for c in route if c in out)
            kept.append([c for c in route if c not in out])
        else:
            kept.append(route)
    return removed, kept


def shaw_removal(x, destroy_cnt, problem_data):
    """Remove customers related to a random seed customer, relatedness mixing distance, demand difference and sharing a route, choosing among the most related with a bias."""
    d = np.asarray(problem_data["distance_matrix"])
    q = np.asarray(problem_data["demands"], dtype=float)
    cap = float(problem_data["capacity"])
    routes = [list(r) for r in x]
    route_of = {c: i for i, r in enumerate(routes) for c in r}
    customers = list(route_of)
    k = max(0, min(int(destroy_cnt), len(customers)))
    if k == 0:
        return [], [r for r in routes if r]
    dmax = float(d.max()) or 1.0
    removed = [random.choice(customers)]
    left = set(customers) - {removed[0]}
    while len(removed) < k:
        ref = random.choice(removed)

        def related(c):
            same = 0.0 if route_of[c] == route_of[ref] else 0.3
            return 9.0 * d[ref, c] / dmax + 2.0 * abs(q[ref] - q[c]) / cap + same

        ranked = sorted(left, key=lambda c: (related(c), c))
        pick = ranked[int(len(ranked) * random.random() ** 5)]
        removed.append(pick)
        left.discard(pick)
    gone = set(removed)
    partial = [[c for c in r if c not in gone] for r in routes]
    return removed, [r for r in partial if r]


def worst_noise_removal(x, destroy_cnt, problem_data):
    """Repeatedly remove the customer whose removal saves the most distance, each saving scaled by a random factor in [0.5, 1.5]."""
    d = np.asarray(problem_data["distance_matrix"])
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in x if len(r) > 0]
    k = max(0, min(int(destroy_cnt), sum(len(r) for r in routes)))

    def saving(route, p):
        a = route[p - 1] if p > 0 else 0
        c = route[p]
        if p + 1 < len(route):
            b = route[p + 1]
            return d[a, c] + d[c, b] - d[a, b]
        return d[a, c] + (0.0 if open_routes else d[c, 0] - d[a, 0])

    removed = []
    for _ in range(k):
        best, where = -math.inf, None
        for r, route in enumerate(routes):
            for p in range(len(route)):
                value = saving(route, p) * random.uniform(0.5, 1.5)
                if value > best:
                    best, where = value, (r, p)
        r, p = where
        removed.append(routes[r].pop(p))
        if not routes[r]:
            routes.pop(r)
    return removed, routes


def string_removal(x, destroy_cnt, problem_data):
    """Around a random seed customer, cut strings of consecutive customers out of the routes of the seed's nearest neighbours, in the spirit of SISR ruin."""
    d = np.asarray(problem_data["distance_matrix"])
    routes = [list(r) for r in x if len(r) > 0]
    route_of = {c: i for i, r in enumerate(routes) for c in r}
    k = max(0, min(int(destroy_cnt), len(route_of)))
    if k == 0:
        return [], routes
    avg_len = max(1.0, len(route_of) / max(1, len(routes)))
    max_string = max(1, min(10, int(round(avg_len))))
    seed = random.choice(list(route_of))
    order = [int(c) for c in np.argsort(d[seed], kind="stable") if int(c) in route_of]
    removed = []
    gone = set()
    touched = set()
    for c in order:
        if len(removed) >= k:
            break
        r = route_of[c]
        if r in touched or c in gone:
            continue
        touched.add(r)
        route = routes[r]
        length = min(random.randint(1, max_string), len(route), k - len(removed))
        pos = route.index(c)
        start = random.randint(max(0, pos - length + 1), min(pos, len(route) - length))
        for cust in route[start:start + length]:
            gone.add(cust)
            removed.append(cust)
    rest = [c for c in order if c not in gone]
    while len(removed) < k:  # all routes touched: top up with the nearest leftovers
        c = rest.pop(0)
        gone.add(c)
        removed.append(c)
    partial = [[c for c in r if c not in gone] for r in routes]
    return removed, [r for r in partial if r]


def radial_removal(x, destroy_cnt, problem_data):
    """Remove the destroy_cnt customers nearest to a random customer, distances blurred by 10 % noise, to rebuild one neighbourhood at a time."""
    d = np.asarray(problem_data["distance_matrix"])
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    if k == 0:
        return [], [r for r in routes if r]
    centre = random.choice(customers)
    c_arr = np.array(customers)
    score = d[centre, c_arr] * np.random.uniform(0.9, 1.1, size=len(c_arr))
    removed = [customers[i] for i in np.argsort(score, kind="stable")[:k]]
    gone = set(removed)
    partial = [[c for c in r if c not in gone] for r in routes]
    return removed, [r for r in partial if r]


def sector_removal(x, destroy_cnt, problem_data):
    """Remove the destroy_cnt customers whose polar angle around the depot is closest to a random direction, freeing a whole sector for new route shapes."""
    xy = np.asarray(problem_data["coordinates"], dtype=float)
    depot = int(problem_data.get("depot_idx", 0))
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    if k == 0:
        return [], [r for r in routes if r]
    c_arr = np.array(customers)
    rel = xy[c_arr] - xy[depot]
    angle = np.arctan2(rel[:, 1], rel[:, 0])
    theta = random.uniform(-math.pi, math.pi)
    gap = np.abs((angle - theta + math.pi) % (2 * math.pi) - math.pi)
    removed = [customers[i] for i in np.argsort(gap, kind="stable")[:k]]
    gone = set(removed)
    partial = [[c for c in r if c not in gone] for r in routes]
    return removed, [r for r in partial if r]


def small_route_removal(x, destroy_cnt, problem_data):
    """Empty routes drawn with probability inversely proportional to their squared load, using at most half of destroy_cnt, then remove the customers nearest to the emptied ones, so that lightly loaded vehicles can be absorbed by their neighbours."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    routes = [list(r) for r in x if len(r) > 0]
    k = max(0, min(int(destroy_cnt), sum(len(r) for r in routes)))
    weights = [1.0 / max(1, sum(int(q[c]) for c in r)) ** 2 for r in routes]
    removed = []
    candidates = list(range(len(routes)))
    while candidates:
        i = random.choices(candidates, weights=[weights[j] for j in candidates])[0]
        candidates.remove(i)
        if len(removed) + len(routes[i]) > min(k, max(1, k // 2)):
            break
        removed.extend(routes[i])
    gone = set(removed)
    rest = [c for r in routes for c in r if c not in gone]
    if removed and rest:  # customers close to the emptied routes take part in the regrouping
        closeness = [min(d[c, v] for v in removed) for c in rest]
        rest = [c for _, c in sorted(zip(closeness, rest))]
    else:
        random.shuffle(rest)
    removed.extend(rest[:k - len(removed)])
    gone = set(removed)
    partial = [[c for c in r if c not in gone] for r in routes]
    return removed, [r for r in partial if r]


def random_order_insertion(partial, removed, problem_data):
    """Insert the removed customers in random order, each at its cheapest feasible position, or in a new route when that is cheaper or nothing fits."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    pending = list(removed)
    random.shuffle(pending)
    for c in pending:
        best, where = d[0, c] + (0.0 if open_routes else d[c, 0]), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            p = int(np.argmin(delta))
            if delta[p] < best:
                best, where = delta[p], (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            r, p = where
            routes[r].insert(p, c)
            loads[r] += int(q[c])
    return routes


def regret2_insertion(partial, removed, problem_data):
    """Insert next the customer with the largest regret between its best and second-best route (a new route counts as an option), at its best feasible position."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    pending = list(removed)

    def options(c):
        new_route = d[0, c] + (0.0 if open_routes else d[c, 0])
        out = [(new_route, -1, 0)]
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            p = int(np.argmin(delta))
            out.append((float(delta[p]), r, p))
        out.sort()
        return out

    while pending:
        best = None
        for i, c in enumerate(pending):
            opts = options(c)
            regret = opts[1][0] - opts[0][0] if len(opts) > 1 else math.inf
            key = (regret, -opts[0][0])
            if best is None or key > best[0]:
                best = (key, i, opts[0])
        _, i, (_, r, p) = best
        c = pending.pop(i)
        if r < 0:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            routes[r].insert(p, c)
            loads[r] += int(q[c])
    return routes


def demand_first_insertion(partial, removed, problem_data):
    """Insert the removed customers by decreasing demand (ties at random), each at its cheapest feasible position, packing big demands while vehicles still have room."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    pending = sorted(removed, key=lambda c: (-int(q[c]), random.random()))
    for c in pending:
        best, where = d[0, c] + (0.0 if open_routes else d[c, 0]), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            for p in range(len(route) + 1):
                a = route[p - 1] if p > 0 else 0
                if p < len(route):
                    b = route[p]
                    delta = d[a, c] + d[c, b] - d[a, b]
                else:
                    delta = d[a, c] + (0.0 if open_routes else d[c, 0] - d[a, 0])
                if delta < best:
                    best, where = delta, (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += int(q[c])
    return routes


def farthest_first_insertion(partial, removed, problem_data):
    """Insert the removed customers from the farthest from the depot inwards, each at its cheapest feasible position, so that remote customers anchor the routes."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    for c in sorted(removed, key=lambda c: (-d[0, c], c)):
        best, where = d[0, c] + (0.0 if open_routes else d[c, 0]), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            p = int(np.argmin(delta))
            if delta[p] < best:
                best, where = delta[p], (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += int(q[c])
    return routes


def noisy_greedy_insertion(partial, removed, problem_data):
    """Insert the removed customers in random order at the feasible position whose cost, perturbed by noise of up to 20 % of the mean distance, is lowest."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    noise = 0.2 * float(np.mean(d))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    pending = list(removed)
    random.shuffle(pending)
    for c in pending:
        base = d[0, c] + (0.0 if open_routes else d[c, 0])
        best, where = base + noise * random.uniform(-1, 1), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            delta = delta + noise * np.random.uniform(-1, 1, size=len(delta))
            p = int(np.argmin(delta))
            if delta[p] < best:
                best, where = delta[p], (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += int(q[c])
    return routes


def greedy_two_opt_insertion(partial, removed, problem_data):
    """Insert the removed customers greedily in random order, then improve every route that received a customer by first-improvement 2-opt."""
    d = np.asarray(problem_data["distance_matrix"])
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]

    def route_cost(route):
        if not route:
            return 0.0
        path = [0] + route if open_routes else [0] + route + [0]
        return float(sum(d[a, b] for a, b in zip(path, path[1:])))

    def two_opt(route):
        best_cost = route_cost(route)
        improved = True
        rounds = 0
        while improved and rounds < 20:
            improved = False
            rounds += 1
            for i in range(len(route) - 1):
                for j in range(i + 1, len(route)):
                    cand = route[:i] + route[i:j + 1][::-1] + route[j + 1:]
                    cost = route_cost(cand)
                    if cost < best_cost - 1e-10:
                        route, best_cost, improved = cand, cost, True
        return route

    pending = list(removed)
    random.shuffle(pending)
    touched = set()
    for c in pending:
        best, where = d[0, c] + (0.0 if open_routes else d[c, 0]), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            p = int(np.argmin(delta))
            if delta[p] < best:
                best, where = delta[p], (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
            touched.add(len(routes) - 1)
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += int(q[c])
            touched.add(where[0])
    for r in touched:
        if len(routes[r]) <= 12:  # 2-opt with full re-evaluation: keep it to short routes
            routes[r] = two_opt(routes[r])
    return routes


def angle_sweep_insertion(partial, removed, problem_data):
    """Sort the removed customers by polar angle around the depot from a random start and insert them in that sweep order, each at its cheapest feasible position."""
    d = np.asarray(problem_data["distance_matrix"])
    xy = np.asarray(problem_data["coordinates"], dtype=float)
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    open_routes = bool(problem_data.get("open_routes", False))
    routes = [list(r) for r in partial]
    loads = [sum(int(q[c]) for c in r) for r in routes]
    start = random.uniform(-math.pi, math.pi)

    def sweep_key(c):
        dx, dy = xy[c] - xy[0]
        return ((math.atan2(dy, dx) - start) % (2 * math.pi), c)

    for c in sorted(removed, key=sweep_key):
        best, where = d[0, c] + (0.0 if open_routes else d[c, 0]), None
        for r, route in enumerate(routes):
            if loads[r] + int(q[c]) > cap:
                continue
            prev = np.array([0] + route)
            nxt = np.array(route + [0])
            delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
            if open_routes:
                delta[-1] = d[prev[-1], c]
            p = int(np.argmin(delta))
            if delta[p] < best:
                best, where = delta[p], (r, p)
        if where is None:
            routes.append([c])
            loads.append(int(q[c]))
        else:
            routes[where[0]].insert(where[1], c)
            loads[where[0]] += int(q[c])
    return routes


DESTROY = [route_removal, shaw_removal, worst_noise_removal, string_removal, radial_removal,
           sector_removal, small_route_removal]
REPAIR = [random_order_insertion, regret2_insertion, demand_first_insertion,
          farthest_first_insertion, noisy_greedy_insertion, greedy_two_opt_insertion,
          angle_sweep_insertion]
