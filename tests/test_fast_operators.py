"""Python operators in their negotiated form (data view, compiled or not) give the results of the
plain interpreted numpy form: same seed, same best cost, solution and curves (issue 12).

Compiled forms need Cython and a C compiler; those tests skip without them. Every test uses the
session's private cache directory (tests/conftest.py), never the user's.
"""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
import pytest

import glns
from glns import compiler
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries
from glns.operators import from_callable, from_source
from glns.operators.seeds import BY_PROBLEM
from glns.sandbox import PythonSource, WorkerPool, evaluate
from tests.conftest import make_tsp, make_vrp

CAN_COMPILE = compiler.unavailable_reason() is None
needs_compiler = pytest.mark.skipif(not CAN_COMPILE, reason=f"cannot compile here: {compiler.unavailable_reason()}")

PLAIN = dict(views="numpy", compile="off")          # the behaviour before views and compilation
FAST = dict(compile="wait")                           # views negotiated, compiled before the run


def _problem(kind: str, n: int = 30, seed: int = 7) -> glns.Problem:
    return make_tsp(n, seed) if kind == "tsp" else make_vrp(glns.CVRP if kind == "cvrp" else glns.OVRP, n, seed)


def _corpus(kind: str) -> tuple[list, list]:
    """The offline LLM's operators (NumPy style) for a problem kind."""
    return ([from_source(e.source(), "destroy") for e in good_entries(kind, "destroy")],
            [from_source(e.source(), "repair") for e in good_entries(kind, "repair")])


def _paper_style(kind: str) -> tuple[list, list]:
    """Operators in the paper's list style (dist_mat[a][b]) for a problem kind."""
    family = paper_style.SOURCES["tsp" if kind == "tsp" else "vrp"]
    return ([from_source(s, "destroy") for s in family["destroy"]],
            [from_source(s, "repair") for s in family["repair"]])


@pytest.fixture
def prefer_accelerated(monkeypatch):
    """Take any identical accelerated form even when it is not faster, so that the run really
    uses compiled twins and tuple views (NumPy-style operators rarely gain from them)."""
    from glns.operators import accelerate, probe

    monkeypatch.setitem(probe.negotiate.__kwdefaults__, "min_gain", -1.0)
    monkeypatch.setattr(accelerate, "MIN_GAIN", -1.0)
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    yield
    accelerate._DECISIONS.clear()


def _same(a: glns.Result, b: glns.Result) -> None:
    assert a.cost == b.cost
    assert a.solution == b.solution
    np.testing.assert_array_equal(a.best_curve, b.best_curve)
    np.testing.assert_array_equal(a.current_curve, b.current_curve)
    assert [s.calls for s in a.destroy_stats + a.repair_stats] == [s.calls for s in b.destroy_stats + b.repair_stats]
    assert [s.failures for s in a.destroy_stats + a.repair_stats] == \
        [s.failures for s in b.destroy_stats + b.repair_stats]


def _forms(res: glns.Result) -> dict[str, str]:
    return {s.name: s.form for s in res.destroy_stats + res.repair_stats}


@pytest.fixture(scope="module", autouse=True)
def _prebuilt():
    """Build every corpus and seed operator once, two at a time (the tests then hit the cache)."""
    if not CAN_COMPILE:
        return
    from concurrent.futures import ThreadPoolExecutor

    from glns.operators.accelerate import compilable_source

    sources = set()
    for kind in ("tsp", "cvrp"):
        for d, r in (_corpus(kind), _paper_style(kind)):
            sources.update(op.source for op in d + r)
        for name in ("random_removal", "worst_removal", "greedy_insertion"):
            op = from_callable(getattr(BY_PROBLEM[kind], name), "repair" if "insert" in name else "destroy")
            sources.add(compilable_source(op)[0])
    with ThreadPoolExecutor(2) as ex:
        outcomes = list(ex.map(compiler.compile_source, sorted(s for s in sources if s)))
    assert all(o.ok for o in outcomes), [o.reason for o in outcomes if not o.ok]


@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
def test_corpus_operators_identical_in_every_form(kind, prefer_accelerated):
    """The offline corpus, each operator in the fastest form its probes accept (compiled where
    Cython is installed): same best cost, solution, curves and counts as plain numpy."""
    problem = _problem(kind)
    d, r = _corpus(kind)
    plain = glns.solve(problem, d, r, iterations=150, seed=3, params=glns.SolveParams.paper(**PLAIN))
    fast = glns.solve(problem, d, r, iterations=150, seed=3, params=glns.SolveParams.paper(**FAST))
    _same(plain, fast)
    assert set(_forms(plain).values()) == {"numpy"}
    forms = _forms(fast)
    if CAN_COMPILE:
        assert sum(f.startswith("compiled") for f in forms.values()) >= len(forms) // 2, forms
    for st in fast.destroy_stats + fast.repair_stats:
        assert st.form_reason, st


@pytest.mark.parametrize("kind", ["tsp", "cvrp", "ovrp"])
def test_paper_style_operators_get_faster_forms_with_identical_results(kind):
    """List-style operators: the default negotiation takes the tuple view (and the compiled
    twin) for most of them, and the run is identical to plain numpy."""
    problem = _problem(kind, 40, 5)
    d, r = _paper_style(kind)
    plain = glns.solve(problem, d, r, iterations=150, seed=9, params=glns.SolveParams.paper(**PLAIN))
    fast = glns.solve(problem, d, r, iterations=150, seed=9, params=glns.SolveParams.paper(**FAST))
    _same(plain, fast)
    forms = _forms(fast)
    assert sum(f.endswith("python") for f in forms.values()) >= len(forms) // 2, forms


def test_default_params_identical_and_user_state_untouched():
    import random

    problem = _problem("cvrp", 40, 2)
    d, r = _paper_style("cvrp")
    random.seed(99)
    np.random.seed(98)
    before = (random.random(), np.random.random())
    random.seed(99)
    np.random.seed(98)
    fast = glns.solve(problem, d[:3], r[:3], iterations=100, seed=1)
    after = (random.random(), np.random.random())
    assert before == after  # probes and the run leave the caller's streams as they were
    plain = glns.solve(problem, d[:3], r[:3], iterations=100, seed=1, params=glns.SolveParams(**PLAIN))
    _same(plain, fast)


def test_environment_switch_turns_everything_off(monkeypatch):
    monkeypatch.setenv("GLNS_ACCELERATE", "0")
    d, r = _paper_style("cvrp")
    res = glns.solve(_problem("cvrp"), d[:2], r[:2], iterations=20, params=glns.SolveParams(compile="wait"))
    assert set(_forms(res).values()) == {"numpy"}


def test_bad_environment_value_is_an_error(monkeypatch):
    monkeypatch.setenv("GLNS_COMPILE", "sometimes")
    d, r = _corpus("cvrp")
    with pytest.raises(ValueError, match="GLNS_COMPILE"):
        glns.solve(_problem("cvrp"), d[:1], r[:1], iterations=5)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="views"):
        glns.SolveParams(views="lists")
    with pytest.raises(ValueError, match="compile"):
        glns.SolveParams(compile="yes")


def test_forced_python_view_is_not_probed():
    d, r = _paper_style("cvrp")
    res = glns.solve(_problem("cvrp"), d[:2], r[:2], iterations=30,
                     params=glns.SolveParams(views="python", compile="off"))
    assert set(_forms(res).values()) == {"python"}
    assert all("forced" in s.form_reason for s in res.destroy_stats + res.repair_stats)


# operators whose output under the tuple view would differ: kept on numpy, results unchanged
ELEMENTWISE = '''
def destroy(x, destroy_cnt, problem_data):
    d = problem_data["distance_matrix"]
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    first = flat[0]
    score = d[0] + d[first]          # elementwise on arrays, concatenation on tuples
    order = sorted(flat, key=lambda c: (score[c], c))
    out = set(order[:destroy_cnt])
    return [c for c in order if c in out], [[c for c in r if c not in out] for r in routes]
'''

SHAPE = '''
def destroy(x, destroy_cnt, problem_data):
    n = problem_data["distance_matrix"].shape[0]
    routes = [list(r) for r in x]
    out = set(random.sample(range(1, n), destroy_cnt))
    return sorted(out), [[c for c in r if c not in out] for r in routes]
'''

INT64 = '''
def destroy(x, destroy_cnt, problem_data):
    q = problem_data["demands"]
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    # int64 wraps around, Python ints do not: the order differs under the tuple view
    order = sorted(flat, key=lambda c: (q[c] * 2 ** 62, c))
    out = set(order[:destroy_cnt])
    return [c for c in order if c in out], [[c for c in r if c not in out] for r in routes]
'''


@pytest.mark.parametrize("source", [ELEMENTWISE, SHAPE, INT64], ids=["elementwise", "shape", "int64"])
def test_operator_that_differs_under_the_tuple_view_keeps_numpy(source):
    problem = _problem("cvrp")
    op = from_source(source, "destroy")
    params = dict(compile="off")
    fast = glns.solve(problem, [op], ["greedy_insertion"], iterations=40, seed=2,
                      params=glns.SolveParams.paper(**params))
    plain = glns.solve(problem, [op], ["greedy_insertion"], iterations=40, seed=2,
                       params=glns.SolveParams.paper(**PLAIN))
    _same(plain, fast)
    assert fast.destroy_stats[0].form == "numpy", fast.destroy_stats[0].form_reason


@needs_compiler
def test_background_build_switches_mid_run_with_identical_results(monkeypatch, tmp_path):
    """compile="auto" with an empty cache: the run starts interpreted, the background build
    arrives while it runs, and the operator switches to its compiled twin for the remaining
    calls; the result is that of the plain run wherever the switch happens."""
    session_cache = os.environ["GLNS_CACHE_DIR"]   # holds the twin (prebuilt above)
    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GLNS_COMPILE", raising=False)
    from glns.operators import accelerate

    monkeypatch.setattr(accelerate, "_BUILDS", {})
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    # background builds run one at a time per process: one left running by an earlier test
    # would hold this build back past the run (the test is about the switch, not the queue)
    monkeypatch.setattr(accelerate, "_ONE_BACKGROUND_BUILD", threading.Lock())
    real = compiler.compile_source
    release, built = threading.Event(), threading.Event()

    def held_build(source, **kw):   # lands when the run has made 30 calls
        release.wait(60)
        try:
            return real(source, cache_dir=session_cache)
        finally:
            built.set()

    from glns.operators.bridge import BoundPythonOperator

    invoke, calls = BoundPythonOperator.invoke, [0]

    def counting(self, first, second):
        calls[0] += 1
        if calls[0] == 30:
            release.set()
            built.wait(60)
        return invoke(self, first, second)

    monkeypatch.setattr(compiler, "compile_source", held_build)
    monkeypatch.setattr(BoundPythonOperator, "invoke", counting)
    body = paper_style.SOURCES["vrp"]["destroy"][2]
    problem = _problem("cvrp", 40, 4)
    plain = glns.solve(problem, [from_source(body, "destroy")], ["greedy_insertion"], iterations=3000,
                       seed=8, params=glns.SolveParams.paper(**PLAIN))
    res = glns.solve(problem, [from_source(body, "destroy")], ["greedy_insertion"], iterations=3000,
                     seed=8, params=glns.SolveParams.paper())
    _same(plain, res)
    st = res.destroy_stats[0]
    assert st.form.startswith("compiled"), st.form_reason
    assert "during the run" in st.form_reason


def test_compile_failure_falls_back_with_its_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    from glns.operators import accelerate

    monkeypatch.setattr(accelerate, "_BUILDS", {})
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    monkeypatch.setattr(compiler, "_UNAVAILABLE", None, raising=False)
    d, r = _paper_style("cvrp")
    res = glns.solve(_problem("cvrp"), d[:1], r[:1], iterations=30, seed=1,
                     params=glns.SolveParams.paper(compile="wait"))
    plain = glns.solve(_problem("cvrp"), d[:1], r[:1], iterations=30, seed=1,
                       params=glns.SolveParams.paper(**PLAIN))
    _same(plain, res)
    st = res.destroy_stats[0]
    assert not st.form.startswith("compiled")
    assert "compil" in st.form_reason.lower() or "cc" in st.form_reason.lower(), st.form_reason


def test_sandbox_evaluate_identical_with_compilation(tmp_path):
    """Workers negotiate and compile on their own; outcomes equal the plain ones."""
    instances = [_problem("ovrp", 30, s) for s in range(4)]
    family = paper_style.SOURCES["vrp"]
    d = [PythonSource(s, name=f"d{i}") for i, s in enumerate(family["destroy"][:3])]
    r = [PythonSource(s, name=f"r{i}") for i, s in enumerate(family["repair"][:3])]
    with WorkerPool(2) as pool:
        fast = evaluate(instances, d, r, pool=pool, iterations=60, params=glns.SolveParams.paper(compile="wait"))
        plain = evaluate(instances, d, r, pool=pool, iterations=60, params=glns.SolveParams.paper(**PLAIN))
    assert all(o.ok for o in fast + plain), [o.error for o in fast + plain if not o.ok]
    for a, b in zip(plain, fast):
        _same(a.result, b.result)
    forms = {s.form for o in fast for s in o.result.destroy_stats + o.result.repair_stats}
    if CAN_COMPILE:
        assert any(f.startswith("compiled") for f in forms), forms


# ------------------------------------------------------------------ adversarial, compiled

# stateless misbehaviour on some of the run's calls: the calls recorded before the form is
# chosen may pass, and later calls misbehave in the chosen form
ENDLESS_ON_60 = '''
def destroy(x, destroy_cnt, problem_data):
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    if len(flat) == 60 and random.random() < 0.3:
        while True:
            pass
    out = set(random.sample(flat, min(destroy_cnt, len(flat))))
    return sorted(out), [[c for c in r if c not in out] for r in routes]
'''

WRITES_DATA = '''
def destroy(x, destroy_cnt, problem_data):
    d = problem_data["distance_matrix"]
    d[1][2] = 0.0
    routes = [list(r) for r in x]
    return [routes[0][0]], [r[1:] if i == 0 else r for i, r in enumerate(routes)]
'''

BAD_OUTPUT_ON_60 = '''
def destroy(x, destroy_cnt, problem_data):
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    out = set(random.sample(flat, min(destroy_cnt, len(flat))))
    if len(flat) == 60 and random.random() < 0.3:
        return sorted(out) + [0], [[c for c in r if c not in out] for r in routes]   # the depot
    return sorted(out), [[c for c in r if c not in out] for r in routes]
'''

STATEFUL = '''
_calls = [0]
def destroy(x, destroy_cnt, problem_data):
    _calls[0] += 1
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    out = set(flat[:destroy_cnt] if _calls[0] % 2 else flat[-destroy_cnt:])
    return sorted(out), [[c for c in r if c not in out] for r in routes]
'''


@needs_compiler
@pytest.mark.parametrize("source,timeout", [(ENDLESS_ON_60, 0.1), (WRITES_DATA, None), (BAD_OUTPUT_ON_60, None)],
                         ids=["endless-in-the-run", "writes-problem-data", "bad-output-in-the-run"])
def test_adversarial_operators_behave_as_interpreted(source, timeout, prefer_accelerated):
    """Compiled or not, a misbehaving operator fails the same calls and the run goes on."""
    problem = _problem("cvrp", 60, 3)
    runs = []
    for settings in (PLAIN, dict(views="numpy", compile="wait")):
        op = from_source(source, "destroy")   # fresh module state (_calls) for each run
        runs.append(glns.solve(problem, [op], ["greedy_insertion"], iterations=40, seed=4,
                               params=glns.SolveParams.paper(op_timeout=timeout, **settings)))
    plain, fast = runs
    assert plain.destroy_stats[0].failures > 0
    _same(plain, fast)
    if source is WRITES_DATA:
        assert fast.destroy_stats[0].form == "numpy"
    else:  # compiled code honours the per-call time limit and its output is still checked
        assert fast.destroy_stats[0].form.startswith("compiled"), fast.destroy_stats[0].form_reason


def test_stateful_operator_is_not_probed():
    """Probe calls would advance its counter: it runs exactly as before, on numpy."""
    problem = _problem("cvrp", 20, 3)
    runs = [glns.solve(problem, [from_source(STATEFUL, "destroy")], ["greedy_insertion"], iterations=30,
                       seed=4, params=glns.SolveParams.paper(**settings)) for settings in (PLAIN, FAST)]
    _same(*runs)
    assert runs[1].destroy_stats[0].form == "numpy"
    assert "state" in runs[1].destroy_stats[0].form_reason


def test_problem_data_cannot_be_corrupted_through_the_tuple_view():
    problem = _problem("cvrp", 20, 3)
    before = problem.distances.copy()
    seen = []

    def destroy(x, destroy_cnt, problem_data):
        d = problem_data["distance_matrix"]
        seen.append(type(d).__name__)
        try:
            d[1][2] = 0.0
        except (TypeError, ValueError):
            pass
        routes = [list(r) for r in x]
        flat = [c for r in routes for c in r]
        out = set(flat[:destroy_cnt])
        return sorted(out), [[c for c in r if c not in out] for r in routes]

    res = glns.solve(problem, [destroy], ["greedy_insertion"], iterations=30,
                     params=glns.SolveParams(views="python", compile="off"))
    assert res.destroy_stats[0].form == "python" and "tuple" in seen
    np.testing.assert_array_equal(problem.distances, before)


def test_bench_records_and_result_carry_the_form():
    from glns.benchmark.runner import operator_stats

    d, r = _paper_style("cvrp")
    res = glns.solve(_problem("cvrp"), d[:2], ["greedy_insertion"], iterations=20)
    stats = operator_stats(res)
    assert stats["repair_forms"] == ["native"]
    assert all(f in ("numpy", "python", "compiled+numpy", "compiled+python") for f in stats["destroy_forms"])
    json.dumps(stats)


# ------------------------------------------------------------------ glns compile (deploy native)

@needs_compiler
def test_glns_compile_deploys_an_export_that_runs_compiled_without_building(tmp_path, monkeypatch):
    from glns.cli import main
    from glns.compiler import driver
    from glns.evolution import load_module
    from glns.evolution.export import export_module
    from glns.evolution.population import Member
    from glns.operators import accelerate

    family = paper_style.SOURCES["vrp"]
    destroy = [Member(f"d{i}", "destroy", family["destroy"][i], paper_style.VRP_DESTROY[i].__name__, "idea", "i1")
               for i in (1, 2)]
    repair = [Member(f"r{i}", "repair", family["repair"][i], paper_style.VRP_REPAIR[i].__name__, "idea", "i2")
              for i in (0, 1)]
    export = export_module(tmp_path / "best_operators.py", destroy, repair, (destroy[1], repair[0]),
                           {"problem": "cvrp", "seed": 3})
    out = tmp_path / "deployed"
    assert main(["compile", str(export), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert [o["name"] for o in report["operators"]] == ["d1", "d2", "r0", "r1"]
    assert all(o["status"] in ("compiled", "cached") for o in report["operators"])
    assert all(o["speedup"] and o["speedup"] > 0 for o in report["operators"])
    assert "| d2 | destroy |" in (out / "report.md").read_text()
    assert list((out / "compiled").rglob("*.so")) or list((out / "compiled").rglob("*.pyd"))

    # another machine's empty cache, nothing may be built: the deployed module runs compiled
    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("GLNS_COMPILE", "cached")
    monkeypatch.setattr(driver, "_SEARCH_DIRS", [])
    monkeypatch.setattr(accelerate, "_BUILDS", {})
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    module = load_module(out / "best_operators.py")
    problem = _problem("cvrp", 40, 6)
    fast = glns.solve(problem, module, iterations=200, seed=2)
    plain = glns.solve(problem, module, iterations=200, seed=2, params=glns.SolveParams(**PLAIN))
    _same(plain, fast)
    assert fast.destroy_stats[0].form.startswith("compiled"), fast.destroy_stats[0].form_reason
    assert not (tmp_path / "empty").exists() or not list((tmp_path / "empty").rglob("*.so"))


def test_glns_compile_refuses_a_file_that_is_not_an_operator_module(tmp_path, capsys):
    from glns.cli import main

    path = tmp_path / "notes.py"
    path.write_text("X = 1\n")
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 2
    assert "not an operator module" in capsys.readouterr().err


@needs_compiler
def test_sandbox_kill_path_unchanged_with_a_compiled_operator():
    """A compiled operator in the workers: one instance hangs where no signal can stop it (every
    exception swallowed); its task is killed at the deadline and the others finish compiled."""
    hang_on_12 = '''
def destroy(x, destroy_cnt, problem_data):
    if len(problem_data['distance_matrix']) == 13:   # only the 12-customer instance
        while True:
            try:
                y = sum(range(1000))
            except:
                pass
    acc = 0
    for i in range(20000):   # pure-Python work that compiling speeds up
        acc += i * i % 7
    removed = x[0][:1]
    return removed, [x[0][1:]] + x[1:]
'''
    assert compiler.compile_source(hang_on_12).ok   # into the session cache the workers read
    instances = [glns.datasets.generate_cvrp(n, 1) for n in (10, 12, 11)]
    with WorkerPool(2) as pool:
        out = evaluate(instances, [PythonSource(hang_on_12)], ["greedy_insertion"], pool=pool,
                       iterations=20, params=glns.SolveParams(op_timeout=0.1), task_timeout=3.0)
    assert [o.status for o in out] == ["ok", "timeout", "ok"]
    for o in (out[0], out[2]):
        st = o.result.destroy_stats[0]
        # the compiled twin ran in the worker (its probes); whether it won on speed is noise
        assert st.failures == 0 and "compiled+" in st.form_reason, st.form_reason


@needs_compiler
def test_glns_compile_clear_cache(tmp_path, monkeypatch, capsys):
    from glns.cli import main

    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path / "cache"))
    assert compiler.compile_source(paper_style.SOURCES["tsp"]["destroy"][0]).status == "compiled"
    assert main(["compile", "--clear-cache"]) == 0
    assert "removed 1 compiled operator" in capsys.readouterr().out
    assert compiler.lookup(paper_style.SOURCES["tsp"]["destroy"][0]) is None


@needs_compiler
def test_a_short_script_fills_the_cache_for_its_next_run(tmp_path):
    """compile="auto" in a script that ends long before its background build would: the build
    process outlives it and stores the twin, and the next run starts compiled."""
    import subprocess
    import sys

    script = tmp_path / "short.py"
    script.write_text(
        "import glns\n"
        "from glns.datasets import generate_cvrp\n"
        "from glns.offline_llm import paper_style\n"
        "from glns.operators import from_source\n"
        "op = from_source(paper_style.SOURCES['vrp']['destroy'][1], 'destroy')\n"
        "res = glns.solve(generate_cvrp(30, 1), [op], ['greedy_insertion'], iterations=30)\n"
        "print(res.destroy_stats[0].form)\n")
    env = {**os.environ, "GLNS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GLNS_COMPILE", None)
    first = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert not first.stdout.startswith("compiled")
    deadline = time.monotonic() + 90
    while not list((tmp_path / "cache").rglob("meta.json")) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(0.5)
    second = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip().startswith("compiled"), (second.stdout, second.stderr)


# ------------------------------------------------------------------ evidence from the run itself

# a greedy repair in the paper's list style; GUARD runs before each insertion, SCORE prices
# the insertion of c between a and b
_LIST_STYLE_REPAIR = '''
def repair(partial, removed, problem_data):
    d = problem_data["distance_matrix"]
    q, cap = problem_data["demands"], problem_data["capacity"]
    routes = [list(r) for r in partial]
    for c in removed:
GUARD
        best, where = None, None
        for i, r in enumerate(routes):
            if sum(q[v] for v in r) + q[c] > cap:
                continue
            for p in range(len(r) + 1):
                a = r[p - 1] if p else 0
                b = r[p] if p < len(r) else 0
                score = SCORE
                if best is None or score < best:
                    best, where = score, (i, p)
        if where is None:
            routes.append([c])
        else:
            routes[where[0]].insert(where[1], c)
    return routes
'''

# never returns when two nodes coincide (a zero distance between two customers, which the
# synthetic probes have and the run does not)
HANGS_ON_COINCIDENT = _LIST_STYLE_REPAIR.replace("GUARD", """        step = d[1][2]
        while step == 0:
            pass""").replace("SCORE", "d[a][c] + d[c][b] - d[a][b]")


def _fresh_process(monkeypatch):
    from glns.operators import accelerate
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    monkeypatch.setattr(accelerate, "_STATIC", {})


def test_an_operator_that_hangs_on_a_synthetic_case_is_accelerated_from_its_recorded_calls(monkeypatch):
    """Nothing waits for the default op_timeout of 60 s: the run never calls the operator on a
    synthetic input, and the form comes from its own recorded calls."""
    _fresh_process(monkeypatch)
    problem = make_vrp(glns.CVRP, 40, 5)
    t0 = time.perf_counter()
    fast = glns.solve(problem, ["random_removal"], [from_source(HANGS_ON_COINCIDENT, "repair")],
                      iterations=200, seed=3, params=glns.SolveParams.paper(compile="cached"))
    assert time.perf_counter() - t0 < 10.0
    plain = glns.solve(problem, ["random_removal"], [from_source(HANGS_ON_COINCIDENT, "repair")],
                       iterations=200, seed=3, params=glns.SolveParams.paper(**PLAIN))
    _same(plain, fast)
    st = fast.repair_stats[0]
    assert st.failures == 0 and st.form == "python", st.form_reason
    assert "identical on 5 recorded calls of the run" in st.form_reason
    assert "synthetic" not in st.form_reason   # a run without coincident nodes runs none


# divides by a distance: inf on the numpy view, ZeroDivisionError on the python view
DIVIDES_BY_DISTANCES = _LIST_STYLE_REPAIR.replace("GUARD\n", "").replace(
    "SCORE", "d[a][c] + d[c][b] - d[a][b] - 1e-9 / d[a][c]")


def test_a_decision_made_without_coincident_nodes_is_not_taken_where_there_are_some(monkeypatch):
    """x / 0.0 is inf on the numpy view and raises on the python view: a form chosen on an
    instance without coincident nodes is decided again, with the synthetic probes' harsh twin,
    on one that has them."""
    _fresh_process(monkeypatch)
    plain_instance = make_vrp(glns.CVRP, 40, 5)
    coords = np.array(plain_instance.coords)
    coords[7] = coords[3]
    twin = glns.CVRP(coords, plain_instance.demands, plain_instance.capacity)
    runs = {}
    for name, problem in (("plain", plain_instance), ("coincident", twin)):
        fast = glns.solve(problem, ["random_removal"], [from_source(DIVIDES_BY_DISTANCES, "repair")],
                          iterations=150, seed=4, params=glns.SolveParams.paper(compile="off"))
        plain = glns.solve(problem, ["random_removal"], [from_source(DIVIDES_BY_DISTANCES, "repair")],
                           iterations=150, seed=4, params=glns.SolveParams.paper(**PLAIN))
        _same(plain, fast)
        runs[name] = fast.repair_stats[0]
    assert runs["plain"].form == "python", runs["plain"].form_reason
    st = runs["coincident"]
    assert st.form == "numpy" and "ZeroDivisionError" in st.form_reason, st.form_reason


def test_glns_compile_stops_a_hanging_synthetic_probe_at_its_bound(tmp_path):
    """Where no run exists (glns compile), the synthetic probe that hangs costs its bound."""
    from glns.deploy import compile_operator_file
    from glns.operators.probe import FIRST_PROBE_LIMIT
    path = tmp_path / "ops.py"
    path.write_text("PROBLEM = 'cvrp'\n" + HANGS_ON_COINCIDENT.replace("def repair", "def my_repair")
                    + "\nDESTROY = []\nREPAIR = [my_repair]\n")
    t0 = time.perf_counter()
    try:
        reports = compile_operator_file(path, tmp_path / "out", timeout=120)
    except glns.OperatorError:
        pytest.skip("this export format needs DESTROY operators")
    repair = [r for r in reports if r.kind == "repair"][0]
    assert repair.form == "numpy" and "probe limit" in repair.reason, repair
    assert time.perf_counter() - t0 < 60.0


def test_a_candidate_that_hangs_where_the_reference_does_not_is_dropped_within_its_bound(monkeypatch):
    _fresh_process(monkeypatch)
    hang_on_tuples = '''
def destroy(x, destroy_cnt, problem_data):
    while isinstance(problem_data["distance_matrix"], tuple):
        pass
    routes = [list(r) for r in x]
    flat = [c for r in routes for c in r]
    out = set(random.sample(flat, min(destroy_cnt, len(flat))))
    return sorted(out), [[c for c in r if c not in out] for r in routes]
'''
    problem = make_vrp(glns.CVRP, 30, 2)
    t0 = time.perf_counter()
    fast = glns.solve(problem, [from_source(hang_on_tuples, "destroy")], ["greedy_insertion"],
                      iterations=60, seed=1, params=glns.SolveParams.paper(compile="off"))
    assert time.perf_counter() - t0 < 5.0      # one candidate call of at most call_limit (>= 50 ms)
    plain = glns.solve(problem, [from_source(hang_on_tuples, "destroy")], ["greedy_insertion"],
                       iterations=60, seed=1, params=glns.SolveParams.paper(**PLAIN))
    _same(plain, fast)
    st = fast.destroy_stats[0]
    assert st.form == "numpy" and "took longer than its probe limit" in st.form_reason, st.form_reason


def test_an_operator_that_does_not_replay_its_own_calls_keeps_the_reference(monkeypatch):
    """An output that depends on more than the inputs and the seeded random state (here, how
    often it was called) is no evidence for any other form."""
    _fresh_process(monkeypatch)
    counts = {"n": 0}

    def drifting(x, destroy_cnt, problem_data):
        counts["n"] += 1
        routes = [list(r) for r in x]
        flat = [c for r in routes for c in r]
        out = set(flat[: destroy_cnt + counts["n"] % 2])
        return sorted(out), [[c for c in r if c not in out] for r in routes]

    from glns.operators.probe import RecordedCall, negotiate
    problem = make_vrp(glns.CVRP, 20, 1)
    x = problem.solution_from_routes([[i] for i in range(1, 21)])
    import random as _random
    from glns.operators.probe import canonical
    from glns.operators.views import view_data
    rec = RecordedCall(problem, x, 3, _random.getstate(), np.random.get_state(),
                       canonical(drifting(x, 3, dict(view_data(problem, "numpy")))), 0.001)
    neg = negotiate(drifting, "destroy", None, "problem_data", recorded=[rec])
    assert neg.chosen.label() == "numpy" and "output differs" in neg.reason


# ------------------------------------------------------------------ glns compile on a plain file

PLAIN_FILE = '''"""Five operators as a user keeps them: plain functions, helpers, a constant."""
import random

BIG = 1e18


def route_load(route, demands):
    return sum(demands[c] for c in route)


def insertion_cost(d, route, p, c):
    a = route[p - 1] if p else 0
    b = route[p] if p < len(route) else 0
    return d[a][c] + d[c][b] - d[a][b]


def random_removal(x, destroy_cnt, problem_data):
    flat = [c for r in x for c in r]
    out = set(random.sample(flat, min(destroy_cnt, len(flat))))
    return sorted(out), [[c for c in r if c not in out] for r in x]


def worst_removal(solution, destroy_cnt, problem_data):
    d = problem_data["distance_matrix"]
    scored = []
    for r in solution:
        for p, c in enumerate(r):
            rest = r[:p] + r[p + 1:]
            scored.append((insertion_cost(d, rest, p, c), c))
    scored.sort(reverse=True)
    out = {c for _, c in scored[:destroy_cnt]}
    return sorted(out), [[c for c in r if c not in out] for r in solution]


def greedy_insertion(partial, removed, problem_data):
    d, q, cap = problem_data["distance_matrix"], problem_data["demands"], problem_data["capacity"]
    routes = [list(r) for r in partial]
    for c in removed:
        best, where = BIG, None
        for i, r in enumerate(routes):
            if route_load(r, q) + q[c] > cap:
                continue
            for p in range(len(r) + 1):
                delta = insertion_cost(d, r, p, c)
                if delta < best:
                    best, where = delta, (i, p)
        if where is None:
            routes.append([c])
        else:
            routes[where[0]].insert(where[1], c)
    return routes


def random_insertion(partial, removed, problem_data):
    q, cap = problem_data["demands"], problem_data["capacity"]
    routes = [list(r) for r in partial]
    for c in removed:
        fits = [r for r in routes if route_load(r, q) + q[c] <= cap]
        if fits:
            r = random.choice(fits)
            r.insert(random.randrange(len(r) + 1), c)
        else:
            routes.append([c])
    return routes


def sorted_insertion(partial, removed, problem_data):
    return greedy_insertion(partial, sorted(removed), problem_data)
'''


@needs_compiler
def test_glns_compile_deploys_a_plain_file_of_operators_with_helpers(tmp_path, monkeypatch, capsys):
    from glns.cli import main
    from glns.compiler import driver
    from glns.evolution import load_module
    from glns.operators import accelerate

    path = tmp_path / "ops.py"
    path.write_text(PLAIN_FILE)
    out = tmp_path / "deployed"
    assert main(["compile", str(path), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["problem"] == "cvrp"                   # it reads demands and a capacity
    kinds = {o["name"]: o["kind"] for o in report["operators"]}
    assert kinds == {"random_removal": "destroy", "worst_removal": "destroy", "greedy_insertion": "repair",
                     "random_insertion": "repair", "sorted_insertion": "repair"}   # no helpers
    assert all(o["status"] in ("compiled", "cached") for o in report["operators"])
    assert "| greedy_insertion | repair |" in capsys.readouterr().out

    # another machine's empty cache, nothing may be built: the deployed functions run compiled
    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("GLNS_COMPILE", "cached")
    monkeypatch.setattr(driver, "_SEARCH_DIRS", [])
    monkeypatch.setattr(accelerate, "_BUILDS", {})
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    problem = _problem("cvrp", 40, 6)
    by_path = [f"{out / 'ops.py'}:{n}" for n in ("worst_removal", "greedy_insertion")]
    fast = glns.solve(problem, by_path[:1], by_path[1:], iterations=120, seed=2, params=glns.SolveParams.paper())
    module = load_module(out / "ops.py")
    imported = glns.solve(problem, [module.worst_removal], [module.greedy_insertion], iterations=120,
                          seed=2, params=glns.SolveParams.paper())
    plain = glns.solve(problem, [load_module(path).worst_removal], [load_module(path).greedy_insertion],
                       iterations=120, seed=2, params=glns.SolveParams.paper(**PLAIN))
    for res in (fast, imported):
        _same(plain, res)
        for st in res.destroy_stats + res.repair_stats:
            assert st.form.startswith("compiled"), st.form_reason
    assert not (tmp_path / "empty").exists() or not list((tmp_path / "empty").rglob("*.so"))


def test_operator_kinds_from_the_paper_signatures():
    from glns.deploy import operator_kind

    def a(x, destroy_cnt, problem_data): ...
    def b(partial, removed, problem_data): ...
    def c(sol, k, dist_mat): ...
    def remove_worst(s, m, d): ...
    def helper(route, d): ...
    def other(u, v, w): ...
    assert [operator_kind(f) for f in (a, b, c, remove_worst, helper, other)] == \
        ["destroy", "repair", "destroy", "destroy", None, None]
