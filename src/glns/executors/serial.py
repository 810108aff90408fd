"""The "serial" backend: every task in the calling process, one after the other (debugging)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from glns.executors.base import TaskResult, call_task, check_timeouts
from glns.executors.channel import DirectChannel, EventHandler, using

__all__ = ["SerialExecutor"]


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
            on_result: Callable[[int, TaskResult], None] | None = None,
            on_event: EventHandler | None = None) -> list[TaskResult]:
        """fn(*args) for every args, in order; on_result(i, result) after each task and
        on_event(i, event) for each event a task sends (True asks it to stop)."""
        tasks = [tuple(a) for a in arg_tuples]
        check_timeouts(len(tasks), timeout)
        results = []
        for i, args in enumerate(tasks):
            # catches Exception only: KeyboardInterrupt and SystemExit stop the batch
            with using(DirectChannel(i, on_event) if on_event is not None else None):
                res = TaskResult(*call_task(fn, args, "ran out of memory"))
            results.append(res)
            if on_result is not None:
                on_result(i, res)
        return results
