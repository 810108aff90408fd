"""Nearest-neighbour tables and the symmetry flag the core derives from an instance."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns.neighbours import nearest_neighbours
from tests.conftest import make_problem


def brute_neighbours(dist, first, k):
    n = len(dist)
    rows = []
    for a in range(n):
        others = [b for b in range(first, n) if b != a]
        rows.append(sorted(others, key=lambda b: (dist[a][b], b))[:k])
    return rows


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["tsp", "cvrp", "ovrp"]), n=st.integers(2, 30),
       seed=st.integers(0, 10**6), k=st.integers(1, 40))
def test_neighbours_match_brute_force(kind, n, seed, k):
    problem = make_problem(kind, n, seed, 30)
    dist = problem.distances
    first = 0 if kind == "tsp" else 1
    got = nearest_neighbours(dist, first, k)
    width = min(k, problem.n_customers - 1)     # the depot's row is cut to the same width
    expect = [row[:width] for row in brute_neighbours(dist.tolist(), first, k)]
    assert got.tolist() == expect


def test_ties_are_broken_by_node_id():
    dist = np.ones((5, 5)) - np.eye(5)      # every pair at distance 1
    table = nearest_neighbours(dist, 0, 10)
    assert table.tolist() == [[1, 2, 3, 4], [0, 2, 3, 4], [0, 1, 3, 4], [0, 1, 2, 4], [0, 1, 2, 3]]


def test_core_instance_keeps_a_read_only_table_and_symmetry_flag():
    problem = make_problem("cvrp", 150, 3, 50)
    table = problem.core.neighbours
    assert table.shape == (151, 100)
    assert not table.flags.writeable
    assert (table >= 1).all()                        # the depot is never a neighbour
    assert problem.core.symmetric
    asym = problem.distances.copy()
    asym[1, 2] += 1.0
    assert not glns.TSP(distances=asym).core.symmetric


def test_one_routable_node_has_no_neighbours():
    problem = glns.CVRP(np.array([[0.0, 0.0], [1.0, 1.0]]), [0, 1], 5)
    assert problem.core.neighbours.shape == (2, 0)
