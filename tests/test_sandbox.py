"""The process sandbox: worker pool, pre-evaluation filter (check_operator) and evaluate()."""

import ctypes
import inspect
import os
import resource
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import glns
from glns import datasets
from glns.operators.seeds import tsp as tsp_seeds, vrp as vrp_seeds
from glns.sandbox import (
    Admission, CheckConfig, CheckRequest, WorkerPool, check_operator, check_operators, evaluate,
)

MEMORY_MB = 384
#: small limits keep the suite fast; kill_grace is the wait before SIGKILL
FAST = CheckConfig(sizes=(10, 20, 50), instances_per_size=1, call_timeout=0.5,
                   growth_n=200, growth_timeout=0.5, kill_grace=0.5)
#: without the static import policy: these tests show what the process sandbox itself contains
RUNTIME = CheckConfig(**{**FAST.__dict__, "allowed_imports": None})
SEED_SOURCES = {"tsp": inspect.getsource(tsp_seeds), "cvrp": inspect.getsource(vrp_seeds),
                "ovrp": inspect.getsource(vrp_seeds)}


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, memory_mb=MEMORY_MB) as p:
        yield p


def src(code: str) -> str:
    return textwrap.dedent(code).strip() + "\n"


def check(pool, code, kind, problem="cvrp", config=FAST, **kw) -> Admission:
    return check_operator(src(code), kind, problem, pool=pool, config=config, **kw)


def rejected(adm: Admission, check_name: str, *fragments: str) -> None:
    assert not adm.ok, adm
    assert adm.check == check_name, adm
    for fragment in fragments:
        assert fragment in adm.error, (fragment, adm.error)


# ============================================================================ the worker pool


def test_pool_sets_the_memory_limit_in_every_worker(pool):
    limits = pool.map(resource.getrlimit, [(resource.RLIMIT_AS,)] * 2, timeout=5)
    assert all(r.ok for r in limits)
    assert {tuple(r.value) for r in limits} == {(MEMORY_MB * 2**20, MEMORY_MB * 2**20)}


def test_pool_kills_a_task_past_its_deadline_and_keeps_working(pool):
    before, pids = pool.restarts, set(pool.pids())
    t0 = time.monotonic()
    res = pool.run(time.sleep, 30, timeout=0.3)
    assert res.status == "timeout" and time.monotonic() - t0 < 2.0
    assert pool.restarts == before + 1
    assert set(pool.pids()) != pids and len(pool.pids()) == 2
    assert pool.run(sum, [1, 2, 3], timeout=5).value == 6


def test_pool_reports_a_crashed_worker_with_the_reason(pool):
    res = pool.run(os._exit, 3, timeout=5)
    assert res.status == "died" and "exited with code 3" in res.message
    res = pool.run(ctypes.string_at, 0, timeout=5)   # reads address 0: segmentation fault
    assert res.status == "died" and "SIGSEGV" in res.message
    assert pool.run(sum, [4, 5], timeout=5).value == 9


def test_pool_reports_memory_errors_and_exceptions(pool):
    res = pool.run(bytearray, 2 * MEMORY_MB * 2**20, timeout=5)
    assert res.status == "memory" and f"{MEMORY_MB} MB" in res.message
    res = pool.run(int, "not a number", timeout=5)
    assert res.status == "error" and "ValueError" in res.message
    assert pool.run(int, "12", timeout=5).value == 12


def test_pool_map_runs_in_parallel_and_isolates_a_killed_task(pool):
    t0 = time.monotonic()
    res = pool.map(time.sleep, [(0.3,), (0.3,)], timeout=5)
    assert [r.status for r in res] == ["ok", "ok"]
    assert time.monotonic() - t0 < 0.55          # two workers: not one after the other
    res = pool.map(time.sleep, [(0.01,), (30,), (0.01,), (0.01,)], timeout=[5, 0.3, 5, 5])
    assert [r.status for r in res] == ["ok", "timeout", "ok", "ok"]


def test_pool_close_reaps_every_worker():
    p = WorkerPool(workers=2, memory_mb=256)
    assert p.run(abs, -1, timeout=5).value == 1
    pids = p.pids()
    assert len(pids) == 2
    p.close()
    p.close()   # idempotent
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)   # neither alive nor zombie
    with pytest.raises(RuntimeError, match="closed"):
        p.run(abs, -1, timeout=5)


def _alive(marker: str) -> bool:
    """Is a (non-zombie) process with `marker` in its command line running?"""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            return True
    return False


def test_pool_close_also_ends_processes_started_by_tasks():
    marker = f"sleep 29.{os.getpid()}"
    p = WorkerPool(workers=1, memory_mb=256)
    assert p.run(os.system, f"{marker} &", timeout=5).value == 0
    time.sleep(0.1)
    assert _alive(marker)
    p.close()
    time.sleep(0.1)
    assert not _alive(marker)


def test_worker_left_with_threads_is_replaced(pool):
    code = """
        import threading, time
        def repair(partial, removed, problem_data):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            return partial + removed
    """
    before = pool.restarts
    adm = check(pool, code, "repair", "tsp",
                config=CheckConfig(sizes=(10,), growth_n=None, allowed_imports=None))
    assert adm.ok
    assert pool.restarts == before + 2     # instances_per_size=2 calls, each leaves a thread


def test_pool_refuses_fork_and_bad_arguments():
    with pytest.raises(ValueError, match="fork"):
        WorkerPool(context="fork")
    with pytest.raises(ValueError, match="workers"):
        WorkerPool(workers=0)
    with pytest.raises(ValueError, match="timeouts"):
        WorkerPool(workers=1).map(abs, [(1,)], timeout=0)


# ============================================================================ admission: seeds


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "ovrp"])
@pytest.mark.parametrize("function,kind", [("random_removal", "destroy"), ("worst_removal", "destroy"),
                                           ("greedy_insertion", "repair")])
def test_seed_operators_are_admitted(pool, problem, function, kind):
    adm = check_operator(SEED_SOURCES[problem], kind, problem, pool=pool, function=function)
    assert adm.ok, adm.error
    assert adm.function == function and adm.convention == "problem_data"
    assert set(adm.timings) == {10, 20, 50, 200}
    assert adm.warnings == ()


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "ovrp"])
def test_seed_operators_are_admitted_on_tiny_and_capacity_tight_instances(pool, problem):
    tiny = CheckConfig(sizes=(2, 3, 5), instances_per_size=3, capacity=9, growth_n=None)
    reqs = [CheckRequest(SEED_SOURCES[problem], kind, problem, fn) for fn, kind in
            (("random_removal", "destroy"), ("worst_removal", "destroy"), ("greedy_insertion", "repair"))]
    for adm in check_operators(reqs, pool=pool, config=tiny):
        assert adm.ok, adm.error


# corruptions of a valid result, each with the fragment of the core's message it must produce
REPAIR_FLAWS = {
    "tsp": {"drop": ("out.pop(i % len(out))", "is missing"),
            "dup": ("out.append(out[i % len(out)])", "duplicate node"),
            "foreign": ("out.append(len(problem_data['distance_matrix']) + i)", "foreign node"),
            "float": ("out[i % len(out)] = float(out[i % len(out)])", "is not an integer node id")},
    "vrp": {"drop": ("out[i % len(out)].pop()", "is missing"),
            "dup": ("out.append([out[i % len(out)][0]])", "duplicate node"),
            "foreign": ("out.append([len(problem_data['distance_matrix']) + i])", "foreign node"),
            "depot": ("out.insert(i % len(out), [0])", "depot 0 must not be written"),
            "float": ("out[0][0] = float(out[0][0])", "is not an integer node id"),
            "overload": ("out = [[v for r in out for v in r]]", "capacity exceeded")},
}
DESTROY_FLAWS = {
    "drop": ("removed.pop()", "is missing"),
    "dup": ("removed.append(removed[0])", "duplicate node"),
    "keep": ("removed.append(first_routed(partial))", "is also still in the solution"),
    "foreign": ("removed.append(-1 - i)", "foreign node"),
}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=st.sampled_from(["tsp", "cvrp", "ovrp"]), kind=st.sampled_from(["destroy", "repair"]),
       flaw=st.integers(0, 10), i=st.integers(0, 50), n=st.integers(2, 12), capacity=st.integers(9, 30))
def test_every_corrupted_output_is_rejected_with_the_cores_reason(pool, problem, kind, flaw, i, n, capacity):
    """A valid seed operator followed by one corruption: admitted only without the corruption."""
    if kind == "repair":
        flaws = REPAIR_FLAWS["tsp" if problem == "tsp" else "vrp"]
        base = "out = greedy_insertion(partial, removed, problem_data)"
        head = "def repair(partial, removed, problem_data):"
    else:
        flaws = DESTROY_FLAWS
        base = "removed, out = random_removal(partial, removed, problem_data)\n    partial = out"
        head = "def destroy(partial, removed, problem_data):"
    names = ["none"] + sorted(flaws)
    name = names[flaw % len(names)]
    if name == "overload":
        n, capacity = max(n, 10), 9          # n customers with demand >= 1 cannot fit one vehicle
    code = (SEED_SOURCES[problem] +
            "\ndef first_routed(p):\n    return p[0] if isinstance(p[0], int) else p[0][0]\n\n"
            f"{head}\n    i = {i}\n    {base}\n")
    if name != "none":
        code += f"    {flaws[name][0]}\n"
    code += "    return (removed, out)\n" if kind == "destroy" else "    return out\n"
    cfg = CheckConfig(sizes=(n,), instances_per_size=1, capacity=capacity, growth_n=None)
    adm = check_operator(code, kind, problem, pool=pool, config=cfg, function=kind)
    if name == "none":
        assert adm.ok, adm.error
    else:
        rejected(adm, "output", flaws[name][1], f"n={n}")


def test_check_operators_equals_one_by_one(pool):
    good = CheckRequest(SEED_SOURCES["cvrp"], "destroy", "cvrp", "worst_removal")
    bad = CheckRequest("def repair(p, r, d):\n    return p\n", "repair", "cvrp")
    hang = CheckRequest("def destroy(x, k, d):\n    while True:\n        pass\n", "destroy", "cvrp")
    batch = check_operators([good, bad, hang, good], pool=pool, config=FAST)
    assert [a.ok for a in batch] == [True, False, False, True]
    assert [a.check for a in batch] == [None, "output", "timeout", None]
    single = check_operator(bad.source, "repair", "cvrp", pool=pool, config=FAST)
    assert single.error == batch[1].error and "is missing" in single.error


def test_pool_with_the_spawn_start_method():
    with WorkerPool(workers=1, memory_mb=512, context="spawn") as p:
        adm = check_operator(SEED_SOURCES["ovrp"], "repair", "ovrp", pool=p, function="greedy_insertion",
                             config=CheckConfig(sizes=(10,), instances_per_size=1, growth_n=None))
        assert adm.ok
        assert p.run(resource.getrlimit, resource.RLIMIT_AS, timeout=5).value[0] == 512 * 2**20


def test_distance_matrix_convention_and_input_mutation_warning(pool):
    code = """
        def destroy(x, destroy_cnt, distance_matrix):
            removed = [x.pop() for _ in range(destroy_cnt)]   # changes x in place
            return removed, x
    """
    adm = check(pool, code, "destroy", "tsp")
    assert adm.ok and adm.convention == "distance_matrix"
    assert any("modified its input `x` in place" in w for w in adm.warnings)
    strict = CheckConfig(**{**FAST.__dict__, "allow_input_mutation": False})
    rejected(check(pool, code, "destroy", "tsp", config=strict), "mutation", "`x`", "n=10")


# ============================================================================ admission: rejections


def test_rejects_syntax_errors(pool):
    adm = check(pool, "def repair(partial, removed, problem_data):\n    return partial +\n", "repair")
    rejected(adm, "syntax", "SyntaxError", "line 2")
    assert adm.size is None and adm.timings == {}


def test_rejects_source_without_a_function(pool):
    rejected(check(pool, "x = 1", "destroy"), "signature", "defines no function")
    rejected(check(pool, "raise RuntimeError('boom')", "destroy"), "load", "RuntimeError", "boom")
    rejected(check(pool, "def destroy(x, k, d):\n    return [], x\n", "destroy", function="remove"),
             "signature", "no function named 'remove'")


def test_rejects_wrong_signatures(pool):
    rejected(check(pool, "def destroy(x, k):\n    return [], x\n", "destroy"),
             "signature", "destroy(x, k)", "3 positional")
    rejected(check(pool, "def repair(p, r, d, extra):\n    return p\n", "repair"),
             "signature", "'extra' has no default")


def test_rejects_operators_that_raise(pool):
    code = """
        def repair(partial, removed, problem_data):
            demands = problem_data['demand']
            return partial
    """
    rejected(check(pool, code, "repair"), "exception", "KeyError", "'demand'", "n=10 CVRP",
             "line 2 of the operator", "problem_data['demand']")


def test_rejects_wrong_return_types(pool):
    rejected(check(pool, "def destroy(x, k, d):\n    return x\n", "destroy", "tsp"),
             "output", "pair (removed, partial_solution)", "list")
    rejected(check(pool, "def destroy(x, k, d):\n    return 5\n", "destroy"),
             "output", "pair", "int")
    rejected(check(pool, "def repair(p, r, d):\n    p[0].extend(r)\n", "repair"),
             "output", "solution must be a list, got NoneType")
    rejected(check(pool, "def repair(p, r, d):\n    return [[float(v) for v in rt] for rt in p] + [r]\n",
                   "repair"), "output", "is not an integer node id")


def test_rejects_a_destroy_that_drops_a_node(pool):
    code = """
        def destroy(x, destroy_cnt, problem_data):
            gone = set(x[0][:2])
            removed = x[0][:1]            # the second node vanishes
            return removed, [[v for v in r if v not in gone] for r in x]
    """
    rejected(check(pool, code, "destroy"), "output", "destroy returned an invalid result",
             "is missing", "n=10 CVRP")


def test_rejects_a_destroy_that_removes_nothing(pool):
    rejected(check(pool, "def destroy(x, k, d):\n    return [], x\n", "destroy", "ovrp"),
             "output", "removed no node", "destroy_cnt=2")


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_rejects_a_repair_that_duplicates_a_node(pool, problem):
    if problem == "tsp":
        code = "def repair(p, removed, d):\n    return p + removed + removed[:1]\n"
    else:
        code = "def repair(p, removed, d):\n    return p + [[v] for v in removed] + [removed[:1]]\n"
    rejected(check(pool, code, "repair", problem), "output", "repair returned an invalid solution",
             f"duplicate node", "n=10")


def test_rejects_foreign_nodes(pool):
    code = ("def repair(p, removed, problem_data):\n"
            "    return p + [[v] for v in removed] + [[len(problem_data['demands'])]]\n")
    rejected(check(pool, code, "repair"), "output", "foreign node 11")
    code = "def repair(p, removed, d):\n    return p + [[0]] + [[v] for v in removed]\n"
    rejected(check(pool, code, "repair"), "output", "depot 0 must not be written")
    code = "def destroy(x, k, d):\n    return [-1], x\n"
    rejected(check(pool, code, "destroy", "tsp"), "output", "foreign node -1")


def test_rejects_a_repair_that_exceeds_the_capacity(pool):
    code = """
        def repair(partial, removed, problem_data):
            routes = [list(r) for r in partial]
            routes[0].extend(removed)      # one overloaded route
            return routes
    """
    rejected(check(pool, code, "repair"), "output", "capacity exceeded", "each route within the capacity")


def test_rejects_an_infinite_loop(pool):
    adm = check(pool, "def destroy(x, k, d):\n    while True:\n        pass\n", "destroy", "tsp")
    rejected(adm, "timeout", "timed out after 0.5 s on the n=10 TSP instance")
    assert adm.size == 10


def test_rejects_an_infinite_loop_that_swallows_the_interrupt(pool):
    code = """
        def destroy(x, destroy_cnt, problem_data):
            while True:
                try:
                    y = sum(range(1000))
                except:
                    pass
    """
    t0 = time.monotonic()
    adm = check(pool, code, "destroy")
    # almost always the worker is killed; rarely the re-fired interrupt lands between the
    # statements of the loop and stops it in-process: rejected for the same reason either way
    rejected(adm, "timeout", "timed out after 0.5 s on the n=10 CVRP instance")
    assert time.monotonic() - t0 < FAST.call_timeout + FAST.kill_grace + 1.0
    # the pool carries on (with a fresh worker when it was killed)
    assert check_operator(SEED_SOURCES["cvrp"], "repair", "cvrp", pool=pool, config=FAST,
                          function="greedy_insertion").ok


def test_an_operator_that_blocks_the_interrupt_is_killed(pool):
    code = """
        import signal
        def repair(partial, removed, problem_data):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            while True:
                pass
    """
    before = pool.restarts
    adm = check(pool, code, "repair", "tsp", config=RUNTIME)
    rejected(adm, "timeout", "timed out after 0.5 s on the n=10 TSP instance", "process was killed")
    assert pool.restarts == before + 1
    assert check_operator(SEED_SOURCES["tsp"], "repair", "tsp", pool=pool, config=FAST,
                          function="greedy_insertion").ok


def test_rejects_an_endless_module_body(pool):
    rejected(check(pool, "while True:\n    pass\ndef destroy(x, k, d):\n    return [], x\n", "destroy"),
             "timeout", "loading the source")


def test_rejects_a_memory_hog(pool):
    code = """
        def repair(partial, removed, problem_data):
            hoard = []
            while True:   # 64 MB at a time (untouched pages: fast to reach the limit)
                hoard.append(np.empty(2**23))
    """
    rejected(check(pool, code, "repair", "tsp"), "memory", f"memory limit of {MEMORY_MB} MB", "n=10 TSP")
    code = "import numpy as np\ndef destroy(x, k, d):\n    big = np.ones((10**5, 10**5))\n    return [], x\n"
    rejected(check(pool, code, "destroy"), "memory", f"{MEMORY_MB} MB")


def test_rejects_a_crash_of_the_process(pool):
    code = "import ctypes\ndef destroy(x, k, d):\n    ctypes.string_at(0)\n    return [], x\n"
    rejected(check(pool, code, "destroy", config=RUNTIME), "crash", "SIGSEGV", "n=10 CVRP")


@pytest.mark.parametrize("body,fragment", [
    ("problem_data['distance_matrix'][0, 1] = 0.0", "read-only"),
    ("problem_data['capacity'] = 10**6", "changed problem_data['capacity'] from 50 to 1000000"),
    ("problem_data['demands'].flags.writeable = True\n    problem_data['demands'][1] = 0",
     "changed problem_data['demands']"),
    ("problem_data['cache'] = {}", "added key 'cache'"),
    ("del problem_data['coordinates']", "deleted problem_data['coordinates']"),
])
def test_rejects_changes_to_problem_data(pool, body, fragment):
    code = f"def destroy(x, destroy_cnt, problem_data):\n    {body}\n    return [x[0][0]], [x[0][1:]] + x[1:]\n"
    rejected(check_operator(code, "destroy", "cvrp", pool=pool, config=FAST), "mutation", fragment, "n=10")


def test_rejects_changes_to_the_bare_distance_matrix(pool):
    code = """
        def repair(partial, removed, dist):
            dist.flags.writeable = True
            dist[0, 1] = 99.0
            return partial + removed
    """
    rejected(check(pool, code, "repair", "tsp"), "mutation", "changed problem_data['distance_matrix']")


def test_rejects_operators_too_slow_at_n200(pool):
    sleepy = """
        import time
        def repair(partial, removed, problem_data):
            time.sleep(0.004 * len(problem_data['distance_matrix']))   # 0.2 s at n=50, 0.8 s at n=200
            return partial + removed
    """
    adm = check(pool, sleepy, "repair", "tsp")
    rejected(adm, "growth", "too slow", "n=200", "0.5 s")
    assert adm.size == 200 and adm.timings[50] > 0.15
    cubic = """
        def destroy(x, destroy_cnt, problem_data):
            d = problem_data['distance_matrix'].tolist()
            n = len(d)
            total = 0.0
            for i in range(n):
                for j in range(n):
                    for k in range(n):
                        total += d[i][k] + d[k][j]
            return x[:destroy_cnt], x[destroy_cnt:]
    """
    tight = CheckConfig(**{**FAST.__dict__, "growth_timeout": 0.05})   # n=200 takes about 0.25 s
    adm = check(pool, cubic, "destroy", "tsp", config=tight)
    rejected(adm, "growth", "n=200", "0.05 s")
    assert adm.timings[50] < 0.5


def test_growth_check_can_be_switched_off(pool):
    cfg = CheckConfig(sizes=(10,), instances_per_size=1, growth_n=None)
    adm = check_operator(SEED_SOURCES["tsp"], "destroy", "tsp", pool=pool, config=cfg,
                         function="worst_removal")
    assert adm.ok and set(adm.timings) == {10}


def test_check_operator_arguments_are_validated(pool):
    with pytest.raises(ValueError, match="kind"):
        check_operator("def f(a, b, c): pass", "mutate", "tsp", pool=pool)
    with pytest.raises(ValueError, match="problem"):
        check_operator("def f(a, b, c): pass", "destroy", "pdptw", pool=pool)
    with pytest.raises(ValueError, match="sizes"):
        CheckConfig(sizes=(1,))


def test_check_operator_without_a_pool_uses_its_own():
    adm = check_operator(SEED_SOURCES["tsp"], "repair", "tsp", function="greedy_insertion")
    assert adm.ok


# ============================================================================ evaluate()


def _seed_pair(problem):
    source = SEED_SOURCES[problem]
    return ([glns.operators.from_source(source, "destroy", function="random_removal"), "worst_removal"],
            [glns.operators.from_source(source, "repair", function="greedy_insertion")])


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_evaluate_matches_an_in_process_solve(pool, problem):
    gen = datasets.generate_tsp if problem == "tsp" else datasets.generate_cvrp
    instances = [gen(20, s) for s in range(3)]
    destroy, repair = _seed_pair(problem)
    params = glns.SolveParams(op_timeout=1.0)
    out = evaluate(instances, destroy, repair, pool=pool, iterations=50, seeds=[5, 6, 7], params=params)
    assert [o.status for o in out] == ["ok"] * 3
    for o, inst in zip(out, instances):
        ref = glns.solve(inst, destroy, repair, iterations=50, seed=o.seed, params=params)
        assert o.result.cost == ref.cost
        assert [s.calls for s in o.result.destroy_stats] == [s.calls for s in ref.destroy_stats]
        assert [s.weight for s in o.result.repair_stats] == [s.weight for s in ref.repair_stats]
        assert (o.result.synergy == ref.synergy).all()
        assert o.result.destroy_stats[0].name == "random_removal"


def test_evaluate_survives_one_hanging_task(pool):
    hang_on_12 = """
        def destroy(x, destroy_cnt, problem_data):
            if len(problem_data['distance_matrix']) == 13:   # only the 12-customer instance
                while True:
                    try:
                        y = sum(range(1000))
                    except:
                        pass
            removed = x[0][:1]
            return removed, [x[0][1:]] + x[1:]
    """
    instances = [datasets.generate_cvrp(n, 1) for n in (10, 12, 11)]
    t0 = time.monotonic()
    out = evaluate(instances, [src(hang_on_12)], ["greedy_insertion"], pool=pool, iterations=20,
                   params=glns.SolveParams(op_timeout=0.1), task_timeout=1.5)
    assert time.monotonic() - t0 < 5
    assert [o.status for o in out] == ["ok", "timeout", "ok"]
    assert "1.5 s" in out[1].error and out[1].result is None
    assert out[0].result.destroy_stats[0].calls == 20 and out[0].result.destroy_stats[0].failures == 0
    ok_again = evaluate(instances[:1], [src(hang_on_12)], ["greedy_insertion"], pool=pool,
                        iterations=20, params=glns.SolveParams(op_timeout=0.1))
    assert ok_again[0].result.cost == out[0].result.cost


def test_evaluate_scores_bad_operators_sigma4_without_failing_the_run(pool):
    raises = "def destroy(x, k, d):\n    raise RuntimeError('nope')\n"
    inst = [datasets.generate_tsp(10, 3)]
    out = evaluate(inst, [raises, "random_removal"], ["greedy_insertion"], pool=pool, iterations=30)
    st = out[0].result.destroy_stats[0]
    assert out[0].ok and st.failures == st.calls > 0 and st.outcomes[3] == st.calls
    assert "RuntimeError" in st.last_error


def test_evaluate_reports_operators_that_do_not_compile(pool):
    out = evaluate([datasets.generate_tsp(10, 3)], ["def destroy(x, k):\n    return [], x\n"],
                   ["greedy_insertion"], pool=pool, iterations=5)
    assert out[0].status == "error" and "destroy operator 0" in out[0].error


def test_evaluate_validates_its_arguments(pool):
    inst = [datasets.generate_tsp(10, 3)]
    with pytest.raises(glns.OperatorError, match="unknown native"):
        evaluate(inst, ["no_such_op"], ["greedy_insertion"], pool=pool)
    with pytest.raises(glns.OperatorError, match="repair operator"):
        evaluate(inst, ["greedy_insertion"], ["greedy_insertion"], pool=pool)
    with pytest.raises(glns.OperatorError, match="source"):
        evaluate(inst, [glns.operators.from_callable(lambda x, k, d: ([], x), "destroy")],
                 ["greedy_insertion"], pool=pool)
    with pytest.raises(ValueError, match="seeds"):
        evaluate(inst, ["random_removal"], ["greedy_insertion"], pool=pool, seeds=[1, 2])


def test_policy_rejects_forbidden_imports_and_escape_hatches(pool):
    from glns.sandbox.policy import policy_violation

    ok = "import numpy as np\nfrom collections import deque\ndef destroy(x, k, p):\n    return [], list(x)\n"
    assert policy_violation(ok) is None
    assert "imports 'os' (line 1)" in policy_violation("import os\n")
    assert "imports from 'subprocess'" in policy_violation("from subprocess import run\n")
    assert "imports from '.'" in policy_violation("from . import x\n")
    assert "'__import__' (line 2)" in policy_violation("x = 1\ny = __import__('os')\n")
    assert "'open'" in policy_violation("def f():\n    return open('/etc/passwd').read()\n")
    assert "'.__subclasses__'" in policy_violation("z = ().__class__.__base__.__subclasses__()\n")
    assert policy_violation("def broken(:\n") is None          # left to the syntax check
    src = "import os\ndef destroy(x, k, p):\n    os.system('true')\n    return [x[0]], list(x[1:])\n"
    verdict = check_operator(src, "destroy", "tsp", pool=pool)
    assert not verdict.ok and verdict.check == "forbidden" and "imports 'os'" in verdict.error
    relaxed = check_operator(src, "destroy", "tsp", pool=pool,
                             config=CheckConfig(allowed_imports=None, growth_n=None))
    assert relaxed.ok


def test_ctrl_c_during_evaluate_keeps_the_runs_that_finished():
    from glns.executors import SerialExecutor
    from glns.sandbox import EvaluationInterrupted

    class InterruptedAfterOne(SerialExecutor):
        """Runs the first task, then Ctrl-C arrives (as WorkerPool.map raises it)."""

        def map(self, fn, arg_tuples, timeout, on_result=None):
            first = super().map(fn, list(arg_tuples)[:1], timeout, on_result)
            assert first[0].ok
            raise KeyboardInterrupt

    instances = [datasets.generate_cvrp(20, i) for i in range(3)]
    with pytest.raises(KeyboardInterrupt) as caught:
        evaluate(instances, "random_removal", "greedy_insertion", iterations=50,
                 pool=InterruptedAfterOne())
    assert isinstance(caught.value, EvaluationInterrupted)
    outcomes = caught.value.outcomes
    assert [o.status for o in outcomes] == ["ok", "interrupted", "interrupted"]
    assert outcomes[0].result.iterations == 50 and outcomes[1].result is None
