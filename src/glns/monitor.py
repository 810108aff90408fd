"""Watching and steering a run: callbacks, stop criteria and the progress display of
:func:`glns.solve`.

The native loop calls back into Python only where something asks for it: every ``every``
iterations for ``on_iteration``, on a new best for ``on_best``, at a restart for
``on_restart``, and every :data:`POLL_SECONDS` (when it also looks for Ctrl-C) for stop
criteria of your own and the progress display. Without callbacks, custom stop criteria or a
display the loop runs as before. A callback or a stop criterion that returns True stops the
run: the result then has ``stop_reason == "callback"`` and the best solution found so far.

Built-in stop criteria (:class:`MaxIterations`, :class:`MaxRuntime`, :class:`NoImprovement`,
:class:`TargetCost`) are checked by the native loop itself, exactly, at every iteration; any
other callable ``criterion(progress) -> bool`` is asked every :data:`POLL_SECONDS`. A list of
criteria stops at the first one met.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

from glns._core._alns import POLL_SECONDS

__all__ = ["Progress", "Callbacks", "MaxIterations", "MaxRuntime", "NoImprovement", "TargetCost",
           "POLL_SECONDS", "Monitor", "Display", "BUILT_IN_CRITERIA", "stop_items"]


@dataclass(frozen=True)
class Progress:
    """Where a run stands, as callbacks and stop criteria see it.

    Parameters
    ----------
    iteration : int
        Iterations done.
    seconds : float
        Seconds since the run started.
    best_cost : float
        The cost of the best solution so far.
    current_cost : float
        The cost of the current solution.
    restarts : int
        Restarts (and epochs) so far.
    """

    iteration: int
    seconds: float
    best_cost: float
    current_cost: float
    restarts: int


@dataclass
class Callbacks:
    """Functions :func:`glns.solve` calls during a run.

    Each one is optional; any that returns True stops the run (the result then has
    ``stop_reason == "callback"`` and the best solution found so far).

    Parameters
    ----------
    on_start : callable or None, optional
        ``on_start(problem)``: before the first iteration.
    on_iteration : callable or None, optional
        ``on_iteration(progress)``: every `every` iterations, with a :class:`Progress`.
    every : int, default 1
        How often `on_iteration` is called, in iterations (a positive integer).
    on_best : callable or None, optional
        ``on_best(solution, cost, iteration, seconds)``: on every new best solution (the
        solution in the instance's node ids; a fresh list the callback may keep).
    on_restart : callable or None, optional
        ``on_restart(progress)``: when the run goes back to its best solution (a restart or
        an epoch).
    on_end : callable or None, optional
        ``on_end(result)``: with the :class:`glns.Result` (its return value is ignored).

    Raises
    ------
    ValueError
        When `every` is not a positive integer.
    TypeError
        When a callback is neither callable nor None.
    """

    on_start: Callable[[Any], Any] | None = None
    on_iteration: Callable[[Progress], Any] | None = None
    every: int = 1
    on_best: Callable[[Any, float, int, float], Any] | None = None
    on_restart: Callable[[Progress], Any] | None = None
    on_end: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.every, bool) or not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"every must be a positive number of iterations, got {self.every!r}")
        for name in ("on_start", "on_iteration", "on_best", "on_restart", "on_end"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be callable, got {type(value).__name__}")


@dataclass(frozen=True)
class MaxIterations:
    """Stop after this many iterations.

    Parameters
    ----------
    iterations : int
        The iteration budget.
    """

    iterations: int


@dataclass(frozen=True)
class MaxRuntime:
    """Stop after this many seconds.

    Parameters
    ----------
    seconds : float
        The time budget in seconds of wall time.
    """

    seconds: float


@dataclass(frozen=True)
class NoImprovement:
    """Stop after this many iterations in a row without a new best.

    Parameters
    ----------
    iterations : int
        Iterations without a new best solution.
    """

    iterations: int


@dataclass(frozen=True)
class TargetCost:
    """Stop as soon as the best cost is at most this.

    Parameters
    ----------
    cost : float
        The target cost (finite).
    """

    cost: float


#: the criteria the native loop checks itself
BUILT_IN_CRITERIA = (MaxIterations, MaxRuntime, NoImprovement, TargetCost)


def split_stop(stop: Any) -> tuple[dict[str, Any], float, list[Callable[[Progress], Any]]]:
    """(budgets for glns.solve's iterations / time_limit / no_improvement, target cost, other
    criteria) of a ``stop=`` argument: one criterion or an iterable of them."""
    if stop is None:
        return {}, -math.inf, []
    items = stop_items(stop)
    if not items:
        raise ValueError("stop is an empty list: give at least one criterion (or None)")
    budgets: dict[str, Any] = {}
    target, custom = -math.inf, []
    for item in items:
        if isinstance(item, MaxIterations):
            budgets["iterations"] = min(budgets.get("iterations", item.iterations), item.iterations)
        elif isinstance(item, MaxRuntime):
            budgets["time_limit"] = min(budgets.get("time_limit", item.seconds), item.seconds)
        elif isinstance(item, NoImprovement):
            budgets["no_improvement"] = min(budgets.get("no_improvement", item.iterations), item.iterations)
        elif isinstance(item, TargetCost):
            if not math.isfinite(item.cost):
                raise ValueError(f"TargetCost needs a finite cost, got {item.cost!r}")
            target = max(target, float(item.cost))
        elif callable(item):
            custom.append(item)
        else:
            raise TypeError(f"a stop criterion must be MaxIterations, MaxRuntime, NoImprovement, "
                            f"TargetCost or a callable, got {type(item).__name__}")
    return budgets, target, custom


def stop_items(stop: Any) -> list[Any]:
    """The criteria of a ``stop=`` argument (one criterion or an iterable of them) as a list."""
    if stop is None:
        return []
    return [stop] if isinstance(stop, BUILT_IN_CRITERIA) or callable(stop) else list(_iterable(stop))


def _iterable(stop: Any) -> Iterable[Any]:
    try:
        return iter(stop)
    except TypeError:
        raise TypeError(f"stop must be a criterion or a list of them, got {type(stop).__name__}") from None


class Display:
    """A progress table written every ``interval`` seconds: elapsed time, iterations, best and
    current cost, restarts (and a last row when the run ends)."""

    HEADER = f"{'time (s)':>9} {'iterations':>11} {'best':>16} {'current':>16} {'restarts':>8}"

    def __init__(self, stream: TextIO | None = None, interval: float = 1.0) -> None:
        self.stream = stream
        self.interval = interval
        self._next = interval

    def start(self, problem: Any) -> None:
        self._write(f"glns: {problem!r}\n{self.HEADER}")

    def row(self, p: Progress) -> None:
        if p.seconds >= self._next:
            self._next = p.seconds + self.interval
            self._write(self._format(p))

    def end(self, p: Progress, reason: str) -> None:
        self._write(f"{self._format(p)}\nstopped: {reason}")

    @staticmethod
    def _format(p: Progress) -> str:
        return (f"{p.seconds:9.2f} {p.iteration:11d} {p.best_cost:16.6g} {p.current_cost:16.6g} "
                f"{p.restarts:8d}")

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stdout
        print(text, file=stream, flush=True)


class Monitor:
    """What the native loop calls (see ``glns._core._alns.run_alns``): the callbacks, the
    custom stop criteria and the display of one run, behind one object."""

    def __init__(self, callbacks: Callbacks | None, target: float,
                 criteria: list[Callable[[Progress], Any]], display: Display | None,
                 to_original: Callable[[Any], Any] | None = None) -> None:
        self.callbacks = callbacks or Callbacks()
        self.criteria = criteria
        self.display = display
        self.target = target
        self.to_original = to_original
        self.every = self.callbacks.every if self.callbacks.on_iteration is not None else 0
        self.wants_best = self.callbacks.on_best is not None
        self.wants_restart = self.callbacks.on_restart is not None
        self.wants_tick = bool(criteria) or display is not None
        self.last = Progress(0, 0.0, math.inf, math.inf, 0)

    @property
    def active(self) -> bool:
        """Whether the loop needs this monitor at all."""
        return (self.every > 0 or self.wants_best or self.wants_restart or self.wants_tick
                or self.target > -math.inf)

    def iteration(self, it: int, seconds: float, best: float, current: float, restarts: int) -> bool:
        self.last = Progress(it, seconds, best, current, restarts)
        return bool(self.callbacks.on_iteration(self.last))

    def best(self, solution: Any, cost: float, it: int, seconds: float) -> bool:
        if self.to_original is not None:
            solution = self.to_original(solution)
        return bool(self.callbacks.on_best(solution, cost, it, seconds))

    def restart(self, it: int, seconds: float, best: float, restarts: int) -> bool:
        self.last = Progress(it, seconds, best, self.last.current_cost, restarts)
        return bool(self.callbacks.on_restart(self.last))

    def tick(self, it: int, seconds: float, best: float, current: float, restarts: int) -> bool:
        self.last = Progress(it, seconds, best, current, restarts)
        if self.display is not None:
            self.display.row(self.last)
        return any(bool(criterion(self.last)) for criterion in self.criteria)

    def start(self, problem: Any) -> None:
        if self.display is not None:
            self.display.start(problem)
        if self.callbacks.on_start is not None:
            self.callbacks.on_start(problem)

    def end(self, result: Any) -> None:
        if self.display is not None:
            self.display.end(Progress(result.iterations, result.runtime, result.cost,
                                      float(result.current_curve[-1]) if len(result.current_curve)
                                      else result.cost, result.restarts), result.stop_reason)
        if self.callbacks.on_end is not None:
            self.callbacks.on_end(result)
