"""Seed operators for the TSP. A solution is a list of city ids (a closed tour)."""

import random


def random_removal(x, destroy_cnt, problem_data, rng=random):
    """Remove destroy_cnt cities chosen uniformly at random."""
    n = len(problem_data["distance_matrix"])
    candidates = list(range(n))
    removed = []
    for i in range(min(destroy_cnt, n)):
        j = i + rng.randrange(n - i)  # partial Fisher-Yates shuffle
        candidates[i], candidates[j] = candidates[j], candidates[i]
        removed.append(candidates[i])
    gone = set(removed)
    partial = [city for city in x if city not in gone]
    return removed, partial


def worst_removal(x, destroy_cnt, problem_data, rng=random, randomness=3.0):
    """Remove cities with large detours one by one: each time the city of rank
    floor(y**randomness * m) when the m cities are sorted by saving (largest first)."""
    d = problem_data["distance_matrix"]
    tour = list(x)
    removed = []
    for _ in range(min(destroy_cnt, len(tour))):
        m = len(tour)
        scored = []
        for i, city in enumerate(tour):
            a, b = tour[i - 1], tour[(i + 1) % m]
            saving = -(d[a, b] - d[a, city] - d[city, b])
            scored.append((-saving, city, i))  # largest saving first, ties by city id
        scored.sort()
        rank = min(int(rng.random() ** randomness * m), m - 1)
        _, city, i = scored[rank]
        removed.append(city)
        tour.pop(i)
    return removed, tour


def greedy_insertion(partial, removed, problem_data, rng=random):
    """Insert each removed city, in the given order, where it lengthens the tour least."""
    d = problem_data["distance_matrix"]
    tour = list(partial)
    for city in removed:
        best, best_pos = float("inf"), 0
        if not tour:
            tour.append(city)
            continue
        for pos in range(len(tour)):  # between tour[pos - 1] and tour[pos]
            a, b = tour[pos - 1], tour[pos]
            delta = d[a, city] + d[city, b] - d[a, b]
            if delta < best:
                best, best_pos = delta, pos
        tour.insert(best_pos, city)
    return tour
