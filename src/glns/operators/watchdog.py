"""The operator time limit outside the main thread: a watchdog thread that interrupts the caller.

The SIGALRM timer of :mod:`glns.operators.bridge` only reaches the main thread. Elsewhere one
daemon thread per process keeps the deadlines of the operator calls in progress and, when one
passes, raises the timeout in the calling thread with ``PyThreadState_SetAsyncExc``, and again
every :data:`TICK` seconds while the call goes on (for code that catches it with a bare
``except:``). Such an exception is raised between two bytecodes of interpreted code: a compiled
operator, or one long C call (a big NumPy operation, ``time.sleep``), is stopped only when it
is back in interpreted code; ``glns.solve`` therefore runs Python operators interpreted outside
the main thread when a time limit is set (see docs/operator-contract.md, "Time limits").

The watchdog looks at its deadlines every :data:`TICK` seconds while calls are under way, so a
call is never stopped before its limit and at most one tick after it; arming a call only takes
a lock, it does not wake the watchdog.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from types import FrameType, TracebackType
from typing import Any, Callable

from glns._core._alns import OperatorTimeout

__all__ = ["WATCHDOG", "Watchdog", "TICK"]

#: seconds between two looks at the deadlines (and between two interruptions of one call)
TICK = 0.05
#: the watchdog goes to sleep after this many ticks without a call in progress
_IDLE_TICKS = 40


class _Interrupt(OperatorTimeout):
    """What the watchdog raises in an operator (an exception class, without a message); the
    caller replaces it by an OperatorTimeout that says which limit was passed."""


_Interrupt.__name__ = _Interrupt.__qualname__ = "OperatorTimeout"


class _Flush(BaseException):
    """The marker :func:`_flush_pending` raises in its own thread (never seen outside it)."""


def _set_async_exc(tid: int, exc: type[BaseException] | None) -> int:
    """Raise exc in thread tid at its next bytecode (None: withdraw a pending one)."""
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None)


#: loop turns :func:`_flush_pending` waits for its marker (it lands at the first turn)
_FLUSH_TURNS = 1_000_000


def _flush_pending() -> None:
    """Take back an interruption that may still be pending for the current thread.

    Withdrawing it with ``PyThreadState_SetAsyncExc(tid, NULL)`` is not enough: CPython (3.11)
    keeps its interpreter-wide "asynchronous exception pending" signal set until some thread
    raises one, so every later function entry and loop turn stops to look for it, and under
    ``sys.settrace`` (coverage, debuggers, hypothesis's explain phase) the next function entry
    loops forever. A marker replaces the pending interruption instead and is raised here at
    once, which clears the signal.
    """
    try:
        if _set_async_exc(threading.get_ident(), _Flush) != 1:
            return
        for _ in range(_FLUSH_TURNS):
            pass
    except _Flush:      # raised as soon as the call above returns, or at the first turn
        return
    _set_async_exc(threading.get_ident(), None)     # not delivered (never seen): withdraw it


class _Call:
    """One call under a limit: its thread, deadline and frame, and whether it was interrupted."""

    __slots__ = ("tid", "deadline", "frame", "active", "fired")

    def __init__(self, tid: int, deadline: float, frame: FrameType | None) -> None:
        self.tid, self.deadline, self.frame = tid, deadline, frame
        self.active, self.fired = True, False


class Watchdog:
    """Deadlines of operator calls outside the main thread (one instance: :data:`WATCHDOG`)."""

    def __init__(self) -> None:
        self._reset()
        if hasattr(os, "register_at_fork"):  # a forked child has no watchdog thread yet
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._calls: set[_Call] = set()
        self._thread: threading.Thread | None = None
        self._sleeping = True

    def call(self, func: Callable, args: tuple, seconds: float, timeout_error: Callable[[float], BaseException]) -> Any:
        """func(*args), stopped with ``timeout_error(seconds)`` once it runs past `seconds`.

        A call that catches the interruption and returns anyway still raises the timeout.
        """
        entry = self._arm(seconds, sys._getframe())
        failure: BaseException | None = None
        out = None
        try:
            out = func(*args)
        except BaseException as exc:   # re-raised below, once the watchdog let go of this call
            failure = exc
        fired = False
        while True:  # an interruption sent just before the watchdog let go lands here: retry
            try:
                fired = self._disarm(entry)
                break
            except _Interrupt:
                fired = True
        if fired:
            raise timeout_error(seconds) from None
        if failure is not None:
            try:
                raise failure
            finally:
                failure = None  # no reference cycle through the traceback
        return out

    def limit(self, seconds: float, timeout_error: Callable[[float], BaseException]) -> "_Limit":
        """A context manager: the code in its block is stopped like :meth:`call` stops func."""
        return _Limit(self, seconds, timeout_error)

    # ------------------------------------------------------------------ internals

    def _arm(self, seconds: float, frame: FrameType | None) -> _Call:
        entry = _Call(threading.get_ident(), time.monotonic() + seconds, frame)
        with self._cond:
            self._calls.add(entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="glns-operator-watchdog", daemon=True)
                self._thread.start()
            elif self._sleeping:
                self._cond.notify()
            self._sleeping = False
        return entry

    def _disarm(self, entry: _Call) -> bool:
        """Let go of the call (from its own thread); True when it was interrupted. No
        interruption is pending afterwards (one sent but not yet raised is taken back)."""
        with self._cond:
            entry.active = False
            self._calls.discard(entry)
        # the watchdog sends nothing more for this entry: what it sent has landed or lands now
        if entry.fired:
            _flush_pending()
        return entry.fired

    def _run(self) -> None:
        idle = 0
        with self._cond:
            while True:
                if self._calls:
                    idle = 0
                    self._interrupt_late_calls()
                else:
                    idle += 1
                if idle >= _IDLE_TICKS:
                    self._sleeping = True
                    self._cond.wait()
                    idle = 0
                else:
                    self._cond.wait(TICK)

    def _interrupt_late_calls(self) -> None:
        now = time.monotonic()
        late = [c for c in self._calls if c.active and c.deadline <= now]
        if not late:
            return
        frames = sys._current_frames()
        for c in late:
            # only while the call's own frame is still on its thread's stack: never into code
            # that runs after it
            if not _on_stack(frames.get(c.tid), c.frame) or _set_async_exc(c.tid, _Interrupt) != 1:
                c.active = False
                self._calls.discard(c)
                continue
            c.fired = True
            c.deadline = now + TICK


def _on_stack(top: FrameType | None, frame: FrameType | None) -> bool:
    while top is not None:
        if top is frame:
            return True
        top = top.f_back
    return False


class _Limit:
    """The context manager of :meth:`Watchdog.limit`."""

    def __init__(self, watchdog: Watchdog, seconds: float, timeout_error: Callable[[float], BaseException]) -> None:
        self._watchdog, self._seconds, self._error = watchdog, seconds, timeout_error
        self._entry: _Call | None = None

    def __enter__(self) -> None:
        self._entry = self._watchdog._arm(self._seconds, sys._getframe(1))

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        assert self._entry is not None
        fired = exc_type is _Interrupt
        while True:
            try:
                fired = self._watchdog._disarm(self._entry) or fired
                break
            except _Interrupt:
                fired = True
        if fired:
            raise self._error(self._seconds) from None
        return False


WATCHDOG = Watchdog()
