"""Large instances renumbered along a space-filling curve (docs/method.md, "Node order").

The core keeps its per-node data (coordinates, candidate lists, positions, cached arc costs
and their blocks of 16 ids) in arrays indexed by node id. An LNS iteration touches nodes that
lie close together; when the ids are unrelated to where the nodes are, as in generated
uniform instances and many real files, those nodes are scattered over the arrays and most
accesses miss the cache. ``glns.solve`` therefore runs native operators on a copy whose
customers are numbered in Hilbert-curve order of their coordinates and maps the solution
back. On uniform instances at 5 s an iteration takes 13 % less time on a TSP of 10,000 cities
(3 % at 1,000) and about 6 % less on a CVRP of 10,000 customers (docs/benchmarks.md, session
24). Instances numbered locally already (as many TSPLIB files are, along a drilling or sweep
order) are searched as they are: see :func:`id_spread` and ``LOCAL_IDS``.

The copy has the same nodes and the same distances, so the search is the same kind of search;
with a fixed seed it is another (equally good) run than the one on the original numbering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from glns.problems.base import Problem
from glns.problems.space_filling import curve_order

__all__ = ["RENUMBER_FROM", "LOCAL_IDS", "Renumbered", "id_spread", "renumbered"]

#: the default of SolveParams.renumber: customers (or cities) from which a solve renumbers
RENUMBER_FROM = 1000
#: ids already this local are kept: a copy is made only when consecutive ids lie on average
#: more than LOCAL_IDS times as far apart as consecutive nodes on the curve (uniform random
#: ids: about 50; TSPLIB files numbered along a drilling or sweep order: 0.7-1.9)
LOCAL_IDS = 2.0


@dataclass(frozen=True)
class Renumbered:
    """A copy of an instance with its customers numbered in curve order.

    problem: the copy. original[i]: the caller's id of node i of the copy; internal[u]: the
    copy's id of the caller's node u (the depot, node 0 of a VRP, keeps its id)."""

    problem: Problem
    original: np.ndarray
    internal: np.ndarray

    def to_internal(self, solution: Any) -> Any:
        """A solution of the caller's instance in the copy's ids."""
        return self._mapped(solution, self.internal)

    def to_original(self, solution: Any) -> Any:
        """A solution of the copy in the caller's ids."""
        return self._mapped(solution, self.original)

    def cost(self, solution: Any) -> float:
        """The cost of a solution of the copy, summed as the caller's instance sums it (the
        same float as ``problem.cost(to_original(solution))``, without building that
        instance's core)."""
        from glns._core._solution import Solution

        sol = Solution(self.problem.core)
        sol.load(solution)
        return sol.cost_in_order(self.internal)

    def _mapped(self, solution: Any, ids: np.ndarray) -> Any:
        """ValueError (or TypeError) when it is not made of node ids of the instance."""
        kind = type(self.problem)
        out = []
        for route in kind.routes_of(solution):
            r = np.asarray(route, dtype=np.int64)
            if r.size and (r.min() < 0 or r.max() >= len(ids)):
                raise ValueError(f"a solution names node {int(r.min() if r.min() < 0 else r.max())}, "
                                 f"which is not a node of the instance (0..{len(ids) - 1})")
            out.append(ids[r].tolist())
        return kind.solution_from_routes(out)


def id_spread(by_id: np.ndarray, by_curve: np.ndarray) -> float:
    """How much farther apart consecutive ids lie than consecutive nodes on the curve: the mean
    distance between the points of `by_id` (customers in id order) over that of `by_curve` (the
    same points in curve order); inf when the curve's is 0 (all points in one place) and the
    ids' is not."""
    step_id = float(np.linalg.norm(np.diff(by_id, axis=0), axis=1).mean()) if len(by_id) > 1 else 0.0
    step_curve = float(np.linalg.norm(np.diff(by_curve, axis=0), axis=1).mean()) if len(by_curve) > 1 else 0.0
    if step_curve == 0.0:
        return 0.0 if step_id == 0.0 else float("inf")
    return step_id / step_curve


def renumbered(problem: Problem, from_customers: int | None = RENUMBER_FROM) -> Renumbered | None:
    """The curve-ordered copy of `problem` (built once and kept on it), or None when it has no
    coordinates, was given a distance matrix, has fewer than `from_customers` customers (None:
    never), or its ids are about as local as the curve's already (:func:`id_spread`)."""
    if (from_customers is None or problem.coords is None or problem.explicit_distances
            or problem.n_customers < from_customers):
        return None
    cached = getattr(problem, "_renumbered", None)
    if cached is not None:
        return cached
    first = problem.first_node
    curve = np.asarray(curve_order(problem.coords, first), dtype=np.int64)
    if id_spread(problem.coords[first:], problem.coords[curve]) <= LOCAL_IDS:
        return None
    original = np.concatenate([np.arange(first, dtype=np.int64), curve])
    internal = np.empty_like(original)
    internal[original] = np.arange(len(original), dtype=np.int64)
    copy = type(problem).from_parts(problem.coords[original], None, problem.demands[original],
                                    problem.capacity, name=problem.name, rounding=problem.rounding,
                                    **problem.extra_parts_of(original))
    for a in (original, internal):
        a.flags.writeable = False
    out = Renumbered(copy, original, internal)
    problem._renumbered = out
    return out
