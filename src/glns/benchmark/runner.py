"""Run a benchmark: every solver on every group of instances, one record per run.

Decisions:

- Every run of every solver goes through a process pool (:func:`glns.batch.make_executor`, a
  fresh one per (group, solver) batch): glns configurations via :func:`glns.solve_many`
  (instance i of a group runs with seed ``glns.rng.run_seed(seed, i)``, i its position in the
  whole group before ``--every``; with budgets per instance, ``--time-per-100``, or with
  ``--every``, through solve_many's task functions, one task per instance), baselines via
  :func:`glns.benchmark.baselines.run_baseline` with the same seed (below 2**31, which every
  baseline accepts). One run per core at a time, so time-limited solvers get a whole core each.
- Costs are never taken from a solver's word: every returned solution is checked with
  ``problem.check`` and costed with ``problem.cost``; an infeasible one becomes a failed run.
  A VRPTW solution is checked and costed once more by plain Python code that shares nothing
  with the core (``glns.problems.vrptw.plain_check``).
- A failed run (crash, timeout, infeasible answer) is recorded with its error and left out of
  the means; the batch goes on.
- The records are written to ``results.json`` after every (group, solver) batch; a run started
  again on the same directory with the same settings skips the batches already there.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from glns.batch import make_executor, solve_many
from glns.batch.solve_many import NO_DEADLINE, TaskFailure, run_solve_tasks
from glns.executors.confinement import check_mode
from glns.sandbox.confine import sandbox_confinement
from glns.benchmark.solvers import SolverSpec
from glns.benchmark.suites import Group
from glns.executors import check_workers, usable_cores
from glns.params import SolveParams
from glns.problems import Problem
from glns.result import Result
from glns.rng import run_seed
from glns.sandbox.evaluation import failure_message, operator_wires, solve_tasks

__all__ = ["Settings", "run_benchmark", "baseline_task", "glns_curve", "operator_stats"]

#: seeds handed to baselines stay below this (PyVRP, alns and random.Random all accept it)
BASELINE_SEED_BOUND = 2**31


@dataclass(frozen=True)
class Settings:
    """Budgets and execution of a benchmark.

    iterations: per run of glns configurations and iteration-based baselines (alns).
    time_limit: seconds per run of time-based baselines (OR-Tools, PyVRP).
    lkh_runs: LKH-3's independent runs per instance (elkai's default 10).
    glns_time_limit: if set, glns configurations run for this many seconds instead of
    ``iterations``. seed: master seed. workers: processes (None: all cores).
    task_timeout: seconds after which a run is killed and recorded as failed (None: twice the
    run's time limit plus a minute for time-limited runs, no limit for the others).
    time_per_100: if set, every glns configuration and every time- or runs-based baseline
    (OR-Tools, PyVRP, LKH-3) runs for ``time_per_100 * n / 100`` seconds on an instance of n
    customers (TSP: cities), instead of the budgets above (alns keeps ``iterations``).
    sandbox: confinement of the processes that run glns configurations, for operators that
    are untrusted code ("auto", "strict" or "off"; docs/sandbox.md). Baselines run unconfined.
    """

    iterations: int = 500
    time_limit: float = 5.0
    lkh_runs: int = 10
    glns_time_limit: float | None = None
    seed: int = 0
    workers: int | None = None
    task_timeout: float | None = None
    time_per_100: float | None = None
    sandbox: str = "off"

    def __post_init__(self) -> None:
        check_workers(self.workers)   # before any instance is loaded or solver started
        check_mode(self.sandbox)
        if self.time_per_100 is not None and not (self.time_per_100 > 0 and math.isfinite(self.time_per_100)):
            raise ValueError(f"time_per_100 must be a finite number of seconds > 0, got {self.time_per_100!r}")

    def scaled(self, spec: SolverSpec) -> bool:
        """Whether ``spec``'s runs get the size-proportional budget (``time_per_100``)."""
        return self.time_per_100 is not None and (spec.kind == "glns" or spec.budget in ("time", "runs"))

    def budget_of(self, spec: SolverSpec, n: int | None = None) -> dict[str, Any]:
        """The budget arguments of one run of ``spec`` on an instance of ``n`` customers. Under
        ``time_per_100`` and without ``n``, the rule itself: ``{"time_per_100": seconds}``."""
        if self.scaled(spec):
            assert self.time_per_100 is not None
            return {"time_per_100": self.time_per_100} if n is None else {"time_limit": self.time_per_100 * n / 100}
        if spec.kind == "glns":
            return {"time_limit": self.glns_time_limit} if self.glns_time_limit else {"iterations": self.iterations}
        if spec.budget == "runs":     # LKH: its restarts, not the iterations of an LNS
            return {"iterations": self.lkh_runs}
        return {"time_limit": self.time_limit} if spec.budget == "time" else {"iterations": self.iterations}

    def expected_seconds(self, spec: SolverSpec, n: int | None = None) -> float | None:
        """Seconds one run on ``n`` customers takes by its budget, when it is a time (else None)."""
        if self.scaled(spec) and n is None:
            return None
        return self.budget_of(spec, n).get("time_limit")

    def timeout_of(self, budget: dict[str, Any]) -> float | None:
        """The kill deadline of a run with this budget: ``task_timeout``, else twice its time
        limit plus a minute (a time budget scales its deadline with it), else None."""
        if self.task_timeout is not None:
            return self.task_timeout
        return 2 * budget["time_limit"] + 60 if "time_limit" in budget else None


def glns_curve(result: Result) -> dict[str, list]:
    """Best-so-far after the first iteration, at each improvement and after the last iteration
    of a glns run: iteration (1-based), seconds since the run started, cost; and the run's
    number of restarts. From ``result.improvements``, whatever the run's length."""
    imp = np.asarray(result.improvements, dtype=np.float64).reshape(-1, 3)
    if result.iterations == 0 or imp.shape[0] == 0:
        return {"iteration": [], "seconds": [], "cost": [], "restarts": result.restarts}
    points = [(int(it), float(s), float(c)) for it, s, c in imp if it >= 1]
    if not points or points[0][0] != 1:      # iteration 1 kept the start's cost
        points.insert(0, (1, _seconds_at(result, 1, float(imp[0, 1])), float(imp[imp[:, 0] <= 1][-1, 2])))
    if points[-1][0] != result.iterations:
        points.append((result.iterations, _seconds_at(result, result.iterations, result.runtime),
                       points[-1][2]))
    it, seconds, cost = zip(*points)
    return {"iteration": list(it), "seconds": list(seconds), "cost": list(cost), "restarts": result.restarts}


def _seconds_at(result: Result, iteration: int, otherwise: float) -> float:
    """Seconds since the start at the end of `iteration`, when the curves kept it."""
    i = int(np.searchsorted(result.curve_iterations, iteration))
    if i < len(result.curve_iterations) and result.curve_iterations[i] == iteration:
        return float(result.curve_seconds[i])
    return otherwise


def operator_stats(result: Result) -> dict[str, Any]:
    """The operators of a glns run: names, final weights, calls, how each ran (its form: native,
    or a Python operator's data view and compiled or not) and the synergy matrix S[d][r]."""
    return {"destroy": [s.name for s in result.destroy_stats], "repair": [s.name for s in result.repair_stats],
            "destroy_weights": [s.weight for s in result.destroy_stats],
            "repair_weights": [s.weight for s in result.repair_stats],
            "destroy_calls": [s.calls for s in result.destroy_stats],
            "repair_calls": [s.calls for s in result.repair_stats],
            "destroy_forms": [s.form for s in result.destroy_stats],
            "repair_forms": [s.form for s in result.repair_stats],
            "synergy": np.asarray(result.synergy).tolist()}


def baseline_task(name: str, problem: Problem, budget: dict[str, Any], seed: int) -> Any:
    """One baseline run (executed in a worker)."""
    from glns.benchmark.baselines import run_baseline

    return run_baseline(name, problem, seed=seed, **budget)


def _checked_cost(problem: Problem, solution: Any) -> tuple[float | None, str | None]:
    err = problem.violation(solution) if solution is not None else "no solution"
    if err is not None:
        return None, f"infeasible solution: {err}"
    cost = float(problem.cost(solution))
    if problem.timed:   # and again by code that shares nothing with the core
        from glns.problems.vrptw import plain_check

        err, total = plain_check(problem, problem.routes_of(solution))
        if err is not None:
            return None, f"infeasible solution (plain check): {err}"
        if abs(total - cost) > 1e-6 * max(1.0, abs(cost)):
            return None, f"the core's cost {cost} is not the plain sum {total}"
    return cost, None


def _record(group: Group, i: int, spec: SolverSpec, seed: int, solution: Any, seconds: float | None,
            iterations: int | None, curve: dict | None, operators: dict | None, error: str | None) -> dict:
    problem = group.instances[i]
    cost = None
    if error is None:
        cost, error = _checked_cost(problem, solution)
    ref = group.references[i]
    gap = 100.0 * (cost / ref - 1.0) if cost is not None and ref else None
    return {"group": group.name, "problem": group.problem, "instance": problem.name,
            "locator": group.locators[i], "solver": spec.name, "seed": seed, "cost": cost,
            "reference": ref, "gap": gap, "seconds": seconds, "iterations": iterations,
            "solution": solution if cost is not None else None, "curve": curve,
            "operators": operators, "error": error}


class Progress:
    """Progress lines on stderr: the current batch per instance with its ETA, and the whole
    benchmark's ETA. On a terminal the line is rewritten in place; in a log, a line at most
    every ``log_every`` seconds and at the end of every batch."""

    def __init__(self, batches: Sequence[tuple[Group, SolverSpec]], settings: Settings, workers: int,
                 stream: Any = None, enabled: bool = True, log_every: float = 10.0) -> None:
        self.batches, self.settings, self.workers = list(batches), settings, workers
        self.stream = stream or sys.stderr
        self.enabled, self.log_every = enabled, log_every
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.per_task: dict[str, list[float]] = {}     # solver -> seconds per finished task (wall/worker)
        self.index = -1
        self.last_print = self.t0

    def start_batch(self, index: int) -> None:
        self.index, self.batch_t0, self.done, self.failed = index, time.monotonic(), 0, 0

    def _estimate(self, spec: SolverSpec, n: int | None = None) -> float:
        fixed = self.settings.expected_seconds(spec, n)
        if fixed is not None:
            return fixed
        seen = self.per_task.get(spec.name) or [x for v in self.per_task.values() for x in v]
        return float(np.mean(seen)) if seen else 1.0

    def task_done(self, ok: bool) -> None:
        group, spec = self.batches[self.index]
        self.done += 1
        self.failed += not ok
        elapsed = time.monotonic() - self.batch_t0
        # seconds of one worker per task, from this batch so far (used for later batches)
        self.per_task[spec.name] = [elapsed * min(self.workers, len(group)) / self.done]
        left = len(group) - self.done
        eta = elapsed / self.done * left
        rest = sum(self._estimate(s, p.n_customers) for g, s in self.batches[self.index + 1:]
                   for p in g.instances) / self.workers
        fail = f", {self.failed} failed" if self.failed else ""
        line = (f"[{self.index + 1}/{len(self.batches)}] {group.name} {spec.name}: {self.done}/{len(group)}"
                f"{fail}, {elapsed:.0f} s, ETA {_duration(eta)} (all: {_duration(eta + rest)})")
        self._print(line, final=left == 0)

    def skip(self, index: int, why: str) -> None:
        group, spec = self.batches[index]
        self._print(f"[{index + 1}/{len(self.batches)}] {group.name} {spec.name}: {why}", final=True)

    def _print(self, line: str, final: bool) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + line.ljust(100) + ("\n" if final else ""))
        elif final or now - self.last_print >= self.log_every:
            self.stream.write(line + "\n")
            self.last_print = now
        self.stream.flush()


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _failure_tracker(on_task: Callable[[bool], None]) -> Callable[[int, int, int], None]:
    """solve_many's progress(done, total, failed) as one on_task(ok) call per finished task."""
    seen = {"failed": 0}

    def progress(done: int, total: int, failed: int) -> None:
        on_task(failed == seen["failed"])
        seen["failed"] = failed

    return progress


def _run_glns(ex: Any, group: Group, spec: SolverSpec, settings: Settings,
              on_task: Callable[[bool], None]) -> list[dict]:
    budgets = [settings.budget_of(spec, p.n_customers) for p in group.instances]
    seeds = [run_seed(settings.seed, k) for k in group.seed_positions()]
    if all(b == budgets[0] for b in budgets) and group.positions is None:
        results = solve_many(group.instances, spec.destroy, spec.repair, seed=settings.seed, params=spec.params,
                             executor=ex, errors="return", task_timeout=settings.timeout_of(budgets[0]),
                             progress=_failure_tracker(on_task), **budgets[0])
    else:
        results = _solve_each(ex, group, spec, settings, budgets, seeds, on_task)
    if any(isinstance(res, TaskFailure) and res.status == "interrupted" for res in results):
        raise KeyboardInterrupt     # Ctrl-C: this batch is not finished (it runs again on a rerun)
    records = []
    for i, (res, seed) in enumerate(zip(results, seeds)):
        if isinstance(res, TaskFailure):
            records.append(_record(group, i, spec, seed, None, None, None, None, None,
                                   f"{res.status}: {res.error}"))
        else:
            records.append(_record(group, i, spec, seed, res.solution, float(res.extra.get("task_seconds", res.runtime)),
                                   res.iterations, glns_curve(res), operator_stats(res), None))
    return records


def _solve_each(ex: Any, group: Group, spec: SolverSpec, settings: Settings, budgets: list[dict[str, Any]],
                seeds: list[int], on_task: Callable[[bool], None]) -> list[Result | TaskFailure]:
    """solve_many's runs, with a budget, deadline and seed per instance (solve_many takes one
    budget per call and numbers the seeds 0, 1, ...; a call per instance would leave cores
    idle)."""
    params = spec.params if spec.params is not None else SolveParams()
    wires = operator_wires(spec.destroy, spec.repair, {group.problem})
    tasks = [solve_tasks([p], [s], wires, b.get("iterations"), params, b.get("time_limit"))[0]
             for p, s, b in zip(group.instances, seeds, budgets)]
    deadlines = [settings.timeout_of(b) or NO_DEADLINE for b in budgets]
    return run_solve_tasks(ex, tasks, seeds, deadlines, report=_failure_tracker(on_task))


def _run_baseline(ex: Any, group: Group, spec: SolverSpec, settings: Settings,
                  on_task: Callable[[bool], None]) -> list[dict]:
    budgets = [settings.budget_of(spec, p.n_customers) for p in group.instances]
    seeds = [run_seed(settings.seed, k) % BASELINE_SEED_BOUND for k in group.seed_positions()]
    timeouts = [settings.timeout_of(b) or NO_DEADLINE for b in budgets]
    tasks = [(spec.name, p, b, s) for p, b, s in zip(group.instances, budgets, seeds)]
    answers = ex.map(baseline_task, tasks, timeout=timeouts, on_result=lambda j, res: on_task(res.ok))
    records = []
    for i, res in enumerate(answers):
        if not res.ok:   # TaskResult has a message, not an error
            records.append(_record(group, i, spec, seeds[i], None, None, None, None, None,
                                   f"{res.status}: {failure_message(res, timeouts[i])}"))
            continue
        run = res.value
        records.append(_record(group, i, spec, seeds[i], run.solution, float(run.seconds), run.iterations,
                               run.curve, None, None))
    return records


def run_benchmark(groups: Sequence[Group], solvers: Sequence[SolverSpec], settings: Settings, *,
                  done: dict[tuple[str, str], list[dict]] | None = None,
                  on_batch: Callable[[Group, SolverSpec, list[dict], float], None] | None = None,
                  progress: bool = True, stream: Any = None) -> list[dict]:
    """Run every solver on every group it solves; the run records, batch after batch.

    done: records of batches already run ((group, solver) -> records), which are kept and not
    run again. on_batch(group, solver, records, wall_seconds) after every batch that ran (the CLI
    saves the results there). Baselines whose package is missing must be filtered out before.
    """
    done = dict(done or {})
    batches = [(g, s) for g in groups for s in solvers if s.solves(g.problem)]
    records: list[dict] = []
    report = Progress([(g, s) for g, s in batches if (g.name, s.name) not in done], settings,
                      settings.workers or usable_cores(), stream=stream, enabled=progress)
    k = 0
    for group, spec in batches:
        if (group.name, spec.name) in done:
            records.extend(done[group.name, spec.name])
            continue
        report.start_batch(k)
        k += 1
        t = time.perf_counter()
        run = _run_glns if spec.kind == "glns" else _run_baseline
        # a pool per batch: glns workers keep every instance they built, which on the XXL
        # files (1 GB of distances each) must not pile up under the next solver's runs
        confined = sandbox_confinement(settings.sandbox) if spec.kind == "glns" else None
        with make_executor("process", settings.workers, sandbox=confined) as ex:
            batch = run(ex, group, spec, settings, report.task_done)
        wall = time.perf_counter() - t
        for r in batch:
            r["batch_seconds"] = wall
        records.extend(batch)
        if on_batch is not None:
            on_batch(group, spec, batch, wall)
    return records

