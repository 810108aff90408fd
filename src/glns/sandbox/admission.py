"""The pre-evaluation filter for generated operators (SPEC §4).

:func:`check_operator` runs a destroy or repair operator's source in a sandbox worker on small
generated instances of every size class used, validates every output with the core's rules,
looks for changes to ``problem_data``, and checks that it handles a large instance (n = 200 by
default) within a time bound. The answer is an :class:`Admission` whose ``error`` is written
to be fed back to the LLM as it is: which check failed, on which instance, and what was wrong.

Decisions:

- Changing ``problem_data`` (its dict or, after unlocking, its arrays) rejects the operator;
  the arrays are read-only, so most attempts fail with a ValueError that is reported as such.
- Changing the input solution or ``removed`` in place is harmless (the core hands every call
  fresh lists) and very common in generated code, so by default it only adds a warning;
  ``CheckConfig(allow_input_mutation=False)`` rejects it.
- A destroy operator must remove at least one node when ``destroy_cnt >= 1``; removing a
  different number than ``destroy_cnt`` only adds a warning.
- Each destroy output is repaired by the native greedy insertion afterwards, and each repair
  operator gets the output of the native random removal: operators are checked on what the
  solver actually feeds them.
"""

from __future__ import annotations

import copy
import linecache
import math
import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from glns.sandbox.evaluation import _cached
from glns.sandbox.policy import ALLOWED_IMPORTS, policy_violation
from glns.sandbox.pool import TaskResult, WorkerPool, usable_cores

__all__ = ["CheckConfig", "Admission", "CheckRequest", "check_operator", "check_operators"]

_PROBLEM_NAMES = {"tsp": "TSP", "cvrp": "CVRP", "ovrp": "OVRP"}


@dataclass(frozen=True)
class CheckConfig:
    """What :func:`check_operator` runs.

    sizes: size classes (cities / customers) of the small instances; instances_per_size of
    each, generated with seeds seed, seed + 1, ... call_timeout: seconds one call may take on
    them. growth_n / growth_timeout: the time-growth check, one call on an instance of growth_n
    nodes must finish within growth_timeout seconds (growth_n None: no such check).
    kill_grace: extra seconds before the worker is killed when the operator ignores the
    in-process time limit. destroy_fraction: destroy_cnt = max(1, floor(fraction * n)).
    capacity: vehicle capacity of the VRP instances. allow_input_mutation: see the module doc.
    allowed_imports: modules the code may import; with the names of
    ``glns.sandbox.policy.FORBIDDEN_NAMES`` checked before the code runs (None: no such check).
    """

    sizes: tuple[int, ...] = (10, 20, 50)
    instances_per_size: int = 2
    call_timeout: float = 1.0
    growth_n: int | None = 200
    growth_timeout: float = 2.0
    kill_grace: float = 1.0
    destroy_fraction: float = 0.2
    capacity: int = 50
    seed: int = 7001
    allow_input_mutation: bool = True
    allowed_imports: tuple[str, ...] | None = ALLOWED_IMPORTS

    def __post_init__(self) -> None:
        if not self.sizes or any(int(n) != n or n < 2 for n in self.sizes):
            raise ValueError(f"sizes must be integers >= 2, got {self.sizes}")
        if self.instances_per_size < 1:
            raise ValueError(f"instances_per_size must be >= 1, got {self.instances_per_size}")
        for name in ("call_timeout", "growth_timeout", "kill_grace"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {getattr(self, name)}")
        if self.growth_n is not None and self.growth_n < 2:
            raise ValueError(f"growth_n must be >= 2 or None, got {self.growth_n}")
        if not 0 < self.destroy_fraction <= 1:
            raise ValueError(f"destroy_fraction must be in (0, 1], got {self.destroy_fraction}")


@dataclass(frozen=True)
class Admission:
    """The verdict of :func:`check_operator`.

    ok: the operator may be used. check: the failed check ("forbidden", "syntax", "load", "signature",
    "exception", "output", "mutation", "timeout", "memory", "crash", "growth", "internal"),
    None when ok. error: a precise message for the LLM, None when ok. size: the instance size
    the failure happened on, if any. timings: the slowest call per instance size (seconds,
    including the growth size when it ran). warnings: harmless oddities worth telling the LLM.
    function, convention: the entry function picked from the source and how its third argument
    is read ("problem_data" or "distance_matrix"). seconds: wall time of the whole check.
    """

    ok: bool
    kind: str
    problem: str
    check: str | None = None
    error: str | None = None
    size: int | None = None
    timings: dict[int, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    function: str | None = None
    convention: str | None = None
    seconds: float = 0.0


# ============================================================================= worker side
# These functions run inside a sandbox worker. They catch what the operator does and return a
# plain dict, so the pool's own "error" status only ever means a bug of ours.

_OPERATORS: dict[tuple[str, str, str | None], Any] = {}
_PROBLEMS: dict[tuple[str, int, int, int], Any] = {}
_CACHE_SIZE = 32


def _fail(check: str, error: str, **extra: Any) -> dict[str, Any]:
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
    from glns.operators import from_source

    _show_lines_of(source)
    return _cached(_OPERATORS, (source, kind, function),
                   lambda: from_source(source, kind, function=function), _CACHE_SIZE)


def compile_task(source: str, kind: str, function: str | None, limit: float) -> dict[str, Any]:
    """Compile the source, pick the entry function and read its signature (in a worker)."""
    from glns._core._alns import OperatorTimeout
    from glns.exceptions import OperatorError
    from glns.operators.bridge import time_limit

    if not isinstance(source, str):
        return _fail("load", f"the source must be a string, got {type(source).__name__}")
    try:
        compile(source, "<operator>", "exec")
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        text = f": `{exc.text.strip()}`" if exc.text and exc.text.strip() else ""
        return _fail("syntax", f"SyntaxError{where}: {exc.msg}{text}")
    except (ValueError, TypeError) as exc:   # e.g. null bytes
        return _fail("syntax", f"the source cannot be compiled: {exc}")
    # the module body runs here: it may loop or allocate like any operator call
    try:
        with time_limit(limit):
            op = _compile(source, kind, function)
    except OperatorTimeout:
        return _fail("timeout", f"loading the source did not finish within {limit:g} s")
    except MemoryError:
        raise
    except OperatorError as exc:
        msg = str(exc)
        check = "signature" if ("argument" in msg or "parameter" in msg) else "load"
        if "defines no function" in msg or "no function named" in msg:
            check = "signature"
        return _fail(check, msg)
    except BaseException as exc:
        return _fail("load", f"loading the source raised {type(exc).__name__}: {exc}{_operator_line(exc)}")
    # the case steps name the entry function: let them find this compiled copy
    _OPERATORS.setdefault((source, kind, op.func.__name__), op)
    return {"ok": True, "function": op.func.__name__, "convention": op.convention}


def _problem(problem: str, n: int, seed: int, capacity: int) -> Any:
    from glns import datasets

    def build() -> Any:
        if problem == "tsp":
            return datasets.generate_tsp(n, seed)
        gen = datasets.generate_cvrp if problem == "cvrp" else datasets.generate_ovrp
        return gen(n, seed, capacity)

    return _cached(_PROBLEMS, (problem, n, seed, capacity), build, _CACHE_SIZE)


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
    from glns._core._alns import OperatorTimeout
    from glns._core._native_ops import apply_destroy, apply_repair
    from glns._core._solution import Solution, check
    from glns.operators.bridge import time_limit

    op = _compile(source, kind, function)
    prob = _problem(problem, n, seed, cfg.capacity)
    where = f"on the n={n} {_PROBLEM_NAMES[problem]} instance"
    sol = Solution(prob.core)
    sol.random_init(seed)
    start = sol.routes()
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
        return _fail("timeout", f"timed out after {limit:g} s {where}", seconds=time.perf_counter() - t0)
    except MemoryError:
        raise   # the worker reports it with the memory limit
    except BaseException as exc:
        seconds = time.perf_counter() - t0
        detail = f"{type(exc).__name__} {where}: {exc}{_operator_line(exc)}"
        if _is_readonly_write(exc):
            return _fail("mutation", f"tried to modify problem_data and raised {detail}; the arrays of "
                         "problem_data are read-only and must not be changed (copy them first)",
                         seconds=seconds)
        return _fail("exception", f"raised {detail}", seconds=seconds)
    seconds = time.perf_counter() - t0

    change = _data_changes(data if op.convention == "problem_data" else {"distance_matrix": third},
                           original if op.convention == "problem_data"
                           else {"distance_matrix": original["distance_matrix"]})
    if change is not None:
        return _fail("mutation", f"{change} {where}; problem_data must not be modified", seconds=seconds)
    warnings = []
    names = ("x", "destroy_cnt") if kind == "destroy" else ("partial", "removed")
    for name, given, saved in ((names[0], first, first_copy), (names[1], second, second_copy)):
        if not _same(given, saved):
            msg = f"modified its input `{name}` in place {where}"
            if not cfg.allow_input_mutation:
                return _fail("mutation", f"{msg}; work on a copy", seconds=seconds)
            warnings.append(msg)

    if kind == "destroy":
        if isinstance(out, (str, bytes, dict)) or not hasattr(out, "__len__") or len(out) != 2:
            return _fail("output", f"destroy must return a pair (removed, partial_solution), got "
                         f"{type(out).__name__} {_short(out)} {where}", seconds=seconds)
        removed_out, partial_out = out
        try:
            removed_out, partial_out = _materialize(removed_out), _materialize(partial_out)
        except Exception as exc:
            return _fail("output", f"destroy returned output that cannot be read {where}: "
                         f"{type(exc).__name__}: {exc}", seconds=seconds)
        try:
            err = check(prob.core, partial_out, removed_out)
        except Exception as exc:
            err = f"unreadable output: {type(exc).__name__}: {exc}"
        if err is not None:
            return _fail("output", f"destroy returned an invalid result {where}: {err} (every node "
                         "must appear exactly once in partial_solution or removed)", seconds=seconds)
        count = len(removed_out)
        if count == 0:
            return _fail("output", f"destroy removed no node {where} although destroy_cnt={k}",
                         seconds=seconds)
        if count != k:
            warnings.append(f"destroy removed {count} nodes {where} although destroy_cnt={k}")
        removed_ids = [int(v) for v in removed_out]
        partial_py = [int(v) for v in partial_out] if problem == "tsp" \
            else [[int(v) for v in r] for r in partial_out]
        complete, _ = apply_repair("greedy_insertion", prob.core, partial_py, removed_ids, seed)
        err = check(prob.core, complete)
        if err is not None:   # cannot happen when the core is right; say so loudly if it does
            return _fail("internal", f"greedy insertion after this destroy gave: {err} {where}",
                         seconds=seconds)
    else:
        try:
            err = check(prob.core, out)
        except Exception as exc:   # e.g. output whose iteration raises
            err = f"unreadable output: {type(exc).__name__}: {exc}"
        if err is not None:
            return _fail("output", f"repair returned an invalid solution {where}: {err} (the result "
                         "must contain every node exactly once" +
                         ("" if problem == "tsp" else ", each route within the capacity") + ")",
                         seconds=seconds)
    return {"ok": True, "seconds": seconds, "warnings": warnings}


def _step(fn: Any, args: tuple) -> dict[str, Any]:
    """One step of a check (compile_task or case_task): lets one pool.map run mixed steps."""
    return fn(*args)


# ============================================================================= parent side


def _verdict(res: TaskResult, what: str, limit: float, memory_mb: int | None) -> dict[str, Any]:
    """A worker's TaskResult as a check dict; `what` names the instance ('on the n=20 CVRP instance')."""
    if res.ok:
        return res.value
    if res.status == "memory":
        return _fail("memory", f"exceeded the memory limit of {memory_mb} MB {what}")
    if res.status == "timeout":
        return _fail("timeout", f"timed out after {limit:g} s {what} (and ignored the interruption, "
                     "so its process was killed)")
    if res.status == "died":
        return _fail("crash", f"crashed its process {what}: {res.message}")
    return _fail("internal", f"internal error of the checker {what}: {res.message}")


@dataclass(frozen=True)
class CheckRequest:
    """One operator for :func:`check_operators`: its source, kind, problem and entry function."""

    source: str
    kind: str
    problem: str
    function: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("destroy", "repair"):
            raise ValueError(f"kind must be 'destroy' or 'repair', got {self.kind!r}")
        if str(self.problem).lower() not in _PROBLEM_NAMES:
            raise ValueError(f"problem must be one of {sorted(_PROBLEM_NAMES)}, got {self.problem!r}")
        object.__setattr__(self, "problem", str(self.problem).lower())


class _Progress:
    """The state of one request while its checks run."""

    def __init__(self, req: CheckRequest, cfg: CheckConfig) -> None:
        self.req = req
        self.started = time.monotonic()
        self.timings: dict[int, float] = {}
        self.warnings: list[str] = []
        self.ident: dict[str, Any] = {}
        self.verdict: Admission | None = None
        # (n, seed, per-call limit, is the growth check)
        self.cases = [(n, cfg.seed + i, cfg.call_timeout, False)
                      for n in cfg.sizes for i in range(cfg.instances_per_size)]
        if cfg.growth_n is not None:
            self.cases.append((cfg.growth_n, cfg.seed, cfg.growth_timeout, True))
        self.next_case = -1   # -1: loading the source

    def finish(self, **fields: Any) -> None:
        self.verdict = Admission(kind=self.req.kind, problem=self.req.problem,
                                 timings=dict(self.timings), warnings=tuple(self.warnings),
                                 seconds=time.monotonic() - self.started, **{**self.ident, **fields})

    def task(self, cfg: CheckConfig) -> tuple[Any, tuple, float]:
        """(function, args, kill deadline) of the next step."""
        r = self.req
        if self.next_case < 0:
            return compile_task, (r.source, r.kind, r.function, cfg.call_timeout), \
                cfg.call_timeout + cfg.kill_grace
        n, seed, limit, _ = self.cases[self.next_case]
        return case_task, (r.source, r.kind, self.ident["function"], r.problem, n, seed, cfg, limit), \
            limit + cfg.kill_grace

    def record(self, res: TaskResult, cfg: CheckConfig, memory_mb: int | None) -> None:
        """Take the answer of the current step; set the verdict when done or failed."""
        if self.next_case < 0:
            head = _verdict(res, "while loading the source", cfg.call_timeout, memory_mb)
            if not head["ok"]:
                return self.finish(ok=False, check=head["check"], error=head["error"])
            self.ident = {"function": head["function"], "convention": head["convention"]}
        else:
            n, _, limit, growth = self.cases[self.next_case]
            out = _verdict(res, f"on the n={n} {_PROBLEM_NAMES[self.req.problem]} instance", limit,
                           memory_mb)
            seconds = out.get("seconds", res.seconds)
            self.timings[n] = max(self.timings.get(n, 0.0), seconds)
            for w in out.get("warnings", ()):
                if w not in self.warnings:
                    self.warnings.append(w)
            if not out["ok"]:
                check, error = out["check"], out["error"]
                if growth and check == "timeout":
                    check = "growth"
                    error = (f"too slow: {error} (time-growth check: one call on n={n} must finish "
                             f"within {limit:g} s; avoid work that grows faster than about n^2)")
                return self.finish(ok=False, check=check, error=error, size=n)
        self.next_case += 1
        if self.next_case >= len(self.cases):
            self.finish(ok=True)


def check_operators(requests: Sequence[CheckRequest], *, pool: WorkerPool | None = None,
                    config: CheckConfig | None = None) -> list[Admission]:
    """:func:`check_operator` for many operators at once, spread over the pool's workers.

    The checks of one operator run in order and stop at its first failure; different operators
    are checked in parallel (one step of each at a time). Verdicts come back in input order
    and are the same as those of :func:`check_operator` one by one.
    """
    cfg = config if config is not None else CheckConfig()
    reqs = [r if isinstance(r, CheckRequest) else CheckRequest(*r) for r in requests]
    if pool is None:
        with WorkerPool(workers=min(len(reqs), usable_cores()) or 1) as own:
            return check_operators(reqs, pool=own, config=cfg)
    states = [_Progress(r, cfg) for r in reqs]
    if cfg.allowed_imports is not None:
        for st in states:
            why = policy_violation(st.req.source, tuple(cfg.allowed_imports)) \
                if isinstance(st.req.source, str) else None
            if why:
                st.finish(ok=False, check="forbidden", error=f"the code {why}")
    while True:
        active = [st for st in states if st.verdict is None]
        if not active:
            break
        steps = [st.task(cfg) for st in active]
        answers = pool.map(_step, [(fn, args) for fn, args, _ in steps],
                           timeout=[limit for _, _, limit in steps])
        for st, res in zip(active, answers):
            st.record(res, cfg, pool.memory_mb)
    return [st.verdict for st in states]  # type: ignore[misc]


def check_operator(source: str, kind: str, problem: str, *, pool: WorkerPool | None = None,
                   config: CheckConfig | None = None, function: str | None = None) -> Admission:
    """Admit or reject a destroy/repair operator given as source code (SPEC §4 pre-evaluation).

    source: the operator's code (e.g. an LLM answer's code block); function: its entry
    function (default: as :func:`glns.operators.from_source` picks it). kind: "destroy" or
    "repair". problem: "tsp", "cvrp" or "ovrp". pool: the sandbox to use (default: a one-worker
    pool for this call, memory limit ``DEFAULT_MEMORY_MB``). The code never runs in the
    calling process. Stops at the first failed check; checks, in order: loading the source
    (syntax, module body, entry function, signature), then one call on each small instance
    (output validity, problem_data unchanged, per-call time and memory limits), then the
    time-growth call on n = ``config.growth_n``.
    """
    req = CheckRequest(source, kind, problem, function)
    if pool is None:
        with WorkerPool(workers=1) as own:
            return check_operators([req], pool=own, config=config)[0]
    return check_operators([req], pool=pool, config=config)[0]
