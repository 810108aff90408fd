"""Events from a running task back to the caller of ``map``, and a stop request the other way.

A task that wants to report while it runs (``glns.solve_many``'s callbacks: a new best, an
iteration, a progress tick) asks :func:`current` for the channel of the task it runs in and
sends plain data (tuples of numbers, strings and lists) with :meth:`Channel.send`; the caller's
``on_event(task_index, event)`` receives them in the calling thread, in order, before the
task's result. When ``on_event`` returns True the caller asks the task to stop, and the task
sees it in :meth:`Channel.stop_requested` (it decides how: ``solve_many``'s runs end as a stop
criterion would end them).

- In a worker process of :class:`glns.executors.WorkerPool` the events travel on the worker's
  pipe as ``(EVENT, event)`` beside the 5-tuple answers, and a stop request is the message
  :data:`STOP`. The pipe is first in, first out: a stop request that arrives after its task
  ended is read, and ignored, by the idle worker before its next task.
- In :class:`glns.executors.SerialExecutor` the channel calls ``on_event`` directly.

Outside such a task :func:`current` is None and a task runs without reporting.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, Iterator

__all__ = ["Channel", "PipeChannel", "DirectChannel", "current", "using", "EVENT", "STOP",
           "is_event", "EventHandler", "accepts_events"]

#: the tag of an event message on a worker's pipe
EVENT = "glns-event"
#: the message that asks a worker's running task to stop
STOP = "glns-stop"

#: on_event(task index, event) -> True to ask the task to stop
EventHandler = Callable[[int, Any], Any]


class Channel:
    """Where a running task sends its events and learns whether it should stop."""

    def send(self, event: Any) -> None:
        raise NotImplementedError

    def stop_requested(self) -> bool:
        raise NotImplementedError


class PipeChannel(Channel):
    """The channel of a task in a worker process: the worker's pipe to the pool."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.stopped = False

    def send(self, event: Any) -> None:
        self.conn.send((EVENT, event))

    def stop_requested(self) -> bool:
        # the parent writes nothing but STOP to a worker whose task runs
        while not self.stopped and self.conn.poll():
            self.stopped = self.conn.recv() == STOP
        return self.stopped


class DirectChannel(Channel):
    """The channel of a task that runs in the caller's process (the serial backend)."""

    def __init__(self, index: int, on_event: EventHandler) -> None:
        self.index, self.on_event = index, on_event
        self.stopped = False

    def send(self, event: Any) -> None:
        if self.on_event(self.index, event):
            self.stopped = True

    def stop_requested(self) -> bool:
        return self.stopped


_current: Channel | None = None


def current() -> Channel | None:
    """The channel of the task running in this process, or None (no one listens)."""
    return _current


@contextlib.contextmanager
def using(channel: Channel | None) -> Iterator[None]:
    """Make `channel` the current one for the duration of a task."""
    global _current
    previous, _current = _current, channel
    try:
        yield
    finally:
        _current = previous


def is_event(message: Any) -> bool:
    """Whether a message read from a worker's pipe is an event rather than an answer."""
    return type(message) is tuple and len(message) == 2 and message[0] == EVENT


def accepts_events(executor: Any) -> bool:
    """Whether ``executor.map`` takes ``on_event`` (a WorkerPool's and a SerialExecutor's do;
    a Ray executor's, or a map of the caller's own, may not)."""
    try:
        return "on_event" in inspect.signature(executor.map).parameters
    except (TypeError, ValueError):
        return False
