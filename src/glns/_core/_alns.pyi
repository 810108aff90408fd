"""The adaptive LNS loop (compiled)."""

from typing import Any

from glns._core._instance import CoreInstance
from glns._core._result import RunResult
from glns._core._settings import RunSettings

class OperatorTimeout(BaseException):
    """Raised inside a Python operator that ran past its time limit."""

REFERENCE_GRANULAR: tuple[int, int]
CROSSOVER_TRIES: int

def reference_cost(inst: CoreInstance, seed: int = 0) -> float: ...
def check_sync(on: bool) -> None: ...
def run_alns(inst: CoreInstance, destroy_ops: list[Any], repair_ops: list[Any],
             settings: RunSettings, seed: int, initial: Any = None) -> RunResult: ...
