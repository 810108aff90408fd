"""The front door: ``glns.solve``."""

from __future__ import annotations

import contextlib
import math
import random
from typing import Any, Iterable, TextIO

import numpy as np

from glns import operators as _ops
from glns._core._alns import run_alns
from glns._core._result import OperatorRecord, RunResult
from glns.checks import check_count, check_seed
from glns.exceptions import InfeasibleSolutionError
from glns.monitor import Callbacks, Display, Monitor, split_stop
from glns.operators.arguments import parse_arguments
from glns.operators.bridge import alarm_installed
from glns.params import LARGE_TOUR_CITIES, SolveParams, small_or_short_routes
from glns.problems import Problem
from glns.problems.renumber import Renumbered, renumbered
from glns.problems.space_filling import start_solution
from glns.result import OperatorStats, Result

__all__ = ["solve", "default_portfolio", "DEFAULT_DESTROY", "DEFAULT_REPAIR", "SWAP_STAR_REPAIR",
           "LARGE_TOUR_NEIGHBOURS",
           "DEFAULT_ITERATIONS", "TRACE_SAMPLES"]

# The default portfolio, tuned with tools/tune_portfolio.py on generated instances only (see
# docs/portfolio.md): SISR string removal, and SISR's blink insertion next to regret-2, both
# ending with the native local search (with 3-opt on a tour). With SolveParams' default
# destroy range (20-60 % of the nodes, at most 60) and scale-aware annealing.
DEFAULT_DESTROY = (_ops.native("string_removal"),)
_REPAIR_SETTINGS = (("blink_insertion", {"order": 4, "local_search": 2}),
                    ("regret_insertion", {"k": 2, "local_search": 2}))
DEFAULT_REPAIR = tuple(_ops.native(name, **kw) for name, kw in _REPAIR_SETTINGS)
#: The default repairs on a CVRP or OVRP that is small or has short routes, where loads are
#: also penalised (glns.params.small_or_short_routes): their local search makes SWAP* moves
#: too (level 3). On set X's short-route files at T/10 (docs/portfolio.md), with penalised
#: loads, three seeds: 0.21 % -> 0.15 % above the best known.
SWAP_STAR_REPAIR = tuple(_ops.native(name, **{**kw, "local_search": 3}) for name, kw in _REPAIR_SETTINGS)
#: (n0, g): on a tour (TSP) of at least n0 cities the default repairs are granular, each city
#: tried only next to its g nearest neighbours. Measured at n/100 x 2.4 s (docs/portfolio.md):
#: d2103 2.22 % -> 0.37 %, 9x the iterations. The full scan stays better on VRP (X-n1001-k43
#: 0.62 % full, 0.97 % with g = 30) and at 500 iterations on TSP100/200.
LARGE_TOUR_NEIGHBOURS = (LARGE_TOUR_CITIES, 20)
_LARGE_TOUR_REPAIR = tuple(_ops.native(name, **kw, neighbours=LARGE_TOUR_NEIGHBOURS[1])
                           for name, kw in _REPAIR_SETTINGS)
#: iteration budget when neither iterations nor time_limit nor no_improvement is given
DEFAULT_ITERATIONS = 5000
#: the most samples of the curves a run keeps with statistics="bounded" (4 x 8 bytes each):
#: every iteration of a run up to this long, then every 2nd, 4th, ... (glns._core._trace)
TRACE_SAMPLES = 65536
_TRACE_LIMITS = {"bounded": TRACE_SAMPLES, "full": -1, "none": 0}


def stop_settings(iterations: Any, time_limit: Any, no_improvement: Any) -> dict[str, Any]:
    """The core's stop settings from the budgets of :func:`solve`; ValueError for a bad one."""
    out: dict[str, Any] = {}
    if iterations is not None:
        out["iterations"] = check_count(iterations, "iterations", minimum=0)
    if time_limit is not None:
        if not time_limit > 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
        if not math.isfinite(time_limit):   # the loop would never stop
            raise ValueError(f"time_limit must be finite, got {time_limit!r} (give no time_limit for none)")
        out["time_limit"] = float(time_limit)
    if no_improvement is not None:
        out["no_improvement"] = check_count(no_improvement, "no_improvement")
    return out


def default_portfolio(problem: Problem) -> tuple[tuple[_ops.Operator, ...], tuple[_ops.Operator, ...]]:
    """The (destroy, repair) operators :func:`solve` runs on `problem` when given none:
    ``DEFAULT_DESTROY`` / ``DEFAULT_REPAIR``; ``SWAP_STAR_REPAIR`` on a CVRP or OVRP that is
    small or has short routes (:func:`glns.params.small_or_short_routes`, where the default
    also penalises loads); granular repairs on a large tour (``LARGE_TOUR_NEIGHBOURS``)."""
    if problem.kind in ("cvrp", "ovrp") and small_or_short_routes(problem.customers_per_route,
                                                                   problem.n_customers):
        return DEFAULT_DESTROY, SWAP_STAR_REPAIR
    if problem.has_depot or problem.n_customers < LARGE_TOUR_NEIGHBOURS[0]:
        return DEFAULT_DESTROY, DEFAULT_REPAIR
    return DEFAULT_DESTROY, _LARGE_TOUR_REPAIR


def solve(problem: Problem, destroy: Any = None, repair: Any = None, *,
          iterations: int | None = None, time_limit: float | None = None,
          no_improvement: int | None = None, seed: int = 0,
          params: SolveParams | None = None, initial_solution: Any = None,
          stop: Any = None, callbacks: Callbacks | None = None,
          display: bool | TextIO = False, interrupt: str = "return",
          statistics: str | int = "bounded") -> Result:
    """Solve a TSP, CVRP, OVRP or VRPTW instance with adaptive LNS.

    The budgets `iterations`, `time_limit` and `no_improvement` and the criteria of `stop`
    stop the run at the first one reached; with none of them, ``DEFAULT_ITERATIONS``
    iterations.

    Parameters
    ----------
    problem : Problem
        The instance: a :class:`TSP`, :class:`CVRP`, :class:`OVRP` or :class:`VRPTW`.
    destroy : operator or list of operators, optional
        One operator or a list; each a native name ("random_removal", "worst_removal",
        "greedy_insertion"), an :class:`glns.operators.Operator`, a Python callable
        (docs/operator-contract.md), operator source code, a
        :class:`glns.operators.PythonSource`, an import path ``"package.module:function"``
        or ``"path/to/file.py:function"`` (all parsed by :func:`glns.operators.spec.parse`).
        Default: the tuned native portfolio ``glns.solve.default_portfolio`` (string removal;
        blink and regret-2 insertion with local search, granular on tours of 400 cities or
        more). The paper's seeds are "random_removal", "worst_removal" and
        "greedy_insertion"; see ``glns.operators.NATIVE_OPERATORS`` for all. `destroy` may
        also be a module exported by a G-LNS run (``glns.evolution.export``), or the path of
        its file, with `repair` left None: its best pair runs (its populations when it has
        no best pair). It must have been evolved for this problem's kind (operators of
        different kinds are never mixed); any mismatch raises OperatorError.
        ``solve(problem, module.DESTROY, module.REPAIR)`` runs its final populations.
    repair : operator or list of operators, optional
        The repair operators, given as for `destroy`.
    iterations : int or None, optional
        Stop after this many iterations.
    time_limit : float or None, optional
        Stop after this many seconds (finite, > 0).
    no_improvement : int or None, optional
        Stop after this many iterations in a row without a new best.
    seed : int, default 0
        The same seed gives the same result, Python operators included (their `random` and
        NumPy global streams are seeded from the run's stream before every call, and
        restored to the caller's state afterwards).
    params : SolveParams or None, optional
        The parameters of the loop (default: ``SolveParams()``, scale-aware annealing);
        ``SolveParams.paper()`` for the paper's preset.
    initial_solution : list or None, optional
        A feasible solution to start from (default: ``params.initial`` says which: random,
        or on 5,000 customers and more the space-filling start; with time windows every
        customer in a random order at its cheapest feasible position; docs/method.md).
    stop : criterion or list of criteria, optional
        A stop criterion or a list of them (the first met stops the run), next to the
        budgets above: :class:`glns.MaxIterations`, :class:`glns.MaxRuntime`,
        :class:`glns.NoImprovement`, :class:`glns.TargetCost` (checked by the native loop at
        every iteration), or any callable ``f(progress) -> bool`` of a :class:`glns.Progress`
        (asked every ``glns.monitor.POLL_SECONDS``). With only a target cost or callables
        the run goes on until one of them is met (or Ctrl-C).
    callbacks : Callbacks or None, optional
        :class:`glns.Callbacks` (on_start, on_iteration every ``every`` iterations, on_best,
        on_restart, on_end); one that returns True stops the run.
    display : bool or file-like, default False
        True (standard output) or a text stream: a progress table every second.
    interrupt : {"return", "raise"}, default "return"
        What Ctrl-C (SIGINT) during the run does: ``"return"`` stops it within
        ``POLL_SECONDS`` (or when the Python operator being called returns control) and
        returns the best solution so far with ``stop_reason == "interrupted"``; ``"raise"``
        stops it and raises KeyboardInterrupt.
    statistics : {"bounded", "full", "none"} or int, default "bounded"
        What the result keeps of the run's course: ``"bounded"`` (every new best, and the
        curves of every iteration up to ``TRACE_SAMPLES`` of them, then evenly thinned:
        memory does not grow with the run's length), ``"full"`` (every iteration, however
        many), ``"none"`` (no curves at all), or a number of samples (>= 2) to keep instead
        of ``TRACE_SAMPLES``.

    Returns
    -------
    Result
        The best solution found, its cost, the curves and the operator statistics.

    Raises
    ------
    InfeasibleSolutionError
        When `initial_solution` breaks the problem's rules (a ValueError), naming the first
        violation.
    OperatorError
        When an operator cannot be used, or an exported module does not fit the problem.
    TypeError
        When `problem`, `params` or `callbacks` is of the wrong type.
    ValueError
        When a budget or setting is out of range.
    KeyboardInterrupt
        On Ctrl-C with ``interrupt="raise"``.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a glns TSP, CVRP, OVRP or VRPTW instance, got {type(problem).__name__}")
    params = params if params is not None else SolveParams()
    if not isinstance(params, SolveParams):
        raise TypeError(f"params must be SolveParams, got {type(params).__name__}")
    trace_limit = trace_limit_of(statistics)
    if interrupt not in ("return", "raise"):
        raise ValueError(f'interrupt must be "return" or "raise", got {interrupt!r}')
    if callbacks is not None and not isinstance(callbacks, Callbacks):
        raise TypeError(f"callbacks must be glns.Callbacks, got {type(callbacks).__name__}")
    budgets, target, criteria = split_stop(stop)
    iterations, time_limit, no_improvement = (
        _tighter(iterations, budgets.get("iterations")), _tighter(time_limit, budgets.get("time_limit")),
        _tighter(no_improvement, budgets.get("no_improvement")))
    if iterations is None and time_limit is None and no_improvement is None and stop is None:
        iterations = DEFAULT_ITERATIONS
    settings = params.to_core(problem.n_customers, tour=not problem.has_depot,
                               **stop_settings(iterations, time_limit, no_improvement),
                               open_ended=stop is not None, trace_limit=trace_limit,
                               customers_per_route=problem.customers_per_route)
    seed = check_seed(seed)

    destroy_ops, repair_ops = parse_arguments(destroy, repair, problem.kind,
                                              defaults=default_portfolio(problem))
    uses_python = not all(op.is_native for op in destroy_ops + repair_ops)
    # Python operators see the caller's node ids; native ones search a curve-ordered copy
    copy = None if uses_python else renumbered(problem, params.renumber)
    work = copy.problem if copy is not None else problem
    if initial_solution is None:
        initial_solution = start_solution(work, params.initial)
    elif copy is not None:
        initial_solution = _start_on_copy(problem, copy, initial_solution)
    shown = None if display is False else Display(None if display is True else display)
    monitor = Monitor(callbacks, target, criteria, shown,
                      to_original=copy.to_original if copy is not None else None)
    # binding a Python operator may run probe calls (glns.operators.accelerate): they seed the
    # global random streams, so the caller's state is saved before and restored after it all
    saved = (random.getstate(), np.random.get_state()) if uses_python else None
    try:
        bound_d = [op.bind(work, params.op_timeout, params) for op in destroy_ops]
        bound_r = [op.bind(work, params.op_timeout, params) for op in repair_ops]
        monitor.start(problem)
        with alarm_installed() if uses_python and params.op_timeout else contextlib.nullcontext():
            run = run_alns(work.core, bound_d, bound_r, settings, seed, initial_solution,
                           monitor if monitor.active else None)
    finally:
        if saved is not None:
            random.setstate(saved[0])
            np.random.set_state(saved[1])
    if copy is None:
        solution, cost = run.best, run.best_cost
    else:   # the caller's ids, and the cost as the caller's instance sums it
        solution, cost = copy.to_original(run.best), copy.cost(run.best)
    result = _result(problem, run, solution, cost, destroy_ops, repair_ops, seed, bound_d, bound_r)
    monitor.end(result)
    if run.stop_reason == "interrupted" and interrupt == "raise":
        raise KeyboardInterrupt
    return result


def trace_limit_of(statistics: Any) -> int:
    """The core's trace limit of a ``statistics`` argument (glns._core._trace)."""
    if isinstance(statistics, str) and statistics in _TRACE_LIMITS:
        return _TRACE_LIMITS[statistics]
    if isinstance(statistics, (int, np.integer)) and not isinstance(statistics, bool) and statistics >= 2:
        return int(statistics)
    raise ValueError(f'statistics must be "bounded", "full", "none" or a number of samples >= 2, '
                     f"got {statistics!r}")


def _tighter(given: Any, other: Any) -> Any:
    """The smaller of a budget given directly and the same budget from ``stop`` (None: none)."""
    if other is None:
        return given
    return other if given is None else min(given, other)


def _start_on_copy(problem: Problem, copy: Renumbered, start: Any) -> Any:
    """A caller's start in the copy's ids, checked there. Only a faulty start is checked on the
    caller's instance too (building its core), so the error names the caller's ids."""
    try:
        mapped = copy.to_internal(start)
    except (TypeError, ValueError):
        mapped = None
    if mapped is None or copy.problem.violation(mapped) is not None:
        err = problem.violation(start) or "it is not a solution of this instance"
        raise InfeasibleSolutionError(f"initial solution is invalid: {err}")
    return mapped


def _stats(ops: Iterable[_ops.Operator], record: OperatorRecord, bound: list) -> tuple[OperatorStats, ...]:
    return tuple(
        OperatorStats(name=op.name, kind=op.kind, calls=int(record.calls[i]),
                      outcomes=tuple(int(x) for x in record.outcomes[i]),
                      failures=int(record.failures[i]), seconds=float(record.seconds[i]),
                      weight=float(record.weights[i]), fitness=float(record.fitness[i]),
                      last_error=record.last_error[i],
                      form=getattr(b, "form", "native"), form_reason=getattr(b, "form_reason", ""))
        for i, (op, b) in enumerate(zip(ops, bound))
    )


def _result(problem: Problem, run: RunResult, solution: Any, cost: float, destroy_ops: list,
            repair_ops: list, seed: int, bound_d: list, bound_r: list) -> Result:
    return Result(
        problem_kind=problem.kind, solution=solution, cost=cost,
        iterations=run.iterations, runtime=run.runtime, seed=seed,
        best_curve=run.best_curve, current_curve=run.current_curve,
        iteration_seconds=run.iteration_seconds,
        destroy_stats=_stats(destroy_ops, run.destroy, bound_d),
        repair_stats=_stats(repair_ops, run.repair, bound_r),
        synergy=run.synergy, initial_temperature=run.initial_temperature,
        restarts=run.restarts, stop_reason=run.stop_reason,
        curve_iterations=run.curve_iterations, curve_seconds=run.curve_seconds,
        improvements=run.improvements,
        extra={} if run.load_penalty is None else {"load_penalty": run.load_penalty},
    )
