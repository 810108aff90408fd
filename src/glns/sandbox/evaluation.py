"""Solver runs of (untrusted) operator sets inside sandbox workers.

:func:`evaluate` runs ``glns.solve`` once per instance in a :class:`WorkerPool`. Two limits
apply: the bridge's per-call ``op_timeout`` inside the worker (an operator past it scores σ4
and the run goes on) and a per-task kill deadline in the parent (for code the in-process limit
cannot stop, e.g. an endless loop that swallows every exception). A killed or crashed run costs
only its own task: the others' results come back as usual.

Workers cache instances and compiled operators between calls, so an evolution controller can
call :func:`evaluate` once per episode with the same pool at little overhead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import re
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from glns.exceptions import OperatorError
from glns.operators import NATIVE_OPERATORS, Operator, native
from glns.params import SolveParams
from glns.problems import Problem
from glns.result import Result
from glns.sandbox.pool import TaskResult, WorkerPool

if TYPE_CHECKING:
    from glns.batch.executors import Executor

__all__ = ["RunOutcome", "PythonSource", "evaluate", "DEFAULT_OP_TIMEOUT"]

#: per-call limit (seconds) of Python operators when the params do not set op_timeout
DEFAULT_OP_TIMEOUT = 1.0


@dataclass(frozen=True)
class RunOutcome:
    """One solver run of :func:`evaluate`.

    status: "ok" (result holds the :class:`glns.Result`: best cost, per-operator calls,
    outcomes σ1..σ4, failures, weights, fitness, the synergy matrix S), or why the run has no
    result: "timeout" (killed at task_timeout), "memory" (MemoryError outside the operator
    calls), "died" (the worker crashed) or "error" (e.g. an operator does not compile; the
    message says which). instance, seed: what ran. seconds: wall time of the task.
    """

    status: str
    instance: int
    seed: int
    result: Result | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class PythonSource:
    """Operator source code for :func:`evaluate` with its entry function and display name.

    Unlike an :class:`glns.operators.Operator` built with ``from_source``, nothing of it is
    executed in the calling process, so untrusted code only ever runs in the workers.
    """

    source: str
    function: str | None = None
    name: str | None = None


# ============================================================================= wire format

#: "package.module:function" (the function may be a dotted attribute path, e.g. "mod:Class.f")
_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _import_attribute(path: str) -> Any:
    module, _, attrs = path.partition(":")
    obj: Any = importlib.import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def _import_wire(path: str, kind: str, index: int, name: str | None) -> tuple:
    """The wire of an importable operator; checks in the caller that the module can be found."""
    module = path.partition(":")[0]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise OperatorError(f"{kind} operator {index}: cannot import module {module!r} of {path!r}")
    return ("import", path, name)


def _callable_path(func: Any) -> str | None:
    """"module:qualname" when func can be imported back by that path (module-level), else None."""
    module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    path = f"{module}:{qualname}"
    try:
        return path if _import_attribute(path) is func else None
    except Exception:
        return None


def _operator_wire(spec: Any, kind: str, index: int) -> tuple:
    """A picklable description of an operator; source code is never executed here.

    Wires: ("native", name, params, display name), ("python", source, function, display name)
    (compiled in the worker) and ("import", "pkg.mod:function", display name) (imported there).
    """
    if isinstance(spec, Operator):
        if spec.kind != kind:
            raise OperatorError(f"{kind} operator {index} ({spec.name!r}) is a {spec.kind} operator")
        if spec.is_native:
            return ("native", spec.native_name, tuple(spec.params), spec.name)
        if spec.source is None:
            path = _callable_path(spec.func)
            if path is not None:
                return ("import", path, spec.name)
            raise OperatorError(f"{kind} operator {index} ({spec.name!r}) has no source code and its "
                                "function cannot be imported by name; a worker needs the source "
                                "(use operators.from_source) or a module-level function")
        return ("python", spec.source, spec.func.__name__, spec.name)
    if isinstance(spec, PythonSource):
        return ("python", spec.source, spec.function, spec.name)
    if isinstance(spec, str):
        if spec in NATIVE_OPERATORS:
            op = native(spec)
            if op.kind != kind:
                raise OperatorError(f"{kind} operator {index}: {spec!r} is a {op.kind} operator")
            return ("native", spec, op.params, spec)
        if "def " in spec:
            return ("python", spec, None, None)
        if _IMPORT_PATH.match(spec):
            return _import_wire(spec, kind, index, None)
        natives = sorted(n for n, v in NATIVE_OPERATORS.items() if v.kind == kind)
        raise OperatorError(f"{kind} operator {index}: unknown native operator {spec!r} "
                            f"(native ones are {natives}), no source code and no import path "
                            "'package.module:function'")
    if callable(spec) and not isinstance(spec, type):
        path = _callable_path(spec)
        if path is not None:
            return ("import", path, None)
        raise OperatorError(f"{kind} operator {index}: {spec!r} cannot be imported by name in a "
                            "worker (a lambda, a nested function or defined in __main__); pass "
                            "its source code or a module-level function")
    raise OperatorError(f"{kind} operator {index}: pass a native name, source code, an import path "
                        f"'package.module:function' or an Operator built from source, got "
                        f"{type(spec).__name__}")


def _problem_wire(problem: Problem) -> tuple[str, tuple]:
    if not isinstance(problem, Problem):
        raise TypeError(f"instances must be glns problems, got {type(problem).__name__}")
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{problem.kind}|{problem.capacity}|".encode())
    h.update(problem.distances.tobytes())
    h.update(problem.demands.tobytes())
    spec = (problem.kind, problem.coords, problem.distances, problem.demands, problem.capacity,
            problem.name)
    return h.hexdigest(), spec


def _wires(spec: Any, kind: str) -> list[tuple]:
    """The wires of one operator argument: one operator or a list (None: glns.solve's defaults)."""
    from glns.solve import DEFAULT_DESTROY, DEFAULT_REPAIR

    if spec is None:
        spec = DEFAULT_DESTROY if kind == "destroy" else DEFAULT_REPAIR
    if isinstance(spec, (str, Operator, PythonSource)) or callable(spec):
        spec = [spec]
    wires = [_operator_wire(s, kind, i) for i, s in enumerate(spec)]
    if not wires:
        raise ValueError(f"give at least one {kind} operator")
    return wires


def _operator_wires(destroy: Any, repair: Any, kinds: set[str]) -> dict[str, tuple[list, list]]:
    """(destroy wires, repair wires) per problem kind (they differ only for exported modules).

    Everything is checked here, in the caller, before a task runs: with no instances (kinds
    empty) an exported module is checked against the kind it was evolved for.
    """
    from glns.solve import module_operators, refuse_module_as_repair

    refuse_module_as_repair(repair)
    if isinstance(destroy, types.ModuleType):

        out = {}
        for kind in sorted(kinds) or [str(getattr(destroy, "PROBLEM", "")).lower()]:
            d, r = module_operators(destroy, repair, kind)
            out[kind] = (_wires(d, "destroy"), _wires(r, "repair"))
        return out
    both = (_wires(destroy, "destroy"), _wires(repair, "repair"))
    return {kind: both for kind in kinds}


def _solve_tasks(instances: Sequence[Problem], seeds: Sequence[int], wires: dict[str, tuple[list, list]],
                 iterations: int | None, params: SolveParams, time_limit: float | None = None,
                 no_improvement: int | None = None) -> list[tuple]:
    """The arguments of :func:`solve_task`, one tuple per instance."""
    tasks = []
    for problem, seed in zip(instances, seeds):
        key, spec = _problem_wire(problem)
        d_wire, r_wire = wires[problem.kind]
        tasks.append((key, spec, d_wire, r_wire, iterations, seed, params, time_limit, no_improvement))
    return tasks


def _failure_message(res: TaskResult, task_timeout: float) -> str:
    """Why a solve_task run has no result, for the caller's users."""
    if res.status == "timeout":
        return f"the run did not finish within {task_timeout:g} s; its worker was killed"
    if res.status == "memory":
        return f"the run {res.message}"
    return res.message or res.status


# ============================================================================= worker side

_PROBLEMS: dict[str, Problem] = {}
_OPERATORS: dict[tuple, Operator] = {}
_CACHE_SIZE = 256


def _cached(cache: dict, key: Any, build: Any, size: int = _CACHE_SIZE) -> Any:
    """cache[key], built by build() when missing; past `size` entries the oldest one goes.

    The worker-side cache of every task function (here and in glns.sandbox.admission)."""
    value = cache.get(key)
    if value is None:
        value = build()
        if len(cache) >= size:
            cache.pop(next(iter(cache)))
        cache[key] = value
    return value


def _build_problem(spec: tuple) -> Problem:
    from glns.problems import CVRP, OVRP, TSP

    kind, coords, distances, demands, capacity, name = spec
    if kind == "tsp":
        return TSP(coords, distances=distances, name=name)
    cls = CVRP if kind == "cvrp" else OVRP
    return cls(coords, demands, capacity, distances=distances, name=name)


def _build_operator(wire: tuple, kind: str, index: int) -> Operator:
    from glns.operators import from_callable, from_source

    if wire[0] == "native":
        _, native_name, params, name = wire
        return Operator(name=name, kind=kind, native_name=native_name, params=tuple(params))
    if wire[0] == "import":
        _, path, name = wire
        try:
            obj = _import_attribute(path)
        except Exception as exc:
            raise OperatorError(f"{kind} operator {index}: cannot import {path!r}: "
                                f"{type(exc).__name__}: {exc}") from None
        if isinstance(obj, Operator):
            if obj.kind != kind:
                raise OperatorError(f"{kind} operator {index}: {path!r} is a {obj.kind} operator")
            return obj
        return from_callable(obj, kind, name)
    _, source, function, name = wire
    try:
        return from_source(source, kind, name=name, function=function)
    except OperatorError as exc:
        raise OperatorError(f"{kind} operator {index}: {exc}") from None


def solve_task(problem_key: str, problem_spec: tuple, destroy: list[tuple], repair: list[tuple],
               iterations: int | None, seed: int, params: SolveParams,
               time_limit: float | None = None, no_improvement: int | None = None) -> Result:
    """One glns.solve run (in a worker); instances and operators are cached by content, so a
    worker builds each instance and compiles each operator once over its life."""
    from glns.solve import solve

    problem = _cached(_PROBLEMS, problem_key, lambda: _build_problem(problem_spec))
    d_ops = [_cached(_OPERATORS, ("destroy", w), lambda w=w, i=i: _build_operator(w, "destroy", i))
             for i, w in enumerate(destroy)]
    r_ops = [_cached(_OPERATORS, ("repair", w), lambda w=w, i=i: _build_operator(w, "repair", i))
             for i, w in enumerate(repair)]
    return solve(problem, d_ops, r_ops, iterations=iterations, time_limit=time_limit,
                 no_improvement=no_improvement, seed=seed, params=params)


# ============================================================================= parent side


def evaluate(instances: Sequence[Problem], destroy: Any, repair: Any, *,
             pool: "Executor | None" = None, iterations: int = 100,
             seeds: Sequence[int] | None = None, params: SolveParams | None = None,
             task_timeout: float | None = None) -> list[RunOutcome]:
    """Run ``glns.solve(instance, destroy, repair, ...)`` for every instance in sandbox workers.

    destroy, repair: one operator or a list (None: ``glns.solve``'s defaults), each a native
    name, source code, a :class:`PythonSource`, an import path ``"package.module:function"``, a
    module-level function, or an :class:`glns.operators.Operator` (native, built with
    ``from_source``, or of a module-level function). The sources are compiled only inside the
    workers. seeds: one per instance (default 0, 1, 2, ...).
    params: the solver parameters (default ``SolveParams()``); a missing op_timeout becomes
    ``DEFAULT_OP_TIMEOUT``. task_timeout: seconds after which a run's worker is killed
    (default: ``iterations * 2 * op_timeout + 10``, what a run whose every call hits the
    per-call limit needs). pool: where the runs go, any :class:`glns.batch.Executor`: a
    :class:`WorkerPool` (the sandbox; default: a temporary pool with all cores), or e.g.
    ``glns.batch.make_executor("ray")`` to spread an evolution's episodes over a cluster.

    destroy may also be a module exported by a G-LNS run, as in ``glns.solve``.

    Returns one :class:`RunOutcome` per instance, in order; a failed run never raises.
    """
    wires = _operator_wires(destroy, repair, {p.kind for p in instances if isinstance(p, Problem)})
    if int(iterations) != iterations or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, got {iterations}")
    seeds = list(range(len(instances))) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(instances):
        raise ValueError(f"{len(seeds)} seeds for {len(instances)} instances")
    params = params if params is not None else SolveParams()
    if params.op_timeout is None:
        params = dataclasses.replace(params, op_timeout=DEFAULT_OP_TIMEOUT)
    if task_timeout is None:
        task_timeout = iterations * 2 * params.op_timeout + 10.0
    if not task_timeout > 0:
        raise ValueError(f"task_timeout must be > 0 seconds, got {task_timeout}")
    tasks = _solve_tasks(instances, seeds, wires, int(iterations), params)
    with contextlib.nullcontext(pool) if pool is not None else WorkerPool() as executor:
        answers = executor.map(solve_task, tasks, timeout=task_timeout)
    return [RunOutcome("ok", i, seed, result=res.value, seconds=res.seconds) if res.ok else
            RunOutcome(res.status, i, seed, error=_failure_message(res, task_timeout), seconds=res.seconds)
            for i, (res, seed) in enumerate(zip(answers, seeds))]
