"""Executors: where batches of independent tasks run (this machine's cores or a Ray cluster).

An executor runs ``fn(*args)`` for a list of argument tuples and answers, in input order, one
:class:`TaskResult` per task (status "ok", "error", "memory", "timeout" or "died"; a failed
task never affects the others). Three backends (:func:`make_executor`):

- "serial": :class:`SerialExecutor`, in the calling process, one task after the other
  (debugging; no isolation and no deadline: a task past its timeout is not stopped).
- "process": :class:`WorkerPool`, reusable memory-limited worker processes on this machine, a
  kill deadline per task, a crashed worker replaced. Workers never import the caller's
  ``__main__``, so they work from any script, standard input, ``python -c`` or a notebook; a
  task that refers to something defined in ``__main__`` fails at once with
  :class:`MainModuleError`.
- "ray": :class:`RayExecutor`, Ray actors on a local runtime or a cluster (optional extra
  ``distributed``).

Task functions keep caches in module globals of the process that runs them
(``glns.sandbox.evaluation.solve_task`` caches instances and compiled operators), so an executor
kept open across calls pays for them once per worker.

This package imports nothing of glns but :mod:`glns.exceptions`: the sandbox
(:mod:`glns.sandbox`), the batch solver (:mod:`glns.batch`), the benchmark and the evolution
build on it.
"""

from glns.executors.backends import BACKENDS as BACKENDS, make_executor as make_executor
from glns.executors.base import (
    STATUSES as STATUSES,
    Executor as Executor,
    TaskResult as TaskResult,
    call_task as call_task,
    check_timeouts as check_timeouts,
    check_workers as check_workers,
    usable_cores as usable_cores,
)
from glns.executors.main_module import (
    MainModuleError as MainModuleError,
    dump_task as dump_task,
    main_module_origin as main_module_origin,
)
from glns.executors.process import DEFAULT_MEMORY_MB as DEFAULT_MEMORY_MB, WorkerPool as WorkerPool
from glns.executors.ray_actors import RayExecutor as RayExecutor, import_ray as import_ray
from glns.executors.serial import SerialExecutor as SerialExecutor

__all__ = ["BACKENDS", "make_executor", "Executor", "TaskResult", "STATUSES", "call_task",
           "check_timeouts", "check_workers", "usable_cores", "MainModuleError", "dump_task",
           "main_module_origin", "DEFAULT_MEMORY_MB", "WorkerPool", "RayExecutor", "import_ray",
           "SerialExecutor"]
