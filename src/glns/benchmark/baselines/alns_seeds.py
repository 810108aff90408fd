"""The ``alns`` package running glns's seed operators in pure Python: the paper's "G-LNS with
seed operators" (random and worst removal, greedy insertion) on a popular generic ALNS library.

Everything follows ``glns.SolveParams.paper()``: k = floor(0.2 n) nodes removed per iteration,
roulette wheel with scores (1.5, 1.2, 0.8, 0.1) and decay 0.5, and simulated annealing with the
paper's temperature (T0 = 100, T <- 0.97 T after every iteration; not ``autofit``), so the run
is comparable with ``glns.solve(p, ("random_removal", "worst_removal"), "greedy_insertion",
params=SolveParams.paper())``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from glns.benchmark.baselines._common import BaselineRun, best_so_far
from glns.operators.seeds import BY_PROBLEM
from glns.params import SolveParams
from glns.problems import Problem
from glns.reference import random_solution, solution_cost
from glns.rng import SplitMix64

#: the end temperature alns requires (> 0); far below what 500 paper iterations reach (2.4e-5)
_MIN_TEMPERATURE = 1e-300


class _GeneratorRandom:
    """The two methods the seed operators draw from (``random.random``/``randrange``) on a
    numpy Generator, so operators, selection and acceptance share alns's one seeded stream."""

    def __init__(self, gen: np.random.Generator) -> None:
        self._gen = gen

    def random(self) -> float:
        return float(self._gen.random())

    def randrange(self, n: int) -> int:
        return int(self._gen.integers(n))


class SeedState:
    """An alns State: a glns solution (complete, or partial with the removed nodes)."""

    def __init__(self, problem: Problem, solution: Any, removed: list[int] | None = None) -> None:
        self.problem = problem
        self.solution = solution
        self.removed = removed
        self._cost: float | None = None

    def objective(self) -> float:
        if self._cost is None:
            self._cost = solution_cost(self.problem, self.solution)
        return self._cost


def _destroy(op: Callable, data: dict, k_range: tuple[int, int]) -> Callable:
    k_lo, k_hi = k_range

    def destroy(state: SeedState, rng: np.random.Generator) -> SeedState:
        k = k_lo if k_hi == k_lo else k_lo + int(rng.integers(k_hi - k_lo + 1))
        removed, partial = op(state.solution, k, data, rng=_GeneratorRandom(rng))
        return SeedState(state.problem, partial, list(removed))

    destroy.__name__ = op.__name__
    return destroy


def _repair(op: Callable, data: dict, vrp: bool) -> Callable:
    def repair(state: SeedState, rng: np.random.Generator) -> SeedState:
        complete = op(state.solution, state.removed, data, rng=_GeneratorRandom(rng))
        solution = [list(r) for r in complete if r] if vrp else list(complete)
        return SeedState(state.problem, solution)

    repair.__name__ = op.__name__
    return repair


def solve(problem: Problem, iterations: int, time_limit: float | None, seed: int,
          version: str | None) -> BaselineRun:
    """``iterations`` ALNS iterations (and at most ``time_limit`` seconds when given) from
    glns's random initial solution for ``seed``; reproducible for a fixed seed and iteration
    budget."""
    from alns import ALNS
    from alns.accept import SimulatedAnnealing
    from alns.select import RouletteWheel
    from alns.stop import MaxIterations, MaxRuntime

    start = time.perf_counter()
    paper = SolveParams.paper()
    seeds = BY_PROBLEM[problem.kind]
    data = problem.problem_data()
    vrp = problem.kind != "tsp"
    solver = ALNS(np.random.default_rng(seed))
    for op in (seeds.random_removal, seeds.worst_removal):
        solver.add_destroy_operator(_destroy(op, data, paper.destroy_range(problem.n_customers)))
    solver.add_repair_operator(_repair(seeds.greedy_insertion, data, vrp))
    select = RouletteWheel(list(paper.scores), paper.decay, 2, 1)
    t0, alpha = paper.temperature.t0, paper.temperature.alpha
    accept = SimulatedAnnealing(t0, max(_MIN_TEMPERATURE, min(t0, t0 * alpha ** iterations)), alpha)
    by_count = MaxIterations(iterations)
    by_time = MaxRuntime(time_limit) if time_limit is not None else None

    def stop(rng: Any, best: Any, current: Any) -> bool:
        # evaluate both: MaxIterations counts its calls, MaxRuntime starts its clock on the first
        done = by_count(rng, best, current)
        return (by_time(rng, best, current) if by_time is not None else False) or done

    initial = SeedState(problem, random_solution(problem, SplitMix64(seed)))
    with np.errstate(over="ignore"):  # alns's exp(gain / T) overflows to inf (= accept) late on
        result = solver.iterate(initial, select, accept, stop)
    seconds = time.perf_counter() - start

    stats = result.statistics
    elapsed = np.concatenate([[0.0], np.cumsum(stats.runtimes)]) + (stats.start_time - start)
    objectives = stats.objectives  # the current cost after each iteration (index 0: initial)
    curve = best_so_far(zip(range(len(objectives)), elapsed, objectives), with_iterations=True)
    best = result.best_state.solution
    if not vrp:  # the same tour, read from city 0 like the other baselines'
        best = best[best.index(0):] + best[:best.index(0)]
    return BaselineRun(
        solution=best, seconds=seconds, iterations=len(objectives) - 1, curve=curve,
        info={"version": version, "max_iterations": iterations, "time_limit": time_limit,
              "seed": seed, "destroy_range": list(paper.destroy_range(problem.n_customers)),
              "scores": list(paper.scores), "decay": paper.decay,
              "temperature": f"paper: T0 {t0}, alpha {alpha}",
              "objective": result.best_state.objective()})
