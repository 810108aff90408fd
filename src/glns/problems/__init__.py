"""Problem instances: TSP, CVRP, OVRP and VRPTW, validated on construction (docs/method.md).

Instances are built from coordinates (float Euclidean distances, no rounding) or from an
explicit distance matrix. Every array an instance exposes is read-only; the core keeps its
own private copy, so nothing an operator does to the arrays it is given can reach the solver.
"""

from __future__ import annotations

from glns.problems.base import Problem, euclidean_distances, plural
from glns.problems.cvrp import CVRP
from glns.problems.ovrp import OVRP
from glns.problems.tsp import TSP
from glns.problems.vrptw import VRPTW

__all__ = ["Problem", "TSP", "CVRP", "OVRP", "VRPTW", "euclidean_distances", "PROBLEM_KINDS", "problem_class",
           "KIND_CODES", "plural"]

#: the problem variants by kind name
PROBLEM_KINDS: dict[str, type[Problem]] = {cls.kind: cls for cls in (TSP, CVRP, OVRP, VRPTW)}


def problem_class(kind: str) -> type[Problem]:
    """The variant called `kind` (case-insensitive); ValueError naming the known ones."""
    try:
        return PROBLEM_KINDS[str(kind).lower()]
    except KeyError:
        raise ValueError(f"unknown problem {kind!r}; choose from {sorted(PROBLEM_KINDS)}") from None

#: the core's code of each variant (``glns._core`` branches on it)
KIND_CODES = {kind: cls.core_code for kind, cls in PROBLEM_KINDS.items()}
