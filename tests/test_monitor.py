"""Watching and steering a run (glns.monitor): Ctrl-C, callbacks, stop criteria, the progress
display and why a run stopped."""

import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import glns
from glns import Callbacks, MaxIterations, MaxRuntime, NoImprovement, Progress, TargetCost, datasets

CVRP = datasets.generate_cvrp(60, 3)


# ------------------------------------------------------------------ Ctrl-C

_CHILD = """
import sys, time
import glns
from glns import datasets
mode, interrupt = sys.argv[1], sys.argv[2]
p = datasets.generate_tsp(50, 1)
destroy = None
if mode == "python":
    def destroy(x, k, pd):
        t = time.perf_counter()
        while time.perf_counter() - t < 0.01:
            pass
        return x[:k], x[k:]
ready = glns.Callbacks(on_start=lambda problem: print("ready", flush=True))
try:
    r = glns.solve(p, destroy, time_limit=30, seed=1, interrupt=interrupt, callbacks=ready)
except KeyboardInterrupt:
    print("raised", time.time(), flush=True)
    sys.exit(0)
p.check(r.solution)
print(r.stop_reason, time.time(), r.runtime, r.iterations, r.cost == p.cost(r.solution), flush=True)
"""


def _interrupt_child(mode: str, interrupt: str = "return") -> tuple[list[str], float]:
    """Start a 30 s solve in a child, SIGINT it 1.5 s in: (its last line split, seconds from
    the signal to the end of glns.solve in the child)."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, mode, interrupt], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    sent = time.time()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=20)
    assert child.returncode == 0, err
    words = out.split()
    return words, float(words[1]) - sent


@pytest.mark.parametrize("mode", ["native", "python"])
def test_ctrl_c_returns_the_best_solution_so_far(mode):
    words, latency = _interrupt_child(mode)
    assert words[0] == "interrupted"
    assert float(words[2]) < 10.0 and int(words[3]) > 0 and words[4] == "True"
    assert latency < 2.0    # 0.02 s poll; the bound leaves room for a loaded machine


def test_ctrl_c_can_raise_instead():
    words, _ = _interrupt_child("native", "raise")
    assert words[0] == "raised"


# ------------------------------------------------------------------ stop criteria

def test_budgets_name_the_reason_they_stopped():
    assert glns.solve(CVRP, iterations=50).stop_reason == "iterations"
    assert glns.solve(CVRP, time_limit=0.2).stop_reason == "time_limit"
    assert glns.solve(CVRP, no_improvement=20).stop_reason == "no_improvement"


def test_built_in_criteria_are_the_budgets():
    plain = glns.solve(CVRP, iterations=300, seed=2)
    same = glns.solve(CVRP, stop=MaxIterations(300), seed=2)
    both = glns.solve(CVRP, iterations=1000, stop=[MaxIterations(300), NoImprovement(5000)], seed=2)
    for r in (same, both):
        assert r.solution == plain.solution and r.iterations == 300
        np.testing.assert_array_equal(r.best_curve, plain.best_curve)
    assert glns.solve(CVRP, stop=NoImprovement(30), seed=2).stop_reason == "no_improvement"
    assert glns.solve(CVRP, stop=MaxRuntime(0.2), seed=2).stop_reason == "time_limit"


def test_target_cost_stops_at_the_first_iteration_that_reaches_it():
    full = glns.solve(CVRP, iterations=800, seed=4)
    target = float(full.best_curve[399])
    first = int(np.argmax(full.best_curve <= target)) + 1
    r = glns.solve(CVRP, iterations=800, stop=TargetCost(target), seed=4)
    assert r.stop_reason == "target_cost" and r.iterations == first and r.cost <= target
    np.testing.assert_array_equal(r.best_curve, full.best_curve[:first])


def test_a_target_alone_runs_until_it_is_met():
    reachable = glns.solve(CVRP, iterations=300, seed=5).cost
    r = glns.solve(CVRP, stop=TargetCost(reachable * 1.01), seed=5)
    assert r.stop_reason == "target_cost" and r.cost <= reachable * 1.01


def test_a_callable_criterion_is_asked_while_the_run_goes_on():
    seen = []

    def enough(progress: Progress) -> bool:
        seen.append(progress)
        return progress.iteration >= 500

    r = glns.solve(CVRP, stop=enough, seed=1)
    assert r.stop_reason == "callback" and r.iterations >= 500
    assert seen[-1].iteration >= 500
    assert all(a.iteration <= b.iteration and a.seconds <= b.seconds for a, b in zip(seen, seen[1:]))
    assert all(p.best_cost == r.best_curve[p.iteration - 1] for p in seen if p.iteration > 0)


@pytest.mark.parametrize("stop, error", [(42, TypeError), ([MaxIterations(5), "x"], TypeError), ([], ValueError),
                                         (TargetCost(float("nan")), ValueError)])
def test_bad_criteria_are_clear_errors(stop, error):
    with pytest.raises(error):
        glns.solve(CVRP, stop=stop)


def test_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="interrupt"):
        glns.solve(CVRP, iterations=5, interrupt="ignore")
    with pytest.raises(TypeError, match="callbacks"):
        glns.solve(CVRP, iterations=5, callbacks=lambda *a: None)
    with pytest.raises(ValueError, match="every"):
        Callbacks(every=0)
    with pytest.raises(TypeError, match="on_best"):
        Callbacks(on_best=3)


# ------------------------------------------------------------------ callbacks

def test_callbacks_see_every_new_best_and_do_not_change_the_run():
    bests, rows, events = [], [], []
    cb = Callbacks(on_start=lambda p: events.append(("start", p)),
                   on_best=lambda s, c, i, t: bests.append((s, c, i, t)),
                   on_iteration=rows.append, every=50,
                   on_restart=lambda p: events.append(("restart", p.iteration)),
                   on_end=lambda r: events.append(("end", r)))
    plain = glns.solve(CVRP, iterations=600, seed=3, params=glns.SolveParams(restart=glns.Restart(stall=0.05)))
    r = glns.solve(CVRP, iterations=600, seed=3, params=glns.SolveParams(restart=glns.Restart(stall=0.05)),
                   callbacks=cb)
    assert r.solution == plain.solution and r.cost == plain.cost
    np.testing.assert_array_equal(r.best_curve, plain.best_curve)
    # one call per new best, each a feasible solution of exactly that cost, improving
    assert len(bests) == sum(s.outcomes[0] for s in r.destroy_stats)
    for sol, cost, it, _ in bests:
        assert CVRP.cost(sol) == pytest.approx(cost, rel=1e-12) and cost == r.best_curve[it - 1]
    assert all(b[1] < a[1] for a, b in zip(bests, bests[1:]))
    assert bests[-1][0] == r.solution
    assert [p.iteration for p in rows] == list(range(50, 600, 50))
    assert all(p.best_cost == r.best_curve[p.iteration - 1] and p.current_cost == r.current_curve[p.iteration - 1]
               for p in rows)
    assert events[0] == ("start", CVRP) and events[-1] == ("end", r)
    assert sum(1 for e in events if e[0] == "restart") == r.restarts > 0


def test_a_callback_can_stop_the_run():
    r = glns.solve(CVRP, iterations=5000, seed=1, callbacks=Callbacks(on_best=lambda *a: a[2] >= 20))
    assert r.stop_reason == "callback" and r.iterations < 5000
    r = glns.solve(CVRP, iterations=5000, seed=1,
                   callbacks=Callbacks(on_iteration=lambda p: p.iteration == 100, every=10))
    assert r.stop_reason == "callback" and r.iterations == 100


def test_an_exception_in_a_callback_reaches_the_caller():
    def broken(*args):
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError, match="callback bug"):
        glns.solve(CVRP, iterations=200, callbacks=Callbacks(on_best=broken))


def test_on_best_gets_the_callers_ids_on_a_renumbered_run():
    from glns.problems.renumber import RENUMBER_FROM, renumbered

    p = datasets.generate_cvrp(RENUMBER_FROM + 100, 2)
    assert renumbered(p) is not None
    bests = []
    r = glns.solve(p, iterations=30, seed=1, callbacks=Callbacks(on_best=lambda s, c, i, t: bests.append((s, c))))
    assert bests and bests[-1][0] == r.solution
    for sol, cost in bests:
        assert p.cost(sol) == pytest.approx(cost, rel=1e-9)


def test_python_operators_get_callbacks_too():
    from glns.operators.seeds import BY_PROBLEM

    seeds, bests = BY_PROBLEM["cvrp"], []
    r = glns.solve(CVRP, seeds.random_removal, seeds.greedy_insertion, iterations=80, seed=1,
                   callbacks=Callbacks(on_best=lambda *a: bests.append(a)))
    assert r.iterations == 80 and r.stop_reason == "iterations"
    assert len(bests) == r.destroy_stats[0].outcomes[0] > 0 and bests[-1][0] == r.solution


# ------------------------------------------------------------------ display

def test_display_prints_a_progress_table():
    out = io.StringIO()
    r = glns.solve(CVRP, time_limit=1.3, display=out)
    text = out.getvalue()
    assert "time (s)" in text and "iterations" in text and "best" in text
    assert "stopped: time_limit" in text
    rows = [line.split() for line in text.splitlines() if line.strip() and line.split()[0][0].isdigit()]
    assert len(rows) >= 2      # one after a second, one at the end
    assert int(rows[-1][1]) == r.iterations and float(rows[-1][2]) == pytest.approx(r.cost, rel=1e-5)


def test_cli_shows_progress_and_keeps_the_best_on_ctrl_c(tmp_path):
    out = tmp_path / "run.sol"
    child = subprocess.Popen([sys.executable, "-m", "glns", "solve", "--time-limit", "30", "--display",
                              "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while "time (s)" not in child.stderr.readline():     # the table's header: the run started
        assert child.poll() is None, child.stderr.read()
    time.sleep(1.2)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=20)
    assert child.returncode == 0, stderr
    assert "stopped: interrupted" in stderr and "stopped    interrupted" in stdout
    routes, cost = glns.read_solution(out)
    problem = datasets.generate("cvrp", 100, 0)
    assert problem.violation(routes) is None and problem.cost(routes) == pytest.approx(cost, abs=1e-3)


def test_cli_json_has_no_table_unless_asked(tmp_path):
    run = subprocess.run([sys.executable, "-m", "glns", "solve", "--iterations", "50", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "time (s)" not in run.stderr
    import json

    assert json.loads(run.stdout)["stop_reason"] == "iterations"


# ------------------------------------------------------------------ batches

_BATCH_CHILD = """
import sys, time
import glns
from glns import datasets
from glns.batch import TaskFailure
backend = sys.argv[1]
instances = [datasets.generate_cvrp(40, i) for i in range(6)]
print("ready", flush=True)
workers = 2 if backend == "process" else None
out = glns.solve_many(instances, time_limit=2.0, seed=1, workers=workers, backend=backend, errors="return",
                      progress=lambda done, total, failed: print("done", done, flush=True))
print(time.time(), flush=True)
for r in out:
    if isinstance(r, TaskFailure):
        print("failure", r.instance, r.status, flush=True)
    else:
        print("result", r.stop_reason, r.cost > 0, flush=True)
"""


@pytest.mark.parametrize("backend", ["process", "serial"])
def test_ctrl_c_stops_a_batch_and_keeps_what_finished(backend):
    child = subprocess.Popen([sys.executable, "-c", _BATCH_CHILD, backend], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    assert child.stdout.readline().split()[0] == "done"     # a first run finished
    time.sleep(0.5)       # into the next two-second run(s)
    sent = time.time()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    lines = [line for line in out.splitlines() if not line.startswith("done")]
    assert float(lines[0]) - sent < 2.0
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == 6
    finished = [r for r in rows if r[0] == "result" and r[1] == "time_limit"]
    assert finished and all(r[2] == "True" for r in rows if r[0] == "result")
    assert any(r[0] == "failure" and r[2] == "interrupted" for r in rows)
    if backend == "serial":      # the run under way keeps its best and ends the batch
        assert ["result", "interrupted", "True"] in rows


def test_ctrl_c_stops_glns_bench_and_a_rerun_finishes_it(tmp_path):
    out = tmp_path / "bench"
    cmd = [sys.executable, "-m", "glns", "bench", "synthetic", "--problems", "cvrp", "tsp", "--sizes", "10",
           "--instances", "2", "--solvers", "default", "--glns-time-limit", "3", "--workers", "2",
           "--out", str(out), "--no-progress"]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import json

    def saved_runs() -> int:
        try:
            return len(json.loads((out / "results.json").read_text())["runs"])
        except (OSError, ValueError):
            return 0

    deadline = time.time() + 60
    while saved_runs() < 2:       # the CVRP batch is saved: the TSP batch (3 s runs) is under way
        assert time.time() < deadline and child.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "interrupted; the finished batches are saved" in err
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert {r["group"].split("-")[0].lower()[:4] for r in runs} == {"cvrp"} and len(runs) == 2
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "1 batches already in" in again.stderr
    assert len(json.loads((out / "results.json").read_text())["runs"]) == 4


def test_solve_many_takes_built_in_stop_criteria_and_statistics():
    instances = [datasets.generate_cvrp(30, i) for i in range(3)]
    full = glns.solve_many(instances, iterations=400, seed=2, workers=2)
    target = [float(r.best_curve[150]) for r in full]
    # one target for all: the run of each instance stops at its first iteration at or below it
    out = glns.solve_many(instances, iterations=400, seed=2, workers=2, stop=TargetCost(max(target)),
                          statistics=16)
    for r, f in zip(out, full):
        first = int(np.argmax(f.best_curve <= max(target))) + 1
        assert r.stop_reason == "target_cost" and r.iterations == first
        assert len(r.curve_iterations) < 16
    with pytest.raises(ValueError, match="statistics must be"):
        glns.solve_many(instances, iterations=10, statistics="all")
