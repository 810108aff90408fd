"""OS-level confinement of worker processes that run untrusted operator code.

A :class:`Confinement` travels to each worker of a :class:`glns.executors.WorkerPool`, which
applies it once, after its imports and before its first task (:func:`apply`). Four layers,
each used where the kernel offers it (:func:`support`):

- **resource limits**: ``RLIMIT_FSIZE`` 0 (no file can grow), ``RLIMIT_CORE`` 0, a small
  ``RLIMIT_NOFILE``;
- **environment**: credentials (names with KEY, TOKEN, SECRET, PASSWORD, ... and any the user
  names) are removed from the worker's environment (and the fork server starts without them);
- **Landlock**: files may be opened for reading only below the interpreter's and the
  installed packages' directories and the compile cache; no TCP, no signals out of the domain;
- **seccomp**: a system-call allowlist (:mod:`glns.executors.seccomp`): no ``execve``, no new
  processes, no sockets, no file creation or writes, no signals to other processes.

Modes: ``"strict"`` refuses to start a pool unless seccomp and Landlock are both available;
``"auto"`` (the default of the sandbox) applies what is available and logs a warning for what
is missing; ``"off"`` applies nothing. docs/sandbox.md says what each layer blocks.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import resource
import signal
import site
import sys
import sysconfig
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from glns.exceptions import GlnsError
from glns.executors import landlock, seccomp

__all__ = ["Confinement", "SandboxUnavailableError", "MODES", "support", "as_confinement",
           "apply", "applied", "secret_names", "check_mode", "SECRET_PATTERN"]

logger = logging.getLogger(__name__)

#: the confinement modes
MODES = ("strict", "auto", "off")

#: environment variable names treated as credentials (case-insensitive search)
SECRET_PATTERN = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)

#: extra variable names to scrub, comma-separated (in addition to SECRET_PATTERN)
SCRUB_VARIABLE = "GLNS_SANDBOX_SCRUB"

_SYSTEM_READ_PATHS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib",
                      "/etc/ld.so.cache", "/dev/null", "/dev/urandom")


class SandboxUnavailableError(GlnsError, RuntimeError):
    """Strict confinement was asked for on a machine without seccomp or Landlock."""


@dataclass(frozen=True)
class Confinement:
    """How a worker that runs untrusted code is confined.

    mode: "strict", "auto" or "off" (see the module docs). read_paths: more files or
    directories the code may read (the compile cache, for instance); the interpreter's and
    the loaded packages' directories are always readable. scrub: more environment variable
    names to remove. preload: modules to import before the confinement starts (operators may
    import them later without touching the file system). max_open_files: RLIMIT_NOFILE.
    """

    mode: str = "auto"
    read_paths: tuple[str, ...] = ()
    scrub: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    max_open_files: int = 64

    def __post_init__(self) -> None:
        check_mode(self.mode)

    @property
    def active(self) -> bool:
        return self.mode != "off"


def check_mode(mode: Any) -> str:
    """`mode` if it is one of MODES, else ValueError: the one check of every sandbox setting."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {MODES}, got {mode!r}")
    return mode


def as_confinement(value: Any) -> Confinement | None:
    """A :class:`Confinement` from True/False/None, a mode name or a Confinement (None: off)."""
    if value is None or value is False:
        return None
    if value is True:
        return Confinement()
    if isinstance(value, str):
        return None if value == "off" else Confinement(mode=value)
    if isinstance(value, Confinement):
        return value if value.active else None
    raise TypeError(f"sandbox must be True, False, 'strict', 'auto', 'off' or a Confinement, "
                    f"got {type(value).__name__}")


def support() -> dict[str, Any]:
    """What this machine offers: {"seccomp": None or why not, "landlock": ABI version (0: none)}."""
    return {"seccomp": seccomp.supported(), "landlock": landlock.abi_version()}


_WARNED: set[str] = set()


def check_support(conf: Confinement) -> None:
    """In the parent, before workers start: raise in strict mode if a layer is missing; log a
    warning (once per missing layer) in auto mode."""
    offered = support()
    missing = []
    if offered["seccomp"] is not None:
        missing.append(f"seccomp ({offered['seccomp']})")
    if offered["landlock"] < 1:
        missing.append("Landlock (the kernel has none, or it is disabled)")
    if not missing:
        return
    if conf.mode == "strict":
        raise SandboxUnavailableError(
            "strict sandbox refused: this machine lacks " + " and ".join(missing)
            + "; use sandbox 'auto' to run with the layers it has")
    for what in missing:
        if what not in _WARNED:
            _WARNED.add(what)
            logger.warning("sandbox: %s is not available; untrusted code runs with the other "
                           "layers only (docs/sandbox.md)", what)


def secret_names(environ: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The names in `environ` that hold credentials: SECRET_PATTERN, GLNS_SANDBOX_SCRUB, `extra`."""
    named = {n.strip() for n in environ.get(SCRUB_VARIABLE, "").split(",") if n.strip()}
    named.update(extra)
    return [k for k in environ if k in named or SECRET_PATTERN.search(k)]


def _package_dirs() -> list[str]:
    """The directories of the interpreter, the installed packages and every loaded module's
    top-level package (an editable install lives outside site-packages)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(v for k, v in sysconfig.get_paths().items()
                 if k in ("stdlib", "platstdlib", "purelib", "platlib"))
    paths.update(site.getsitepackages())
    for name, module in list(sys.modules.items()):
        f = getattr(module, "__file__", None)
        if not isinstance(f, str) or not os.path.isabs(f):
            continue
        # "a.b.c" in /x/a/b/c.py and "a.b" in /x/a/b/__init__.py both have their top in /x/a
        ups = name.count(".") + (os.path.basename(f).startswith("__init__.") or 0)
        top = f
        for _ in range(ups):
            top = os.path.dirname(top)
        paths.add(top)
    # a path inside another one adds nothing (the stdlib's modules, one by one)
    kept = sorted(p for p in paths if p and os.path.dirname(p) != p)
    return [p for p in kept if not any(p.startswith(q + os.sep) for q in kept if q != p)]


_APPLIED: dict[str, Any] = {}


def applied() -> dict[str, Any]:
    """What :func:`apply` put in force in this process (empty: nothing). A task function, so a
    test or a caller can ask a worker."""
    return dict(_APPLIED)


def apply(conf: Confinement) -> dict[str, Any]:
    """Confine this process (in a worker, before its first untrusted task); irreversible.

    Returns what is in force. In strict mode a layer that fails raises OSError; in auto mode
    it is logged and left out. The calling thread must be the process's only thread.
    """
    if threading.active_count() != 1:
        raise RuntimeError("confinement must start in a single-threaded process")
    report: dict[str, Any] = {"mode": conf.mode}
    sys.dont_write_bytecode = True
    for name in conf.preload:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            logger.warning("sandbox: cannot preload %s: %s", name, exc)
    drop = secret_names(os.environ, conf.scrub)
    for name in drop:
        os.environ.pop(name, None)
    report["scrubbed"] = tuple(drop)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past RLIMIT_FSIZE fails, not kills
    for limit, value in ((resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NOFILE, conf.max_open_files)):
        resource.setrlimit(limit, (value, value))
    report["rlimits"] = True
    paths = [*_package_dirs(), *_SYSTEM_READ_PATHS, *conf.read_paths]
    for layer, install in (("landlock", lambda: landlock.restrict(paths)), ("seccomp", seccomp.install)):
        try:
            report[layer] = install() or True
        except OSError as exc:
            if conf.mode == "strict":
                raise
            report[layer] = False
            logger.warning("sandbox: %s not applied: %s", layer, exc)
    _APPLIED.clear()
    _APPLIED.update(report)
    return report
