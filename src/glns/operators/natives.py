"""The registry of native (Cython) operators: names, kinds, parameters and their ranges.

The operator codes live in the core (``glns._core._native_ops``); this module is the one place
that says which parameters each operator takes, in which order they reach the core, and which
values are valid. Every native operator receives up to four numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from glns.exceptions import OperatorError

__all__ = ["Param", "NativeSpec", "NATIVE_OPERATORS", "native_params"]


@dataclass(frozen=True)
class Param:
    """One numeric parameter of a native operator, valid in [low, high]."""

    name: str
    default: float
    low: float
    high: float = math.inf
    integer: bool = False
    doc: str = ""

    def check(self, operator: str, value: float) -> float:
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise OperatorError(f"{operator}: {self.name} must be a number, got {value!r}") from None
        if not (self.low <= value <= self.high):
            raise OperatorError(f"{operator}: {self.name} must be in [{self.low}, {self.high}], got {value}")
        if self.integer and value != int(value):
            raise OperatorError(f"{operator}: {self.name} must be an integer, got {value}")
        return value


@dataclass(frozen=True)
class NativeSpec:
    """What a native operator is: destroy or repair, its parameters, the problems it handles."""

    kind: str
    params: tuple[Param, ...] = ()
    problems: frozenset[str] = frozenset({"tsp", "cvrp", "ovrp"})
    doc: str = ""


NATIVE_OPERATORS: dict[str, NativeSpec] = {
    "random_removal": NativeSpec("destroy", doc="k nodes drawn uniformly (paper seed)"),
    "worst_removal": NativeSpec(
        "destroy",
        (Param("randomness", 3.0, 1.0, doc="exponent p: rank floor(y^p m) by saving; large p is greedy"),),
        doc="nodes with the largest removal saving, randomised (paper seed)"),
    "greedy_insertion": NativeSpec("repair", doc="cheapest position, in removal order (paper seed)"),
    "blink_insertion": NativeSpec(
        "repair",
        (Param("order", 4, 0, 4, integer=True,
               doc="0 random, 1 demand desc (TSP: random), 2 far from depot first, 3 close first, "
                   "4 one of 0..3 drawn per call (SISR)"),
         Param("blink_rate", 0.01, 0.0, 1.0, doc="probability of skipping each evaluated position"),
         Param("neighbours", 0, 0, integer=True,
               doc="granular: only positions next to the node's G nearest neighbours (and a new "
                   "route); all positions when none of those has room (0 = always all)")),
        doc="SISR recreate: cheapest position in a sorted order, positions skipped at random"),
    "regret_insertion": NativeSpec(
        "repair",
        (Param("k", 2, 2, 3, integer=True, doc="regret degree: sum of c_j - c_1 for j = 2..k"),
         Param("neighbours", 0, 0, integer=True,
               doc="granular: only positions next to the node's G nearest neighbours (and a new "
                   "route); all positions when none of those has room (0 = always all)")),
        doc="regret-k insertion with cached per-route (VRP) / k-best (TSP) insertion costs"),
}


def native_params(name: str, given: dict[str, float]) -> tuple[float, ...]:
    """The parameter vector of native operator `name`: defaults overridden by `given`, checked."""
    if name not in NATIVE_OPERATORS:
        raise OperatorError(f"unknown native operator {name!r}; choose from {sorted(NATIVE_OPERATORS)}")
    spec = NATIVE_OPERATORS[name]
    known = {p.name: p for p in spec.params}
    for key in given:
        if key not in known:
            names = sorted(known) or "none"
            raise OperatorError(f"native operator {name!r} has no parameter {key!r} (parameters: {names})")
    return tuple(p.check(name, given.get(p.name, p.default)) for p in spec.params)
