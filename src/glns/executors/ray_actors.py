"""The "ray" backend: long-lived Ray actors, one task each at a time (optional extra ``distributed``).

Each actor is one worker process that lives as long as the executor, so what a task function
caches in module globals (instances, compiled operators: ``glns.sandbox.evaluation``) stays
cached across tasks and calls. Tasks go to whichever actor is free (dynamic load balancing).

Failures: an actor that dies during a task (a segfault, the out-of-memory killer, a lost node)
fails only that task, with status "died"; the actor is replaced. A task past its timeout gets
status "timeout" and its actor is killed and replaced. Exceptions inside the task come back as
"error" (or "memory" for MemoryError) and the actor is kept.

glns must be installed on every node of the cluster (same version).
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

from glns.executors.base import TaskResult, call_task, check_timeouts, check_workers

__all__ = ["RayExecutor", "import_ray"]


def import_ray() -> Any:
    """The ray module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError("the 'ray' backend needs Ray: pip install 'glns[distributed]'") from exc
    return ray


class _Worker:
    """The body of an actor (made a Ray actor class by RayExecutor)."""

    def run(self, fn: Callable, args: tuple) -> tuple[str, Any, str | None, float]:
        return call_task(fn, args, "ran out of memory")

    def pid(self) -> int:
        return os.getpid()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class RayExecutor:
    """Ray actors running tasks; see the module doc. Use in a ``with`` block or call close().

    workers: number of actors, at most the cluster's CPUs (default: all of them). address:
    connect with ``ray.init(address=...)``; without it an already initialised runtime is used,
    else a local one is started. A runtime started or connected here is shut down (the
    connection closed) by :meth:`close`; one initialised by the caller is left alone.
    """

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        workers = check_workers(workers)
        ray = import_ray()
        self._ray = ray
        self._owns_runtime = False
        self._actors: list[Any] = []
        self._closed = False
        if not ray.is_initialized():
            if address is not None:
                ray.init(address=address)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            self._owns_runtime = True   # close() shuts the local runtime down / disconnects
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if workers is None:
            workers = max(1, cpus)
        if workers > cpus:
            # an actor needs one CPU: the ones beyond the cluster's would wait for ever
            self.close()
            raise ValueError(f"workers={workers} but the Ray cluster has {cpus} CPUs")
        self.workers = int(workers)
        # num_cpus=1: one actor per core; max_restarts=0: a dead actor is replaced by us, so its
        # task is reported (and retried by the caller) instead of silently re-run
        self._actor_cls = ray.remote(num_cpus=1, max_restarts=0)(_Worker)
        #: actors replaced after a death or a timeout, over the executor's life
        self.restarts = 0

    def __enter__(self) -> "RayExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Kill the actors; shut the Ray runtime down if this executor started it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for actor in self._actors:
            try:
                self._ray.kill(actor)
            except Exception:
                pass
        self._actors.clear()
        if self._owns_runtime and self._ray.is_initialized():
            self._ray.shutdown()

    def pids(self) -> list[int]:
        """Process ids of the actors (for tests)."""
        self._ensure_actors()
        return list(self._ray.get([a.pid.remote() for a in self._actors]))

    def _ensure_actors(self) -> None:
        if self._closed:
            raise RuntimeError("the Ray executor is closed")
        while len(self._actors) < self.workers:
            self._actors.append(self._actor_cls.remote())

    def _replace(self, a: int) -> None:
        try:
            self._ray.kill(self._actors[a])
        except Exception:
            pass
        self._actors[a] = self._actor_cls.remote()
        self.restarts += 1

    def map(self, fn: Callable, arg_tuples: Sequence[tuple], timeout: float | Sequence[float],
            on_result: Callable[[int, TaskResult], None] | None = None) -> list[TaskResult]:
        """Run fn(*args) for each args on the actors; results in input order (see the module doc)."""
        ray = self._ray
        tasks = [tuple(a) for a in arg_tuples]
        limits = check_timeouts(len(tasks), timeout)
        results: list[TaskResult | None] = [None] * len(tasks)
        if not tasks:
            return []
        self._ensure_actors()
        fn_ref = ray.put(fn)
        queue = list(range(len(tasks)))[::-1]   # pop() from the end takes tasks in input order
        idle = list(range(len(self._actors)))[::-1]
        running: dict[Any, tuple[int, int, float, float]] = {}   # ref -> actor, task, start, deadline

        def finish(i: int, res: TaskResult) -> None:
            results[i] = res
            if on_result is not None:
                on_result(i, res)

        try:
            while queue or running:
                while queue and idle:
                    a, i = idle.pop(), queue.pop()
                    now = time.monotonic()
                    ref = self._actors[a].run.remote(fn_ref, tasks[i])
                    running[ref] = (a, i, now, now + limits[i])
                wait_for = max(0.0, min(d for *_, d in running.values()) - time.monotonic())
                ready, _ = ray.wait(list(running), num_returns=1, timeout=wait_for)
                for ref in ready:
                    a, i, started, _ = running.pop(ref)
                    idle.append(a)
                    try:
                        status, value, message, seconds = ray.get(ref)
                        finish(i, TaskResult(status, value, message, seconds))
                    except ray.exceptions.RayActorError as exc:
                        self._replace(a)
                        finish(i, TaskResult("died", message=f"the Ray worker process died: {_first_line(exc)}",
                                             seconds=time.monotonic() - started))
                    except Exception as exc:   # e.g. an argument or answer that cannot be pickled
                        finish(i, TaskResult("error", message=f"{type(exc).__name__}: {_first_line(exc)}",
                                             seconds=time.monotonic() - started))
                now = time.monotonic()
                for ref, (a, i, started, deadline) in list(running.items()):
                    if now >= deadline:
                        del running[ref]
                        self._replace(a)
                        idle.append(a)
                        finish(i, TaskResult("timeout", message=f"no answer within {limits[i]:g} s; "
                                             "the Ray actor was killed", seconds=now - started))
        except BaseException:
            # interrupted: do not leave actors busy with stale tasks
            for a, *_ in running.values():
                self._replace(a)
            raise
        return results  # type: ignore[return-value]
