"""The checks of the pre-evaluation filter that run inside a sandbox worker.

Each function catches what the operator does and returns a plain dict (``{"ok": True, ...}``
or ``{"ok": False, "check": ..., "error": ...}``), so the pool's own "error" status only ever
means a bug of ours. The decisions they apply are described in :mod:`glns.sandbox.admission`.
"""

from __future__ import annotations

import copy
import linecache
import math
import random
import time
import traceback
from typing import Any

import numpy as np

from glns import datasets
from glns._core._alns import OperatorTimeout
from glns._core._native_ops import apply_destroy, apply_repair
from glns._core._solution import check
from glns.exceptions import OperatorError
from glns.operators import from_source
from glns.operators.bridge import time_limit
from glns.problems.solutions import random_solution
from glns.rng import SplitMix64
from glns.sandbox.check_types import CheckConfig
from glns.sandbox.evaluation import _cached

__all__ = ["compile_task", "case_task", "run_step", "failure"]

_OPERATORS: dict[tuple[str, str, str | None], Any] = {}
_PROBLEMS: dict[tuple[str, int, int, int], Any] = {}
_CACHE_SIZE = 32


def failure(check: str, error: str, **extra: Any) -> dict[str, Any]:
    """The answer of a failed check."""
    return {"ok": False, "check": check, "error": error, **extra}


def _operator_line(exc: BaseException) -> str:
    """' (line 7 of the operator: `x = a / b`)' for the innermost frame in the operator source."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<operator>"]
    if not frames:
        return ""
    f = frames[-1]
    text = (f.line or "").strip()
    return f" (line {f.lineno} of the operator: `{text}`)" if text else f" (line {f.lineno} of the operator)"


def _show_lines_of(source: str) -> None:
    """Let tracebacks quote the operator's lines (its code is compiled as '<operator>')."""
    linecache.cache["<operator>"] = (len(source), None, source.splitlines(True), "<operator>")


def _compile(source: str, kind: str, function: str | None) -> Any:
    _show_lines_of(source)
    return _cached(_OPERATORS, (source, kind, function),
                   lambda: from_source(source, kind, function=function), _CACHE_SIZE)


def compile_task(source: str, kind: str, function: str | None, limit: float) -> dict[str, Any]:
    """Compile the source, pick the entry function and read its signature (in a worker)."""
    if not isinstance(source, str):
        return failure("load", f"the source must be a string, got {type(source).__name__}")
    try:
        compile(source, "<operator>", "exec")
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        text = f": `{exc.text.strip()}`" if exc.text and exc.text.strip() else ""
        return failure("syntax", f"SyntaxError{where}: {exc.msg}{text}")
    except (ValueError, TypeError) as exc:   # e.g. null bytes
        return failure("syntax", f"the source cannot be compiled: {exc}")
    # the module body runs here: it may loop or allocate like any operator call
    try:
        with time_limit(limit):
            op = _compile(source, kind, function)
    except OperatorTimeout:
        return failure("timeout", f"loading the source did not finish within {limit:g} s")
    except MemoryError:
        raise
    except OperatorError as exc:
        msg = str(exc)
        check = "signature" if ("argument" in msg or "parameter" in msg) else "load"
        if "defines no function" in msg or "no function named" in msg:
            check = "signature"
        return failure(check, msg)
    except BaseException as exc:
        return failure("load", f"loading the source raised {type(exc).__name__}: {exc}{_operator_line(exc)}")
    # the case steps name the entry function: let them find this compiled copy
    _OPERATORS.setdefault((source, kind, op.func.__name__), op)
    return {"ok": True, "function": op.func.__name__, "convention": op.convention}


def _problem(problem: str, n: int, seed: int, capacity: int) -> Any:
    return _cached(_PROBLEMS, (problem, n, seed, capacity),
                   lambda: datasets.generate(problem, n, seed, capacity), _CACHE_SIZE)


def _readonly_data(problem: Any) -> dict[str, Any]:
    """problem_data as the bridge gives it: a fresh dict of private read-only arrays."""
    data = {}
    for k, v in problem.problem_data().items():
        if isinstance(v, np.ndarray):
            v = v.copy()
            v.flags.writeable = False
        data[k] = v
    return data


def _data_changes(given: dict[str, Any], original: dict[str, Any]) -> str | None:
    """What the operator changed in problem_data, or None."""
    added = sorted(set(given) - set(original), key=str)
    if added:
        return f"added key {added[0]!r} to problem_data"
    removed = sorted(set(original) - set(given), key=str)
    if removed:
        return f"deleted problem_data[{removed[0]!r}]"
    for k, v in original.items():
        w = given[k]
        if isinstance(v, np.ndarray):
            if not isinstance(w, np.ndarray) or w.shape != v.shape or not np.array_equal(w, v):
                return f"changed problem_data[{k!r}]"
        elif type(w) is not type(v) or w != v:
            return f"changed problem_data[{k!r}] from {v!r} to {w!r}"
    return None


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:   # e.g. numpy arrays put into the lists
        return False


def _materialize(value: Any) -> Any:
    """A list of an iterable output (generators can be read only once), else value itself."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return value
    return list(value)


def _is_readonly_write(exc: BaseException) -> bool:
    return isinstance(exc, ValueError) and "read-only" in str(exc)


def case_task(source: str, kind: str, function: str | None, problem: str, n: int, seed: int,
              cfg: CheckConfig, limit: float) -> dict[str, Any]:
    """Run the operator once on one generated instance and validate everything (in a worker)."""
    op = _compile(source, kind, function)
    prob = _problem(problem, n, seed, cfg.capacity)
    where = f"on the n={n} {prob.label} instance"
    start = random_solution(prob, SplitMix64(seed))     # (with time windows: by insertion)
    k = max(1, math.floor(cfg.destroy_fraction * prob.n_customers))
    if kind == "destroy":
        first, second = start, k
    else:
        removed, partial, _ = apply_destroy("random_removal", prob.core, start, k, seed)
        first, second = partial, list(removed)
    first_copy, second_copy = copy.deepcopy(first), copy.deepcopy(second)
    data = _readonly_data(prob)
    original = {k_: (v.copy() if isinstance(v, np.ndarray) else v) for k_, v in data.items()}
    third = data["distance_matrix"] if op.convention == "distance_matrix" else data

    random.seed(seed)
    np.random.seed(seed % 2**32)
    t0 = time.perf_counter()
    try:
        with time_limit(limit):
            out = op.func(first, second, third)
    except OperatorTimeout:
        return failure("timeout", f"timed out after {limit:g} s {where}", seconds=time.perf_counter() - t0)
    except MemoryError:
        raise   # the worker reports it with the memory limit
    except BaseException as exc:
        seconds = time.perf_counter() - t0
        detail = f"{type(exc).__name__} {where}: {exc}{_operator_line(exc)}"
        if _is_readonly_write(exc):
            return failure("mutation", f"tried to modify problem_data and raised {detail}; the arrays of "
                         "problem_data are read-only and must not be changed (copy them first)",
                         seconds=seconds)
        return failure("exception", f"raised {detail}", seconds=seconds)
    seconds = time.perf_counter() - t0

    change = _data_changes(data if op.convention == "problem_data" else {"distance_matrix": third},
                           original if op.convention == "problem_data"
                           else {"distance_matrix": original["distance_matrix"]})
    if change is not None:
        return failure("mutation", f"{change} {where}; problem_data must not be modified", seconds=seconds)
    warnings = []
    names = ("x", "destroy_cnt") if kind == "destroy" else ("partial", "removed")
    for name, given, saved in ((names[0], first, first_copy), (names[1], second, second_copy)):
        if not _same(given, saved):
            msg = f"modified its input `{name}` in place {where}"
            if not cfg.allow_input_mutation:
                return failure("mutation", f"{msg}; work on a copy", seconds=seconds)
            warnings.append(msg)

    if kind == "destroy":
        if isinstance(out, (str, bytes, dict)) or not hasattr(out, "__len__") or len(out) != 2:
            return failure("output", f"destroy must return a pair (removed, partial_solution), got "
                         f"{type(out).__name__} {_short(out)} {where}", seconds=seconds)
        removed_out, partial_out = out
        try:
            removed_out, partial_out = _materialize(removed_out), _materialize(partial_out)
        except Exception as exc:
            return failure("output", f"destroy returned output that cannot be read {where}: "
                         f"{type(exc).__name__}: {exc}", seconds=seconds)
        try:
            err = check(prob.core, partial_out, removed_out)
        except Exception as exc:
            err = f"unreadable output: {type(exc).__name__}: {exc}"
        if err is not None:
            return failure("output", f"destroy returned an invalid result {where}: {err} (every node "
                         "must appear exactly once in partial_solution or removed)", seconds=seconds)
        count = len(removed_out)
        if count == 0:
            return failure("output", f"destroy removed no node {where} although destroy_cnt={k}",
                         seconds=seconds)
        if count != k:
            warnings.append(f"destroy removed {count} nodes {where} although destroy_cnt={k}")
        removed_ids = [int(v) for v in removed_out]
        partial_py = prob.solution_from_routes(prob.routes_of(partial_out))
        complete, _ = apply_repair("greedy_insertion", prob.core, partial_py, removed_ids, seed)
        err = check(prob.core, complete)
        if err is not None:   # cannot happen when the core is right; say so loudly if it does
            return failure("internal", f"greedy insertion after this destroy gave: {err} {where}",
                         seconds=seconds)
    else:
        try:
            err = check(prob.core, out)
        except Exception as exc:   # e.g. output whose iteration raises
            err = f"unreadable output: {type(exc).__name__}: {exc}"
        if err is not None:
            return failure("output", f"repair returned an invalid solution {where}: {err} (the result "
                         "must contain every node exactly once" +
                         (", each route within the capacity" if prob.capacitated else "") + ")",
                         seconds=seconds)
    return {"ok": True, "seconds": seconds, "warnings": warnings}


def run_step(fn: Any, args: tuple) -> dict[str, Any]:
    """One step of a check (compile_task or case_task): lets one pool.map run mixed steps."""
    return fn(*args)
