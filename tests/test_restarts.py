"""Restarts from the best solution when the search stalls (glns.params.Restart).

The iteration-budget path is replayed exactly by the plain-Python loop (test_alns_reference);
here: the time-budget path, the no_improvement stop that restarts must not reset, presets and
validation."""

import numpy as np
import pytest

import glns
from glns.params import Restart

from conftest import make_problem


def test_a_time_budget_restarts_after_a_stall_of_its_share_of_the_time():
    problem = make_problem("cvrp", 12, 2, capacity=20)     # solved in a few iterations
    # (without epochs: they replace the stall restarts of a time budget, test_epochs)
    often = glns.SolveParams(restart=Restart(stall=0.1, temperature=0.5), epochs=None)
    result = glns.solve(problem, time_limit=0.3, seed=1, params=often)
    assert result.restarts >= 2
    # at most one restart per stall: the last new best or restart is at least 0.03 s back
    assert result.restarts <= 10
    never = glns.solve(problem, time_limit=0.3, seed=1, params=glns.SolveParams(restart=None, epochs=None))
    assert never.restarts == 0


def test_restarts_do_not_reset_the_no_improvement_stop():
    problem = make_problem("tsp", 30, 4, capacity=1)
    params = glns.SolveParams(restart=Restart(stall=0.001, temperature=0.5))   # every 10 iterations
    result = glns.solve(problem, iterations=10_000, no_improvement=200, seed=2, params=params)
    assert result.restarts >= 5
    assert result.iterations < 10_000
    curve = result.best_curve
    improved = np.flatnonzero(np.diff(curve) < 0)
    assert improved.size >= 1
    last_best = int(improved.max()) + 1      # the iteration that found the last new best
    # the stop came exactly no_improvement iterations after the last new best
    assert result.iterations - 1 - last_best == 200


def test_the_paper_preset_has_no_restarts_and_the_default_has():
    assert glns.SolveParams.paper().restart is None
    assert glns.SolveParams().restart == Restart(stall=0.2, temperature=0.1)
    settings = glns.SolveParams().to_core(100, iterations=1000)
    assert (settings.restart_stall, settings.restart_temperature) == (0.2, 0.1)
    assert glns.SolveParams.paper().to_core(100, iterations=1000).restart_stall == 0.0


def test_a_restart_never_loses_the_best_solution():
    problem = make_problem("ovrp", 40, 5, capacity=25)
    params = glns.SolveParams(restart=Restart(stall=0.02, temperature=1.0))
    result = glns.solve(problem, iterations=2000, seed=3, params=params)
    assert result.restarts >= 3
    assert np.all(np.diff(result.best_curve) <= 0)
    assert result.cost == result.best_curve[-1]
    problem.check(result.solution)


@pytest.mark.parametrize("bad", [dict(stall=0), dict(stall=1.5), dict(temperature=-0.1),
                                 dict(temperature=float("inf"))])
def test_invalid_restarts_are_refused(bad):
    with pytest.raises(ValueError):
        Restart(**bad)


def test_restart_must_be_a_restart():
    with pytest.raises(ValueError, match="restart must be Restart or None"):
        glns.SolveParams(restart=0.2)
