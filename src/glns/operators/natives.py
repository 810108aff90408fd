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
    "string_removal": NativeSpec(
        "destroy",
        (Param("max_string_len", 10.0, 1.0, integer=True, doc="longest string cut from one route (SISR L_max)"),
         Param("split_rate", 0.5, 0.0, 1.0, doc="probability of the split-string variant (SISR alpha)"),
         Param("split_depth", 0.01, 0.0, 1.0,
               doc="the preserved block grows while a uniform draw is >= this (SISR beta); small = long")),
        doc="SISR ruin: strings cut from routes near a random seed customer, about k nodes"),
    "related_removal": NativeSpec(
        "destroy",
        (Param("randomness", 6.0, 1.0, doc="exponent p: rank floor(y^p a) among routed neighbours; large p is greedy"),),
        doc="Shaw removal by distance: nodes near already removed ones, k nodes"),
    "route_removal": NativeSpec(
        "destroy", problems=frozenset({"cvrp", "ovrp"}),
        doc="all customers of random routes until at least k are removed (VRP only)"),
    "segment_removal": NativeSpec(
        "destroy",
        (Param("segments", 1.0, 1.0, integer=True, doc="number of contiguous segments sharing the k nodes"),),
        doc="contiguous segments of k nodes in total at random positions"),
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


#: Parameters every repair operator takes after its own ones, at fixed positions of the core's
#: parameter vector: a repair operator has at most REPAIR_OWN_SLOTS own parameters (unused slots
#: are 0), so ``local_search`` is always params[3] whatever the operator.
__all__ += ["REPAIR_OWN_SLOTS", "REPAIR_COMMON"]
REPAIR_OWN_SLOTS = 3
REPAIR_COMMON: tuple[Param, ...] = (
    Param("local_search", 0, 0, 1, integer=True,
          doc="1: end with the native local search (2-opt/or-opt for TSP; relocate, swap, "
              "2-opt, 2-opt* for VRP) started from the reinserted nodes; 0: off (paper preset)"),
)


def native_params(name: str, given: dict[str, float]) -> tuple[float, ...]:
    """The parameter vector of native operator `name`: defaults overridden by `given`, checked."""
    if name not in NATIVE_OPERATORS:
        raise OperatorError(f"unknown native operator {name!r}; choose from {sorted(NATIVE_OPERATORS)}")
    spec = NATIVE_OPERATORS[name]
    known = {p.name: p for p in spec.params}
    if spec.kind == "repair":
        known.update({p.name: p for p in REPAIR_COMMON})
    for key in given:
        if key not in known:
            names = sorted(known) or "none"
            raise OperatorError(f"native operator {name!r} has no parameter {key!r} (parameters: {names})")
    if spec.kind == "repair":
        own = tuple(p.check(name, given.get(p.name, p.default)) for p in spec.params)
        padding = (0.0,) * (REPAIR_OWN_SLOTS - len(own))
        return own + padding + tuple(p.check(name, given.get(p.name, p.default)) for p in REPAIR_COMMON)
    return tuple(p.check(name, given.get(p.name, p.default)) for p in spec.params)


for _name, _spec in NATIVE_OPERATORS.items():  # the fixed repair slots must stay free
    if _spec.kind == "repair" and len(_spec.params) > REPAIR_OWN_SLOTS:
        raise ImportError(f"native repair {_name!r} has more than {REPAIR_OWN_SLOTS} own parameters")
