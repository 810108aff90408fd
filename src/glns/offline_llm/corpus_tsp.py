"""Good TSP operators served by the offline LLM (plain Python in the paper's style).

Each function is a complete answer on its own: the offline server sends this module's imports
plus the function's source, and the first docstring line as the answer's idea. They follow the
operator contract (docs/operator-contract.md) for any tour length (including 0, 1 and 2 cities)
and any ``destroy_cnt`` (including 0 and more than the tour holds). Helpers are defined inside
the functions, as the paper's prompts ask. Two of them take the bare ``distance_matrix`` as
third argument, the convention of the paper's i1/i2 prompts.
"""

import math
import random

import numpy as np


def segment_removal(x, destroy_cnt, problem_data):
    """Remove one to three contiguous stretches of the tour, destroy_cnt cities in total, so that whole sections can be re-routed."""
    tour = list(x)
    n = len(tour)
    k = max(0, min(int(destroy_cnt), n))
    if k == 0:
        return [], tour
    pieces = random.randint(1, min(3, k))
    cuts = sorted(random.sample(range(1, k), pieces - 1))
    lengths = [b - a for a, b in zip([0] + cuts, cuts + [k])]
    taken = set()
    for length in lengths:
        start = random.randrange(n)
        step = 0
        count = 0
        while count < length and step < n:
            pos = (start + step) % n
            if pos not in taken:
                taken.add(pos)
                count += 1
            step += 1
    removed = [tour[p] for p in sorted(taken)]
    partial = [c for p, c in enumerate(tour) if p not in taken]
    return removed, partial


def related_removal(current_solution, destroy_cnt, distance_matrix):
    """Grow a geographic cluster from a random city by repeatedly removing a city close to an already removed one, biased towards the nearest."""
    d = np.asarray(distance_matrix)
    tour = list(current_solution)
    k = max(0, min(int(destroy_cnt), len(tour)))
    if k == 0:
        return [], tour
    remaining = set(tour)
    removed = [random.choice(tour)]
    remaining.discard(removed[0])
    while len(removed) < k:
        ref = random.choice(removed)
        candidates = sorted(remaining, key=lambda c: (d[ref, c], c))
        pick = candidates[int(len(candidates) * random.random() ** 4)]
        removed.append(pick)
        remaining.discard(pick)
    gone = set(removed)
    return removed, [c for c in tour if c not in gone]


def worst_noise_removal(x, destroy_cnt, problem_data):
    """Repeatedly remove the city whose detour, scaled by a random factor in [0.6, 1.4], is largest in the current partial tour."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = []
    for _ in range(k):
        if len(tour) <= 2:
            i = random.randrange(len(tour))
        else:
            t = np.array(tour)
            prev, nxt = np.roll(t, 1), np.roll(t, -1)
            saving = d[prev, t] + d[t, nxt] - d[prev, nxt]
            noisy = saving * np.random.uniform(0.6, 1.4, size=len(t))
            i = int(np.argmax(noisy))
        removed.append(tour.pop(i))
    return removed, tour


def cluster_walk_removal(x, destroy_cnt, problem_data):
    """Walk breadth-first through the five nearest neighbours of removed cities, starting from a random city, until destroy_cnt cities are removed."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    in_tour = set(tour)
    removed = []
    queue = []
    while len(removed) < k:
        if not queue:
            rest = [c for c in tour if c in in_tour]
            queue.append(random.choice(rest))
        city = queue.pop(0)
        if city not in in_tour:
            continue
        in_tour.discard(city)
        removed.append(city)
        near = [c for c in np.argsort(d[city], kind="stable") if int(c) in in_tour][:5]
        random.shuffle(near)
        queue.extend(int(c) for c in near)
    return removed, [c for c in tour if c in in_tour]


def long_edge_removal(x, destroy_cnt, problem_data):
    """Visit the tour's edges from longest to shortest (lengths perturbed by noise) and remove both endpoints of each, which takes out the worst connections."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(x)
    n = len(tour)
    k = max(0, min(int(destroy_cnt), n))
    if k == 0 or n < 2:
        return tour[:k], tour[k:]
    t = np.array(tour)
    lengths = d[t, np.roll(t, -1)] * np.random.uniform(0.8, 1.2, size=n)
    removed = []
    gone = set()
    for i in np.argsort(-lengths, kind="stable"):
        for city in (tour[i], tour[(i + 1) % n]):
            if len(removed) < k and city not in gone:
                gone.add(city)
                removed.append(city)
        if len(removed) >= k:
            break
    return removed, [c for c in tour if c not in gone]


def strip_removal(x, destroy_cnt, problem_data):
    """Draw a random line through a random city and remove the destroy_cnt cities closest to it, cutting the tour across a whole strip of the plane."""
    xy = np.asarray(problem_data["coordinates"], dtype=float)
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    if k == 0:
        return [], tour
    anchor = xy[random.choice(tour)]
    angle = random.uniform(0.0, math.pi)
    normal = np.array([-math.sin(angle), math.cos(angle)])
    t = np.array(tour)
    offset = np.abs((xy[t] - anchor) @ normal)
    order = np.argsort(offset, kind="stable")[:k]
    removed = [tour[i] for i in order]
    gone = set(removed)
    return removed, [c for c in tour if c not in gone]


def adjacent_pair_removal(x, destroy_cnt, problem_data):
    """Remove random cities together with their successor on the tour, so that pairs of consecutive cities must be placed anew."""
    tour = list(x)
    n = len(tour)
    k = max(0, min(int(destroy_cnt), n))
    gone = set()
    removed = []
    while len(removed) < k:
        i = random.randrange(n)
        for j in (i, (i + 1) % n):
            if len(removed) < k and tour[j] not in gone:
                gone.add(tour[j])
                removed.append(tour[j])
    return removed, [c for c in tour if c not in gone]


def random_order_insertion(partial, removed, problem_data):
    """Insert the removed cities in random order, each at the position that lengthens the tour least."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(partial)
    pending = list(removed)
    random.shuffle(pending)
    for city in pending:
        if not tour:
            tour.append(city)
            continue
        t = np.array(tour)
        nxt = np.roll(t, -1)
        delta = d[t, city] + d[city, nxt] - d[t, nxt]
        tour.insert(int(np.argmin(delta)) + 1, city)
    return tour


def regret2_insertion(partial_solution, removed_elements, distance_matrix):
    """Always insert next the city with the largest regret, the gap between its best and second-best insertion cost, at its best position."""
    d = np.asarray(distance_matrix)
    tour = list(partial_solution)
    pending = list(removed_elements)
    while pending:
        if len(tour) < 2:
            tour.append(pending.pop(0))
            continue
        t = np.array(tour)
        nxt = np.roll(t, -1)
        best = None
        for idx, city in enumerate(pending):
            delta = d[t, city] + d[city, nxt] - d[t, nxt]
            if len(delta) > 1:
                two = np.partition(delta, 1)[:2]
                regret = two[1] - two[0]
            else:
                regret = 0.0
            pos = int(np.argmin(delta))
            key = (regret, -delta[pos])
            if best is None or key > best[0]:
                best = (key, idx, pos)
        _, idx, pos = best
        tour.insert(pos + 1, pending.pop(idx))
    return tour


def farthest_insertion(partial, removed, problem_data):
    """Insert first the removed city farthest from the current tour, at its cheapest position, so that the outline is fixed before details."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(partial)
    pending = list(removed)
    if not tour and pending:
        tour.append(pending.pop(random.randrange(len(pending))))
    while pending:
        t = np.array(tour)
        gap = [float(np.min(d[city, t])) for city in pending]
        city = pending.pop(int(np.argmax(gap)))
        nxt = np.roll(t, -1)
        delta = d[t, city] + d[city, nxt] - d[t, nxt]
        tour.insert(int(np.argmin(delta)) + 1, city)
    return tour


def nearest_insertion(partial, removed, problem_data):
    """Insert first the removed city nearest to the current tour, at its cheapest position, growing the tour outwards from where it is dense."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(partial)
    pending = list(removed)
    if not tour and pending:
        tour.append(pending.pop(random.randrange(len(pending))))
    while pending:
        t = np.array(tour)
        gap = [float(np.min(d[city, t])) for city in pending]
        city = pending.pop(int(np.argmin(gap)))
        nxt = np.roll(t, -1)
        delta = d[t, city] + d[city, nxt] - d[t, nxt]
        tour.insert(int(np.argmin(delta)) + 1, city)
    return tour


def greedy_two_opt_repair(partial, removed, problem_data):
    """Insert the removed cities greedily in random order, then untangle the tour with at most two passes of best-improvement 2-opt."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(partial)
    pending = list(removed)
    random.shuffle(pending)
    for city in pending:
        if not tour:
            tour.append(city)
            continue
        t = np.array(tour)
        nxt = np.roll(t, -1)
        delta = d[t, city] + d[city, nxt] - d[t, nxt]
        tour.insert(int(np.argmin(delta)) + 1, city)

    def two_opt_pass(t):
        m = len(t)
        improved = False
        for i in range(m - 2):
            a, b = t[i], t[i + 1]
            js = np.arange(i + 2, m if i > 0 else m - 1)
            if len(js) == 0:
                continue
            c, e = t[js], t[(js + 1) % m]
            gain = d[a, b] + d[c, e] - d[a, c] - d[b, e]
            j = int(np.argmax(gain))
            if gain[j] > 1e-10:
                j = int(js[j])
                t[i + 1:j + 1] = t[i + 1:j + 1][::-1].copy()
                improved = True
        return improved

    if len(tour) >= 4:
        t = np.array(tour)
        for _ in range(2):
            if not two_opt_pass(t):
                break
        tour = [int(c) for c in t]
    return tour


def noisy_greedy_insertion(partial, removed, problem_data):
    """Insert the removed cities from the farthest-from-the-centroid inwards, each at the position whose insertion cost plus a small random noise is lowest."""
    d = np.asarray(problem_data["distance_matrix"])
    xy = np.asarray(problem_data["coordinates"], dtype=float)
    tour = list(partial)
    pending = list(removed)
    if not pending:
        return tour
    centre = xy.mean(axis=0)
    pending.sort(key=lambda c: -float(np.hypot(*(xy[c] - centre))))
    scale = 0.1 * float(np.mean(d)) if d.size else 0.0
    for city in pending:
        if not tour:
            tour.append(city)
            continue
        t = np.array(tour)
        nxt = np.roll(t, -1)
        delta = d[t, city] + d[city, nxt] - d[t, nxt]
        noisy = delta + scale * np.random.uniform(-1.0, 1.0, size=len(delta))
        tour.insert(int(np.argmin(noisy)) + 1, city)
    return tour


def neighbour_guided_insertion(partial, removed, problem_data):
    """Insert each removed city next to one of its eight nearest cities already on the tour (on the cheaper side), falling back to the cheapest position anywhere."""
    d = np.asarray(problem_data["distance_matrix"])
    tour = list(partial)
    pending = list(removed)
    random.shuffle(pending)
    for city in pending:
        m = len(tour)
        if m == 0:
            tour.append(city)
            continue
        pos_of = {c: p for p, c in enumerate(tour)}
        near = [int(c) for c in np.argsort(d[city], kind="stable") if int(c) in pos_of and int(c) != city][:8]
        best, best_pos = math.inf, m
        for c in near:
            p = pos_of[c]
            for left in (p - 1, p):  # between tour[left] and tour[left + 1]
                a, b = tour[left % m], tour[(left + 1) % m]
                delta = d[a, city] + d[city, b] - d[a, b]
                if delta < best:
                    best, best_pos = delta, (left % m) + 1
        tour.insert(best_pos, city)
    return tour


DESTROY = [segment_removal, related_removal, worst_noise_removal, cluster_walk_removal,
           long_edge_removal, strip_removal, adjacent_pair_removal]
REPAIR = [random_order_insertion, regret2_insertion, farthest_insertion, nearest_insertion,
          greedy_two_opt_repair, noisy_greedy_insertion, neighbour_guided_insertion]
