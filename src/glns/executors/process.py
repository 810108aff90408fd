"""The "process" backend: reusable, memory-limited worker processes with a hard deadline per task.

Untrusted operator code runs here. Each worker sets ``RLIMIT_AS`` (soft and hard, so the code
cannot raise it again) when it starts, ignores SIGINT (the parent handles Ctrl-C) and runs one
task at a time in its main thread, so the bridge's signal-based per-call limit works inside it.
The parent gives every task a deadline: past it the worker is killed with SIGKILL and replaced,
which stops even code that swallows every exception in an endless loop. A worker that dies
(segfault, the OS's out-of-memory killer, ``os._exit``) is replaced as well; its task is
reported with the exit code or signal.

Workers come from the "forkserver" context (never "fork": the parent may run threads, e.g. an
HTTP client). The fork server is started with single-threaded BLAS settings and preloads glns,
so a worker starts in milliseconds and its address space stays small under the memory limit.
Workers never import the caller's ``__main__`` (:mod:`glns.executors.main_module`), so a pool
works the same from a guarded or unguarded script, standard input, ``python -c`` or a notebook.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
import weakref
from typing import Any, Callable, Iterator, Sequence

from glns.executors.answers import load_answer
from glns.executors.base import TaskResult, check_timeouts, check_workers, usable_cores
from glns.executors.channel import STOP, EventHandler, is_event
from glns.executors.confinement import Confinement, as_confinement, check_support, secret_names
from glns.executors.main_module import MainModuleError, dump_task, main_module_skipped
from glns.executors.worker import worker_main

__all__ = ["WorkerPool", "DEFAULT_MEMORY_MB", "PRELOAD"]

logger = logging.getLogger(__name__)

#: default address-space limit of a worker (MB); a worker with glns loaded uses about 100 MB
DEFAULT_MEMORY_MB = 1024

#: modules the fork server imports once, so that every worker it forks starts with them: the
#: worker loop, numpy, the compiled core and the task functions of the sandbox
PRELOAD = ["glns.executors.worker", "glns", "glns._core._alns", "glns._core._native_ops",
           "glns.datasets", "glns.sandbox"]

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker process stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (possibly the system's out-of-memory killer)" if -exitcode == signal.SIGKILL else ""
        return f"the worker process was killed by {name}{hint}"
    return f"the worker process exited with code {exitcode}"


@contextlib.contextmanager
def _worker_env(scrub: Sequence[str] = ()) -> Iterator[None]:
    """Temporarily set the BLAS/OpenMP thread variables to 1 and remove credentials (API keys,
    tokens: :func:`glns.executors.confinement.secret_names`) from the environment, which the
    fork server (started on first use, shared by every pool) and its workers inherit; `scrub`
    names more variables to remove."""
    saved = {k: os.environ.get(k) for k in (*_THREAD_VARS, *secret_names(os.environ, scrub))}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    for k in saved:
        if k not in _THREAD_VARS:
            del os.environ[k]
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _get_context(name: str) -> multiprocessing.context.BaseContext:
    if name == "fork":
        raise ValueError("the 'fork' start method is not safe for a sandbox; use 'forkserver' or 'spawn'")
    if name not in multiprocessing.get_all_start_methods():
        raise ValueError(f"start method {name!r} is not available here; "
                         f"choose from {multiprocessing.get_all_start_methods()}")
    ctx = multiprocessing.get_context(name)
    if name == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)
    return ctx


class _Slot:
    """One worker process and its pipe; `task` is the index of the task it runs, if any."""

    __slots__ = ("process", "conn", "task", "started", "deadline", "stopping")

    def __init__(self, process: Any, conn: Any) -> None:
        self.process = process
        self.conn = conn
        self.task: int | None = None
        self.started = 0.0
        self.deadline = 0.0
        self.stopping = False      # its task was asked to stop

    def kill(self) -> None:
        # the worker leads its own process group: this also ends processes the code started
        with contextlib.suppress(Exception):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.join(5.0)
        with contextlib.suppress(Exception):
            self.conn.close()


class _Event:
    """An event a running task sent (glns.executors.channel), not its answer."""

    __slots__ = ("event",)

    def __init__(self, event: Any) -> None:
        self.event = event


def _shutdown(slots: list[_Slot]) -> None:
    """Ask every worker to leave, wait up to 2 s, then kill what is left (process groups too)."""
    deadline = time.monotonic() + 2.0
    for slot in slots:
        with contextlib.suppress(Exception):
            slot.conn.send(None)
    for slot in slots:
        with contextlib.suppress(Exception):
            slot.process.join(max(0.0, deadline - time.monotonic()))
        slot.kill()
    slots.clear()


class WorkerPool:
    """Reusable worker processes, each with an address-space limit, running tasks with deadlines.

    >>> with WorkerPool(workers=2, memory_mb=512) as pool:           # doctest: +SKIP
    ...     pool.run(math.factorial, 10, timeout=1.0).value
    3628800

    A task is a picklable module-level function of an importable module (not ``__main__``:
    workers never import the calling script) and its arguments; it runs in a worker and its
    return value comes back in a :class:`TaskResult`. Workers start on first use and are reused
    (tasks may cache data in module globals of the worker). Close the pool with :meth:`close`,
    a ``with`` block, or let interpreter exit do it.

    workers: number of processes (default: :func:`usable_cores`). memory_mb: RLIMIT_AS per worker in MB
    (None: no limit). context: "forkserver" (default) or "spawn". quiet: send the workers'
    stdout and stderr to /dev/null (operators that print would otherwise flood the console).
    sandbox: confine every worker at the OS level before its first task (True or "auto": the
    layers this machine offers, "strict": refuse to start without seccomp and Landlock, or a
    :class:`glns.executors.confinement.Confinement`; default None: not confined). Workers
    never see credential variables of the environment, confined or not.
    """

    def __init__(self, workers: int | None = None, memory_mb: int | None = DEFAULT_MEMORY_MB,
                 context: str = "forkserver", quiet: bool = True,
                 sandbox: Confinement | bool | str | None = None) -> None:
        workers = check_workers(workers)
        workers = usable_cores() if workers is None else workers
        if memory_mb is not None and not memory_mb >= 64:
            raise ValueError(f"memory_mb must be >= 64 or None, got {memory_mb}")
        self.workers = workers
        self.memory_mb = memory_mb
        self.quiet = quiet
        #: how workers are confined (None: not at all)
        self.confinement = as_confinement(sandbox)
        if self.confinement is not None:
            check_support(self.confinement)
        self._ctx = _get_context(context)
        self._slots: list[_Slot] = []
        self._closed = False
        #: workers replaced after a kill or a crash, over the pool's life
        self.restarts = 0
        self._lock = threading.Lock()   # callers in several threads take turns
        self._finalizer = weakref.finalize(self, _shutdown, self._slots)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (politely, then SIGKILL) and reap it. Idempotent."""
        self._closed = True
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._closed

    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and monitoring)."""
        return [s.process.pid for s in self._slots if s.process.is_alive()]

    def _start_process(self) -> tuple[Any, Any]:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=worker_main, args=(child, self.memory_mb, self.quiet, self.confinement),
                                    name="glns-sandbox-worker", daemon=True)
        with _worker_env(self.confinement.scrub if self.confinement else ()), main_module_skipped():
            process.start()
        child.close()
        return process, parent

    def _ensure_workers(self) -> None:
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        while len(self._slots) < self.workers:
            self._slots.append(_Slot(*self._start_process()))

    def _restart(self, slot: _Slot) -> None:
        """Kill the slot's worker (if still alive), reap it and start a fresh one in its place."""
        slot.kill()
        slot.process, slot.conn = self._start_process()
        slot.task = None
        self.restarts += 1

    # ------------------------------------------------------------------ running tasks

    def run(self, fn: Callable, *args: Any, timeout: float) -> TaskResult:
        """Run fn(*args) in a worker; kill the worker if it takes longer than `timeout` s."""
        return self.map(fn, [args], timeout=timeout)[0]

    def map(self, fn: Callable, arg_tuples: Sequence[tuple], timeout: float | Sequence[float],
            on_result: Callable[[int, TaskResult], None] | None = None,
            on_event: EventHandler | None = None) -> list[TaskResult]:
        """Run fn(*args) for each args in arg_tuples on all workers; results in input order.

        timeout: seconds per task (one value for all, or one per task), counted from the
        moment the task is handed to a worker. One killed or crashed task never affects the
        others. Calls from several threads are served one after the other. on_result(i,
        result) is called in this thread as soon as task i has its result (e.g. progress).
        on_event(i, event) is called in this thread for every event task i sends while it runs
        (:mod:`glns.executors.channel`); when it returns True, task i is asked to stop.

        Raises :class:`glns.executors.MainModuleError` at once, before any task runs, when fn
        (or, when its task is handed out, an argument) is defined in ``__main__``: workers
        never import the calling script.
        """
        tasks = [tuple(a) for a in arg_tuples]
        limits = check_timeouts(len(tasks), timeout)
        if not tasks:
            return []
        try:
            dump_task(fn, ())
        except MainModuleError:
            raise
        except Exception:   # reported per task, as for any task that cannot be sent
            pass
        with self._lock:
            return self._map(fn, tasks, limits, on_result, on_event)

    def _map(self, fn: Callable, tasks: list[tuple], limits: list[float],
             on_result: Callable[[int, TaskResult], None] | None = None,
             on_event: EventHandler | None = None) -> list[TaskResult]:
        results: list[TaskResult | None] = [None] * len(tasks)
        self._ensure_workers()
        queue = list(range(len(tasks)))[::-1]   # pop() from the end takes tasks in input order
        busy: list[_Slot] = []
        try:
            while queue or busy:
                for slot in self._slots:
                    if queue and slot.task is None:
                        i = queue.pop()
                        if self._hand_out(slot, i, fn, tasks[i], limits[i], results):
                            busy.append(slot)
                        elif on_result is not None:
                            on_result(i, results[i])
                if not busy:
                    continue
                wait_for = max(0.0, min(s.deadline for s in busy) - time.monotonic())
                ready = set(multiprocessing.connection.wait(
                    [s.conn for s in busy] + [s.process.sentinel for s in busy], wait_for))
                for slot in list(busy):
                    i = slot.task
                    if slot.conn in ready or slot.process.sentinel in ready:
                        answer = self._collect(slot)
                        if not isinstance(answer, TaskResult):     # an event: the task runs on
                            if on_event is not None and on_event(i, answer.event) and not slot.stopping:
                                slot.stopping = True
                                self._ask_to_stop(slot)
                            continue
                        results[i] = answer
                    elif time.monotonic() >= slot.deadline:
                        results[i] = TaskResult(
                            "timeout", message=f"no answer within {limits[i]:g} s; the worker was killed",
                            seconds=time.monotonic() - slot.started)
                        logger.warning("task %d: no answer within %g s; its worker (pid %s) is "
                                       "killed and replaced", i, limits[i], slot.process.pid)
                        self._restart(slot)
                    else:
                        continue
                    slot.task = None
                    busy.remove(slot)
                    if on_result is not None:
                        on_result(i, results[i])
        except BaseException:
            # interrupted (Ctrl-C) or failed: do not leave workers busy with stale tasks
            for slot in busy:
                self._restart(slot)
            raise
        return results  # type: ignore[return-value]

    def _hand_out(self, slot: _Slot, i: int, fn: Callable, args: tuple, limit: float,
                  results: list) -> bool:
        try:
            payload = dump_task(fn, args)
        except MainModuleError:
            raise
        except Exception as exc:  # the task itself cannot be pickled
            results[i] = TaskResult("error", message=f"cannot send the task: {type(exc).__name__}: {exc}")
            return False
        for _ in range(2):
            try:
                slot.conn.send_bytes(payload)
            except (BrokenPipeError, ConnectionError, EOFError, OSError):
                logger.warning("worker (pid %s) died while idle; replaced", slot.process.pid)
                self._restart(slot)   # the worker died while idle
                continue
            slot.task = i
            slot.stopping = False
            slot.started = time.monotonic()
            slot.deadline = slot.started + limit
            return True
        results[i] = TaskResult("died", message="could not start a worker process")
        return False

    @staticmethod
    def _ask_to_stop(slot: _Slot) -> None:
        try:
            slot.conn.send(STOP)
        except (BrokenPipeError, ConnectionError, OSError):
            pass    # the worker is gone: its task is reported as died

    def _collect(self, slot: _Slot) -> TaskResult | _Event:
        """The answer of a slot whose pipe or process became ready, or an event its task sent."""
        elapsed = time.monotonic() - slot.started
        try:
            if slot.conn.poll():
                # a confined worker runs untrusted code: its answer may build data only
                answer = load_answer(slot.conn.recv_bytes()) if self.confinement is not None \
                    else slot.conn.recv()
                if is_event(answer):
                    return _Event(answer[1])
                status, value, message, seconds, retire = answer
                if retire:      # the worker is leaving (e.g. the task left threads behind)
                    self._restart(slot)
                return TaskResult(status, value, message, seconds)
        except (EOFError, OSError, ConnectionError):
            pass
        except Exception as exc:   # an answer that cannot be unpickled
            logger.warning("unreadable answer from worker (pid %s): %s: %s; worker replaced",
                           slot.process.pid, type(exc).__name__, exc)
            self._restart(slot)
            return TaskResult("error", message=f"unreadable answer: {type(exc).__name__}: {exc}",
                              seconds=elapsed)
        # no answer: the process ended during the task
        slot.process.join(1.0)
        reason = _describe_exit(slot.process.exitcode)
        logger.warning("worker (pid %s) ended during a task: %s; replaced", slot.process.pid, reason)
        self._restart(slot)
        return TaskResult("died", message=reason, seconds=elapsed)
