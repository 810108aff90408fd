"""load_module: import a compiled operator module, once per process."""

from __future__ import annotations

import importlib.util
import threading
import types
from typing import Any

from glns.compiler.driver import CompileOutcome
from glns.exceptions import OperatorError

__all__ = ["load_module"]

# key -> module: one module per compiled file and process (Cython keeps a single module state
# per .so; 3.3 hands the first module back for a second load, older versions refuse it)
_LOADED: dict[str, types.ModuleType] = {}
_LOCK = threading.Lock()


def load_module(outcome: CompileOutcome, globals: dict[str, Any] | None = None) -> types.ModuleType:
    """The module compiled in `outcome`, imported and run.

    `globals` are set as module attributes before the module body runs, so that source using
    ``np``, ``random``, ... without importing them works as under
    ``glns.operators.bridge.compile_source`` (pass ``bridge.OPERATOR_GLOBALS``). A module is
    loaded once per process: later calls with the same key return the same module (and ignore
    `globals`); Cython's module initialisation enters it in ``sys.modules`` under its
    ``glns_op_<key>`` name. Raises OperatorError if the
    outcome has no module, the file cannot be loaded, or the module body raises.
    """
    if not outcome.ok or not outcome.path or not outcome.module_name:
        raise OperatorError(f"operator is not compiled ({outcome.status}): {outcome.reason}")
    with _LOCK:
        module = _LOADED.get(outcome.key)
        if module is not None:
            return module
        spec = importlib.util.spec_from_file_location(outcome.module_name, outcome.path)
        if spec is None or spec.loader is None:
            raise OperatorError(f"cannot load compiled operator {outcome.path}")
        try:
            module = importlib.util.module_from_spec(spec)
        except ImportError as exc:  # not an extension of this interpreter, truncated, ...
            raise OperatorError(f"cannot load compiled operator {outcome.path}: {exc}") from None
        for name, value in (globals or {}).items():
            setattr(module, name, value)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # the module body failed (Cython lets a later load retry)
            raise OperatorError(f"source raised {type(exc).__name__} when loaded: {exc}") from None
        _LOADED[outcome.key] = module
        return module
