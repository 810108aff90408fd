"""The executor abstraction: where batches of independent tasks run.

An executor runs ``fn(*args)`` for a list of argument tuples and answers, in input order, one
:class:`glns.sandbox.TaskResult` per task (status "ok", "error", "memory", "timeout" or
"died"; a failed task never affects the others). Three backends:

- "serial": in the calling process, one task after the other (debugging; no isolation and no
  deadline: a task past its timeout is not stopped).
- "process": :class:`glns.sandbox.WorkerPool` itself -- reusable worker processes on this
  machine, a kill deadline per task, a crashed worker replaced.
- "ray": :class:`glns.batch.ray_backend.RayExecutor` -- Ray actors on a local runtime or a
  cluster (optional extra ``distributed``).

Task functions keep caches in module globals of the process that runs them
(``glns.sandbox.evaluation.solve_task`` caches instances and compiled operators), so an executor
kept open across calls pays for them once per worker.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from glns.sandbox.pool import TaskResult, WorkerPool, call_task, check_timeouts

__all__ = ["Executor", "SerialExecutor", "make_executor", "BACKENDS", "check_timeouts"]

#: the backend names of :func:`make_executor`
BACKENDS = ("serial", "process", "ray")


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


class SerialExecutor:
    """Runs every task in the calling process, in order (no isolation, timeouts not enforced)."""

    workers = 1

    def __enter__(self) -> "SerialExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        pass

    def map(self, fn: Callable, arg_tuples: Sequence[tuple], timeout: float | Sequence[float],
            on_result: Callable[[int, TaskResult], None] | None = None) -> list[TaskResult]:
        tasks = [tuple(a) for a in arg_tuples]
        check_timeouts(len(tasks), timeout)
        results = []
        for i, args in enumerate(tasks):
            # catches Exception only: KeyboardInterrupt and SystemExit stop the batch
            res = TaskResult(*call_task(fn, args, "ran out of memory"))
            results.append(res)
            if on_result is not None:
                on_result(i, res)
        return results


def make_executor(backend: str = "process", workers: int | None = None, *,
                  address: str | None = None, memory_mb: int | None = None) -> Executor:
    """An executor by backend name; close it (or use it in a ``with`` block) when done.

    workers: processes or Ray actors (default: all cores of this machine, or all CPUs of the
    Ray cluster); "serial" accepts only None or 1. address: the Ray cluster to connect to
    ("auto", "ray://host:10001", ...; "ray" only; default: the runtime already initialised in
    this process, else a new local one). memory_mb: address-space limit of each worker process
    ("process" only; default: none).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers is not None and (isinstance(workers, bool) or int(workers) != workers or workers < 1):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    if address is not None and backend != "ray":
        raise ValueError(f"address is for the 'ray' backend only (backend is {backend!r})")
    if memory_mb is not None and backend != "process":
        raise ValueError(f"memory_mb is for the 'process' backend only (backend is {backend!r})")
    if backend == "serial":
        if workers not in (None, 1):
            raise ValueError(f"the 'serial' backend runs one task at a time; workers={workers}")
        return SerialExecutor()
    if backend == "process":
        return WorkerPool(workers=workers, memory_mb=memory_mb)
    from glns.batch.ray_backend import RayExecutor

    return RayExecutor(workers=workers, address=address)
