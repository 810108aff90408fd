"""Running a round of independent jobs (LLM conversations) with a bounded number in flight.

Daemon threads, not a ``concurrent.futures`` executor: a job may sit in an HTTP call for
minutes, and an interrupted run (Ctrl-C, an aborted round) must be able to leave without
waiting for it. Results come back in the order the jobs were given, whatever order they
finish in, so what the caller does with them does not depend on timing.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

__all__ = ["StopSignal", "run_jobs"]


class StopSignal:
    """Tells the jobs of a round to stop starting new work, and why.

    The first :meth:`set` wins: its exception is what :func:`run_jobs` raises once the jobs
    in flight have returned.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.error: BaseException | None = None

    def set(self, error: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = error
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


def run_jobs(jobs: Sequence[Callable[[], Any]], concurrency: int,
             stop: StopSignal | None = None,
             on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
    """Run every job, at most `concurrency` at a time, and return their results in job order.

    stop: a signal the jobs may set (e.g. the LLM endpoint keeps failing); jobs not yet started
    are then skipped (their result is None) and the signal's error is raised after the jobs in
    flight have finished. An exception raised by a job stops the round the same way and is
    re-raised here. on_done(i, result) is called (in the job's thread) as each job finishes.
    concurrency 1 runs the jobs one after the other in this thread.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    stop = stop if stop is not None else StopSignal()
    results: list[Any] = [None] * len(jobs)

    def run_one(i: int) -> None:
        if stop.is_set():
            return
        try:
            results[i] = jobs[i]()
        except BaseException as exc:   # handed to the caller's thread below
            stop.set(exc)
            return
        if on_done is not None:
            on_done(i, results[i])

    if concurrency == 1 or len(jobs) <= 1:
        for i in range(len(jobs)):
            run_one(i)
    else:
        next_job = iter(range(len(jobs)))
        lock = threading.Lock()

        def worker() -> None:
            while True:
                with lock:
                    i = next(next_job, None)
                if i is None:
                    return
                run_one(i)

        threads = [threading.Thread(target=worker, name=f"glns-llm-{k}", daemon=True)
                   for k in range(min(concurrency, len(jobs)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if stop.error is not None:
        raise stop.error
    return results
