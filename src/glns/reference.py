"""Plain-Python reference of the adaptive LNS loop (docs/method.md), written the way the paper's
evaluator is: deep copies of Python lists and operators that take a random stream.

It consumes the same :class:`glns.rng.SplitMix64` stream as the native loop, in the same order,
so with the twins in :mod:`glns.operators.seeds` it replays a native run step by step. Tests use
it to check the core's sigma/weight/F/S bookkeeping; benchmarks use it as the pure-Python
baseline. It is not meant for production solving.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any, Callable, Sequence

import numpy as np

from glns._core._alns import CROSSOVER_TRIES, REFERENCE_GRANULAR
from glns.operators.library.crossover import route_crossover
from glns.operators.library.local_search import LoadPenalty, local_search as twin_local_search
from glns.operators.library.repair import blink_insertion
from glns.params import FixedTemperature, SolveParams
from glns.problems import Problem
from glns.problems.solutions import matrix_cost, random_solution, solution_cost
from glns.problems.space_filling import start_solution
from glns.rng import SplitMix64

__all__ = ["solution_cost", "matrix_cost", "random_solution", "reference_cost", "reference_alns"]

#: the seed offset the core uses for the stream that builds the temperature's reference cost
_REFERENCE_SEED_XOR = 0x5DEECE66D


def reference_cost(problem: Problem, seed: int) -> float:
    """Twin of the core's cost scale: blink insertion of all nodes in a random order without
    blinks (greedy insertion after the shuffle); on a large tour next to each city's nearest."""
    n0, g = REFERENCE_GRANULAR
    granular = not problem.has_depot and problem.n_customers >= n0
    nodes = list(range(problem.first_node, problem.n_nodes))
    sol = blink_insertion([], nodes, problem.problem_data(), SplitMix64(seed), order=0, blink_rate=0.0,
                          neighbours=g if granular else 0)
    return solution_cost(problem, sol)


def _roulette(weights: Sequence[float], adaptive: bool, rng: SplitMix64) -> int:
    u = rng.random()
    m = len(weights)
    if not adaptive or not sum(weights) > 0:
        return min(int(u * m), m - 1)
    u *= sum(weights)
    acc = 0.0
    for i, w in enumerate(weights):
        acc += w
        if u < acc:
            return i
    return m - 1


def reseeding(op: Any) -> Callable:
    """A Python operator as an operator of :func:`reference_alns`, which also takes the run's
    stream: before each call it reseeds ``random`` and NumPy's global generator with one draw,
    exactly as the core does, so the reference loop replays the native loop's trajectory with
    the same Python operators. op: a :class:`glns.operators.Operator` (its third argument is
    the dict or the bare matrix, as its ``convention`` says) or a function taking the dict."""
    func = getattr(op, "func", op)
    bare_matrix = getattr(op, "convention", "problem_data") == "distance_matrix"

    def call(first: Any, second: Any, problem_data: dict, rng: SplitMix64) -> Any:
        s = rng.next_u64() >> 32
        random.seed(s)
        np.random.seed(s)
        return func(first, second, problem_data["distance_matrix"] if bare_matrix else problem_data)

    return call


def reference_alns(problem: Problem, destroy: Sequence[Callable], repair: Sequence[Callable],
                   iterations: int, seed: int = 0,
                   params: SolveParams | None = None, timed: bool = False,
                   local_search: Sequence[int] | None = None) -> dict[str, Any]:
    """Run the loop in plain Python with operators ``op(x, k_or_removed, problem_data, rng)``.

    timed: replay the first `iterations` iterations of a run with only a time limit (its
    annealing in epochs, glns.params.Epochs, when params has them and AutoTemperature),
    instead of a run with an iteration budget.
    local_search: per repair, the level of the twin local search that follows it from the
    reinserted nodes (0: none), as a native repair's ``local_search`` setting; with
    penalised loads (``params.load_penalty``) it is the penalised search, whose overloaded results are dropped
    (sigma4) as in the core.

    Returns the same statistics as the core: best/current curves, per-operator calls,
    outcomes, weights, fitness, and the synergy matrix; and how many epochs began from an
    elite solution other than the best (``epochs_from_elite``, Epochs.elite), and how many from
    a crossover's child (``crossovers``, Epochs.crossover).
    """
    params = params or SolveParams()
    rng = SplitMix64(seed)
    data = problem.problem_data()
    sigma = params.scores
    lam = params.decay
    nd, nr = len(destroy), len(repair)
    wd, wr = [1.0] * nd, [1.0] * nr
    fd, fr = [0.0] * nd, [0.0] * nr
    out_d = [[0] * 4 for _ in range(nd)]
    out_r = [[0] * 4 for _ in range(nr)]
    synergy = np.zeros((nd, nr))
    tour = not problem.has_depot
    k_min, k_max = params.destroy_range(problem.n_customers, tour, problem.customers_per_route)

    given = start_solution(problem, params.initial)

    def new_start() -> Any:
        """The run's start, and each independent start's: the given one, or one from the stream."""
        return random_solution(problem, rng) if given is None else copy.deepcopy(given)

    cur = new_start()
    cur_cost = solution_cost(problem, cur)
    best, best_cost = copy.deepcopy(cur), cur_cost
    levels = list(local_search) if local_search is not None else [0] * nr
    penalty = None
    share = params.load_penalty_share(problem.customers_per_route, problem.n_customers)
    if share and problem.has_depot and problem.capacity:
        total = int(np.asarray(data["demands"])[1:].sum())
        penalty = LoadPenalty(share, max(cur_cost, 1e-9) / max(total, 1))
    temp = params.temperature
    if isinstance(temp, FixedTemperature):
        T, alpha, T_end = temp.t0, temp.alpha, None
    else:
        scale = reference_cost(problem, seed ^ _REFERENCE_SEED_XOR)
        T = -params.temperature_schedule(problem.n_customers, tour).worse * scale / math.log(temp.accept)
        alpha = temp.end_ratio ** (1.0 / iterations) if T > 0 and iterations > 0 else 1.0
        T_end = T * temp.end_ratio
    t0 = T
    epochs = params.epochs if timed and T_end is not None else None
    if timed:
        # a time-only budget: epochs, or (without them) a wall-time schedule this replay
        # cannot follow
        if epochs is None:
            raise ValueError("timed replays need Epochs and AutoTemperature")
        epoch_len = epochs.first_iterations(problem.n_customers)
        epoch_end = epoch_len
        alpha = temp.end_ratio ** (1.0 / epoch_len) if T > 0 else 1.0
        starts_left = epochs.starts - 1
    elite: list[tuple[float, Any]] = []     # the best distinct ends of earlier epochs (Epochs.elite)

    def offer_elite(cost: float, sol: Any) -> None:
        """An epoch's last solution joins the pool, as in the core: while there is room, or in
        place of the worst when better; a cost already there is kept once (so costs differ)."""
        if any(c == cost for c, _ in elite):
            return
        if len(elite) < epochs.elite:
            elite.append((cost, copy.deepcopy(sol)))
            return
        worst = max(range(len(elite)), key=lambda i: elite[i][0])
        if cost < elite[worst][0]:
            elite[worst] = (cost, copy.deepcopy(sol))
    stall = (max(1, int(params.restart.stall * iterations))
             if params.restart and iterations > 0 and not timed else None)
    since_anchor = restarts = from_elite = crossovers = 0
    best_curve, cur_curve = [], []
    for it in range(iterations):
        if stall is not None and since_anchor >= stall:
            # a restart: back to the best solution, at a fraction of the start temperature
            cur, cur_cost = copy.deepcopy(best), best_cost
            restarts += 1
            since_anchor = 0
            T = t0 * params.restart.temperature
            if T_end is not None and T > 0:
                alpha = (T_end / T) ** (1.0 / (iterations - it))
        if epochs is not None and it >= epoch_end and starts_left > 0:
            # an independent start: as long as the first epoch, from a new start at T0
            starts_left -= 1
            if epochs.elite > 1:
                offer_elite(cur_cost, cur)
            fresh = new_start()
            fleet = getattr(problem, "vehicles", None) if problem.timed else None
            if not (fleet and len(fresh) > fleet):
                cur, cur_cost = fresh, solution_cost(problem, fresh)
            restarts += 1
            epoch_end = it + epoch_len
            T = t0
        elif epochs is not None and it >= epoch_end:
            # the next epoch: from the best solution (or one drawn from the best and the elite
            # of earlier epochs' ends), cooling from epochs.temperature * T0
            start, start_cost = best, best_cost
            if epochs.elite > 1 and epochs.crossover and problem.has_depot:
                offer_elite(cur_cost, cur)
                for _ in range(CROSSOVER_TRIES):     # the cheapest child below the best
                    j = rng.randrange(len(elite))
                    if elite[j][0] == best_cost:
                        continue
                    child = route_crossover(best, elite[j][1], data, rng, problem.core.near,
                                            epochs.crossover, getattr(problem, "vehicles", None))
                    if child is None or (problem.timed and problem.violation(child) is not None):
                        continue
                    child_cost = solution_cost(problem, child)
                    if child_cost < start_cost:
                        start, start_cost = child, child_cost
                if start is not best:
                    crossovers += 1
                    best, best_cost = copy.deepcopy(start), start_cost
            elif epochs.elite > 1:
                offer_elite(cur_cost, cur)
                j = rng.randrange(len(elite) + 1)
                if j < len(elite):
                    start_cost, start = elite[j]
                    from_elite += start_cost != best_cost
            cur, cur_cost = copy.deepcopy(start), start_cost
            restarts += 1
            epoch_len = int(min(epoch_len * epochs.growth, 4.0e18))
            epoch_end = it + epoch_len
            T = t0 * epochs.temperature
            alpha = (T_end / T) ** (1.0 / epoch_len) if T > 0 else 1.0
        d = _roulette(wd, params.adaptive, rng)
        r = _roulette(wr, params.adaptive, rng)
        k = k_min + rng.randrange(k_max - k_min + 1) if k_max > k_min else k_min
        removed, partial = destroy[d](copy.deepcopy(cur), k, data, rng)
        cand = repair[r](partial, removed, data, rng)
        cand = [list(route) for route in cand if route] if problem.has_depot else list(cand)
        fits = True
        if levels[r] and penalty is not None:
            cand, fits = penalty.search(cand, data, removed, levels[r])
        elif levels[r]:
            cand = twin_local_search(cand, data, removed, level=levels[r])
        cand_cost = solution_cost(problem, cand)
        if not fits:
            s = 3                   # left overloaded: dropped
        elif problem.timed and problem.violation(cand) is not None:
            s = 3                   # the core rejects a candidate that breaks a window
        elif cand_cost < best_cost:
            s = 0
        elif cand_cost < cur_cost:
            s = 1
        elif T > 0 and rng.random() < math.exp(-(cand_cost - cur_cost) / T):
            s = 2
        else:
            s = 3
        if s <= 2:
            cur, cur_cost = cand, cand_cost
        if s == 0:
            best, best_cost = copy.deepcopy(cur), cur_cost
        wd[d] = lam * wd[d] + (1 - lam) * sigma[s]
        wr[r] = lam * wr[r] + (1 - lam) * sigma[s]
        fd[d] += sigma[s]
        fr[r] += sigma[s]
        out_d[d][s] += 1
        out_r[r][s] += 1
        synergy[d, r] += sigma[s]
        since_anchor = 0 if s == 0 else since_anchor + 1
        T *= alpha
        best_curve.append(best_cost)
        cur_curve.append(cur_cost)
    return {
        "best": best, "best_cost": best_cost, "best_curve": np.array(best_curve),
        "current_curve": np.array(cur_curve), "destroy_weights": np.array(wd),
        "repair_weights": np.array(wr), "destroy_fitness": np.array(fd),
        "repair_fitness": np.array(fr), "destroy_outcomes": np.array(out_d).reshape(nd, 4),
        "repair_outcomes": np.array(out_r).reshape(nr, 4), "synergy": synergy,
        "initial_temperature": t0, "restarts": restarts, "epochs_from_elite": from_elite,
        "crossovers": crossovers,
        "load_penalty": None if penalty is None or not penalty.stats["searches"]
        else {"weight": penalty.weight, **penalty.stats},
    }
