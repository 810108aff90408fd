"""The checkpointed state of an evolution run and its JSON form.

Everything a resumed run needs to continue exactly as if it had not been interrupted: the
populations and every member ever admitted, the fitness/synergy sums of the cycle in
progress, the run's random stream, the history, counters, validation cache and best pair.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from glns.evolution.usage import Counters
from glns.evolution.population import Member, Scores
from glns.evolution.rundir import RunDirectoryError

__all__ = ["CHECKPOINT_VERSION", "RunState", "score_value"]

CHECKPOINT_VERSION = 1


def score_value(value: Any) -> float:
    """A validation score read back from JSON (which keeps inf as the string "inf")."""
    return float(value)


@dataclass
class RunState:
    """The state of a run between two cycles (what the checkpoint holds)."""

    seed: int
    cycle: int = 0
    episodes: int = 0
    destroy: list[Member] = field(default_factory=list)
    repair: list[Member] = field(default_factory=list)
    members: dict[str, Member] = field(default_factory=dict)
    next_index: dict[str, int] = field(default_factory=lambda: {"destroy": 0, "repair": 0})
    scores: Scores = field(default_factory=Scores)
    history: list[dict[str, Any]] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    validation_cache: dict[str, float] = field(default_factory=dict)
    best: dict[str, Any] | None = None
    elapsed_before: float = 0.0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def population(self, kind: str) -> list[Member]:
        """The destroy or the repair population (the list itself)."""
        return self.destroy if kind == "destroy" else self.repair

    def best_members(self) -> tuple[Member | None, Member | None]:
        """The members of the best pair so far, (None, None) before any validation."""
        if self.best is None:
            return None, None
        return self.members[self.best["destroy"]], self.members[self.best["repair"]]

    def to_checkpoint(self, elapsed: float, generations: int) -> dict[str, Any]:
        """The JSON-ready checkpoint (elapsed: wall seconds so far; generations: the budget)."""
        version, internal, gauss = self.rng.getstate()
        return {
            "version": CHECKPOINT_VERSION, "cycle": self.cycle, "episodes": self.episodes,
            "destroy": [m.id for m in self.destroy], "repair": [m.id for m in self.repair],
            "members": {k: m.to_dict() for k, m in self.members.items()},
            "next_index": dict(self.next_index), "scores": self.scores.to_dict(),
            "rng": [version, list(internal), gauss], "history": self.history,
            "counters": self.counters.to_dict(), "validation_cache": self.validation_cache,
            "best": self.best, "elapsed": elapsed, "generations": generations,
        }

    def load_checkpoint(self, s: dict[str, Any]) -> None:
        """Take over the state of checkpoint `s` (RunDirectoryError for another version)."""
        if s.get("version") != CHECKPOINT_VERSION:
            raise RunDirectoryError(f"checkpoint version {s.get('version')} is not supported "
                                    f"(this glns writes version {CHECKPOINT_VERSION})")
        self.cycle, self.episodes = int(s["cycle"]), int(s["episodes"])
        self.members = {k: Member.from_dict(v) for k, v in s["members"].items()}
        self.destroy = [self.members[i] for i in s["destroy"]]
        self.repair = [self.members[i] for i in s["repair"]]
        self.next_index = {k: int(v) for k, v in s["next_index"].items()}
        self.scores = Scores.from_dict(s["scores"])
        version, internal, gauss = s["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.history = list(s["history"])
        self.counters = Counters.from_dict(s["counters"])
        self.validation_cache = {k: score_value(v) for k, v in s["validation_cache"].items()}
        self.best = s["best"]
        self.elapsed_before = float(s["elapsed"])
