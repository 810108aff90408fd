"""Callbacks and stop criteria of runs that happen in other processes (``glns.solve_many``).

A run in a worker cannot call the caller's functions, so it reports what they ask for as plain
data over the channel of its task (:mod:`glns.executors.channel`), and the caller calls them:

- worker side, :func:`forwarding`: a :class:`glns.Callbacks` and a stop criterion for
  ``glns.solve`` that send ``("start",)``, ``("iteration", *progress)``, ``("best", solution,
  cost, iteration, seconds)``, ``("restart", *progress)`` and ``("tick", *progress)`` (every
  ``glns.monitor.POLL_SECONDS``, when the caller has stop criteria of its own), and stop the
  run when the caller asks;
- caller side, :class:`RunEvents`: turns each event back into the call of the run's
  :class:`glns.Callbacks` (or a stop criterion) and answers True (stop) when it returns True.

The caller's answer travels back while the run goes on, so a stop takes effect at the run's
next poll (within ``POLL_SECONDS`` plus the time to cross the pipe), not at the iteration of
the event. Forwarding never changes a run: with the same seed it makes the same moves.
"""

from __future__ import annotations

from dataclasses import astuple
from typing import Any, Callable, Sequence

from glns.executors.channel import Channel
from glns.monitor import BUILT_IN_CRITERIA, Callbacks, Progress, stop_items

__all__ = ["Wants", "RunEvents", "forwarding", "callbacks_per_run", "built_in_only"]

#: what a run forwards: (on_iteration interval or 0, new bests, restarts, its start, ticks)
Wants = tuple[int, bool, bool, bool, bool]


def callbacks_per_run(callbacks: Any, n: int) -> list[Callbacks | None]:
    """One Callbacks (or None) per run from solve_many's ``callbacks=``: one object for every
    run, or a function ``index -> Callbacks | None``."""
    if callbacks is None or isinstance(callbacks, Callbacks):
        return [callbacks] * n
    if not callable(callbacks):
        raise TypeError("callbacks must be glns.Callbacks or a function from the instance index "
                        f"to glns.Callbacks, got {type(callbacks).__name__}")
    out = []
    for i in range(n):
        cb = callbacks(i)
        if cb is not None and not isinstance(cb, Callbacks):
            raise TypeError(f"callbacks({i}) returned a {type(cb).__name__}, not glns.Callbacks or None")
        out.append(cb)
    return out


class RunEvents:
    """The caller's side: the callbacks and stop criteria of each run, fed with its events.

    ``events(i, event)`` is the ``on_event`` handler of an executor's ``map``; it returns True
    when run i should stop. ``finished(i, result)`` calls the run's ``on_end``.
    """

    def __init__(self, problems: Sequence[Any], callbacks: list[Callbacks | None],
                 criteria: list[Callable[[Progress], Any]]) -> None:
        self.problems, self.callbacks, self.criteria = problems, callbacks, criteria

    def wants(self, i: int) -> Wants | None:
        """What run i must forward (None: nothing, the run goes without a channel)."""
        cb = self.callbacks[i]
        if cb is None and not self.criteria:
            return None
        cb = cb or Callbacks()
        return (cb.every if cb.on_iteration is not None else 0, cb.on_best is not None,
                cb.on_restart is not None, cb.on_start is not None, bool(self.criteria))

    def __call__(self, i: int, event: Any) -> bool:
        kind, *data = event
        cb = self.callbacks[i] or Callbacks()
        if kind == "tick":
            progress = Progress(*data)
            return any(bool(criterion(progress)) for criterion in self.criteria)
        if kind == "best":
            return bool(cb.on_best(*data))                      # type: ignore[misc]
        if kind == "iteration":
            return bool(cb.on_iteration(Progress(*data)))      # type: ignore[misc]
        if kind == "restart":
            return bool(cb.on_restart(Progress(*data)))        # type: ignore[misc]
        if kind == "start":
            cb.on_start(self.problems[i])                      # type: ignore[misc]
            return False
        raise ValueError(f"unknown run event {kind!r}")

    def finished(self, i: int, result: Any) -> None:
        cb = self.callbacks[i]
        if cb is not None and cb.on_end is not None:
            cb.on_end(result)


def forwarding(wants: Wants, channel: Channel) -> tuple[Callbacks, Callable[[Progress], bool]]:
    """The worker's side: callbacks and a stop criterion for ``glns.solve`` that forward what
    `wants` asks for over `channel` and stop the run when the caller asks."""
    every, best, restart, start, tick = wants

    def send(event: tuple) -> bool:
        channel.send(event)
        return channel.stop_requested()

    def poll(progress: Progress) -> bool:
        if tick:
            channel.send(("tick", *astuple(progress)))
        return channel.stop_requested()

    callbacks = Callbacks(
        on_start=(lambda problem: channel.send(("start",))) if start else None,
        on_iteration=(lambda p: send(("iteration", *astuple(p)))) if every else None,
        every=every or 1,
        on_best=(lambda solution, cost, it, seconds: send(("best", solution, cost, it, seconds)))
        if best else None,
        on_restart=(lambda p: send(("restart", *astuple(p)))) if restart else None)
    return callbacks, poll


def built_in_only(stop: Any) -> tuple[list[Any], list[Callable[[Progress], Any]]]:
    """(built-in criteria, the caller's own) of a ``stop=`` argument: the built-ins travel with
    the task, the others stay with the caller."""
    items = stop_items(stop)
    return ([s for s in items if isinstance(s, BUILT_IN_CRITERIA)],
            [s for s in items if not isinstance(s, BUILT_IN_CRITERIA)])
