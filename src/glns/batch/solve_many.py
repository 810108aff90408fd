"""``glns.solve_many``: one ``glns.solve`` run per instance, on all cores or a Ray cluster.

Decisions:

- Seeds: instance i runs with ``glns.rng.run_seed(seed, i)`` whatever the backend, worker count
  or schedule, so the results (costs, solutions, curves, statistics) are identical; they equal
  ``glns.solve(instances[i], ..., seed=run_seed(seed, i))``. Use iterations or no_improvement
  for this: a time_limit stops where the machine's speed lets it.
- Operators travel as picklable descriptions (native name and parameters, source code, or an
  import path) and are compiled or imported once per worker, which caches them.
- Failures: only a task whose worker died (segfault, out-of-memory kill, lost Ray node) is run
  again, up to ``retries`` times: every other failure (an operator that does not compile, an
  exception, MemoryError, a timeout) is deterministic for the same seed and would fail again.
  The batch always completes; then, by default, :class:`BatchError` reports the failed tasks
  and carries every result (errors="return" returns the list with :class:`TaskFailure` in
  place of the failed results instead).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from glns.checks import check_count, check_seed
from glns.exceptions import GlnsError
from glns.executors import (BACKENDS, Executor, SerialExecutor, TaskResult, WorkerPool, check_workers,
                             make_executor)
from glns.params import SolveParams
from glns.problems import Problem
from glns.result import Result
from glns.rng import run_seed
from glns.monitor import Callbacks, split_stop
from glns.solve import trace_limit_of, stop_settings
from glns.sandbox.confine import sandbox_confinement
from glns.executors.channel import accepts_events
from glns.operators import decisions
from glns.sandbox.evaluation import decision_ids, failure_message, operator_wires, solve_task, solve_tasks
from glns.sandbox.run_events import RunEvents, built_in_only, callbacks_per_run

__all__ = ["solve_many", "run_solve_tasks", "TaskFailure", "BatchError", "RETRYABLE", "NO_DEADLINE"]

logger = logging.getLogger(__name__)

#: statuses worth another attempt: the worker died, the task itself may be fine
RETRYABLE = ("died",)
#: the kill deadline of a task when task_timeout is None (a week; the pool needs a finite one)
NO_DEADLINE = 7 * 86400.0


@dataclass(frozen=True)
class TaskFailure:
    """A task of :func:`solve_many` without a result after all its attempts.

    instance: its index in the input. seed: its solver seed. status: "died", "timeout",
    "memory" or "error" (see :class:`glns.sandbox.TaskResult`), or "interrupted" (Ctrl-C
    stopped the batch before it finished). error: what went wrong. attempts: how many times
    it ran.
    """

    instance: int
    seed: int
    status: str
    error: str
    attempts: int

    @property
    def ok(self) -> bool:
        return False


class BatchError(GlnsError, RuntimeError):
    """Some tasks of a completed batch failed.

    Raised by :func:`glns.solve_many` (with ``errors="raise"``) after the whole batch ran.

    Parameters
    ----------
    failures : list of TaskFailure
        The tasks without a result after all their attempts.
    results : list of Result or TaskFailure
        One entry per instance, in input order: the :class:`glns.Result`, or the
        :class:`TaskFailure` of a failed task.

    Attributes
    ----------
    failures : list of TaskFailure
        As given.
    results : list of Result or TaskFailure
        As given.
    """

    def __init__(self, failures: list[TaskFailure], results: list[Result | TaskFailure]) -> None:
        self.failures = failures
        self.results = results
        lines = [f"instance {f.instance}: {f.status} after {f.attempts} attempt(s): {f.error}"
                 for f in failures[:5]]
        more = f"\n  ... and {len(failures) - 5} more" if len(failures) > 5 else ""
        super().__init__(f"{len(failures)} of {len(results)} tasks failed:\n  " + "\n  ".join(lines) + more)


class _ProgressLine:
    """'solve_many: 12/64 done, 1 failed, 3.2 s, ETA 14 s' rewritten in place on stderr."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total, self.stream, self.t0 = total, stream or sys.stderr, time.monotonic()

    def __call__(self, done: int, total: int, failed: int) -> None:
        elapsed = time.monotonic() - self.t0
        eta = f"ETA {elapsed / done * (total - done):.0f} s" if done else "ETA ?"
        fail = f", {failed} failed" if failed else ""
        end = "\n" if done == total else ""
        self.stream.write(f"\rsolve_many: {done}/{total} done{fail}, {elapsed:.1f} s, {eta}   {end}")
        self.stream.flush()


def solve_many(instances: Sequence[Problem], destroy: Any = None, repair: Any = None, *,
               iterations: int | None = None, time_limit: float | None = None,
               no_improvement: int | None = None, seed: int = 0,
               params: SolveParams | None = None, workers: int | None = None,
               backend: str = "process", address: str | None = None,
               progress: bool | Callable[[int, int, int], None] = False, retries: int = 1,
               task_timeout: float | None = None, errors: str = "raise",
               executor: Executor | None = None, sandbox: bool | str = False,
               stop: Any = None, statistics: str | int = "bounded",
               callbacks: Callbacks | Callable[[int], Callbacks | None] | None = None) -> list[Result]:
    """Solve every instance with ``glns.solve`` in parallel; results in input order.

    Instance i runs with ``glns.rng.run_seed(seed, i)`` whatever the backend, worker count or
    schedule, so the results equal ``glns.solve(instances[i], ..., seed=run_seed(seed, i))``.

    Parameters
    ----------
    instances : sequence of Problem
        TSP, CVRP, OVRP and VRPTW instances (kinds may be mixed).
    destroy, repair : optional
        As in :func:`glns.solve` (parsed by :func:`glns.operators.spec.parse`): one operator
        or a list, each a native name, an Operator (native, from source, or of a module-level
        function), source code, a :class:`glns.operators.PythonSource`, an import path
        ``"package.module:function"`` or ``"path/to/file.py:function"``, or a module-level
        function; or destroy = a module exported by a G-LNS run, or its path (repair None).
        Lambdas and functions defined in ``__main__`` cannot reach a worker: pass their source.
    iterations, time_limit, no_improvement : optional
        The budgets of every run, as in :func:`glns.solve`.
    seed : int, default 0
        The master seed of the batch.
    params : SolveParams, optional
        The solver parameters of every run.
    workers : int, optional
        Processes or actors (default: all cores, or all CPUs of the Ray cluster).
    backend : {"process", "ray", "serial"}, default "process"
        Worker processes on this machine, Ray actors (``pip install 'glns[distributed]'``),
        or this process one run after the other (for debugging).
    address : str, optional
        Ray cluster address for ``ray.init(address=...)`` (default: the runtime already
        initialised, else a local one for the duration of the call).
    progress : bool or callable, default False
        True shows a line with a counter and an ETA on stderr; a callable is called as
        ``progress(done, total, failed)`` after every finished task.
    retries : int, default 1
        Extra attempts for a task whose worker died (segfault, OOM kill); other failures are
        deterministic and not retried.
    task_timeout : float, optional
        Seconds after which a run's worker is killed (default: none; not enforced by the
        "serial" backend).
    errors : {"raise", "return"}, default "raise"
        "raise": when tasks failed, raise :class:`BatchError` after the whole batch ran (it
        holds the failures and every result); "return": return the list with a
        :class:`TaskFailure` in place of each failed result.
    executor : Executor, optional
        An open executor from :func:`glns.batch.make_executor` to run on instead (then
        backend, workers and address stay at their defaults); kept across calls, its
        workers keep the instances and compiled operators cached.
    sandbox : bool or str, default False
        Run untrusted operator code confined at the OS level: True or "auto" (the layers this
        machine offers), "strict" (refuse to run without seccomp and Landlock) or False. The
        "process" backend only; docs/sandbox.md says what is blocked. Results are the same
        as unconfined.
    stop : criterion or list of criteria, optional
        As in :func:`glns.solve`, for every run. The built-in criteria (MaxIterations,
        MaxRuntime, NoImprovement, TargetCost) travel with the runs and are exact; a function
        ``criterion(progress)`` of yours stays in this process and is asked with each run's
        :class:`glns.Progress` every ``glns.monitor.POLL_SECONDS``.
    statistics : {"bounded", "full", "none"} or int, default "bounded"
        As in :func:`glns.solve`, for every run.
    callbacks : Callbacks or callable, optional
        A :class:`glns.Callbacks` for every run, or a function from the instance's index to
        its Callbacks (or None). They are called in this process, in the calling thread,
        with each run's events in order (on_start with the instance, on_iteration, on_best,
        on_restart, and on_end with the run's Result as it arrives); a run in a worker
        forwards them over the worker's pipe. One that returns True (or a criterion that
        does) stops that run at its next poll, within moments rather than at the iteration of
        the event; the run keeps its best (``stop_reason == "callback"``). An exception in a
        callback ends the batch and propagates. Callbacks and criteria of your own need the
        "process" or "serial" backend; they never change a run's moves.

    Returns
    -------
    list of Result
        One per instance, in input order (with ``errors="return"``, a :class:`TaskFailure` in
        place of each failed run). Each Result has ``extra["task_seconds"]`` (wall time of the
        task in its worker) and ``extra["attempts"]``.

    Raises
    ------
    BatchError
        When tasks failed and ``errors="raise"``.

    Notes
    -----
    Ctrl-C stops the batch within moments: the workers are stopped, the results that arrived
    are kept (a run that was itself interrupted keeps its best, ``stop_reason ==
    "interrupted"``), and every other instance gets a TaskFailure with status "interrupted".
    Use iterations or no_improvement for reproducible results: a time limit stops where the
    machine's speed lets it.
    """
    instances = list(instances)
    for i, p in enumerate(instances):
        if not isinstance(p, Problem):
            raise TypeError(f"instances[{i}] is a {type(p).__name__}, not a glns TSP, CVRP, OVRP or VRPTW instance")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    workers = check_workers(workers)
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    retries = check_count(retries, "retries", minimum=0)
    if task_timeout is not None and not task_timeout > 0:
        raise ValueError(f"task_timeout must be > 0 seconds, got {task_timeout!r}")
    seed = check_seed(seed)
    if not (progress is True or progress is False or callable(progress)):
        raise TypeError(f"progress must be True, False or a callable, got {type(progress).__name__}")
    stop_settings(iterations, time_limit, no_improvement)   # a bad budget fails before any task
    split_stop(stop)                                         # and so does a bad criterion
    built_in, criteria = built_in_only(stop)
    events = RunEvents(instances, callbacks_per_run(callbacks, len(instances)), criteria)
    listens = any(events.wants(i) is not None for i in range(len(instances)))
    if listens and (backend == "ray" if executor is None
                    else not isinstance(executor, (WorkerPool, SerialExecutor))):
        raise ValueError("callbacks and stop criteria of your own follow runs on the 'process' "
                         "and 'serial' backends only; on Ray use the built-in criteria")
    trace_limit_of(statistics)
    params = params if params is not None else SolveParams()
    if not isinstance(params, SolveParams):
        raise TypeError(f"params must be SolveParams, got {type(params).__name__}")
    if executor is not None and (backend != "process" or workers is not None or address is not None):
        raise ValueError("pass either an executor or backend/workers/address, not both")
    wires = operator_wires(destroy, repair, {p.kind for p in instances})
    confinement = None
    if sandbox not in (False, None, "off"):
        if executor is not None or backend != "process":
            raise ValueError("sandbox=True runs on the 'process' backend with workers of its own; "
                             "pass neither an executor nor another backend")
        confinement = sandbox_confinement(sandbox, read_paths=_import_dirs(wires))
    seeds = [run_seed(seed, i) for i in range(len(instances))]
    tasks = solve_tasks(instances, seeds, wires, iterations, params, time_limit, no_improvement,
                        built_in or None, statistics, events.wants if listens else None)
    report = _ProgressLine(len(tasks)) if progress is True else (progress or None)
    # the arguments are all checked: only now start workers (or a Ray runtime) if needed
    with contextlib.nullcontext(executor) if executor is not None \
            else make_executor(backend, workers, address=address, sandbox=confinement) as ex:
        out = run_solve_tasks(ex, tasks, seeds, [task_timeout or NO_DEADLINE] * len(tasks), retries, report,
                              events if listens else None)
    failures = [res for res in out if isinstance(res, TaskFailure)]
    if failures and errors == "raise":
        raise BatchError(failures, out)
    return out


def _import_dirs(wires: dict[str, tuple[list | None, list | None]]) -> list[str]:
    """The directories of the packages that operators given as import paths come from: a
    confined worker may read only what it is granted."""
    dirs = []
    for d_wire, r_wire in wires.values():
        for wire in (*(d_wire or ()), *(r_wire or ())):
            if wire[0] != "import":
                continue
            top = wire[1].split(":")[0].split(".")[0]
            spec = importlib.util.find_spec(top)
            if spec is not None:
                dirs.extend(spec.submodule_search_locations or ([spec.origin] if spec.origin else []))
    return dirs


def run_solve_tasks(ex: Executor, tasks: list[tuple], seeds: list[int], deadlines: list[float],
                    retries: int = 1, report: Callable[[int, int, int], None] | None = None,
                    events: RunEvents | None = None) -> list[Result | TaskFailure]:
    """Run :func:`glns.sandbox.evaluation.solve_task` on each of `tasks` on `ex`; results in
    order, a :class:`TaskFailure` in place of each failed run.

    deadlines: seconds after which each task's worker is killed. A task whose worker died
    (segfault, OOM kill) runs up to `retries` more times; other failures are deterministic.
    report(done, total, failed) is called after every finished task. events: the callbacks
    and stop criteria that the runs' events go to (the executor must take on_event).

    Ctrl-C (KeyboardInterrupt here, or a run that a worker's own SIGINT interrupted) stops the
    batch: the workers' tasks are abandoned, the results that arrived are kept, and every other
    task is a TaskFailure with status "interrupted".
    """
    final: list[TaskResult | None] = [None] * len(tasks)
    attempts = [0] * len(tasks)
    counts = {"done": 0, "failed": 0}
    pending = list(range(len(tasks)))
    for attempt in range(int(retries) + 1):
        if not pending:
            break
        last = attempt == retries

        def on_result(j: int, res: TaskResult, pending: list[int] = pending, last: bool = last) -> None:
            i = pending[j]
            attempts[i] += 1
            final[i] = res
            if res.ok and events is not None:
                events.finished(i, res.value)
            if res.ok or last or res.status not in RETRYABLE:
                counts["done"] += 1
                counts["failed"] += not res.ok
                if report is not None:
                    report(counts["done"], len(tasks), counts["failed"])
            if res.ok and getattr(res.value, "stop_reason", "") == "interrupted":
                raise KeyboardInterrupt     # the run was stopped by Ctrl-C: so is the batch

        try:
            inner = None if events is None else \
                (lambda j, event, pending=pending: events(pending[j], event))
            # (an executor that takes no events, e.g. Ray's, keeps its actors' decisions to
            # them; its tasks still carry the ones known here)
            listen = {"on_event": decisions.listener(decision_ids(tasks), inner)} \
                if accepts_events(ex) else {}
            answers = ex.map(solve_task, [tasks[i] for i in pending], timeout=[deadlines[i] for i in pending],
                             on_result=on_result, **listen)
        except KeyboardInterrupt:
            logger.warning("solve_many: interrupted; %d of %d task(s) finished",
                           sum(r is not None and r.ok for r in final), len(tasks))
            for i in range(len(tasks)):
                if final[i] is None or final[i].status in RETRYABLE:   # type: ignore[union-attr]
                    final[i] = TaskResult("interrupted", message="the batch was interrupted (Ctrl-C) "
                                                                 "before this task finished")
            break
        for i, res in zip(pending, answers):
            final[i] = res
        pending = [i for i in pending if final[i].status in RETRYABLE]   # type: ignore[union-attr]
        if pending and not last:
            logger.warning("solve_many: %d task(s) lost their worker (first: instance %d, %s); "
                           "running them again", len(pending), pending[0],
                           final[pending[0]].message)  # type: ignore[union-attr]
    out: list[Any] = []
    for i, res in enumerate(final):
        assert res is not None
        if res.ok:
            res.value.extra.update(task_seconds=res.seconds, attempts=attempts[i])
            out.append(res.value)
        else:
            out.append(TaskFailure(i, seeds[i], res.status, failure_message(res, deadlines[i]), attempts[i]))
    return out
