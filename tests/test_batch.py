"""glns.solve_many and the executors (serial, process, Ray): same results everywhere, input order,
worker deaths retried and reported, precise argument errors; evaluate on every executor."""

import os
import signal
import sys
import textwrap
import types

import numpy as np
import pytest

import glns
from glns import datasets
from glns.batch import BatchError, SerialExecutor, TaskFailure, make_executor, solve_many
from glns.evolution.seeds import seed_source
from glns.rng import run_seed
from glns.sandbox import PythonSource, WorkerPool, evaluate

ITER = 40


def instances():
    return [datasets.generate_cvrp(12, 1), datasets.generate_tsp(9, 2), datasets.generate_ovrp(15, 3),
            datasets.generate_cvrp(3, 4), datasets.generate_cvrp(20, 5)]


def python_ops(problem):
    src = seed_source(problem, "random_removal"), seed_source(problem, "greedy_insertion")
    return ([PythonSource(src[0], "random_removal", "rr"), "worst_removal"],
            [PythonSource(src[1], "greedy_insertion", "gi")])


def fingerprint(r: glns.Result) -> tuple:
    """Everything of a result that does not depend on the clock."""
    stats = tuple((s.name, s.calls, s.outcomes, s.failures, s.weight, s.fitness)
                  for s in r.destroy_stats + r.repair_stats)
    return (r.problem_kind, r.cost, r.solution_array().tolist(), r.iterations, r.seed,
            r.best_curve.tolist(), r.current_curve.tolist(), r.synergy.tolist(), stats,
            r.initial_temperature)


def segfault_source(n_nodes: int, sig: str = "SIGSEGV") -> str:
    """A destroy that kills its process with `sig` on instances with n_nodes rows (SIGKILL is
    what the out-of-memory killer sends)."""
    return textwrap.dedent(f"""
        import os, random, signal

        def destroy(x, destroy_cnt, problem_data):
            if len(problem_data['distance_matrix']) == {n_nodes}:
                os.kill(os.getpid(), signal.{sig})
            routes = [list(r) for r in x]
            k = random.randrange(len(routes))
            return [routes[k].pop()], [r for r in routes if r]
    """)


def crash_once_source(marker: str) -> str:
    """A destroy that segfaults the first time it runs anywhere (marker file), then works."""
    return textwrap.dedent(f"""
        import os, random, signal

        def destroy(x, destroy_cnt, problem_data):
            try:   # O_EXCL: exactly one process creates the marker, even when two race for it
                os.close(os.open({marker!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGSEGV)
            routes = [list(r) for r in x]
            k = random.randrange(len(routes))
            return [routes[k].pop()], [r for r in routes if r]
    """)


@pytest.fixture(scope="module")
def pool2():
    with make_executor("process", 2) as ex:
        yield ex


# ============================================================================ identical results


@pytest.mark.parametrize("ops", ["native", "python", "import"])
def test_serial_and_process_backends_give_identical_results(pool2, ops):
    insts = [datasets.generate_cvrp(n, s) for n, s in ((12, 1), (25, 2), (3, 3), (18, 4))]
    from glns.operators.seeds import vrp

    ref_ops = None
    if ops == "native":
        d, r = ["random_removal", "worst_removal"], "greedy_insertion"
        ref_ops = d, r
    elif ops == "python":
        d, r = python_ops("cvrp")   # a PythonSource is only compiled in the workers
    else:
        d, r = ["glns.operators.seeds.vrp:random_removal", "worst_removal"], "glns.operators.seeds.vrp:greedy_insertion"
        ref_ops = [vrp.random_removal, "worst_removal"], vrp.greedy_insertion
    runs = [solve_many(insts, d, r, iterations=ITER, seed=11, backend="serial"),
            solve_many(insts, d, r, iterations=ITER, seed=11, workers=1),
            solve_many(insts, d, r, iterations=ITER, seed=11, executor=pool2)]
    prints = [[fingerprint(x) for x in run] for run in runs]
    assert prints[0] == prints[1] == prints[2]
    # and they are glns.solve's results with the derived seeds
    for i, (inst, res) in enumerate(zip(insts, runs[0])):
        assert res.seed == run_seed(11, i)
        if ref_ops is not None:
            ref = glns.solve(inst, *ref_ops, iterations=ITER, seed=run_seed(11, i))
            assert fingerprint(ref) == fingerprint(res)
    # another master seed gives other runs
    other = solve_many(insts, d, r, iterations=ITER, seed=12, executor=pool2)
    assert [x.seed for x in other] != [x.seed for x in runs[0]]


def test_input_order_is_kept_with_mixed_kinds_and_sizes(pool2):
    insts = instances()
    out = solve_many(insts, "random_removal", "greedy_insertion", iterations=10, executor=pool2)
    assert [r.problem_kind for r in out] == [p.kind for p in insts]
    # every node exactly once (the depot 0 of VRP solutions separates routes)
    visited = [sorted(int(v) for v in r.solution_array() if v or r.problem_kind == "tsp") for r in out]
    assert visited == [list(range(0 if p.kind == "tsp" else 1, p.n_nodes)) for p in insts]
    assert all(r.extra["attempts"] == 1 and r.extra["task_seconds"] > 0 for r in out)


def test_exported_module_runs_per_problem_kind(pool2):
    mod = types.ModuleType("evolved_cvrp")
    mod.PROBLEM, mod.DESTROY, mod.REPAIR = "cvrp", [glns.operators.native("random_removal")], \
        [glns.operators.native("greedy_insertion")]
    mod.BEST_DESTROY = mod.BEST_REPAIR = None
    insts = [datasets.generate_cvrp(10, s) for s in range(2)]
    out = solve_many(insts, mod, iterations=10, executor=pool2)
    assert [fingerprint(r) for r in out] == [fingerprint(r) for r in solve_many(
        insts, mod.DESTROY, mod.REPAIR, iterations=10, backend="serial")]
    with pytest.raises(glns.OperatorError, match="evolved for CVRP used on a TSP"):
        solve_many([datasets.generate_tsp(8, 1)], mod, iterations=10, executor=pool2)


def test_default_operators_and_stopping_rules(pool2):
    insts = [datasets.generate_cvrp(10, s) for s in range(2)]
    out = solve_many(insts, no_improvement=5, executor=pool2)
    ref = glns.solve(insts[1], no_improvement=5, seed=run_seed(0, 1))
    assert fingerprint(out[1]) == fingerprint(ref)
    assert [s.name for s in out[0].destroy_stats] == [op.name for op in glns.solve.__globals__["DEFAULT_DESTROY"]]


def test_default_portfolio_is_chosen_per_instance(pool2):
    # a large tour gets granular repairs by default, a small one not: as glns.solve does
    insts = [datasets.generate_tsp(30, 1), datasets.generate_tsp(420, 2)]
    out = solve_many(insts, iterations=4, executor=pool2)
    for i, inst in enumerate(insts):
        assert fingerprint(out[i]) == fingerprint(glns.solve(inst, iterations=4, seed=run_seed(0, i)))
    # a repair given, the destroy left to the default, and the other way round
    out = solve_many(insts, repair="greedy_insertion", iterations=4, executor=pool2)
    assert fingerprint(out[1]) == fingerprint(glns.solve(insts[1], repair="greedy_insertion",
                                                         iterations=4, seed=run_seed(0, 1)))


# ============================================================================ failures


@pytest.mark.parametrize("sig", ["SIGSEGV", "SIGKILL"])
def test_a_dying_task_is_retried_and_reported_while_the_batch_completes(pool2, sig):
    insts = [datasets.generate_cvrp(n, 1) for n in (10, 12, 11, 14)]
    before = pool2.restarts
    out = solve_many(insts, [segfault_source(13, sig)], "greedy_insertion", iterations=10,
                     executor=pool2, errors="return")
    assert [type(r).__name__ for r in out] == ["Result", "TaskFailure", "Result", "Result"]
    fail = out[1]
    assert fail.status == "died" and fail.attempts == 2 and sig in fail.error
    if sig == "SIGKILL":
        assert "out-of-memory killer" in fail.error
    assert fail.instance == 1 and fail.seed == run_seed(0, 1)
    assert pool2.restarts == before + 2
    assert all(r.extra["attempts"] == 1 for r in out if isinstance(r, glns.Result))
    with pytest.raises(BatchError, match=r"1 of 4 tasks failed:\n  instance 1: died after 2") as info:
        solve_many(insts, [segfault_source(13, sig)], "greedy_insertion", iterations=10, executor=pool2)
    assert [fingerprint(r) for r in info.value.results if isinstance(r, glns.Result)] == \
        [fingerprint(r) for r in out if isinstance(r, glns.Result)]
    assert info.value.failures == [fail]


def test_a_task_that_crashes_once_succeeds_on_its_retry(tmp_path, pool2):
    insts = [datasets.generate_cvrp(10, s) for s in range(3)]
    src = crash_once_source(str(tmp_path / "crashed"))
    out = solve_many(insts, [src], "greedy_insertion", iterations=10, executor=pool2)
    assert sorted(r.extra["attempts"] for r in out) == [1, 1, 2]
    (tmp_path / "crashed").unlink()
    with pytest.raises(BatchError, match="died after 1 attempt"):
        solve_many(insts, [src], "greedy_insertion", iterations=10, executor=pool2, retries=0)


def test_deterministic_failures_are_not_retried(pool2):
    bad = "def destroy(x, k):\n    return [], x\n"
    hang = "def destroy(x, k, d):\n    while True:\n        pass\n"
    insts = [datasets.generate_cvrp(10, 1)]
    out = solve_many(insts, [bad], "greedy_insertion", iterations=5, executor=pool2, errors="return")
    assert out[0].status == "error" and out[0].attempts == 1 and "destroy operator 0" in out[0].error
    out = solve_many(insts, [hang], "greedy_insertion", iterations=5, executor=pool2, errors="return",
                     task_timeout=0.5)
    assert out[0].status == "timeout" and out[0].attempts == 1 and "0.5 s" in out[0].error


# ============================================================================ progress, arguments


def test_progress_callable_and_line(pool2, capsys):
    calls = []
    insts = [datasets.generate_cvrp(8, s) for s in range(5)]
    solve_many(insts, "random_removal", "greedy_insertion", iterations=5, executor=pool2,
               progress=lambda *a: calls.append(a))
    assert calls == [(k, 5, 0) for k in range(1, 6)]
    solve_many(insts, "random_removal", "greedy_insertion", iterations=5, backend="serial", progress=True)
    err = capsys.readouterr().err
    assert "\rsolve_many: 1/5 done" in err and "solve_many: 5/5 done, " in err and "ETA 0 s" in err
    assert err.endswith("\n")


def test_bad_arguments_raise_precise_errors(pool2):
    insts = [datasets.generate_cvrp(8, 1)]
    ok = ("random_removal", "greedy_insertion")
    cases = [
        (dict(backend="threads"), ValueError, "backend must be one of"),
        (dict(workers=0), ValueError, "workers must be a positive integer"),
        (dict(backend="serial", workers=2), ValueError, "one task at a time"),
        (dict(address="auto"), ValueError, "address is for the 'ray' backend"),
        (dict(executor=pool2, workers=2), ValueError, "either an executor"),
        (dict(errors="ignore"), ValueError, "errors must be"),
        (dict(retries=-1), ValueError, "retries must be"),
        (dict(seed=-1), ValueError, "seed must be"),
        (dict(iterations=-3), ValueError, "iterations must be"),
        (dict(time_limit=0), ValueError, "time_limit must be"),
        (dict(no_improvement=0), ValueError, "no_improvement must be"),
        (dict(task_timeout=0), ValueError, "task_timeout must be"),
        (dict(params={}), TypeError, "params must be SolveParams"),
        (dict(progress="yes"), TypeError, "progress must be"),
    ]
    for kw, exc, match in cases:
        with pytest.raises(exc, match=match):
            solve_many(insts, *ok, **kw)
    with pytest.raises(TypeError, match=r"instances\[1\] is a str"):
        solve_many([insts[0], "x.vrp"], *ok)
    with pytest.raises(glns.OperatorError, match="destroy operator 0: unknown native operator 'nope'"):
        solve_many(insts, "nope", "greedy_insertion")
    with pytest.raises(glns.OperatorError, match="repair operator 0: 'random_removal' is a destroy"):
        solve_many(insts, "random_removal", "random_removal")
    with pytest.raises(glns.OperatorError, match="cannot import module 'no_such_pkg.mod'"):
        solve_many(insts, "no_such_pkg.mod:destroy", "greedy_insertion")
    with pytest.raises(glns.OperatorError, match="lambda, a nested function or defined in __main__"):
        solve_many(insts, lambda x, k, d: ([], x), "greedy_insertion")
    with pytest.raises(glns.OperatorError, match="passed as repair"):
        solve_many(insts, "random_removal", types.ModuleType("m"))
    with pytest.raises(ValueError, match="at least one destroy"):
        solve_many(insts, [], "greedy_insertion")
    assert solve_many([], *ok, executor=pool2) == []


def test_importable_callables_and_operators_travel_by_name(pool2):
    from glns.operators.seeds import vrp

    insts = [datasets.generate_cvrp(10, 1)]
    by_func = solve_many(insts, vrp.random_removal, glns.operators.from_callable(vrp.greedy_insertion, "repair", "gi"),
                         iterations=10, executor=pool2)
    by_path = solve_many(insts, "glns.operators.seeds.vrp:random_removal", "glns.operators.seeds.vrp:greedy_insertion",
                         iterations=10, executor=pool2)
    assert by_func[0].cost == by_path[0].cost and by_func[0].repair_stats[0].name == "gi"
    out = solve_many(insts, "glns.operators.seeds.vrp:no_such_function", "greedy_insertion",
                     iterations=10, executor=pool2, errors="return")
    assert out[0].status == "error" and "cannot import 'glns.operators.seeds.vrp:no_such_function'" in out[0].error


def test_make_executor_and_run_seed_are_shared():
    from glns.evolution import controller

    assert controller.run_seed is run_seed
    assert run_seed(5, "train", 3, 2) == run_seed(5, "train", 3, 2) != run_seed(5, "train", 3, 1)
    assert 0 <= run_seed(2**64 - 1, 7) < 2**63
    assert isinstance(make_executor("serial"), SerialExecutor)
    with make_executor("process", 1, memory_mb=256) as ex:
        assert isinstance(ex, WorkerPool) and ex.workers == 1 and ex.memory_mb == 256
    with pytest.raises(ValueError, match="memory_mb is for the 'process'"):
        make_executor("serial", memory_mb=256)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", float("nan"), float("inf"), [2]])
def test_every_api_checks_the_worker_count_with_one_rule(bad):
    from glns.benchmark.runner import Settings
    from glns.evolution import EvolutionConfig
    from glns.executors import RayExecutor, check_workers

    insts = [datasets.generate_cvrp(8, 1)]
    takers = [check_workers, WorkerPool, lambda w: make_executor("process", w),
              lambda w: make_executor("serial", w), lambda w: RayExecutor(workers=w),
              lambda w: solve_many(insts, workers=w), lambda w: Settings(workers=w),
              lambda w: EvolutionConfig(workers=w)]
    for take in takers:   # the same message everywhere, before any worker (or Ray) starts
        with pytest.raises(ValueError) as info:
            take(bad)
        assert str(info.value) == f"workers must be a positive integer or None, got {bad!r}"
    assert check_workers(None) is None and check_workers(3) == 3 and check_workers(np.int64(2)) == 2


def test_ray_missing_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'glns\[distributed\]'"):
        make_executor("ray")


def test_evaluate_runs_on_any_executor(pool2):
    insts = [datasets.generate_tsp(10, s) for s in range(3)]
    d, r = python_ops("tsp")
    params = glns.SolveParams(op_timeout=1.0)
    a = evaluate(insts, d, r, pool=pool2, iterations=20, seeds=[1, 2, 3], params=params)
    b = evaluate(insts, d, r, pool=SerialExecutor(), iterations=20, seeds=[1, 2, 3], params=params)
    assert [o.status for o in a] == [o.status for o in b] == ["ok"] * 3
    assert [fingerprint(o.result) for o in a] == [fingerprint(o.result) for o in b]


# ============================================================================ Ray


@pytest.fixture(scope="module")
def ray_executor():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with make_executor("ray", 2) as ex:
            yield ex
    finally:
        ray.shutdown()


def test_ray_gives_the_same_results_as_the_other_backends(ray_executor, pool2):
    insts = instances()
    for kind in ("native", "python"):
        for problem in ("cvrp", "tsp"):
            group = [p for p in insts if (p.kind == "tsp") == (problem == "tsp")]
            d, r = (("random_removal", "greedy_insertion") if kind == "native" else python_ops(problem))
            a = solve_many(group, d, r, iterations=ITER, seed=4, executor=ray_executor)
            b = solve_many(group, d, r, iterations=ITER, seed=4, executor=pool2)
            assert [fingerprint(x) for x in a] == [fingerprint(x) for x in b]


def test_ray_actor_death_is_retried_and_reported(ray_executor):
    insts = [datasets.generate_cvrp(n, 1) for n in (10, 12, 11)]
    before = ray_executor.restarts
    out = solve_many(insts, [segfault_source(13)], "greedy_insertion", iterations=10,
                     executor=ray_executor, errors="return")
    assert [type(r).__name__ for r in out] == ["Result", "TaskFailure", "Result"]
    assert out[1].status == "died" and out[1].attempts == 2 and "Ray worker process died" in out[1].error
    assert ray_executor.restarts == before + 2
    # the executor keeps working with fresh actors
    again = solve_many(insts[:1], "random_removal", "greedy_insertion", iterations=10, executor=ray_executor)
    assert again[0].cost == solve_many(insts[:1], "random_removal", "greedy_insertion", iterations=10,
                                       backend="serial")[0].cost


def test_ray_timeout_kills_the_actor(ray_executor):
    hang = "def destroy(x, k, d):\n    while True:\n        pass\n"
    out = solve_many([datasets.generate_cvrp(8, 1)], [hang], "greedy_insertion", iterations=5,
                     executor=ray_executor, task_timeout=1.0, errors="return")
    assert out[0].status == "timeout" and out[0].attempts == 1


def test_ray_refuses_more_workers_than_cpus(ray_executor):
    with pytest.raises(ValueError, match="workers=3 but the Ray cluster has 2 CPUs"):
        make_executor("ray", 3)
    import ray

    assert ray.is_initialized()   # the caller's runtime is left alone


def test_evaluate_runs_on_ray(ray_executor, pool2):
    insts = [datasets.generate_cvrp(10, s) for s in range(2)]
    d, r = python_ops("cvrp")
    a = evaluate(insts, d, r, pool=ray_executor, iterations=20)
    b = evaluate(insts, d, r, pool=pool2, iterations=20)
    assert [fingerprint(o.result) for o in a] == [fingerprint(o.result) for o in b]


def test_workers_take_compiled_twins_from_the_cache_the_caller_builds(monkeypatch):
    """compile="auto": the caller starts the builds and the tasks say compile="cached", so no
    worker starts a build thread (which would retire it after its task)."""
    from glns.operators import accelerate
    from glns.sandbox import evaluation

    started = []
    monkeypatch.setattr(evaluation, "precompile", lambda source, params: started.append(source))
    monkeypatch.delenv("GLNS_COMPILE", raising=False)
    src = "def destroy(x, destroy_cnt, problem_data):\n    return [x[0][0]], [x[0][1:]] + x[1:]\n"
    inst = [datasets.generate_cvrp(8, 1)]
    wires = evaluation.operator_wires(PythonSource(src, "destroy"), "greedy_insertion", {"cvrp"})
    tasks = evaluation.solve_tasks(inst, [0], wires, 5, glns.SolveParams())
    assert started == [src]
    assert accelerate.accelerate_settings(tasks[0][6])[1] == "cached"
    off = evaluation.solve_tasks(inst, [0], wires, 5, glns.SolveParams(compile="off"))
    assert off[0][6].compile == "off" and started == [src]
