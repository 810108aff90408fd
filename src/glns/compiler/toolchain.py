"""What compiles an operator here: Cython's version, its settings, the C compiler command.

Everything in this module goes into the cache key, so a change of any of it rebuilds.
Cython is optional: it is imported lazily (and only ``import Cython``, which is light) to read
its version; the translation itself happens in the build child (:mod:`glns.compiler.build`).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import sysconfig
from dataclasses import asdict, dataclass

import numpy

from glns.compiler.build import CYTHON_MISSING

__all__ = ["SCHEME", "DIRECTIVES", "CYTHON_OPTIONS", "CFLAGS", "MEMORY_MB", "Toolchain",
           "toolchain", "cython_version", "unavailable_reason", "CYTHON_MISSING"]

#: version of this compiler's scheme (source rewrite, settings, cache layout); bump to rebuild
SCHEME = "glns-compiler-2"

#: Cython directives: Python semantics throughout. Not set, so Cython's safe defaults hold:
#: cdivision=False, boundscheck/wraparound=True, cpow=False, infer_types=None (safe only).
#: annotation_typing is off because with it ``x: int``/``x: float`` annotations become type
#: checks and C doubles, which changes what an LLM's annotated operator accepts.
DIRECTIVES: dict[str, object] = {"language_level": 3, "binding": True, "annotation_typing": False}

#: module-level Cython options: unknown globals (``np`` used without an import, supplied by the
#: loader) are a run-time NameError as in Python, not a compile error. Kept at Cython's
#: defaults: ``error_on_uninitialized`` (off, a local read before any assignment compiles to a
#: read of an uninitialised C variable when Cython infers a C type for it) and ``cache_builtins``
#: (off, Cython 3.3.1 segfaults on ``lst.pop()``/``lst.remove(x)``).
CYTHON_OPTIONS: dict[str, bool] = {"error_on_unknown_names": False}

#: C flags: optimised, but nothing that changes floating-point results (no -ffast-math/-Ofast);
#: -fwrapv as CPython itself is built; no debug info (the module is smaller), no warnings
CFLAGS: tuple[str, ...] = ("-O2", "-fPIC", "-fwrapv", "-fno-strict-aliasing", "-DNDEBUG", "-g0", "-w")

#: address-space limit of the build child and its C compiler
MEMORY_MB = 2048



@dataclass(frozen=True)
class Toolchain:
    """The C compiler command (compile step), the link command, flags and include dirs."""

    cc: tuple[str, ...]
    ldshared: tuple[str, ...]
    cflags: tuple[str, ...]
    include_dirs: tuple[str, ...]

    def as_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in asdict(self).items()}


def toolchain() -> Toolchain:
    """The compiler of this Python's build (``sysconfig``), with ``CC``/``LDSHARED`` from the
    environment taking precedence as distutils does. ``CFLAGS`` from the environment are
    ignored on purpose: only :data:`CFLAGS` are used."""
    config_cc = sysconfig.get_config_var("CC") or ""
    config_ld = sysconfig.get_config_var("LDSHARED") or ""
    cc = os.environ.get("CC") or config_cc
    ldshared = os.environ.get("LDSHARED")
    if not ldshared:
        ldshared = config_ld
        if os.environ.get("CC") and config_cc and ldshared.startswith(config_cc):
            ldshared = cc + ldshared[len(config_cc):]  # the linker is the compiler: swap it too
        elif not ldshared and cc:
            ldshared = f"{cc} -shared"
    paths = sysconfig.get_paths()
    # NumPy's headers: compiled operators read array elements through its C API (transform.py)
    includes = tuple(dict.fromkeys(p for p in (paths.get("include"), paths.get("platinclude"),
                                               numpy.get_include()) if p))
    return Toolchain(tuple(shlex.split(cc)), tuple(shlex.split(ldshared)), CFLAGS, includes)


@functools.lru_cache(maxsize=None)
def _cython_version() -> str | None:
    try:
        import Cython
    except Exception:  # ImportError, or a broken installation
        return None
    return str(getattr(Cython, "__version__", "unknown"))


def cython_version() -> str | None:
    """The installed Cython's version, None if it cannot be imported (cached per process)."""
    return _cython_version()


@functools.lru_cache(maxsize=None)
def _compiler_problem(cc: tuple[str, ...], ldshared: tuple[str, ...]) -> str | None:
    if not cc:
        return "no C compiler: this Python's build configuration names none (set CC)"
    for what, command in (("C compiler", cc), ("linker", ldshared)):
        if not command or shutil.which(command[0]) is None:
            shown = command[0] if command else "(none)"
            return f"no C compiler: {what} {shown!r} not found (set CC to a C compiler)"
    return None


def unavailable_reason() -> str | None:
    """Why operators cannot be compiled here (Cython missing, no C compiler), None if they can.

    Cheap: cached per process for a given compiler command (``CC``/``LDSHARED`` may change).
    """
    if cython_version() is None:
        return CYTHON_MISSING
    if not sys.executable:
        return "no Python executable to run the build in"
    tc = toolchain()
    return _compiler_problem(tc.cc, tc.ldshared)
