"""Running untrusted (LLM-generated) operators safely: a process sandbox (docs/method.md).

- :class:`WorkerPool`: reusable, memory-limited worker processes; every task has a hard
  wall-clock limit enforced by killing its worker.
- :func:`check_operator`: the pre-evaluation filter; an :class:`Admission` says whether a
  generated operator may enter the population and, if not, precisely why.
- :func:`evaluate`: ``glns.solve`` runs of operator sets on many instances inside the workers.
"""

from glns.sandbox.admission import (
    Admission as Admission,
    CheckConfig as CheckConfig,
    CheckRequest as CheckRequest,
    check_operator as check_operator,
    check_operators as check_operators,
)
from glns.sandbox.evaluation import (
    DEFAULT_OP_TIMEOUT as DEFAULT_OP_TIMEOUT,
    EvaluationInterrupted as EvaluationInterrupted,
    PythonSource as PythonSource,
    RunOutcome as RunOutcome,
    evaluate as evaluate,
)
from glns.executors import (
    DEFAULT_MEMORY_MB as DEFAULT_MEMORY_MB,
    TaskResult as TaskResult,
    WorkerPool as WorkerPool,
)

__all__ = ["WorkerPool", "TaskResult", "DEFAULT_MEMORY_MB", "Admission", "CheckConfig",
           "check_operator", "check_operators", "CheckRequest", "RunOutcome", "PythonSource", "evaluate", "DEFAULT_OP_TIMEOUT",
           "EvaluationInterrupted"]
