"""The front door: ``glns.solve``."""

from __future__ import annotations

import contextlib
import random
import types
from typing import Any, Iterable, Sequence

import numpy as np

from glns import operators as _ops
from glns._core._alns import run_alns
from glns._core._result import OperatorRecord, RunResult
from glns._core._settings import RunSettings
from glns.exceptions import OperatorError
from glns.operators.bridge import alarm_installed
from glns.params import SolveParams
from glns.problems import Problem
from glns.result import OperatorStats, Result

__all__ = ["solve", "DEFAULT_DESTROY", "DEFAULT_REPAIR", "DEFAULT_ITERATIONS"]

# The default portfolio, tuned with tools/tune_portfolio.py on generated instances only (see
# docs/portfolio.md): SISR string removal, and SISR's blink insertion next to regret-2, both
# ending with the native local search. With SolveParams' default destroy range
# (20-60 % of the nodes, at most 60) and scale-aware annealing.
DEFAULT_DESTROY = (_ops.native("string_removal"),)
DEFAULT_REPAIR = (_ops.native("blink_insertion", order=4, local_search=1),
                  _ops.native("regret_insertion", k=2, local_search=1))
#: iteration budget when neither iterations nor time_limit nor no_improvement is given
DEFAULT_ITERATIONS = 5000


def _as_list(spec: Any, default: Sequence[str], kind: str) -> list[Any]:
    if spec is None:
        return list(default)
    if isinstance(spec, (str, _ops.Operator)) or callable(spec):
        return [spec]
    try:
        return list(spec)
    except TypeError:
        raise OperatorError(f"cannot use {spec!r} as a {kind} operator") from None


def stop_settings(iterations: Any, time_limit: Any, no_improvement: Any) -> dict[str, Any]:
    """The core's stop settings from the budgets of :func:`solve`; ValueError for a bad one."""
    out: dict[str, Any] = {}
    if iterations is not None:
        if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 0:
            raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
        out["iterations"] = int(iterations)
    if time_limit is not None:
        if not time_limit > 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
        out["time_limit"] = float(time_limit)
    if no_improvement is not None:
        if isinstance(no_improvement, bool) or int(no_improvement) != no_improvement or no_improvement < 1:
            raise ValueError(f"no_improvement must be a positive integer, got {no_improvement!r}")
        out["no_improvement"] = int(no_improvement)
    return out


def refuse_module_as_repair(repair: Any) -> None:
    """An exported operator module goes alone in the destroy argument, never as repair."""
    if isinstance(repair, types.ModuleType):
        raise OperatorError(f"module {repair.__name__!r} passed as repair: pass an exported operator "
                            "module as the destroy argument, alone")


def module_operators(module: types.ModuleType, repair: Any, problem_kind: str) -> tuple[list, list]:
    """The (destroy, repair) operator lists an exported G-LNS module stands for.

    The module (see ``glns.evolution.export``) must define PROBLEM, DESTROY and REPAIR; its best
    pair BEST_DESTROY/BEST_REPAIR is used when both are set, else the populations. Raises
    OperatorError when `repair` is given too, when an attribute is missing, or when PROBLEM is
    not `problem_kind` (operators are only used on the kind of problem they were evolved for).
    """
    name = getattr(module, "__name__", "?")
    if repair is not None:
        raise OperatorError(f"module {name!r} passed with an explicit repair argument: pass the "
                            "module alone (runs its best pair) or module.DESTROY, module.REPAIR")
    missing = [a for a in ("PROBLEM", "DESTROY", "REPAIR") if not hasattr(module, a)]
    if missing:
        raise OperatorError(f"module {name!r} is not an exported G-LNS operator module: it has no "
                            f"{', '.join(missing)} (write one with glns.evolution.export.export_module)")
    evolved_for = str(module.PROBLEM).lower()
    if evolved_for != problem_kind:
        raise OperatorError(f"operators evolved for {evolved_for.upper()} used on a {problem_kind.upper()} "
                            f"(module {name!r}); a module only runs on the problem kind it was evolved for")
    best_d, best_r = getattr(module, "BEST_DESTROY", None), getattr(module, "BEST_REPAIR", None)
    if (best_d is None) != (best_r is None):
        raise OperatorError(f"module {name!r} has an incomplete best pair: BEST_DESTROY is {best_d!r}, "
                            f"BEST_REPAIR is {best_r!r}")
    if best_d is not None:
        return [best_d], [best_r]
    return list(module.DESTROY), list(module.REPAIR)


def solve(problem: Problem, destroy: Any = None, repair: Any = None, *,
          iterations: int | None = None, time_limit: float | None = None,
          no_improvement: int | None = None, seed: int = 0,
          params: SolveParams | None = None, initial_solution: Any = None) -> Result:
    """Solve a TSP, CVRP or OVRP instance with adaptive LNS.

    destroy, repair: one operator or a list; each a native name ("random_removal",
        "worst_removal", "greedy_insertion"), an :class:`glns.operators.Operator`, a Python
        callable with the signature of SPEC §3, or operator source code. Default: the tuned
        native portfolio ``DEFAULT_DESTROY`` / ``DEFAULT_REPAIR`` (string removal; blink and
        regret-2 insertion with local search). The paper's seeds are "random_removal",
        "worst_removal" and "greedy_insertion"; see ``glns.operators.NATIVE_OPERATORS`` for all.
        destroy may also be a module exported by a G-LNS run (``glns.evolution.export``), with
        repair left None: its best pair runs (its populations when it has no best pair). It
        must have been evolved for this problem's kind (TSP, CVRP and OVRP operators are never
        mixed); any mismatch raises OperatorError. ``solve(problem, module.DESTROY,
        module.REPAIR)`` runs its final populations.
    iterations, time_limit (seconds), no_improvement (iterations without a new best): stop at
        the first one reached; with none given, ``DEFAULT_ITERATIONS``.
    seed: the same seed gives the same result, Python operators included (their `random` and
        NumPy global streams are seeded from the run's stream before every call, and restored
        to the caller's state afterwards).
    params: :class:`SolveParams` (default: scale-aware annealing); ``SolveParams.paper()`` for
        the paper's preset.
    initial_solution: a feasible solution to start from (default: random, SPEC §2.1).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a glns TSP, CVRP or OVRP instance, got {type(problem).__name__}")
    params = params if params is not None else SolveParams()
    if not isinstance(params, SolveParams):
        raise TypeError(f"params must be SolveParams, got {type(params).__name__}")
    if iterations is None and time_limit is None and no_improvement is None:
        iterations = DEFAULT_ITERATIONS
    settings = params.to_core(problem.n_customers, **stop_settings(iterations, time_limit, no_improvement))
    if int(seed) != seed or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be a non-negative integer, got {seed} (largest: 2**64 - 1)")

    refuse_module_as_repair(repair)
    if isinstance(destroy, types.ModuleType):
        destroy, repair = module_operators(destroy, repair, problem.kind)
    destroy_ops = [_ops.resolve(s, "destroy") for s in _as_list(destroy, DEFAULT_DESTROY, "destroy")]
    repair_ops = [_ops.resolve(s, "repair") for s in _as_list(repair, DEFAULT_REPAIR, "repair")]
    if not destroy_ops or not repair_ops:
        raise ValueError("give at least one destroy and one repair operator")
    uses_python = not all(op.is_native for op in destroy_ops + repair_ops)
    # binding a Python operator may run probe calls (glns.operators.accelerate): they seed the
    # global random streams, so the caller's state is saved before and restored after it all
    saved = (random.getstate(), np.random.get_state()) if uses_python else None
    try:
        bound_d = [op.bind(problem, params.op_timeout, params) for op in destroy_ops]
        bound_r = [op.bind(problem, params.op_timeout, params) for op in repair_ops]
        with alarm_installed() if uses_python and params.op_timeout else contextlib.nullcontext():
            run = _run(problem, bound_d, bound_r, settings, int(seed), initial_solution)
    finally:
        if saved is not None:
            random.setstate(saved[0])
            np.random.set_state(saved[1])
    return _result(problem, run, destroy_ops, repair_ops, int(seed), bound_d, bound_r)


def _run(problem: Problem, bound_d: list, bound_r: list, settings: RunSettings, seed: int,
         initial_solution: Any) -> RunResult:
    return run_alns(problem.core, bound_d, bound_r, settings, seed, initial_solution)


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


def _result(problem: Problem, run: RunResult, destroy_ops: list, repair_ops: list,
            seed: int, bound_d: list, bound_r: list) -> Result:
    return Result(
        problem_kind=problem.kind, solution=run.best, cost=run.best_cost,
        iterations=run.iterations, runtime=run.runtime, seed=seed,
        best_curve=run.best_curve, current_curve=run.current_curve,
        iteration_seconds=run.iteration_seconds,
        destroy_stats=_stats(destroy_ops, run.destroy, bound_d),
        repair_stats=_stats(repair_ops, run.repair, bound_r),
        synergy=run.synergy, initial_temperature=run.initial_temperature,
    )
