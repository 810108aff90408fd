"""Batch solving: :func:`solve_many` and the executors it runs on (serial, process, Ray).

>>> results = glns.solve_many(instances, "random_removal", "greedy_insertion",   # doctest: +SKIP
...                           iterations=500, seed=1, backend="process")

See :mod:`glns.executors` for the backends and :mod:`glns.batch.solve_many` for the decisions
(seeds, failures, retries). The executor names are re-exported here for convenience.
"""

from glns.batch.solve_many import (
    BatchError as BatchError,
    TaskFailure as TaskFailure,
    solve_many as solve_many,
)
from glns.executors import (
    BACKENDS as BACKENDS,
    Executor as Executor,
    SerialExecutor as SerialExecutor,
    make_executor as make_executor,
)

__all__ = ["solve_many", "BatchError", "TaskFailure", "Executor", "SerialExecutor",
           "make_executor", "BACKENDS"]
