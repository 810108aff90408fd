"""Reading the answers of confined workers: pickles that may build data, and nothing else.

A worker that runs untrusted code sends its answers as pickles, and unpickling calls whatever
callables the pickle names. Confinement keeps the code from the file system and the network,
but code that reached the worker's pipe (through frame objects, say) could send a pickle that
runs a command in the parent, which is not confined. So the parent reads a confined worker's
answers with :func:`load_answer`, which builds only builtin containers and scalars, NumPy
arrays and scalars, and glns's result types; any other name in the pickle makes the answer
unreadable (the task is reported as an error and the worker replaced).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from glns.exceptions import GlnsError

__all__ = ["load_answer", "ALLOWED_GLOBALS", "UnsafeAnswerError"]

#: (module, name) pairs an answer may refer to
ALLOWED_GLOBALS = frozenset({
    *(("builtins", n) for n in ("dict", "list", "tuple", "set", "frozenset", "int", "float",
                                "complex", "str", "bytes", "bytearray", "bool", "slice", "range")),
    *((m, n) for m in ("numpy", "numpy.core.multiarray", "numpy._core.multiarray",
                       "numpy.core.numeric", "numpy._core.numeric")
      for n in ("dtype", "ndarray", "_reconstruct", "scalar", "_frombuffer")),
    *(("numpy", n) for n in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64", "float16", "float32", "float64", "complex64",
                             "complex128")),
    ("glns.result", "Result"), ("glns.result", "OperatorStats"),
    ("collections", "OrderedDict"),
})


class UnsafeAnswerError(GlnsError, pickle.UnpicklingError):
    """An answer named something other than data types."""


class _DataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise UnsafeAnswerError(f"the answer refers to {module}.{name}, which is not a data type")
        return super().find_class(module, name)


def load_answer(data: bytes) -> Any:
    """The object pickled in `data`, built from data types only (UnsafeAnswerError otherwise)."""
    return _DataUnpickler(io.BytesIO(data)).load()
