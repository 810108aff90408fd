"""Python operators written the way the G-LNS paper's evolved operators are written.

The offline LLM's corpus (:mod:`.corpus_tsp`, :mod:`.corpus_vrp`) is written in NumPy style
(``d = np.asarray(...)`` then ``d[a, b]``); the paper's evolved operators index lists. The
benchmarks and tests of the Python-operator path (data views, compiled operators) use both
kinds. These sets: pure-Python loops over lists, the
distance matrix read element by element as ``dist_mat[a][b]`` (never 2-D ``d[a, b]``
indexing, ``.shape`` or vectorised NumPy on it), ``random.random()`` / ``random.choice`` /
``random.sample`` / ``random.shuffle`` for randomness, sorting with key functions, dicts and
sets. Each function is self-contained (helpers are nested inside it) and uses only names an
operator gets without importing them (``random``, ``math``, ...), so its source text alone is
a complete operator:

- ``VRP_DESTROY`` / ``VRP_REPAIR``: CVRP and OVRP (``problem_data["open_routes"]``: an open
  route does not return to the depot, the arc back costs nothing). A solution is a list of
  routes of customer ids 1..n; the depot 0 is never written.
- ``TSP_DESTROY`` / ``TSP_REPAIR``: a solution is one tour over the cities 0..n-1.
- ``SOURCES``: ``{"vrp": {"destroy": [...], "repair": [...]}, "tsp": {...}}``, the complete
  source text of every function (what the benchmarks hand to worker processes), in the order
  of the lists above.

Every operator is deterministic given the state of the ``random`` module, and gives the same
result whether ``problem_data`` holds NumPy arrays or nested tuples of Python numbers.
"""

import inspect
import math  # noqa: F401  (available to the operators, as in the solver's namespace)
import random

# --------------------------------------------------------------------------------------------
# VRP (CVRP / OVRP) destroy operators
# --------------------------------------------------------------------------------------------


def random_customer_removal(x, destroy_cnt, problem_data):
    """Remove destroy_cnt customers chosen uniformly at random from all routes."""
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = min(destroy_cnt, len(customers))
    if k <= 0:
        return [], routes
    removed = random.sample(customers, k)
    removed_set = set(removed)
    partial = [[c for c in r if c not in removed_set] for r in routes]
    partial = [r for r in partial if r]
    return removed, partial


def noisy_worst_removal(x, destroy_cnt, problem_data):
    """Worst removal: rank customers by saving, remove the one at rank floor(y**3 * m)."""
    dist_mat = problem_data["distance_matrix"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in x]
    total = sum(len(r) for r in routes)
    k = min(destroy_cnt, total)

    def removal_saving(route, pos):
        customer = route[pos]
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route) - 1:
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos + 1]
        return (dist_mat[prev_node][customer] + dist_mat[customer][next_node]
                - dist_mat[prev_node][next_node])

    # savings per route, recomputed only for the route that changed
    savings = [[removal_saving(r, p) for p in range(len(r))] for r in routes]
    removed = []
    while len(removed) < k:
        candidates = []
        for ri, route in enumerate(routes):
            route_savings = savings[ri]
            for pos in range(len(route)):
                # a little noise breaks the ties and varies near-equal savings
                score = route_savings[pos] * (0.9 + 0.2 * random.random())
                candidates.append((score, route[pos], ri, pos))
        candidates.sort(key=lambda t: (-t[0], t[1]))
        rank = min(int(random.random() ** 3 * len(candidates)), len(candidates) - 1)
        _, customer, ri, pos = candidates[rank]
        routes[ri].pop(pos)
        removed.append(customer)
        route = routes[ri]
        savings[ri] = [removal_saving(route, p) for p in range(len(route))]
    partial = [r for r in routes if r]
    return removed, partial


def shaw_related_removal(x, destroy_cnt, problem_data):
    """Shaw removal: customers related to removed ones by distance, demand and shared route."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    routes = [list(r) for r in x]
    route_of = {}
    for ri, r in enumerate(routes):
        for c in r:
            route_of[c] = ri
    customers = [c for r in routes for c in r]
    k = min(destroy_cnt, len(customers))
    if k <= 0:
        return [], routes
    seed = random.choice(customers)
    removed = [seed]
    remaining = [c for c in customers if c != seed]
    while len(removed) < k:
        ref = random.choice(removed)
        max_dist = max(dist_mat[ref][c] for c in remaining)
        if max_dist <= 0:
            max_dist = 1.0

        def relatedness(c):
            score = 9.0 * dist_mat[ref][c] / max_dist
            score += 2.0 * abs(demands[ref] - demands[c]) / capacity
            if route_of[c] != route_of[ref]:
                score += 3.0
            return score

        remaining.sort(key=lambda c: (relatedness(c), c))
        idx = int(random.random() ** 6 * len(remaining))
        removed.append(remaining.pop(idx))
    removed_set = set(removed)
    partial = [[c for c in r if c not in removed_set] for r in routes]
    partial = [r for r in partial if r]
    return removed, partial


def adjacent_string_removal(x, destroy_cnt, problem_data):
    """Remove strings of consecutive customers from the routes nearest a random seed customer."""
    dist_mat = problem_data["distance_matrix"]
    routes = [list(r) for r in x]
    route_of = {}
    for ri, r in enumerate(routes):
        for c in r:
            route_of[c] = ri
    customers = [c for r in routes for c in r]
    k = min(destroy_cnt, len(customers))
    if k <= 0:
        return [], routes
    seed = random.choice(customers)
    neighbours = sorted(customers, key=lambda c: (c != seed, dist_mat[seed][c], c))
    avg_len = len(customers) / len(routes)
    max_string = max(1, min(10, int(avg_len)))
    removed = []
    removed_set = set()
    touched = set()
    for c in neighbours:
        if len(removed) >= k:
            break
        if c in removed_set or route_of[c] in touched:
            continue
        ri = route_of[c]
        touched.add(ri)
        route = routes[ri]
        length = min(len(route), random.randint(1, max_string), k - len(removed))
        pos = route.index(c)
        start = random.randint(max(0, pos - length + 1), min(pos, len(route) - length))
        for cc in route[start:start + length]:
            removed.append(cc)
            removed_set.add(cc)
    # every route touched and still short: take the nearest customers left
    for c in neighbours:
        if len(removed) >= k:
            break
        if c not in removed_set:
            removed.append(c)
            removed_set.add(c)
    partial = [[c for c in r if c not in removed_set] for r in routes]
    partial = [r for r in partial if r]
    return removed, partial


def small_route_removal(x, destroy_cnt, problem_data):
    """Empty (part of) a route, short ones likelier, then remove customers near its customers."""
    dist_mat = problem_data["distance_matrix"]
    routes = [list(r) for r in x if r]
    total = sum(len(r) for r in routes)
    k = min(destroy_cnt, total)
    if k <= 0:
        return [], routes
    # roulette over the routes, weight 1 / len**2: short routes are the ones worth emptying
    weights = [1.0 / (len(r) * len(r)) for r in routes]
    spin = random.random() * sum(weights)
    pick = len(routes) - 1
    for ri, w in enumerate(weights):
        spin -= w
        if spin < 0:
            pick = ri
            break
    target = routes[pick]
    limit = max(1, (k + 1) // 2)
    if len(target) > limit:
        start = random.randint(0, len(target) - limit)
        removed = target[start:start + limit]
    else:
        removed = list(target)
    removed_set = set(removed)
    others = [c for r in routes for c in r if c not in removed_set]
    while len(removed) < k:
        ref = random.choice(removed)
        best, best_c = None, -1
        for c in others:
            score = dist_mat[ref][c] * (0.8 + 0.4 * random.random())
            if best is None or score < best:
                best, best_c = score, c
        others.remove(best_c)
        removed.append(best_c)
        removed_set.add(best_c)
    partial = [[c for c in r if c not in removed_set] for r in routes]
    partial = [r for r in partial if r]
    return removed, partial


# --------------------------------------------------------------------------------------------
# VRP (CVRP / OVRP) repair operators
# --------------------------------------------------------------------------------------------


def greedy_cheapest_insertion(partial, removed, problem_data):
    """Insert customers in random order, each at its cheapest feasible position."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]

    def insertion_cost(route, pos, customer):
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route):
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos]
        added = dist_mat[prev_node][customer] + dist_mat[customer][next_node]
        return added - dist_mat[prev_node][next_node]

    def new_route_cost(customer):
        back = 0.0 if open_routes else dist_mat[customer][depot]
        return dist_mat[depot][customer] + back

    order = list(removed)
    random.shuffle(order)
    for customer in order:
        best_cost, best_route, best_pos = new_route_cost(customer), -1, 0
        for ri, route in enumerate(routes):
            if loads[ri] + demands[customer] > capacity:
                continue
            for pos in range(len(route) + 1):
                cost = insertion_cost(route, pos, customer)
                if cost < best_cost:
                    best_cost, best_route, best_pos = cost, ri, pos
        if best_route < 0:
            routes.append([customer])
            loads.append(demands[customer])
        else:
            routes[best_route].insert(best_pos, customer)
            loads[best_route] += demands[customer]
    return routes


def regret2_insertion(partial, removed, problem_data):
    """Regret-2 insertion: first insert the customer that would lose most by waiting."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]

    def insertion_cost(route, pos, customer):
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route):
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos]
        added = dist_mat[prev_node][customer] + dist_mat[customer][next_node]
        return added - dist_mat[prev_node][next_node]

    def best_position(route, customer):
        best_cost, best_pos = None, 0
        for pos in range(len(route) + 1):
            cost = insertion_cost(route, pos, customer)
            if best_cost is None or cost < best_cost:
                best_cost, best_pos = cost, pos
        return (best_cost, best_pos)

    def new_route_cost(customer):
        back = 0.0 if open_routes else dist_mat[customer][depot]
        return dist_mat[depot][customer] + back

    pending = list(removed)
    random.shuffle(pending)  # tie-breaking differs from call to call
    # cache[c][ri]: cheapest (cost, pos) of c in route ri; only the changed route is recomputed
    cache = {c: [best_position(r, c) for r in routes] for c in pending}
    while pending:
        chosen, chosen_key, chosen_route, chosen_pos = None, None, -1, 0
        for c in pending:
            first_cost, first_route, first_pos = new_route_cost(c), -1, 0
            second_cost = float("inf")
            for ri in range(len(routes)):
                if loads[ri] + demands[c] > capacity:
                    continue
                cost, pos = cache[c][ri]
                if cost < first_cost:
                    second_cost = first_cost
                    first_cost, first_route, first_pos = cost, ri, pos
                elif cost < second_cost:
                    second_cost = cost
            key = (second_cost - first_cost, -first_cost)
            if chosen_key is None or key > chosen_key:
                chosen, chosen_key, chosen_route, chosen_pos = c, key, first_route, first_pos
        pending.remove(chosen)
        del cache[chosen]
        if chosen_route < 0:
            routes.append([chosen])
            loads.append(demands[chosen])
            for c in pending:
                cache[c].append(best_position(routes[-1], c))
        else:
            route = routes[chosen_route]
            route.insert(chosen_pos, chosen)
            loads[chosen_route] += demands[chosen]
            for c in pending:
                cache[c][chosen_route] = best_position(route, c)
    return routes


def demand_ordered_insertion(partial, removed, problem_data):
    """Insert the largest demands first (noisy order), each at a noisy-cheapest feasible spot."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]

    def insertion_cost(route, pos, customer):
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route):
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos]
        added = dist_mat[prev_node][customer] + dist_mat[customer][next_node]
        return added - dist_mat[prev_node][next_node]

    noise = {c: 0.75 + 0.5 * random.random() for c in removed}
    order = sorted(removed, key=lambda c: (-demands[c] * noise[c], c))
    for customer in order:
        back = 0.0 if open_routes else dist_mat[customer][depot]
        best_cost, best_route, best_pos = dist_mat[depot][customer] + back, -1, 0
        for ri, route in enumerate(routes):
            if loads[ri] + demands[customer] > capacity:
                continue
            # slight preference for fuller routes, to keep the fleet small
            fill_bonus = 1.0 - 0.1 * loads[ri] / capacity
            for pos in range(len(route) + 1):
                cost = insertion_cost(route, pos, customer) * fill_bonus
                if cost < best_cost:
                    best_cost, best_route, best_pos = cost, ri, pos
        if best_route < 0:
            routes.append([customer])
            loads.append(demands[customer])
        else:
            routes[best_route].insert(best_pos, customer)
            loads[best_route] += demands[customer]
    return routes


def nearest_neighbour_insertion(partial, removed, problem_data):
    """Insert each customer (farthest from the depot first) next to its nearest routed neighbour."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]

    def insertion_cost(route, pos, customer):
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route):
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos]
        added = dist_mat[prev_node][customer] + dist_mat[customer][next_node]
        return added - dist_mat[prev_node][next_node]

    order = sorted(removed, key=lambda c: (-dist_mat[depot][c] * (0.8 + 0.4 * random.random()), c))
    for customer in order:
        nearest_dist, nearest_route, nearest_pos = None, -1, 0
        for ri, route in enumerate(routes):
            if loads[ri] + demands[customer] > capacity:
                continue
            for pos, node in enumerate(route):
                d = dist_mat[node][customer]
                if nearest_dist is None or d < nearest_dist:
                    nearest_dist, nearest_route, nearest_pos = d, ri, pos
        back = 0.0 if open_routes else dist_mat[customer][depot]
        new_route_cost = dist_mat[depot][customer] + back
        if nearest_route >= 0:
            route = routes[nearest_route]
            before = insertion_cost(route, nearest_pos, customer)
            after = insertion_cost(route, nearest_pos + 1, customer)
            pos = nearest_pos if before <= after else nearest_pos + 1
            if min(before, after) <= new_route_cost:
                route.insert(pos, customer)
                loads[nearest_route] += demands[customer]
                continue
        routes.append([customer])
        loads.append(demands[customer])
    return routes


def greedy_insertion_two_opt(partial, removed, problem_data):
    """Greedy cheapest insertion in random order, then 2-opt on every route that changed."""
    dist_mat = problem_data["distance_matrix"]
    demands = problem_data["demands"]
    capacity = problem_data["capacity"]
    depot = problem_data.get("depot_idx", 0)
    open_routes = problem_data.get("open_routes", False)
    routes = [list(r) for r in partial]
    loads = [sum(demands[c] for c in r) for r in routes]

    def insertion_cost(route, pos, customer):
        prev_node = depot if pos == 0 else route[pos - 1]
        if pos == len(route):
            if open_routes:
                return dist_mat[prev_node][customer]
            next_node = depot
        else:
            next_node = route[pos]
        added = dist_mat[prev_node][customer] + dist_mat[customer][next_node]
        return added - dist_mat[prev_node][next_node]

    def two_opt(route):
        # reverse route[i..j]; the arc after the last customer exists only in a closed route
        improved = True
        passes = 0
        while improved and passes < 5:
            improved = False
            passes += 1
            m = len(route)
            for i in range(m - 1):
                a = depot if i == 0 else route[i - 1]
                for j in range(i + 1, m):
                    first, last = route[i], route[j]
                    delta = dist_mat[a][last] - dist_mat[a][first]
                    if j + 1 < m:
                        b = route[j + 1]
                        delta += dist_mat[first][b] - dist_mat[last][b]
                    elif not open_routes:
                        delta += dist_mat[first][depot] - dist_mat[last][depot]
                    if delta < -1e-9:
                        route[i:j + 1] = route[i:j + 1][::-1]
                        improved = True
                        first = route[i]
        return route

    order = list(removed)
    random.shuffle(order)
    touched = set()
    for customer in order:
        back = 0.0 if open_routes else dist_mat[customer][depot]
        best_cost, best_route, best_pos = dist_mat[depot][customer] + back, -1, 0
        for ri, route in enumerate(routes):
            if loads[ri] + demands[customer] > capacity:
                continue
            for pos in range(len(route) + 1):
                cost = insertion_cost(route, pos, customer)
                if cost < best_cost:
                    best_cost, best_route, best_pos = cost, ri, pos
        if best_route < 0:
            routes.append([customer])
            loads.append(demands[customer])
            touched.add(len(routes) - 1)
        else:
            routes[best_route].insert(best_pos, customer)
            loads[best_route] += demands[customer]
            touched.add(best_route)
    for ri in sorted(touched):
        if len(routes[ri]) > 2:
            two_opt(routes[ri])
    return routes


# --------------------------------------------------------------------------------------------
# TSP destroy operators
# --------------------------------------------------------------------------------------------


def tour_segment_removal(x, destroy_cnt, problem_data):
    """Remove one or two contiguous segments of the tour (wrapping around its end)."""
    tour = list(x)
    k = min(destroy_cnt, len(tour))
    if k <= 0:
        return [], tour
    if k >= 4 and random.random() < 0.5:
        first = random.randint(1, k - 1)
        lengths = [first, k - first]
    else:
        lengths = [k]
    removed = []
    for length in lengths:
        start = random.randrange(len(tour))
        segment = [tour[(start + i) % len(tour)] for i in range(length)]
        removed += segment
        segment_set = set(segment)
        tour = [c for c in tour if c not in segment_set]
    return removed, tour


def worst_detour_removal(x, destroy_cnt, problem_data):
    """Remove cities with the largest detours, rank drawn as floor(y**3 * m) each time."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(x)
    k = min(destroy_cnt, len(tour))
    removed = []
    while len(removed) < k:
        m = len(tour)
        scored = []
        for i in range(m):
            prev_city, city, next_city = tour[i - 1], tour[i], tour[(i + 1) % m]
            detour = (dist_mat[prev_city][city] + dist_mat[city][next_city]
                      - dist_mat[prev_city][next_city])
            scored.append((detour, city, i))
        scored.sort(key=lambda t: (-t[0], t[1]))
        rank = min(int(random.random() ** 3 * m), m - 1)
        _, city, i = scored[rank]
        removed.append(city)
        tour.pop(i)
    return removed, tour


def related_city_removal(x, destroy_cnt, problem_data):
    """Shaw removal for the TSP: cities close to an already removed city."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(x)
    k = min(destroy_cnt, len(tour))
    if k <= 0:
        return [], tour
    seed = random.choice(tour)
    removed = [seed]
    remaining = [c for c in tour if c != seed]
    while len(removed) < k:
        ref = random.choice(removed)
        remaining.sort(key=lambda c: (dist_mat[ref][c], c))
        idx = int(random.random() ** 5 * len(remaining))
        removed.append(remaining.pop(idx))
    removed_set = set(removed)
    return removed, [c for c in tour if c not in removed_set]


def random_city_removal(x, destroy_cnt, problem_data):
    """Remove destroy_cnt cities chosen uniformly at random."""
    tour = list(x)
    k = min(destroy_cnt, len(tour))
    if k <= 0:
        return [], tour
    removed = random.sample(tour, k)
    removed_set = set(removed)
    return removed, [c for c in tour if c not in removed_set]


def long_edge_removal(x, destroy_cnt, problem_data):
    """Remove the endpoints of the longest tour edges (lengths perturbed by noise)."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(x)
    m = len(tour)
    k = min(destroy_cnt, m)
    if k <= 0:
        return [], tour
    edges = []
    for i in range(m):
        a, b = tour[i], tour[(i + 1) % m]
        edges.append((dist_mat[a][b] * (0.8 + 0.4 * random.random()), i))
    edges.sort(key=lambda e: (-e[0], e[1]))
    removed = []
    removed_set = set()
    for _, i in edges:
        ends = [tour[i], tour[(i + 1) % m]]
        if random.random() < 0.5:
            ends.reverse()
        for c in ends:
            if len(removed) < k and c not in removed_set:
                removed.append(c)
                removed_set.add(c)
        if len(removed) >= k:
            break
    return removed, [c for c in tour if c not in removed_set]


# --------------------------------------------------------------------------------------------
# TSP repair operators
# --------------------------------------------------------------------------------------------


def cheapest_city_insertion(partial, removed, problem_data):
    """Insert cities in random order, each where it lengthens the tour least."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(partial)
    order = list(removed)
    random.shuffle(order)
    for city in order:
        if not tour:
            tour.append(city)
            continue
        best_cost, best_pos = None, 0
        for pos in range(len(tour)):  # between tour[pos - 1] and tour[pos]
            a, b = tour[pos - 1], tour[pos]
            cost = dist_mat[a][city] + dist_mat[city][b] - dist_mat[a][b]
            if best_cost is None or cost < best_cost:
                best_cost, best_pos = cost, pos
        tour.insert(best_pos, city)
    return tour


def farthest_city_insertion(partial, removed, problem_data):
    """Farthest insertion: the city farthest from the tour goes first, at its cheapest place."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(partial)
    pending = list(removed)
    if not tour and pending:
        tour.append(pending.pop(random.randrange(len(pending))))
    # distance from each pending city to the nearest tour city, updated as cities go in
    near = {}
    for c in pending:
        best = None
        for t in tour:
            d = dist_mat[c][t]
            if best is None or d < best:
                best = d
        near[c] = best
    while pending:
        idx = 0
        for i in range(1, len(pending)):
            if near[pending[i]] > near[pending[idx]]:
                idx = i
        city = pending.pop(idx)
        best_cost, best_pos = None, 0
        for pos in range(len(tour)):
            a, b = tour[pos - 1], tour[pos]
            cost = dist_mat[a][city] + dist_mat[city][b] - dist_mat[a][b]
            if best_cost is None or cost < best_cost:
                best_cost, best_pos = cost, pos
        tour.insert(best_pos, city)
        for c in pending:
            d = dist_mat[c][city]
            if d < near[c]:
                near[c] = d
    return tour


def regret_city_insertion(partial, removed, problem_data):
    """Regret-2 insertion: insert first the city whose best and second-best places differ most."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(partial)
    pending = list(removed)
    random.shuffle(pending)
    if not tour and pending:
        tour.append(pending.pop())

    def two_best(city):
        # the two cheapest edges (a, b) to insert city into: [(cost, a, b), (cost, a, b)]
        first = (float("inf"), -1, -1)
        second = (float("inf"), -1, -1)
        for pos in range(len(tour)):
            a, b = tour[pos - 1], tour[pos]
            cost = dist_mat[a][city] + dist_mat[city][b] - dist_mat[a][b]
            if cost < first[0]:
                first, second = (cost, a, b), first
            elif cost < second[0]:
                second = (cost, a, b)
        return [first, second]

    best = {c: two_best(c) for c in pending}
    while pending:
        chosen, chosen_key = 0, None
        for i, c in enumerate(pending):
            first, second = best[c]
            key = (second[0] - first[0], -first[0])
            if chosen_key is None or key > chosen_key:
                chosen, chosen_key = i, key
        city = pending.pop(chosen)
        _, a, b = best.pop(city)[0]
        tour.insert(tour.index(b), city)  # between a = tour[index(b) - 1] and b
        # edge (a, b) is gone, (a, city) and (city, b) are new
        for c in pending:
            first, second = best[c]
            if (first[1], first[2]) == (a, b) or (second[1], second[2]) == (a, b):
                best[c] = two_best(c)
                continue
            for u, v in ((a, city), (city, b)):
                cost = dist_mat[u][c] + dist_mat[c][v] - dist_mat[u][v]
                if cost < first[0]:
                    first, second = (cost, u, v), first
                elif cost < second[0]:
                    second = (cost, u, v)
            best[c] = [first, second]
    return tour


def nearest_city_insertion(partial, removed, problem_data):
    """Nearest insertion: the city closest to the tour goes first, at its cheapest place."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(partial)
    pending = list(removed)
    if not tour and pending:
        tour.append(pending.pop(random.randrange(len(pending))))
    near = {}
    for c in pending:
        best = None
        for t in tour:
            d = dist_mat[c][t]
            if best is None or d < best:
                best = d
        near[c] = best
    while pending:
        idx = 0
        for i in range(1, len(pending)):
            if near[pending[i]] < near[pending[idx]]:
                idx = i
        city = pending.pop(idx)
        best_cost, best_pos = None, 0
        for pos in range(len(tour)):
            a, b = tour[pos - 1], tour[pos]
            cost = dist_mat[a][city] + dist_mat[city][b] - dist_mat[a][b]
            if best_cost is None or cost < best_cost:
                best_cost, best_pos = cost, pos
        tour.insert(best_pos, city)
        for c in pending:
            d = dist_mat[c][city]
            if d < near[c]:
                near[c] = d
    return tour


def insertion_with_two_opt(partial, removed, problem_data):
    """Cheapest insertion in random order, then 2-opt moves at the edges of inserted cities."""
    dist_mat = problem_data["distance_matrix"]
    tour = list(partial)
    order = list(removed)
    random.shuffle(order)
    for city in order:
        if not tour:
            tour.append(city)
            continue
        best_cost, best_pos = None, 0
        for pos in range(len(tour)):
            a, b = tour[pos - 1], tour[pos]
            cost = dist_mat[a][city] + dist_mat[city][b] - dist_mat[a][b]
            if best_cost is None or cost < best_cost:
                best_cost, best_pos = cost, pos
        tour.insert(best_pos, city)

    m = len(tour)
    if m < 5:
        return tour
    for city in order:
        # try to remove edge (tour[i-1], tour[i]) for both edges at city, with any other edge
        for side in (0, 1):
            i = (tour.index(city) + side) % m
            if i == 0:
                continue  # segment reversals below never wrap around the start
            a, first = tour[i - 1], tour[i]
            best_delta, best_j = -1e-9, -1
            for j in range(i + 1, m - (1 if i == 1 else 0)):
                last, b = tour[j], tour[(j + 1) % m]
                delta = (dist_mat[a][last] + dist_mat[first][b]
                         - dist_mat[a][first] - dist_mat[last][b])
                if delta < best_delta:
                    best_delta, best_j = delta, j
            if best_j >= 0:
                tour[i:best_j + 1] = tour[i:best_j + 1][::-1]
    return tour


VRP_DESTROY = [random_customer_removal, noisy_worst_removal, shaw_related_removal,
               adjacent_string_removal, small_route_removal]
VRP_REPAIR = [greedy_cheapest_insertion, regret2_insertion, demand_ordered_insertion,
              nearest_neighbour_insertion, greedy_insertion_two_opt]
TSP_DESTROY = [tour_segment_removal, worst_detour_removal, related_city_removal,
               random_city_removal, long_edge_removal]
TSP_REPAIR = [cheapest_city_insertion, farthest_city_insertion, regret_city_insertion,
              nearest_city_insertion, insertion_with_two_opt]

SOURCES = {
    "vrp": {"destroy": [inspect.getsource(f) for f in VRP_DESTROY],
            "repair": [inspect.getsource(f) for f in VRP_REPAIR]},
    "tsp": {"destroy": [inspect.getsource(f) for f in TSP_DESTROY],
            "repair": [inspect.getsource(f) for f in TSP_REPAIR]},
}
