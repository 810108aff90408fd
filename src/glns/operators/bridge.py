"""The Python operator bridge (docs/operator-contract.md).

Turns a callable or a source string written the way the paper's prompts ask into an operator
the core can call: it fixes the third-argument convention once per operator (``problem_data``
dict or bare distance matrix), hands every call a fresh dict of read-only arrays, and enforces
an optional per-call time limit. Checking what an operator returns is the core's job
(``glns._core._solution.sol_load``), so malformed output can never reach the solver's data.
"""

from __future__ import annotations

import contextlib
import copy
import collections
import heapq
import inspect
import itertools
import logging
import math
import random
import re
import signal
import threading
from typing import Any, Callable, ContextManager, Iterator

import numpy as np

from glns._core._alns import OperatorTimeout
from glns.exceptions import OperatorError
from glns.operators.watchdog import WATCHDOG

#: third-parameter names that mean "the bare distance matrix" (paper prompts i1/i2)
_MATRIX_NAME = re.compile(r"dist|matrix|^d$|^dm$|^D$|^cost", re.IGNORECASE)

#: module names an operator's source may use without importing them (the paper's code does)
OPERATOR_GLOBALS: dict[str, Any] = {
    "np": np, "numpy": np, "random": random, "math": math, "copy": copy,
    "itertools": itertools, "heapq": heapq, "collections": collections,
}

_KIND_WORDS = {"destroy": ("destroy", "remov"), "repair": ("repair", "insert", "insertion")}

logger = logging.getLogger(__name__)


def third_argument_convention(func: Callable) -> str:
    """'distance_matrix' or 'problem_data': what func expects as its third argument.

    Decided once per operator from the name of its third parameter.
    """
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return "problem_data"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params) and len(positional) < 3:
        return "problem_data"
    if len(positional) < 3:
        names = ", ".join(p.name for p in positional)
        raise OperatorError(
            f"{getattr(func, '__name__', 'operator')}({names}) must accept 3 positional arguments"
        )
    required_after = [p for p in positional[3:] if p.default is p.empty]
    if required_after:
        raise OperatorError(
            f"{func.__name__}: parameter {required_after[0].name!r} has no default; "
            "an operator is called with exactly 3 arguments"
        )
    return "distance_matrix" if _MATRIX_NAME.search(positional[2].name) else "problem_data"


def compile_source(source: str, kind: str, name: str | None = None) -> Callable:
    """Execute operator source and return its entry function.

    The entry is `name` if given; else a function named after the kind ('destroy'/'repair');
    else the single top-level function whose name suggests the kind ('remov', 'insert', ...);
    else the last function defined. Raises OperatorError when there is none or it does not
    compile.
    """
    namespace: dict[str, Any] = dict(OPERATOR_GLOBALS)
    namespace["__name__"] = "glns_operator"
    try:
        code = compile(source, "<operator>", "exec")
    except SyntaxError as exc:
        raise OperatorError(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    try:
        exec(code, namespace)
    except Exception as exc:  # the module body itself failed
        raise OperatorError(f"source raised {type(exc).__name__} when loaded: {exc}") from None
    functions = {k: v for k, v in namespace.items()
                 if inspect.isfunction(v) and v.__module__ == "glns_operator"}
    if name is not None:
        if name not in functions:
            raise OperatorError(f"no function named {name!r} in the source")
        return functions[name]
    if kind in functions:
        return functions[kind]
    if not functions:
        raise OperatorError("the source defines no function")
    hinted = [f for k, f in functions.items() if any(w in k.lower() for w in _KIND_WORDS[kind])]
    if len(hinted) == 1:
        return hinted[0]
    return list(functions.values())[-1]


class _Alarm:
    """The operator time limit: one SIGALRM handler and the state of the armed timer.

    The handler stays installed for a whole run (:func:`alarm_installed`); each call only arms
    and disarms the timer (:meth:`call`), since installing a handler around every call costs
    more than a call of a compiled operator. The timer re-fires every 50 ms so that code
    catching the exception with a bare ``except:`` is interrupted again."""

    installed = False
    fired = False
    seconds = 0.0

    @staticmethod
    def _on_alarm(signum: int, frame: Any) -> None:
        _Alarm.fired = True
        raise _timeout_error(_Alarm.seconds)

    @staticmethod
    def call(func: Callable, *args: Any, seconds: float) -> Any:
        """func(*args) under the limit (the handler must be installed)."""
        _Alarm.fired, _Alarm.seconds = False, seconds
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        try:
            out = func(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if _Alarm.fired:  # caught the timeout and returned anyway: still a failure
            raise _timeout_error(seconds)
        return out


def _timeout_error(seconds: float) -> BaseException:
    return OperatorTimeout(f"operator ran past its time limit of {seconds:g} s")


def _alarm_possible() -> bool:
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


def limit_stops_compiled_code() -> bool:
    """True when the time limit can stop compiled operators in the calling thread: their
    inserted checks see signals, and signals reach only the main thread."""
    return _alarm_possible()


@contextlib.contextmanager
def alarm_installed() -> Iterator[None]:
    """Keep the operator time limit's signal handler installed for a whole run (main thread,
    POSIX; elsewhere, and when already installed, nothing happens). The caller's handler is
    restored afterwards."""
    if _Alarm.installed or not _alarm_possible():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _Alarm._on_alarm)
    _Alarm.installed = True
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _Alarm.installed = False


def time_limit(seconds: float | None) -> ContextManager[None]:
    """Raise OperatorTimeout in the code of the ``with`` block after `seconds` (None: no
    limit). In the main thread of a POSIX process a SIGALRM timer; elsewhere the watchdog
    thread of :mod:`glns.operators.watchdog`, which stops interpreted code only. An operator
    that catches the timeout and returns anyway still fails."""
    if not seconds:
        return contextlib.nullcontext()
    if not _alarm_possible():
        return WATCHDOG.limit(seconds, _timeout_error)
    return _alarm_limit(seconds)


@contextlib.contextmanager
def _alarm_limit(seconds: float) -> Iterator[None]:
    with alarm_installed():
        yield from _armed(seconds)


def _armed(seconds: float) -> Iterator[None]:
    _Alarm.fired, _Alarm.seconds = False, seconds
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if _Alarm.fired:
        raise _timeout_error(seconds)


class BoundPythonOperator:
    """A Python operator bound to one problem: what the core's loop calls.

    data: the ``problem_data`` dict in the form the operator gets (never handed out itself:
    every call gets a fresh shallow copy); matrix: the bare distance matrix in the same form,
    for operators whose third parameter is named like a matrix. Both are private copies
    (read-only arrays or immutable tuples, see ``glns.operators.views``), so even an operator
    that unlocks and overwrites them reaches neither the core (which has its own copy) nor the
    user's instance. form / form_reason: how it runs and why (``glns.operators.accelerate``);
    upgrade: an object with ready() and apply(bound), checked before each call, that switches
    the operator to another form (once its first calls are recorded, or a compiled twin built
    in the background is ready); recorder: keeps calls as the evidence for other forms.
    """

    def __init__(self, func: Callable, data: dict[str, Any], matrix: Any, convention: str,
                 timeout: float | None) -> None:
        self._convention = convention
        self._timeout = timeout
        self.upgrade: Any = None
        #: an object with record(run, first, second) that keeps calls as evidence, or None
        self.recorder: Any = None
        self.negotiation: Any = None
        #: calls stopped by the time limit (logged: the first at WARNING, later ones at DEBUG)
        self.timeouts = 0
        self.set_form(func, data, matrix, "numpy", "")

    def set_form(self, func: Callable, data: dict[str, Any], matrix: Any, form: str,
                 reason: str, negotiation: Any = None) -> None:
        """Run `func` with `data` / `matrix` from now on; record the form and why."""
        self.func = func
        self._data = data
        self._matrix = matrix
        self.form = form
        self.form_reason = reason
        self.negotiation = negotiation

    def invoke(self, first: Any, second: Any) -> Any:
        if self.upgrade is not None and self.upgrade.ready():
            upgrade, self.upgrade = self.upgrade, None
            upgrade.apply(self)
        if self.recorder is not None:
            return self.recorder.record(self._run, first, second)
        return self._run(first, second)

    def _run(self, first: Any, second: Any) -> Any:
        third = self._matrix if self._convention == "distance_matrix" else dict(self._data)
        if self._timeout:
            try:
                if threading.current_thread() is not threading.main_thread():
                    return WATCHDOG.call(self.func, (first, second, third), self._timeout, _timeout_error)
                if _Alarm.installed:
                    return _Alarm.call(self.func, first, second, third, seconds=self._timeout)
                with time_limit(self._timeout):
                    return self.func(first, second, third)
            except BaseException as exc:
                self._note_timeout(exc)
                raise
        return self.func(first, second, third)

    def _note_timeout(self, exc: BaseException) -> None:
        """Log a call stopped by the time limit (the core counts it as a failure). Only the first
        of a run at WARNING: an operator that always times out would log every iteration."""
        if not isinstance(exc, OperatorTimeout):
            return
        self.timeouts += 1
        logger.log(logging.WARNING if self.timeouts == 1 else logging.DEBUG,
                   "operator %s ran past its time limit of %g s (%d time(s) in this run); the "
                   "call counts as a failure", getattr(self.func, "__name__", "?"), self._timeout,
                   self.timeouts)
