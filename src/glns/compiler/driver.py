"""compile_source: policy check, cache lookup, and the build in a child process."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from glns.compiler import build as _build, cache as _cache, toolchain as _toolchain
from glns.compiler.screen import compile_violation
from glns.compiler.transform import READS_FILE, READS_HEADER, RUNTIME_MODULE, RUNTIME_PXD, transform

__all__ = ["CompileOutcome", "compile_source", "lookup", "add_search_dir"]

logger = logging.getLogger(__name__)

#: statuses whose outcome has a module file
_OK = ("compiled", "cached")


@dataclass(frozen=True)
class CompileOutcome:
    """What :func:`compile_source` did.

    status: "compiled" (built now), "cached" (found in the cache), "unavailable" (Cython or a
    C compiler missing), "rejected" (policy), "failed" (Cython or C error) or "timeout".
    """

    status: str
    key: str
    path: str | None
    module_name: str | None
    reason: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether there is a module to load (status "compiled" or "cached")."""
        return self.status in _OK


#: read-only directories searched before the cache (e.g. a ``glns compile`` output directory)
_SEARCH_DIRS: list[Path] = []


def add_search_dir(path: str | os.PathLike) -> None:
    """Also look for compiled operators in `path` (a cache directory, e.g. the ``compiled/``
    folder that ``glns compile`` writes), before the cache itself. Nothing is written there."""
    path = Path(path).resolve()
    if path not in _SEARCH_DIRS:
        _SEARCH_DIRS.append(path)


def _found(root: Path, key: str) -> Path | None:
    for directory in (*_SEARCH_DIRS, root):
        found = _cache.lookup(directory, key)
        if found is not None:
            return found
    return None


def lookup(source: str, *, cache_dir: str | os.PathLike | None = None,
           signal_checks: bool = True, explain: bool = True) -> CompileOutcome | None:
    """The compiled module of `source` if it is in a search directory or the cache ("cached"),
    "rejected" if the source may not be compiled (checked only with `explain`: it costs a parse),
    else None. Never builds anything; a miss without `explain` costs microseconds."""
    started = time.perf_counter()
    key = _cache.cache_key(source, signal_checks=signal_checks)
    root = Path(cache_dir) if cache_dir is not None else _cache.cache_dir()
    found = _found(root, key)   # first: only source that passed the check is ever stored
    if found is None:
        why = compile_violation(source) if explain else None
        if why is not None:
            return CompileOutcome("rejected", key, None, None, why, time.perf_counter() - started)
        return None
    return CompileOutcome("cached", key, str(found), _cache.module_name(key), None,
                          time.perf_counter() - started)


def compile_source(source: str, *, timeout: float = 120.0,
                   cache_dir: str | os.PathLike | None = None,
                   signal_checks: bool = True, background: bool = False,
                   on_spawn: Callable[[], None] | None = None) -> CompileOutcome:
    """Compile operator `source` with Cython into an extension module, or find it cached.

    The source is never executed: it is checked (:func:`~glns.compiler.compile_violation`),
    rewritten for signal checks (:mod:`glns.compiler.transform`) and translated and compiled
    by a child process that gets `timeout` seconds and a memory limit. Problems with the
    source or the toolchain are reported in the outcome, never raised; only a non-str source
    raises (TypeError). background: run the build at the lowest CPU priority, so that it takes
    only time the solver's processes leave idle (e.g. while an evolution waits on its LLM).
    on_spawn: called once the build process runs; from then on the build finishes and stores
    its entry even if this process exits.
    """
    started = time.perf_counter()
    key = _cache.cache_key(source, signal_checks=signal_checks)

    def outcome(status: str, path: Path | None = None, reason: str | None = None) -> CompileOutcome:
        result = CompileOutcome(status, key, str(path) if path else None,
                                _cache.module_name(key) if path else None, reason,
                                time.perf_counter() - started)
        _log_outcome(result)
        return result

    why = compile_violation(source)
    if why is not None:
        return outcome("rejected", reason=why)
    root = Path(cache_dir) if cache_dir is not None else _cache.cache_dir()
    found = _found(root, key)
    if found is not None:
        return outcome("cached", found)
    missing = _toolchain.unavailable_reason()
    if missing is not None:
        return outcome("unavailable", reason=missing)

    try:
        with _cache.key_lock(root, key, timeout) as lock_fd:
            if lock_fd is None:
                return outcome("timeout", reason=f"another process was compiling this operator "
                                                 f"for longer than {timeout:g} s")
            found = _cache.lookup(root, key)  # built by the process we waited for
            if found is not None:
                return outcome("cached", found)
            if _cache.discard(root, key):  # an invalid entry (truncated module, bad meta.json)
                logger.warning("compiled-operator cache entry %s in %s was invalid (truncated "
                               "module or bad meta.json): removed, rebuilding it", key[:16], root)
            remaining = max(timeout - (time.perf_counter() - started), 0.0)
            status, reason, path = _build_entry(root, key, source, signal_checks, remaining,
                                                background, lock_fd, on_spawn)
    except OSError as exc:  # the cache directory cannot be written
        logger.warning("compiled-operator cache %s cannot be used: %s", root, exc)
        return outcome("unavailable", reason=f"cache directory {root}: {exc}")
    if status == "timeout":
        reason = f"compiling took longer than {timeout:g} s"
    return outcome(status, path, reason)


def _log_outcome(result: CompileOutcome) -> None:
    """Log what a compile did. Builds are rare and slow, so each is logged; a failed one at
    WARNING, since its operator then runs interpreted (slower, same results)."""
    key = result.key[:16]
    if result.status == "compiled":
        logger.info("compiled operator %s in %.1f s", key, result.seconds)
    elif result.status in ("failed", "timeout"):
        logger.warning("compiling operator %s %s: %s; it runs interpreted", key,
                       "timed out" if result.status == "timeout" else "failed", result.reason)
    else:  # cached, rejected by the rules, or no toolchain: expected, and said in form_reason
        logger.debug("operator %s not built (%s): %s", key, result.status, result.reason or "")


def _build_entry(root: Path, key: str, source: str, signal_checks: bool,
                 timeout: float, background: bool = False, lock_fd: int = -1,
                 on_spawn: Callable[[], None] | None = None) -> tuple[str, str | None, Path | None]:
    work = _cache.work_dir(root)
    try:
        name = _cache.module_name(key)
        py_file = work / f"{name}.py"
        try:
            module_source = transform(source, signal_checks=signal_checks)
        except (RecursionError, MemoryError, ValueError) as exc:  # absurdly nested source
            return "failed", f"cannot rewrite the source: {type(exc).__name__}: {exc}", None
        py_file.write_text(module_source, encoding="utf-8")
        (work / f"{RUNTIME_MODULE}.pxd").write_text(RUNTIME_PXD, encoding="utf-8")
        (work / READS_FILE).write_text(READS_HEADER, encoding="utf-8")
        tc = _toolchain.toolchain()
        spec = {"workdir": str(work), "module_name": name, "py_file": str(py_file),
                "c_file": str(work / f"{name}.c"), "so_file": str(work / _cache.so_name(key)),
                "directives": _toolchain.DIRECTIVES, "cython_options": _toolchain.CYTHON_OPTIONS,
                "memory_mb": _toolchain.MEMORY_MB, "cpu_seconds": int(min(timeout, 86400.0)) + 10,
                "nice": 19 if background else 0,
                **tc.as_dict()}
        # the child stores the entry itself (and holds the key's lock through the inherited
        # descriptor): a build outlives a process that exits before it finishes, e.g. a short
        # script that solved in the background of its build, and the next run finds it cached
        spec["store"] = {"entry_dir": str(_cache.entry_dir(root, key)), "so_name": _cache.so_name(key),
                         "meta": {"key": key, "scheme": _toolchain.SCHEME, "cython": _toolchain.cython_version(),
                                  "python": sys.implementation.cache_tag, "signal_checks": signal_checks,
                                  "toolchain": tc.as_dict()}}
        spec_file = work / "spec.json"
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        result = _run_build(spec_file, work, timeout, background, lock_fd, on_spawn)
        if result.get("status") == "timeout":
            return "timeout", None, None
        if result.get("status") != "ok":
            return result.get("status", "failed"), result.get("reason") or "the build failed", None
        found = _cache.lookup(root, key)
        if found is None:
            return "failed", "the build process reported success but stored no valid entry", None
        return "compiled", None, found
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_build(spec_file: Path, work: Path, timeout: float, background: bool = False,
               lock_fd: int = -1, on_spawn: Callable[[], None] | None = None) -> dict:
    """Run the build child on `spec_file`; its result dict, or {"status": "timeout"}.

    The child runs build.py as a script (not ``-m glns.compiler.build``, which would import
    the whole ``glns`` package first) in a process group of its own, so that on timeout the
    whole group, C compiler included, is killed. A foreground build gets a session of its own
    too; a background one stays in this session (Linux schedules sessions fairly against each
    other, so only there does its low priority keep it from taking time from the solver).
    """
    command = [sys.executable, _build.__file__, str(spec_file)]
    group: dict[str, Any] = {"start_new_session": True}
    if background and sys.version_info >= (3, 11):
        group = {"process_group": 0}
    log = work / "build.log"   # a file, not a pipe: a build that outlives us must not get SIGPIPE
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(command, cwd=work, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT,
                                    pass_fds=(lock_fd,) if lock_fd >= 0 else (), **group)
    except OSError as exc:
        return {"status": "unavailable", "reason": f"cannot start the build process: {exc}"}
    if on_spawn is not None:
        on_spawn()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        return {"status": "timeout"}
    except BaseException:  # KeyboardInterrupt, an operator time limit...: leave no child behind
        _kill_group(proc)
        proc.wait()
        raise
    try:
        return json.loads((work / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tail = log.read_bytes().decode(errors="replace").strip().splitlines()[-6:]
        return {"status": "failed", "reason": f"the build process exited with code "
                                              f"{proc.returncode}: " + "\n".join(tail)}


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
