"""What every executor shares: the result of one task, running one call, and argument checks."""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["TaskResult", "STATUSES", "Executor", "call_task", "check_timeouts", "check_workers",
           "usable_cores"]

#: statuses of a TaskResult
STATUSES = ("ok", "error", "memory", "timeout", "died")


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task.

    status: "ok" (value holds the return value), "error" (the task raised; message says what),
    "memory" (MemoryError under the worker's memory limit), "timeout" (killed at the
    deadline), "died" (the worker process ended during the task; message has the signal or
    exit code). seconds: wall time, measured in the worker for finished tasks and in the
    parent for killed ones.
    """

    status: str
    value: Any = None
    message: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@runtime_checkable
class Executor(Protocol):
    """What :func:`glns.solve_many` and :func:`glns.sandbox.evaluate` need from a backend."""

    workers: int

    def map(self, fn: Callable, arg_tuples: Sequence[tuple], timeout: float | Sequence[float],
            on_result: Callable[[int, TaskResult], None] | None = None) -> list[TaskResult]:
        """fn(*args) for every args; results in input order; on_result(i, result) as they come."""
        ...

    def close(self) -> None:
        """Release the workers. Idempotent."""
        ...


def call_task(fn: Callable, args: tuple, memory_message: str,
              catch: type[BaseException] = Exception) -> tuple[str, Any, str | None, float]:
    """fn(*args) as the fields (status, value, message, seconds) of a :class:`TaskResult`.

    The one place where every executor (worker process, Ray actor, serial) turns a call into a
    result: MemoryError becomes "memory" with `memory_message`, an exception of type `catch`
    becomes "error" with its last traceback line; anything else propagates.
    """
    t0 = time.perf_counter()
    try:
        answer = ("ok", fn(*args), None)
    except MemoryError:
        answer = ("memory", None, memory_message)
    except catch as exc:
        answer = ("error", None, "".join(traceback.format_exception_only(type(exc), exc)).strip())
    return (*answer, time.perf_counter() - t0)


def check_timeouts(n: int, timeout: float | Sequence[float]) -> list[float]:
    """One positive timeout per task from one value or a sequence (ValueError otherwise)."""
    limits = [float(timeout)] * n if isinstance(timeout, (int, float)) else [float(t) for t in timeout]
    if len(limits) != n:
        raise ValueError(f"{len(limits)} timeouts for {n} tasks")
    if any(not t > 0 for t in limits):
        raise ValueError("timeouts must be > 0 seconds")
    return limits


def check_workers(workers: Any) -> int | None:
    """A worker count as an int, or None (the executor's default); ValueError otherwise.

    The one check of every API that takes a worker count (executors, ``solve_many``, the
    benchmark and the evolution settings), so they all accept and refuse the same values.
    """
    if workers is None:
        return None
    try:
        valid = not isinstance(workers, bool) and int(workers) == workers and workers >= 1
    except (TypeError, ValueError, OverflowError):
        valid = False
    if not valid:
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    return int(workers)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which taskset and container cpusets
    narrow), else the machine's count: the default number of workers."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:   # pragma: no cover - not Linux
        return os.cpu_count() or 1
