"""The build child: translate one operator module with Cython, compile and link it.

Run as ``python -m glns.compiler.build SPEC.json`` or ``python .../build.py SPEC.json`` (what
:mod:`glns.compiler.driver` does: it skips importing the ``glns`` package, ~0.5 s). SPEC
names the work directory, the module and the commands (see ``driver._run_build``); the result
is written to ``result.json`` in the work directory::

    {"status": "ok" | "failed" | "unavailable", "reason": str | None, "so": path,
     "cython_seconds": float, "cc_seconds": float}

This module imports only the standard library (and Cython, lazily), limits its own memory
before anything else (the C compiler inherits the limit), and never imports or runs the
operator: Cython only parses it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time

__all__ = ["main"]

CYTHON_MISSING = "Cython is not installed (pip install 'glns[compile]')"
_MAX_REASON_LINES = 6


def _limit_resources(memory_mb: int, cpu_seconds: int) -> None:
    """Memory and core-dump limits, and a CPU limit in case the parent dies before it can
    kill this process group; the C compiler inherits them."""
    try:
        import resource
    except ImportError:  # not POSIX: the parent's time limit still holds
        return
    limits = ((resource.RLIMIT_AS, memory_mb * 1024 * 1024), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_CPU, cpu_seconds))
    for what, value in limits:
        try:
            _, hard = resource.getrlimit(what)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(what, (value, hard))
        except (ValueError, OSError):
            pass


def _store(spec: dict, result: dict) -> None:
    """Move the built module into its cache entry with meta.json (atomic rename of a staging
    directory; an entry that appeared meanwhile is kept). glns.compiler.cache reads the entry
    (its _verified checks key, so, size and sha256); this child does not import glns, so the
    writing side lives here."""
    import hashlib

    store = spec["store"]
    staging = os.path.join(spec["workdir"], "entry")
    os.makedirs(staging, exist_ok=True)
    so = os.path.join(staging, store["so_name"])
    os.replace(spec["so_file"], so)
    digest = hashlib.sha256()
    with open(so, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    meta = dict(store["meta"], so=store["so_name"], size=os.path.getsize(so), sha256=digest.hexdigest(),
                created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                cython_seconds=round(result.get("cython_seconds", 0.0), 3),
                cc_seconds=round(result.get("cc_seconds", 0.0), 3))
    meta["compile_seconds"] = round(meta["cython_seconds"] + meta["cc_seconds"], 3)
    with open(os.path.join(staging, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    final = store["entry_dir"]
    os.makedirs(os.path.dirname(final), exist_ok=True)
    try:
        os.replace(staging, final)
    except OSError:
        if not os.path.isdir(final):
            raise


def _cython_reason(text: str) -> str:
    """'message (at `code`)' lines from Cython's error report (its positions refer to the
    rewritten source, so the offending code is quoted instead)."""
    lines = text.splitlines()
    reasons = []
    for i, line in enumerate(lines):
        m = re.match(r"^\S+\.py:\d+:\d+: (.*)$", line)
        if not m:
            continue
        code = ""
        # the report is: dashes, context lines, the offending line, a caret line, dashes
        for j in range(i - 1, -1, -1):
            if lines[j].strip().startswith("^"):
                code = lines[j - 1].strip() if j > 0 else ""
                break
            if lines[j].startswith("Error compiling"):
                break
        reasons.append(f"{m.group(1)} (at `{code}`)" if code else m.group(1))
    if not reasons:
        reasons = [ln for ln in lines if ln.strip()][-_MAX_REASON_LINES:]
    return "Cython: " + "\n".join(reasons[:_MAX_REASON_LINES])


def _cc_reason(what: str, output: str, returncode: int) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()] or lines
    shown = "\n".join(errors[:_MAX_REASON_LINES])
    return f"{what} failed (exit {returncode})" + (f": {shown}" if shown else "")


def _cythonize(spec: dict) -> dict:
    try:
        from Cython.Compiler import Options
        from Cython.Compiler.Main import CompilationOptions, compile_single
    except ImportError:
        return {"status": "unavailable", "reason": CYTHON_MISSING}
    for name, value in spec["cython_options"].items():
        setattr(Options, name, value)
    directives = dict(spec["directives"])
    options = CompilationOptions(
        language_level=directives.pop("language_level"), compiler_directives=directives,
        output_file=spec["c_file"], include_path=[spec["workdir"]], timestamps=False, quiet=True)
    report = io.StringIO()
    with contextlib.redirect_stderr(report), contextlib.redirect_stdout(report):
        try:
            result = compile_single(spec["py_file"], options, spec["module_name"])
            errors = result.num_errors
        except Exception as exc:  # Cython raises CompileError for some fatal errors
            errors = 1
            print(f"{spec['py_file']}:0:0: {type(exc).__name__}: {exc}", file=report)
    if errors or not os.path.exists(spec["c_file"]):
        return {"status": "failed", "reason": _cython_reason(report.getvalue())}
    return {"status": "ok"}


def _run(what: str, command: list[str]) -> dict:
    try:
        proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
    except FileNotFoundError:
        return {"status": "unavailable", "reason": f"no C compiler: {command[0]!r} not found"}
    except OSError as exc:
        return {"status": "unavailable", "reason": f"no C compiler: cannot run {command[0]!r}: {exc}"}
    if proc.returncode != 0:
        return {"status": "failed", "reason": _cc_reason(what, proc.stdout, proc.returncode)}
    return {"status": "ok"}


def build(spec: dict) -> dict:
    """Build the module `spec` describes; the result dict (see the module docstring)."""
    started = time.perf_counter()
    result = _cythonize(spec)
    cython_done = time.perf_counter()
    result["cython_seconds"] = cython_done - started
    if result["status"] != "ok":
        return result
    o_file = spec["c_file"][:-2] + ".o"
    includes = [f"-I{d}" for d in spec["include_dirs"]]
    steps = (("C compiler", spec["cc"] + spec["cflags"] + includes + ["-c", spec["c_file"], "-o", o_file]),
             ("linker", spec["ldshared"] + [o_file, "-o", spec["so_file"]]))
    for what, command in steps:
        result = _run(what, command)
        if result["status"] != "ok":
            break
    result["cython_seconds"] = cython_done - started
    result["cc_seconds"] = time.perf_counter() - cython_done
    if result["status"] == "ok" and not os.path.isfile(spec["so_file"]):
        result = {"status": "failed", "reason": "the linker produced no module file"}
    result["so"] = spec["so_file"]
    return result


def main(argv: list[str]) -> int:
    """Entry point: ``build.py SPEC.json``; 0 if the module was built."""
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    _limit_resources(int(spec.get("memory_mb", 2048)), int(spec.get("cpu_seconds", 600)))
    if int(spec.get("nice", 0)) > 0:
        with contextlib.suppress(OSError, AttributeError):
            os.nice(int(spec["nice"]))  # a background build: the C compiler inherits it
    try:
        result = build(spec)
        if result["status"] == "ok" and "store" in spec:
            _store(spec, result)
    except MemoryError:
        result = {"status": "failed", "reason": "the build ran out of memory"}
    except OSError as exc:
        result = {"status": "failed", "reason": f"cannot store the built module: {exc}"}
    out = os.path.join(spec["workdir"], "result.json")
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(out + ".tmp", out)
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    here = os.path.dirname(os.path.realpath(__file__))
    if not __package__ and sys.path and os.path.realpath(sys.path[0] or ".") == here:
        del sys.path[0]  # run as a script: this package's module names must not shadow others
    sys.exit(main(sys.argv[1:]))
