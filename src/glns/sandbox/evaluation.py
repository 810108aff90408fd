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
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from glns.checks import check_count, check_seed
from glns.exceptions import OperatorError
from glns.executors import Executor, TaskResult, WorkerPool
from glns.executors.channel import accepts_events, current as current_channel
from glns.operators import Operator, decisions
from glns.operators.accelerate import accelerate_settings, precompile
from glns.operators.arguments import parse_per_kind
from glns.operators.spec import PythonSource, is_module_spec, wires as wire_list
from glns.params import SolveParams
from glns.problems import Problem, problem_class
from glns.result import Result
from glns.sandbox.confine import sandbox_confinement
from glns.sandbox.run_events import Wants, built_in_only, forwarding
from glns.solve import DEFAULT_DESTROY, DEFAULT_ITERATIONS, DEFAULT_REPAIR, default_portfolio, solve

__all__ = ["RunOutcome", "EvaluationInterrupted", "PythonSource", "evaluate", "DEFAULT_OP_TIMEOUT", "solve_task", "solve_tasks",
           "failure_message", "operator_wires"]

#: per-call limit (seconds) of Python operators when the params do not set op_timeout
DEFAULT_OP_TIMEOUT = 1.0


@dataclass(frozen=True)
class RunOutcome:
    """One solver run of :func:`evaluate`.

    status: "ok" (result holds the :class:`glns.Result`: best cost, per-operator calls,
    outcomes σ1..σ4, failures, weights, fitness, the synergy matrix S), or why the run has no
    result: "timeout" (killed at task_timeout), "memory" (MemoryError outside the operator
    calls), "died" (the worker crashed) or "error" (e.g. an operator does not compile; the
    message says which), or "interrupted" (Ctrl-C stopped the evaluation before it ran; see
    :class:`EvaluationInterrupted`). instance, seed: what ran. seconds: wall time of the task.
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


# ============================================================================= wire format


def _problem_wire(problem: Problem) -> tuple[str, tuple]:
    if not isinstance(problem, Problem):
        raise TypeError(f"instances must be glns problems, got {type(problem).__name__}")
    h = hashlib.blake2b(digest_size=16)
    # a coordinate instance travels as its coordinates and rounding, never as a matrix
    matrix = problem.distances if problem.explicit_distances else None
    h.update(f"{problem.kind}|{problem.capacity}|{matrix is None and problem.rounding}|".encode())
    h.update((matrix if matrix is not None else problem.coords).tobytes())
    h.update(problem.demands.tobytes())
    extra = problem.extra_parts()       # a variant's own parts (VRPTW: windows, ...)
    for key in sorted(extra):
        value = extra[key]
        h.update(f"|{key}=".encode())
        h.update(value.tobytes() if isinstance(value, np.ndarray) else repr(value).encode())
    spec = (problem.kind, problem.coords, matrix, problem.demands, problem.capacity,
            problem.name, problem.rounding, extra)
    return h.hexdigest(), spec


def operator_wires(destroy: Any, repair: Any, kinds: set[str]) -> dict[str, tuple[list | None, list | None]]:
    """(destroy wires, repair wires) per problem kind (they differ only for exported modules);
    None for a side left to the default portfolio, which depends on each instance
    (:func:`glns.solve.default_portfolio`; :func:`solve_tasks` fills it in).

    The arguments are parsed by :func:`glns.operators.arguments.parse_per_kind` without
    executing anything (source is compiled only in the workers); everything is checked here,
    in the caller, before a task runs.
    """
    parsed = parse_per_kind(destroy, repair, kinds, defaults=(DEFAULT_DESTROY, DEFAULT_REPAIR), load=False)
    default_d = destroy is None
    default_r = repair is None and not is_module_spec(destroy)
    return {kind: (None if default_d else wire_list(d), None if default_r else wire_list(r))
            for kind, (d, r) in parsed.items()}


def solve_tasks(instances: Sequence[Problem], seeds: Sequence[int], wires: dict[str, tuple[list | None, list | None]],
                iterations: int | None, params: SolveParams, time_limit: float | None = None,
                no_improvement: int | None = None, stop: Any = None,
                statistics: str | int = "bounded",
                wants: Callable[[int], Wants | None] | None = None) -> list[tuple]:
    """The arguments of :func:`solve_task`, one tuple per instance; wants(i): the events run i
    reports (glns.sandbox.run_events), None for none.

    With compile="auto" the compiled twins of Python operators are built here, in the caller,
    and the workers only take them from the cache (compile="cached"): a build thread in a
    worker would end the worker after its task (glns.executors.worker retires workers that
    leave threads behind) and lose the build with it. Each task carries the form decisions
    known here for its Python operators (glns.operators.decisions).
    """
    if accelerate_settings(params)[1] == "auto":
        for d_wire, r_wire in wires.values():
            for wire in (*(d_wire or ()), *(r_wire or ())):
                if wire[0] == "python":
                    precompile(wire[1], params)
        params = dataclasses.replace(params, compile="cached")
    tasks = []
    known: dict[tuple, dict | None] = {}
    for i, (problem, seed) in enumerate(zip(instances, seeds)):
        key, spec = _problem_wire(problem)
        d_wire, r_wire = wires[problem.kind]
        if d_wire is None or r_wire is None:
            default_d, default_r = default_portfolio(problem)
            d_wire = wire_list(default_d) if d_wire is None else d_wire
            r_wire = wire_list(default_r) if r_wire is None else r_wire
        ids = tuple(decisions.wire_ids([*d_wire, *r_wire]))
        if ids not in known:    # (read once per operator set, not once per instance)
            known[ids] = decisions.known(ids) if ids else None
        tasks.append((key, spec, d_wire, r_wire, iterations, seed, params, time_limit, no_improvement,
                      stop, statistics, None if wants is None else wants(i), known[ids]))
    return tasks


def decision_ids(tasks: Sequence[tuple]) -> set[str]:
    """The decision ids of the Python operators of solve_tasks' tasks: the only ones whose
    decisions their workers may report (glns.operators.decisions.listener)."""
    return {i for task in tasks for i in decisions.wire_ids([*task[2], *task[3]])}


def failure_message(res: TaskResult, task_timeout: float) -> str:
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
    kind, coords, distances, demands, capacity, name, rounding, extra = spec
    return problem_class(kind).from_parts(coords, distances, demands, capacity, name=name,
                                          rounding=rounding, **extra)


def _build_operator(wire: tuple, kind: str, index: int) -> Operator:
    try:
        return Operator.from_wire(wire, kind).load()
    except OperatorError as exc:
        raise OperatorError(f"{kind} operator {index}: {exc}") from None


def solve_task(problem_key: str, problem_spec: tuple, destroy: list[tuple], repair: list[tuple],
               iterations: int | None, seed: int, params: SolveParams,
               time_limit: float | None = None, no_improvement: int | None = None, stop: Any = None,
               statistics: str | int = "bounded", events: Wants | None = None,
               decided: dict | None = None) -> Result:
    """One glns.solve run (in a worker); instances and operators are cached by content, so a
    worker builds each instance and compiles each operator once over its life.

    events: what the run reports to the caller while it runs (glns.sandbox.run_events), over
    the channel of its task; the caller may then stop it. decided: the forms already decided
    for its Python operators (glns.operators.decisions), adopted before they are bound; the
    decisions the run makes and cannot store go back over the channel.
    """
    decisions.offer(decided)
    problem = _cached(_PROBLEMS, problem_key, lambda: _build_problem(problem_spec))
    d_ops = [_cached(_OPERATORS, ("destroy", w), lambda w=w, i=i: _build_operator(w, "destroy", i))
             for i, w in enumerate(destroy)]
    r_ops = [_cached(_OPERATORS, ("repair", w), lambda w=w, i=i: _build_operator(w, "repair", i))
             for i, w in enumerate(repair)]
    channel = current_channel() if events is not None else None
    callbacks = None
    if channel is not None:
        callbacks, poll = forwarding(events, channel)   # type: ignore[arg-type]
        criteria_of_callers = events[4]   # type: ignore[index]
        if stop is None and not criteria_of_callers and \
                iterations is None and time_limit is None and no_improvement is None:
            iterations = DEFAULT_ITERATIONS     # what glns.solve does without stop=
        stop = [*built_in_only(stop)[0], poll]
    try:
        return solve(problem, d_ops, r_ops, iterations=iterations, time_limit=time_limit,
                     no_improvement=no_improvement, seed=seed, params=params, stop=stop,
                     statistics=statistics, callbacks=callbacks)
    finally:
        fresh = decisions.drain_new()
        reply = current_channel()
        if fresh and reply is not None:
            reply.send((decisions.EVENT_TAG, fresh))


# ============================================================================= parent side


def evaluate(instances: Sequence[Problem], destroy: Any, repair: Any, *,
             pool: Executor | None = None, iterations: int = 100,
             seeds: Sequence[int] | None = None, params: SolveParams | None = None,
             task_timeout: float | None = None, sandbox: Any = "auto") -> list[RunOutcome]:
    """Run ``glns.solve(instance, destroy, repair, ...)`` for every instance in sandbox workers.

    destroy, repair: as in ``glns.solve`` (parsed by :func:`glns.operators.spec.parse`), each a
    native name, source code, a :class:`PythonSource`, an import path
    ``"package.module:function"`` or ``"path/to/file.py:function"``, a module-level function,
    or an :class:`glns.operators.Operator` (native, built with ``from_source``, or of a
    module-level function). The sources are compiled only inside the workers. seeds: one per
    instance (default 0, 1, 2, ...).
    params: the solver parameters (default ``SolveParams(op_timeout=DEFAULT_OP_TIMEOUT)``); an
    op_timeout of None becomes ``DEFAULT_OP_TIMEOUT``, since sandboxed code always runs under a
    per-call limit. task_timeout: seconds after which a run's worker is killed
    (default: ``iterations * 2 * op_timeout + 10``, what a run whose every call hits the
    per-call limit needs). pool: where the runs go, any :class:`glns.batch.Executor`: a
    :class:`WorkerPool` (the sandbox; default: a temporary pool with all cores, confined as
    `sandbox` says: "auto", "strict" or "off", docs/sandbox.md), or e.g.
    ``glns.batch.make_executor("ray")`` to spread an evolution's episodes over a cluster.

    destroy may also be a module exported by a G-LNS run, or the path of its file, as in
    ``glns.solve``.

    Returns one :class:`RunOutcome` per instance, in order; a failed run never raises. Ctrl-C
    stops the workers and raises :class:`EvaluationInterrupted` (a KeyboardInterrupt) whose
    ``outcomes`` keep the runs that finished.
    """
    wires = operator_wires(destroy, repair, {p.kind for p in instances if isinstance(p, Problem)})
    iterations = check_count(iterations, "iterations", minimum=0)
    seeds = list(range(len(instances))) if seeds is None else [check_seed(s) for s in seeds]
    if len(seeds) != len(instances):
        raise ValueError(f"{len(seeds)} seeds for {len(instances)} instances")
    params = params if params is not None else SolveParams(op_timeout=DEFAULT_OP_TIMEOUT)
    if params.op_timeout is None:
        params = dataclasses.replace(params, op_timeout=DEFAULT_OP_TIMEOUT)
    if task_timeout is None:
        task_timeout = iterations * 2 * params.op_timeout + 10.0
    if not task_timeout > 0:
        raise ValueError(f"task_timeout must be > 0 seconds, got {task_timeout}")
    tasks = solve_tasks(instances, seeds, wires, int(iterations), params)
    answers: list[TaskResult | None] = [None] * len(tasks)

    def keep(i: int, res: TaskResult) -> None:
        answers[i] = res

    try:
        with contextlib.nullcontext(pool) if pool is not None else \
                WorkerPool(sandbox=sandbox_confinement(sandbox)) as executor:
            listen = {"on_event": decisions.listener(decision_ids(tasks))} \
                if accepts_events(executor) else {}
            executor.map(solve_task, tasks, timeout=task_timeout, on_result=keep, **listen)
    except KeyboardInterrupt:
        # the workers' tasks are abandoned (the pool restarts them); what finished is kept
        raise EvaluationInterrupted(_outcomes(answers, seeds, task_timeout)) from None
    return _outcomes(answers, seeds, task_timeout)


class EvaluationInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`evaluate`: ``outcomes`` has one :class:`RunOutcome` per instance,
    those of the runs that finished and status "interrupted" for the others. A
    KeyboardInterrupt, so that code which stops on Ctrl-C still stops."""

    def __init__(self, outcomes: list[RunOutcome]) -> None:
        super().__init__(f"{sum(o.ok for o in outcomes)} of {len(outcomes)} runs finished")
        self.outcomes = outcomes


def _outcomes(answers: list[TaskResult | None], seeds: list[int], task_timeout: float) -> list[RunOutcome]:
    out = []
    for i, (res, seed) in enumerate(zip(answers, seeds)):
        if res is None:
            out.append(RunOutcome("interrupted", i, seed, error="Ctrl-C stopped the evaluation first"))
        elif res.ok:
            out.append(RunOutcome("ok", i, seed, result=res.value, seconds=res.seconds))
        else:
            out.append(RunOutcome(res.status, i, seed, error=failure_message(res, task_timeout),
                                  seconds=res.seconds))
    return out
