"""Settings of a G-LNS evolution run (docs/method.md) and its ablation switches."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from glns.checks import check_seed
from glns.evolution.budget import Budgets
from glns.executors import check_workers
from glns.executors.confinement import check_mode
from glns.params import SIGMA_AGGRESSIVE, SIGMA_FLAT, SIGMA_PAPER, SolveParams
from glns.problems import PROBLEM_KINDS
from glns.sandbox.check_types import CheckConfig

__all__ = ["EvolutionConfig", "SIGMA_PRESETS", "DEFAULT_MIX", "RESUMABLE"]

SIGMA_PRESETS = {"paper": SIGMA_PAPER, "flat": SIGMA_FLAT, "aggressive": SIGMA_AGGRESSIVE}
#: the refill strategy mix of the paper: mutation, homogeneous crossover, joint crossover
DEFAULT_MIX = {"mutation": 0.5, "homogeneous": 0.4, "joint": 0.1}
#: settings a resumed run may change: the episode budget, the other budgets, the concurrency,
#: the sandbox's confinement (none of them changes the result of a cycle)
RESUMABLE = ("generations", "llm_concurrency", "max_tokens", "max_cost", "max_time", "sandbox")


@dataclass(frozen=True)
class EvolutionConfig:
    """What an evolution run does. Defaults follow the paper (docs/method.md).

    problem: "tsp", "cvrp" or "ovrp". generations: G_max, the number of episodes.
    population: N, operators per population. prune: M, the worst dropped every cycle.
    episodes_per_cycle: K, episodes between evolution steps.
    train_count, train_size: the training instances (generated with seeds train_seed + i).
    iterations: T, solver iterations per run in an episode.
    validation_count, validation_size, validation_iterations, validation_seed: the validation
        set on which the best pair is chosen; validation_pairs: how many pairs (highest synergy
        first) are validated after every cycle.
    instances: "generated" (the settings above) or "paper" (the paper's own train and
        validation splits of the problem, ``glns.datasets.paper_instances``).
    mix: shares of the refill strategies; no_mutation / no_homogeneous / no_joint switch one
        off (ablations); pair_choice: "roulette" over S (paper Appendix C) or "max".
    adaptive: False selects operators uniformly in the inner solver (ablation);
    sigma: "paper", "flat" or "aggressive" score preset.
    native_seeds: run the seed operators natively (their Python sources are still the LLM's
        examples); default False, as the paper's seeds are Python.
    max_attempts: LLM answers per requested operator (the first and its regenerations with the
        error fed back). op_timeout: seconds one operator call may take, in the pre-evaluation
        filter (overriding ``check.call_timeout``) and in the episodes alike.
    workers: evaluation processes (None: all cores). memory_mb: their memory limit.
    sandbox: OS-level confinement of every process that runs generated code (the filter's,
        the episodes' and validation's): "auto" (the layers the machine offers; a warning for
        those it lacks), "strict" (refuse to run without seccomp and Landlock) or "off"
        (docs/sandbox.md). Ray actors are not confined: "strict" refuses the "ray" backend.
    backend: where episodes and validation run: "process" (sandbox worker processes on this
        machine) or "ray" (Ray actors, ``address`` of a cluster or a local runtime; the
        pre-evaluation filter still runs in local sandbox processes).
    seed: the run's master seed (instances of the solver runs, strategy draws, LLM seeds).
    temperature: the LLM's sampling temperature (None: the LLM configuration's).
    llm_concurrency: LLM requests in flight at once; the result does not depend on it.
    max_tokens, max_cost, max_time: budgets (LLM tokens, USD from the models' prices, wall
        seconds); the run stops at a cycle boundary before one would be exceeded
        (:mod:`glns.evolution.budget`). None: no limit. These and llm_concurrency may be
        changed when a run is resumed (:data:`RESUMABLE`).
    """

    problem: str = "cvrp"
    generations: int = 200
    population: int = 5
    prune: int = 2
    episodes_per_cycle: int = 10
    train_count: int = 16
    train_size: int = 50
    train_seed: int = 20000
    iterations: int = 100
    validation_count: int = 64
    validation_size: int = 50
    validation_iterations: int = 500
    validation_seed: int = 30000
    validation_pairs: int = 1
    instances: str = "generated"
    mix: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    no_mutation: bool = False
    no_homogeneous: bool = False
    no_joint: bool = False
    pair_choice: str = "roulette"
    adaptive: bool = True
    sigma: str = "paper"
    native_seeds: bool = False
    max_attempts: int = 3
    op_timeout: float = 1.0
    workers: int | None = None
    memory_mb: int | None = 1024
    sandbox: str = "auto"
    backend: str = "process"
    address: str | None = None
    seed: int = 0
    temperature: float | None = None
    llm_concurrency: int = 4
    max_tokens: int | None = None
    max_cost: float | None = None
    max_time: float | None = None
    check: CheckConfig = field(default_factory=CheckConfig)

    def __post_init__(self) -> None:
        if self.problem not in PROBLEM_KINDS:
            raise ValueError(f"problem must be tsp, cvrp, ovrp or vrptw, got {self.problem!r}")
        for name in ("generations", "population", "episodes_per_cycle", "train_count", "iterations",
                     "validation_count", "validation_iterations", "validation_pairs", "max_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.population < 2:
            raise ValueError(f"population must be >= 2, got {self.population}")
        if not 0 <= self.prune < self.population:
            raise ValueError(f"prune must be in [0, population), got {self.prune}")
        for name in ("train_size", "validation_size"):
            if getattr(self, name) < 2:
                raise ValueError(f"{name} must be >= 2, got {getattr(self, name)}")
        if self.instances not in ("generated", "paper"):
            raise ValueError(f"instances must be 'generated' or 'paper', got {self.instances!r}")
        unknown = set(self.mix) - {"mutation", "homogeneous", "joint"}
        if unknown:
            raise ValueError(f"unknown strategies in mix: {sorted(unknown)} "
                             "(known: mutation, homogeneous, joint)")
        if any(not (v >= 0 and math.isfinite(v)) for v in self.mix.values()):
            raise ValueError(f"strategy shares must be finite and >= 0, got {dict(self.mix)}")
        object.__setattr__(self, "mix", dict(self.mix))
        if not any(v > 0 for v in self.effective_mix().values()):
            raise ValueError("every refill strategy is switched off or has share 0; "
                             "keep at least one of mutation, homogeneous and joint crossover")
        if self.pair_choice not in ("roulette", "max"):
            raise ValueError(f"pair_choice must be 'roulette' or 'max', got {self.pair_choice!r}")
        if self.sigma not in SIGMA_PRESETS:
            raise ValueError(f"sigma must be one of {sorted(SIGMA_PRESETS)}, got {self.sigma!r}")
        if not self.op_timeout > 0:
            raise ValueError(f"op_timeout must be > 0 seconds, got {self.op_timeout}")
        if self.backend not in ("process", "ray"):
            raise ValueError(f"backend must be 'process' or 'ray', got {self.backend!r} (the serial "
                             "backend would run untrusted code in this process)")
        check_mode(self.sandbox)
        if self.sandbox == "strict" and self.backend == "ray":
            raise ValueError("sandbox 'strict' needs the 'process' backend: Ray actors are not confined")
        if self.address is not None and self.backend != "ray":
            raise ValueError("address is for the 'ray' backend only")
        check_workers(self.workers)
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must be in [0, 2], got {self.temperature}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        if isinstance(self.llm_concurrency, bool) or int(self.llm_concurrency) != self.llm_concurrency \
                or self.llm_concurrency < 1:
            raise ValueError(f"llm_concurrency must be a positive integer, got {self.llm_concurrency!r}")
        self.budgets()   # validates the budgets

    def budgets(self) -> Budgets:
        """The run's token, money and time budgets."""
        return Budgets(tokens=self.max_tokens, cost=self.max_cost, time=self.max_time)

    @property
    def cycles(self) -> int:
        """Evolution cycles: ceil(generations / episodes_per_cycle)."""
        return -(-self.generations // self.episodes_per_cycle)

    def effective_mix(self) -> dict[str, float]:
        """The strategy mix with the ablations applied."""
        off = {"mutation": self.no_mutation, "homogeneous": self.no_homogeneous, "joint": self.no_joint}
        return {k: (0.0 if off[k] else float(self.mix.get(k, 0.0))) for k in off}

    def solve_params(self) -> SolveParams:
        """The inner solver's parameters: the paper preset with this run's switches."""
        return SolveParams.paper(scores=SIGMA_PRESETS[self.sigma], adaptive=self.adaptive,
                                 op_timeout=self.op_timeout)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["check"] = dataclasses.asdict(self.check)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EvolutionConfig":
        d = dict(d)
        check = d.pop("check", None)
        if check is not None:
            check = dict(check)
            check["sizes"] = tuple(check.get("sizes", CheckConfig.sizes))
            if check.get("allowed_imports") is not None:
                check["allowed_imports"] = tuple(check["allowed_imports"])
            d["check"] = CheckConfig(**check)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown evolution settings: {', '.join(sorted(unknown))}")
        return cls(**d)
