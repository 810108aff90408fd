"""VRP routes live in slots listed in route order (Sol.order): dropping an emptied route only
shortens that list, so no other route moves and its nodes keep their indices. Slots increase
along the order (so comparing slots compares places, which the repairs' tie rules rely on),
and once the free slots below the last route outnumber the routes, the routes move down to
slots 0.. . Checked against a plain list of lists, with a twin kept equal by sol_sync."""

import random

import pytest

from glns._core._solution import Solution
from glns.reference import solution_cost

from conftest import make_problem


def _loaded(problem, routes) -> Solution:
    s = Solution(problem.core)
    s.load(routes)
    return s


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
def test_dropping_a_route_moves_no_other(kind):
    problem = make_problem(kind, 40, 1, capacity=1000)
    routes = [list(range(1 + 8 * i, 9 + 8 * i)) for i in range(5)]
    s = _loaded(problem, routes)
    assert s.slots() == [0, 1, 2, 3, 4]
    positions = {v: s.position(v) for route in routes for v in route}
    for v in routes[1]:
        s.remove(v)
    s.drop_empty()
    assert s.slots() == [0, 2, 3, 4]            # route 2 is still in slot 2: nothing moved
    assert s.routes() == [routes[0]] + routes[2:]
    assert s.positions_ok()
    assert all(s.position(v) == positions[v] for route in routes[2:] for v in route)
    assert s.cost() == solution_cost(problem, s.routes())
    s.insert(9, 4, 0)                           # a new route goes after the last slot
    assert s.slots() == [0, 2, 3, 4, 5]
    assert s.routes()[-1] == [9]


def test_many_holes_move_the_routes_down():
    problem = make_problem("cvrp", 40, 2, capacity=1000)
    routes = [[v] for v in range(1, 41)]
    s = _loaded(problem, routes)
    for v in range(1, 31):                      # empty all but the last ten routes
        s.remove(v)
    s.drop_empty()
    assert s.slots() == list(range(10))         # 30 free slots below 10 routes: moved down
    assert s.routes() == routes[30:]
    assert s.positions_ok()
    assert s.cost() == solution_cost(problem, s.routes())


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
@pytest.mark.parametrize("seed", range(4))
def test_random_edits_match_a_list_of_routes(kind, seed):
    """Inserts into any route or a new one, removals and drops, against a plain list of lists;
    a twin follows by sol_sync and must equal a full copy."""
    n = 60
    problem = make_problem(kind, n, seed, capacity=25)
    q = problem.demands.tolist()
    rng = random.Random(seed)
    customers = list(range(1, n + 1))
    rng.shuffle(customers)
    ref = [customers[i:i + 2] for i in range(0, n, 2)]     # at most 18 of 25
    s = _loaded(problem, ref)
    twin, full = Solution(problem.core), Solution(problem.core)
    twin.copy_from(s)
    s.forget_changes()
    moved_down = kept_holes = 0
    for step in range(1500):
        routed = [v for route in ref for v in route]
        unrouted = sorted(set(range(1, n + 1)) - set(routed))
        if unrouted and (not routed or rng.random() < 0.5):
            v = rng.choice(unrouted)
            fits = [r for r, route in enumerate(ref) if sum(q[u] for u in route) + q[v] <= 25]
            r = rng.choice(fits + [len(ref)])
            if r == len(ref):
                ref.append([])
            pos = rng.randint(0, len(ref[r]))
            s.insert(v, r, pos)
            ref[r].insert(pos, v)
        else:
            v = rng.choice(routed)
            s.remove(v)
            for route in ref:
                if v in route:
                    route.remove(v)
        if rng.random() < 0.2:
            before = s.slots()
            s.drop_empty()
            ref = [route for route in ref if route]
            if s.slots() == list(range(len(ref))) and before != list(range(len(before))):
                moved_down += 1
            elif s.slots() != list(range(len(ref))):
                kept_holes += 1
        assert [list(route) for route in s.routes()] == [route for route in ref if route]
        assert len(s.slots()) == len(ref)
        assert s.positions_ok()
        assert all(s.position(v) == route.index(v) for route in ref for v in route)
        assert s.loads() == [sum(q[u] for u in route) for route in ref]
        assert s.cost() == solution_cost(problem, s.routes())
        twin.sync_from(s)
        full.copy_from(s)
        assert twin.same_as(s) and full.same_as(s)
        assert twin.slots() == s.slots()
    assert moved_down > 0 and kept_holes > 0    # both ways of dropping were exercised


def test_a_twin_follows_routes_moving_down():
    """sol_sync copies only marked slots: moving routes down must mark the slots they leave,
    or the twin keeps a stale row there (few routes move, so the sync is not a full copy)."""
    problem = make_problem("cvrp", 220, 3, capacity=1000)
    s = _loaded(problem, [[v] for v in range(1, 221)])
    for v in range(101, 220):                  # keep routes 0..99 and the one in slot 219
        s.remove(v)
    s.cost()
    twin = Solution(problem.core)
    twin.copy_from(s)
    s.forget_changes()
    s.drop_empty()
    assert s.slots() == list(range(101))        # 119 free slots below 101 routes: moved down
    s.cost()
    twin.sync_from(s)
    assert twin.same_as(s) and twin.routes() == s.routes()
