"""Operators in a G-LNS population and the selection rules of the evolution step (docs/method.md).

Everything here is a pure function of its inputs and a ``random.Random``, so the controller's
decisions replay exactly from a checkpointed random state, and tests can check each rule alone:

- :func:`rank`: order by global fitness F (ties: the older operator first);
- :func:`prune`: drop the worst M;
- :func:`roulette`: fitness-proportionate choice (uniform when all weights are zero);
- :func:`homogeneous_parents`: two distinct parents of one type by roulette over F;
- :func:`mutation_action`: ``m2`` for the top-ranked parent, ``m1`` for the bottom-ranked,
  a coin flip between them in the middle;
- :func:`choose_pair`: the destroy/repair pair for the joint crossover from the synergy matrix S;
- :func:`sample_strategy`: mutation / homogeneous crossover / joint crossover by the mix.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from glns import operators

__all__ = ["Member", "ACTIONS", "STRATEGIES", "rank", "prune", "roulette", "homogeneous_parents",
           "mutation_action", "choose_pair", "sample_strategy"]

#: how an operator came to be: seeds, then the LLM actions of the paper (Appendix C)
ACTIONS = ("seed", "i1", "i2", "m1", "m2", "c1", "c2")
#: the refill strategies and their names in a strategy mix
STRATEGIES = ("mutation", "homogeneous", "joint")


@dataclass(frozen=True)
class Member:
    """One operator of a population.

    id: unique in a run ("d4", "r7"); kind: "destroy" or "repair"; source: its Python code;
    function: the entry function in the source; idea: the one-sentence idea from the LLM
    answer (seeds: their docstring's first line); action: one of :data:`ACTIONS`; parents: ids
    of the operators it was made from; cycle: the evolution cycle that created it; native: for
    seeds run natively, the native operator's name (the source is then its readable twin, shown
    to the LLM); model: the name of the LLM model that wrote it (None for seeds).
    """

    id: str
    kind: str
    source: str
    function: str
    idea: str | None
    action: str
    parents: tuple[str, ...] = ()
    cycle: int = 0
    native: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("destroy", "repair"):
            raise ValueError(f"kind must be 'destroy' or 'repair', got {self.kind!r}")
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, got {self.action!r}")
        object.__setattr__(self, "parents", tuple(self.parents))

    def operator(self) -> Any:
        """The :class:`glns.operators.Operator` that runs this member (named by its id)."""

        if self.native is not None:
            op = operators.native(self.native)
            return operators.Operator(name=self.id, kind=self.kind, native_name=self.native,
                                      params=op.params)
        return operators.from_source(self.source, self.kind, name=self.id, function=self.function)

    def spec(self) -> Any:
        """What :func:`glns.sandbox.evaluate` runs: the native operator, or the source (which is
        then compiled only inside the sandbox workers)."""
        if self.native is not None:
            return self.operator()
        return operators.PythonSource(self.source, self.function, self.id)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["parents"] = list(self.parents)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Member":
        return cls(**{**d, "parents": tuple(d.get("parents", ()))})


def rank(members: Sequence[Member], fitness: Mapping[str, float]) -> list[Member]:
    """Members best first by fitness F (missing: 0). Ties keep population order (older first),
    so a newcomer must beat an incumbent to pass it."""
    order = sorted(range(len(members)), key=lambda i: (-float(fitness.get(members[i].id, 0.0)), i))
    return [members[i] for i in order]


def prune(members: Sequence[Member], fitness: Mapping[str, float], m: int) -> tuple[list[Member], list[Member]]:
    """(survivors in population order, dropped worst m). Never drops the last member."""
    if m < 0:
        raise ValueError(f"the number to prune must be >= 0, got {m}")
    m = min(m, max(len(members) - 1, 0))
    dropped = rank(members, fitness)[len(members) - m:] if m else []
    gone = {x.id for x in dropped}
    return [x for x in members if x.id not in gone], dropped


def roulette(weights: Sequence[float], rng: random.Random) -> int:
    """Index drawn with probability weights[i] / sum (negative weights count as 0); uniform when
    the weights sum to 0 (e.g. right after a reset)."""
    w = [max(0.0, float(x)) for x in weights]
    if not w:
        raise ValueError("roulette over no candidates")
    total = sum(w)
    u = rng.random()
    if total <= 0.0:
        return min(int(u * len(w)), len(w) - 1)
    target, acc = u * total, 0.0
    for i, x in enumerate(w):
        acc += x
        if target < acc:
            return i
    return max(i for i, x in enumerate(w) if x > 0)


def homogeneous_parents(members: Sequence[Member], fitness: Mapping[str, float],
                        rng: random.Random) -> tuple[Member, Member]:
    """(parent 1, parent 2): two distinct members by fitness-proportionate roulette.

    Parent 1 is the inspiration, parent 2 the structural base of the child (paper Appendix C).
    """
    if len(members) < 2:
        raise ValueError("homogeneous crossover needs at least two operators of one type")
    pool = list(members)
    first = pool.pop(roulette([fitness.get(x.id, 0.0) for x in pool], rng))
    second = pool[roulette([fitness.get(x.id, 0.0) for x in pool], rng)]
    return first, second


def mutation_action(position: int, size: int, rng: random.Random) -> str:
    """'m2' (parameter calibration) for the top-ranked of `size` members (position 0), 'm1'
    (logic evolution) for the bottom-ranked, either with probability 1/2 in between."""
    if not 0 <= position < size:
        raise ValueError(f"position {position} outside a population of {size}")
    if size == 1 or position == 0:
        return "m2"
    if position == size - 1:
        return "m1"
    return "m1" if rng.random() < 0.5 else "m2"


def choose_pair(synergy: np.ndarray, rng: random.Random, mode: str = "roulette") -> tuple[int, int]:
    """(i, j): the destroy/repair pair for the joint crossover from the synergy matrix S[i, j].

    mode "max": the highest S (ties: lowest i, then j); "roulette": probability proportional
    to S (uniform when S is all zero).
    """
    s = np.asarray(synergy, dtype=float)
    if s.ndim != 2 or s.size == 0:
        raise ValueError(f"synergy must be a non-empty matrix, got shape {s.shape}")
    if mode == "max":
        flat = int(np.argmax(s))
    elif mode == "roulette":
        flat = roulette(s.ravel().tolist(), rng)
    else:
        raise ValueError(f"pair choice must be 'max' or 'roulette', got {mode!r}")
    return divmod(flat, s.shape[1])


def sample_strategy(mix: Mapping[str, float], rng: random.Random,
                    allowed: Sequence[str] = STRATEGIES) -> str:
    """A strategy among `allowed` with probability proportional to its share in `mix`.

    Strategies not allowed right now (e.g. a joint crossover when only one population has free
    slots) are left out and the others renormalised. Raises ValueError when none remains.
    """
    names = [s for s in STRATEGIES if s in allowed and mix.get(s, 0.0) > 0]
    if not names:
        raise ValueError(f"no refill strategy available (mix {dict(mix)}, allowed {list(allowed)})")
    return names[roulette([mix[s] for s in names], rng)]


@dataclass
class Scores:
    """F per operator id and S per (destroy id, repair id), accumulated over a cycle's runs."""

    fitness: dict[str, float] = field(default_factory=dict)
    synergy: dict[str, float] = field(default_factory=dict)   # key "d3|r5"

    def add_run(self, destroy_ids: Sequence[str], repair_ids: Sequence[str],
                destroy_fitness: Sequence[float], repair_fitness: Sequence[float],
                synergy: np.ndarray) -> None:
        """Add one solver run's F (per operator) and S (per pair)."""
        for ids, values in ((destroy_ids, destroy_fitness), (repair_ids, repair_fitness)):
            for k, v in zip(ids, values):
                self.fitness[k] = self.fitness.get(k, 0.0) + float(v)
        for i, d in enumerate(destroy_ids):
            for j, r in enumerate(repair_ids):
                key = f"{d}|{r}"
                self.synergy[key] = self.synergy.get(key, 0.0) + float(synergy[i, j])

    def matrix(self, destroy_ids: Sequence[str], repair_ids: Sequence[str]) -> np.ndarray:
        """S restricted to these operators, as a matrix (missing pairs: 0)."""
        return np.array([[self.synergy.get(f"{d}|{r}", 0.0) for r in repair_ids] for d in destroy_ids],
                        dtype=float).reshape(len(destroy_ids), len(repair_ids))

    def reset(self) -> None:
        """F and S back to zero (after a refill, docs/method.md)."""
        self.fitness.clear()
        self.synergy.clear()

    def to_dict(self) -> dict[str, Any]:
        return {"fitness": dict(self.fitness), "synergy": dict(self.synergy)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Scores":
        return cls(dict(d.get("fitness", {})), dict(d.get("synergy", {})))
