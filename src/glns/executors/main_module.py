"""Worker processes never import the caller's ``__main__``.

By default a "spawn" or "forkserver" child of :mod:`multiprocessing` first runs the parent's
main script again (as ``__mp_main__``) so that functions defined there can be unpickled. That
is what breaks worker processes started from anything but a script guarded by
``if __name__ == "__main__":``: an unguarded script starts its own batch again inside every
worker, which multiprocessing refuses while the worker bootstraps (the worker exits with code
1); a script read from standard input has no file to run again (``FileNotFoundError:
'<stdin>'``).

So the workers started here skip that step (:func:`main_module_skipped`), and every task is
pickled in the parent by :func:`dump_task`, which refuses at once, with a message that says
what to do, a task that refers to something defined in ``__main__`` (a worker could not load
it). Tasks are module-level functions of importable modules and plain data; an operator
travels as its source code or an import path (see ``docs/scaling.md``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import threading
import types
from multiprocessing import spawn
from multiprocessing.reduction import ForkingPickler
from pickle import PicklingError
from typing import Any, Callable, Iterator

from glns.exceptions import GlnsError

__all__ = ["MainModuleError", "dump_task", "main_module_origin", "main_module_skipped"]

#: the keys of multiprocessing's preparation data that make a child import the parent's __main__
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")
_skipping = threading.local()
_install_lock = threading.Lock()


class MainModuleError(GlnsError, PicklingError):
    """A task refers to a function or class defined in the caller's ``__main__``, which worker
    processes never import."""


def main_module_origin() -> str:
    """Where the running ``__main__`` comes from, in words ("a script read from standard
    input", "the script /path/x.py", "a `python -c` command", ...): for error messages."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and getattr(spec, "name", None):
        return f"the module {spec.name} (run with python -m)"
    path = getattr(main, "__file__", None)
    if path == "<stdin>":
        return "a script read from standard input"
    if path:
        return f"the script {path}"
    if sys.argv and sys.argv[0] == "-c":
        return "a `python -c` command"
    return "an interactive session or notebook"


def _install() -> None:
    """Wrap multiprocessing's preparation data once, per process.

    The wrapper drops the main-module keys only for processes started in this thread inside
    :func:`main_module_skipped`, so other users of multiprocessing in the same program are not
    affected. (This is the one place multiprocessing lets a parent decide what a child prepares:
    both the "forkserver" and the "spawn" start method call it for every process they start.)
    """
    with _install_lock:
        original = spawn.get_preparation_data
        if getattr(original, "_skips_main_on_request", False):
            return

        @functools.wraps(original)
        def get_preparation_data(name: str) -> dict:
            data = original(name)
            if getattr(_skipping, "depth", 0):
                for key in _MAIN_KEYS:
                    data.pop(key, None)
            return data

        get_preparation_data._skips_main_on_request = True   # type: ignore[attr-defined]
        spawn.get_preparation_data = get_preparation_data


@contextlib.contextmanager
def main_module_skipped() -> Iterator[None]:
    """Processes started in this block, in this thread, do not import the caller's ``__main__``."""
    _install()
    _skipping.depth = getattr(_skipping, "depth", 0) + 1
    try:
        yield
    finally:
        _skipping.depth -= 1


class _TaskPickler(ForkingPickler):
    """multiprocessing's pickler, refusing functions and classes of ``__main__``."""

    def reducer_override(self, obj: Any) -> Any:
        # functions and classes are pickled by reference (module and name); instances, bound
        # methods and partials of them lead here through their class or function
        if isinstance(obj, (type, types.FunctionType)) and getattr(obj, "__module__", None) == "__main__":
            what = "class" if isinstance(obj, type) else "function"
            name = getattr(obj, "__qualname__", repr(obj))
            raise MainModuleError(
                f"{what} {name!r} is defined in __main__ of {main_module_origin()}; worker "
                "processes do not import the calling script, so they cannot load it -- put it "
                "in a module and import it from there (an operator may also be passed as its "
                "source code)")
        return NotImplemented


def dump_task(fn: Callable, args: tuple) -> memoryview:
    """The bytes a worker receives for fn(*args) (what ``Connection.recv`` unpickles).

    Raises :class:`MainModuleError` when the task refers to something defined in ``__main__``;
    any other pickling error propagates as it is.
    """
    buf = io.BytesIO()
    _TaskPickler(buf).dump((fn, args))
    return buf.getbuffer()
