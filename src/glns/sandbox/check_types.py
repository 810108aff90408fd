"""What the pre-evaluation filter is asked and what it answers: :class:`CheckConfig` (what is
run), :class:`CheckRequest` (one operator) and :class:`Admission` (the verdict)."""

from __future__ import annotations

from dataclasses import dataclass, field

from glns.executors.confinement import check_mode
from glns.policy import ALLOWED_IMPORTS
from glns.problems import problem_class

__all__ = ["CheckConfig", "CheckRequest", "Admission"]


@dataclass(frozen=True)
class CheckConfig:
    """What :func:`check_operator` runs.

    sizes: size classes (cities / customers) of the small instances; instances_per_size of
    each, generated with seeds seed, seed + 1, ... call_timeout: seconds one call may take on
    them. growth_n / growth_timeout: the time-growth check, one call on an instance of growth_n
    nodes must finish within growth_timeout seconds (growth_n None: no such check).
    kill_grace: extra seconds before the worker is killed when the operator ignores the
    in-process time limit. destroy_fraction: destroy_cnt = max(1, floor(fraction * n)).
    capacity: vehicle capacity of the VRP instances. allow_input_mutation: see the module doc.
    allowed_imports: modules the code may import; with the names of
    ``glns.sandbox.policy.FORBIDDEN_NAMES`` checked before the code runs (None: no such check).
    sandbox: the OS-level confinement of the pool :func:`check_operator` starts when it is given
    none: "auto" (the layers the machine offers), "strict" (refuse without seccomp and
    Landlock) or "off" (docs/sandbox.md). A pool passed in keeps its own.
    """

    sizes: tuple[int, ...] = (10, 20, 50)
    instances_per_size: int = 2
    call_timeout: float = 1.0
    growth_n: int | None = 200
    growth_timeout: float = 2.0
    kill_grace: float = 1.0
    destroy_fraction: float = 0.2
    capacity: int = 50
    seed: int = 7001
    allow_input_mutation: bool = True
    allowed_imports: tuple[str, ...] | None = ALLOWED_IMPORTS
    sandbox: str = "auto"

    def __post_init__(self) -> None:
        check_mode(self.sandbox)
        if not self.sizes or any(int(n) != n or n < 2 for n in self.sizes):
            raise ValueError(f"sizes must be integers >= 2, got {self.sizes}")
        if self.instances_per_size < 1:
            raise ValueError(f"instances_per_size must be >= 1, got {self.instances_per_size}")
        for name in ("call_timeout", "growth_timeout", "kill_grace"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {getattr(self, name)}")
        if self.growth_n is not None and self.growth_n < 2:
            raise ValueError(f"growth_n must be >= 2 or None, got {self.growth_n}")
        if not 0 < self.destroy_fraction <= 1:
            raise ValueError(f"destroy_fraction must be in (0, 1], got {self.destroy_fraction}")


@dataclass(frozen=True)
class Admission:
    """The verdict of :func:`check_operator`.

    ok: the operator may be used. check: the failed check ("forbidden", "syntax", "load", "signature",
    "exception", "output", "mutation", "timeout", "memory", "crash", "growth", "internal"),
    None when ok. error: a precise message for the LLM, None when ok. size: the instance size
    the failure happened on, if any. timings: the slowest call per instance size (seconds,
    including the growth size when it ran). warnings: harmless oddities worth telling the LLM.
    function, convention: the entry function picked from the source and how its third argument
    is read ("problem_data" or "distance_matrix"). seconds: wall time of the whole check.
    """

    ok: bool
    kind: str
    problem: str
    check: str | None = None
    error: str | None = None
    size: int | None = None
    timings: dict[int, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    function: str | None = None
    convention: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class CheckRequest:
    """One operator for :func:`check_operators`: its source, kind, problem and entry function."""

    source: str
    kind: str
    problem: str
    function: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("destroy", "repair"):
            raise ValueError(f"kind must be 'destroy' or 'repair', got {self.kind!r}")
        object.__setattr__(self, "problem", problem_class(self.problem).kind)
