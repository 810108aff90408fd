"""Native repair operators; the test hook of regret insertion (compiled)."""

from typing import Any, Sequence

from glns._core._instance import CoreInstance

def regret_trace(inst: CoreInstance, partial: Any, removed: Sequence[int], k: float = 2.0,
                 neighbours: float = 0.0) -> tuple[list[dict[str, Any]], Any]: ...
