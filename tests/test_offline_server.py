"""The offline test LLM: its corpus works, its bad cases are served and misbehave as named,
its answers are deterministic, and it speaks the OpenAI protocol to the real openai client."""

from __future__ import annotations

import concurrent.futures
import json
import random
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns import operators
from glns.exceptions import OperatorError
from glns.llm import markers, parse_answer, parse_joint_answer
from glns.llm.parsing import AnswerParseError
from glns.offline_llm import BAD_CASES, GOOD, OfflineLLM, OfflineLLMServer, parse_model
from glns.offline_llm.bad import bad_operator_source
from glns.offline_llm.brain import DirectiveError, Directives, jitter_delay
from conftest import make_problem

openai = pytest.importorskip("openai")

PROBLEMS = ("tsp", "cvrp", "ovrp")
ENTRIES = [(problem, e) for problem in PROBLEMS
           for (family, kind), entries in GOOD.items() if family == ("tsp" if problem == "tsp" else "vrp")
           for e in entries]


def prompt(problem: str, kind: str, extra: str = "") -> list[dict]:
    return [{"role": "system", "content": "You are an expert in ALNS."},
            {"role": "user", "content": f"Design a new operator.\n{markers.marker_lines(problem, kind)}\n{extra}"}]


@pytest.fixture(scope="module")
def server():
    with OfflineLLMServer(seed=7) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0, timeout=10)


def ask(client, problem: str, kind: str, model: str = "offline", **kw) -> str:
    out = client.chat.completions.create(model=model, messages=prompt(problem, kind), **kw)
    return out.choices[0].message.content


# -- the good corpus -----------------------------------------------------------------------

def test_corpus_size():
    for family in ("tsp", "vrp"):
        assert len(GOOD[(family, "destroy")]) >= 6
        assert len(GOOD[(family, "repair")]) >= 6
    names = [e.name for entries in GOOD.values() for e in entries]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("problem,entry", ENTRIES, ids=[f"{p}-{e.name}" for p, e in ENTRIES])
def test_good_operator_runs_in_solve(problem, entry):
    """Through the answer text, the parser and the bridge into 20 solver iterations."""
    inst = make_problem(problem, 12, seed=3, capacity=20)
    source = parse_answer(f"{{{entry.idea}}}\n\n```python\n{entry.source()}```").code
    op = operators.from_source(source, entry.kind, name=entry.name)
    partner = "greedy_insertion" if entry.kind == "destroy" else "random_removal"
    d, r = (op, partner) if entry.kind == "destroy" else (partner, op)
    res = glns.solve(inst, d, r, iterations=20, seed=5)
    assert inst.violation(res.solution) is None
    stats = res.destroy_stats[0] if entry.kind == "destroy" else res.repair_stats[0]
    assert stats.calls == 20
    assert stats.failures == 0, stats.last_error


def _check_destroy(inst, x, k, out):
    removed, partial = out
    if inst.kind == "tsp":
        nodes = list(partial)
    else:
        nodes = [c for r in partial for c in r]
        q = inst.problem_data()["demands"]
        assert all(sum(int(q[c]) for c in r) <= inst.capacity for r in partial)
    everything = list(range(inst.n_nodes)) if inst.kind == "tsp" else list(range(1, inst.n_nodes))
    assert sorted(nodes + list(removed)) == everything
    assert len(removed) == min(k, len(everything))


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("n", [2, 3, 7])
def test_good_operators_on_tiny_and_extreme_inputs(problem, n):
    """destroy_cnt 0, 1 and beyond the size; repairs from an empty partial solution."""
    family = "tsp" if problem == "tsp" else "vrp"
    random.seed(n)
    np.random.seed(n)
    for cap in (9, 50):  # capacity 9: demands up to 9, often one customer per route
        inst = make_problem(problem, n, seed=n, capacity=cap)
        data = inst.problem_data()
        x = glns.solve(inst, iterations=3, seed=1).solution
        for e in GOOD[(family, "destroy")]:
            for k in (0, 1, inst.n_nodes + 5):
                _check_destroy(inst, x, k, e.func(x, k, data if "problem_data" in e.func.__code__.co_varnames[:3]
                                                  else data["distance_matrix"]))
        everything = list(range(inst.n_nodes)) if problem == "tsp" else list(range(1, inst.n_nodes))
        for e in GOOD[(family, "repair")]:
            third = data if "problem_data" in e.func.__code__.co_varnames[:3] else data["distance_matrix"]
            for k in (1, len(everything)):
                removed, partial = GOOD[(family, "destroy")][0].func(x, k, data)
                out = e.func(partial, removed, third)
                assert inst.violation(out) is None, (e.name, partial, removed, out)
            assert inst.violation(e.func([] if problem == "tsp" else [[]], list(everything), third)) is None


@settings(max_examples=40, deadline=None)
@given(problem=st.sampled_from(PROBLEMS), n=st.integers(2, 16), capacity=st.integers(9, 40),
       seed=st.integers(0, 2**31 - 1), frac=st.floats(0.0, 1.2))
def test_good_operators_keep_node_set_and_feasibility(problem, n, capacity, seed, frac):
    """Every destroy, then every repair on its output: node set and capacities preserved,
    on random instances of every kind (tiny and capacity-tight ones included)."""
    family = "tsp" if problem == "tsp" else "vrp"
    random.seed(seed)
    np.random.seed(seed % 2**32)
    inst = make_problem(problem, n, seed=seed, capacity=capacity)
    data = inst.problem_data()
    x = glns.solve(inst, iterations=2, seed=seed).solution
    k = int(frac * n)

    def third(func):
        return data if "problem_data" in func.__code__.co_varnames[:3] else data["distance_matrix"]

    for d_entry, r_entry in zip(GOOD[(family, "destroy")], GOOD[(family, "repair")]):
        out = d_entry.func(x, k, third(d_entry.func))
        _check_destroy(inst, x, k, out)
        removed, partial = out
        for r in GOOD[(family, "repair")]:
            copy = [list(route) for route in partial] if family == "vrp" else list(partial)
            complete = r.func(copy, list(removed), third(r.func))
            assert inst.violation(complete) is None, (d_entry.name, r.name, complete)


# -- the bad cases -------------------------------------------------------------------------

def _inst_data(problem):
    inst = make_problem(problem, 12, seed=4, capacity=20)
    return inst, inst.problem_data(), glns.solve(inst, iterations=2, seed=0).solution


RUNNABLE = ("raises", "duplicate_nodes", "drops_nodes", "wrong_types", "invalid_solution",
            "ignores_capacity")


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("kind", ["destroy", "repair"])
def test_bad_operators_misbehave_as_named(problem, kind):
    """Run the cheap bad cases through the solver: each one fails on every call."""
    family = "tsp" if problem == "tsp" else "vrp"
    inst, data, x = _inst_data(problem)
    for case in RUNNABLE:
        if BAD_CASES[case].vrp_only and family == "tsp":
            continue
        op = operators.from_source(bad_operator_source(case, family, kind), kind)
        pair = (op, "greedy_insertion") if kind == "destroy" else ("random_removal", op)
        res = glns.solve(inst, *pair, iterations=5, seed=1)
        stats = res.destroy_stats[0] if kind == "destroy" else res.repair_stats[0]
        assert stats.failures == stats.calls == 5, (case, stats)
        assert inst.violation(res.solution) is None
    with pytest.raises(OperatorError, match="positional|no default"):
        operators.from_source(bad_operator_source("wrong_signature", family, kind), kind)
    for case in ("mutates_problem_data", "forbidden_import"):  # harmless: valid answers
        op = operators.from_source(bad_operator_source(case, family, kind), kind)
        pair = (op, "greedy_insertion") if kind == "destroy" else ("random_removal", op)
        before = inst.distances.copy()
        res = glns.solve(inst, *pair, iterations=5, seed=1)
        assert np.array_equal(inst.distances, before)
        assert inst.violation(res.solution) is None
        assert res.cost == pytest.approx(inst.cost(res.solution))


def test_bad_loops_are_stopped_by_a_time_limit():
    """infinite_loop and very_slow stop at the per-call limit (swallowing_loop needs a kill:
    not run here); memory_hog's allocation is refused under a small address-space limit."""
    inst, data, x = _inst_data("cvrp")
    params = glns.SolveParams(op_timeout=0.05)
    for case in ("infinite_loop", "very_slow"):
        op = operators.from_source(bad_operator_source(case, "vrp", "destroy"), "destroy")
        res = glns.solve(inst, op, "greedy_insertion", iterations=2, seed=1, params=params)
        assert res.destroy_stats[0].failures == 2
    code = bad_operator_source("memory_hog", "tsp", "destroy")
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
              "import numpy as np\n"
              f"exec({code!r})\n"
              "d = np.zeros((5, 5))\n"
              "try:\n    destroy([0, 1, 2, 3, 4], 2, {'distance_matrix': d})\n"
              "except MemoryError:\n    sys.exit(3)\n")
    assert subprocess.run([sys.executable, "-c", script], timeout=60).returncode == 3
    # swallowing_loop outlives the in-process timer: only killing the process stops it
    code = bad_operator_source("swallowing_loop", "tsp", "repair")
    script = ("from glns.operators.bridge import time_limit\n"
              f"exec({code!r})\n"
              "with time_limit(0.05):\n    repair([0, 1], [2], {})\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.5)
    proc.kill()
    proc.wait()


def test_every_bad_case_is_served_when_forced(client, server):
    for problem in PROBLEMS:
        for kind in ("destroy", "repair", "joint"):
            for case in BAD_CASES:
                if BAD_CASES[case].vrp_only and problem == "tsp":
                    with pytest.raises(openai.BadRequestError, match="needs a CVRP"):
                        ask(client, problem, kind, f"offline:bad={case}")
                    continue
                text = ask(client, problem, kind, f"offline:bad={case}")
                assert server.log[-1]["served"] == f"bad:{case}"
                if case == "no_code_block":
                    with pytest.raises(AnswerParseError, match="no python code block"):
                        parse_answer(text)
                    continue
                code = parse_answer(text).code
                if case == "syntax_error":
                    with pytest.raises(SyntaxError):
                        compile(code, "<answer>", "exec")
                    continue
                compile(code, "<answer>", "exec")
                if kind == "joint":
                    joint = parse_joint_answer(text)
                    assert (joint.destroy_name, joint.repair_name) == ("destroy", "repair")


def test_bad_rate_and_case_variety():
    brain = OfflineLLM(seed=3, bad_rate=0.25)
    served = [brain.answer(prompt("cvrp", "destroy", str(i)), Directives()) for i in range(400)]
    bad = [a for a in served if a.case == "bad"]
    assert 0.18 < len(bad) / len(served) < 0.32
    assert len({a.bad_case for a in bad}) >= 12
    assert len({a.entries for a in served if a.case == "good"}) == len(GOOD[("vrp", "destroy")])
    never = OfflineLLM(seed=3, bad_rate=0.0)
    assert all(never.answer(prompt("tsp", "repair", str(i)), Directives()).case == "good" for i in range(50))
    tsp_bad = [OfflineLLM(seed=s).answer(prompt("tsp", "repair"), Directives(bad=True)) for s in range(60)]
    assert not any(BAD_CASES[a.bad_case].vrp_only for a in tsp_bad)


# -- protocol, markers, determinism ---------------------------------------------------------

def test_openai_protocol(client, server):
    out = client.chat.completions.create(model="offline:good", messages=prompt("tsp", "destroy"))
    assert out.id.startswith("chatcmpl-") and out.model == "offline:good"
    assert out.object == "chat.completion" and out.choices[0].finish_reason == "stop"
    assert out.usage.prompt_tokens > 0 and out.usage.completion_tokens > 0
    assert out.usage.total_tokens == out.usage.prompt_tokens + out.usage.completion_tokens
    assert [m.id for m in client.models.list()] == ["offline"]
    for bad_request in ({"model": "offline"}, {"messages": prompt("tsp", "repair")},
                        {"model": "offline", "messages": prompt("tsp", "repair"), "stream": True},
                        {"model": "offline:nonsense", "messages": prompt("tsp", "repair")},
                        {"model": "offline:good=no_such_op", "messages": prompt("tsp", "repair")}):
        with pytest.raises(openai.BadRequestError):
            client.post("/chat/completions", body=bad_request, cast_to=object)
    with pytest.raises(openai.NotFoundError):
        client.get("/nothing", cast_to=object)
    assert server.base_url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize("problem", PROBLEMS)
def test_markers_select_problem_and_kind(client, server, problem):
    family = "tsp" if problem == "tsp" else "vrp"
    for kind in ("destroy", "repair", "joint"):
        ask(client, problem, kind, "offline:good")
        item = server.log[-1]
        assert (item["problem"], item["kind"]) == (problem, kind)
        served = item["served"].removeprefix("good:").split("+")
        assert all(name.startswith(family + "/") for name in served)
        wanted = ["destroy", "repair"] if kind == "joint" else [kind]
        by_name = {e.name: k for (f, k), es in GOOD.items() for e in es}
        assert [by_name[s] for s in served] == wanted


def test_keyword_fallback_without_markers():
    assert markers.detect("Design a Repair Operator for the capacitated vehicle routing problem") \
        == ("cvrp", "repair")
    assert markers.detect("Evolve this pair as a UNIFIED ENTITY: a Destroy and a Repair, OVRP") \
        == ("ovrp", "joint")
    assert markers.detect("a destroy operator for the TSP") == ("tsp", "destroy")
    assert markers.marker_lines("ovrp", "joint") == "Problem: OVRP\nOperator type: destroy and repair"
    with pytest.raises(ValueError):
        markers.problem_marker("pdptw")


def test_forced_good_entry(client, server):
    text = ask(client, "ovrp", "repair", "offline:good=regret2_insertion")
    assert server.log[-1]["served"] == "good:vrp/regret2_insertion"
    assert "open_routes" in parse_answer(text).code
    ask(client, "tsp", "joint", "offline:good=tsp/strip_removal")
    assert server.log[-1]["served"].startswith("good:tsp/strip_removal+tsp/")
    with pytest.raises(openai.BadRequestError, match="no answer"):
        ask(client, "tsp", "destroy", "offline:good=regret2_insertion")


def test_same_seed_same_answers():
    """Two servers with one seed answer one request sequence identically (repeated prompts
    included); another seed differs; a request seed makes answers history-independent."""
    requests = [prompt(p, k) for p in PROBLEMS for k in ("destroy", "repair", "joint")] * 3

    def run(seed, request_seed=None):
        with OfflineLLMServer(seed=seed, bad_rate=0.3) as srv:
            c = openai.OpenAI(base_url=srv.base_url, api_key="none", max_retries=0)
            kw = {} if request_seed is None else {"seed": request_seed}
            return [c.chat.completions.create(model="offline", messages=m, **kw).choices[0].message.content
                    for m in requests]

    first = run(11)
    assert first == run(11)
    assert first != run(12)
    assert len(set(first)) > len(first) // 2  # repeated prompts get new answers
    seeded = run(11, request_seed=5)
    assert len(set(seeded[:9])) == 9 and seeded[:9] == seeded[9:18]


def test_parse_model_directives():
    d = parse_model("offline:fail=429x2,bad=raises,slow=0.5x1")
    assert (d.fail, d.fail_count, d.bad, d.slow, d.slow_count) == ("429", 2, "raises", 0.5, 1)
    assert parse_model("deepseek-chat") == Directives()
    assert parse_model("offline:rate=1").rate == 1.0
    for bad in ("offline:fail=429", "offline:bad=nope", "offline:rate=2", "offline:good,bad",
                "offline:slow=fast", "offline:colour=red"):
        with pytest.raises(DirectiveError):
            parse_model(bad)


def test_launcher_prints_url_and_serves():
    tool = Path(__file__).resolve().parents[1] / "tools" / "offline_llm_server.py"
    proc = subprocess.Popen([sys.executable, str(tool), "--port", "0", "--seed", "1"],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        with urllib.request.urlopen(url + "/models", timeout=10) as resp:
            assert json.load(resp)["data"][0]["id"] == "offline"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("problem", PROBLEMS)
def test_greedy_repairs_find_the_cheapest_insertion(problem):
    """With one removed node, the greedy-type repairs must pick the cheapest place (a new
    route included for VRP), checked by brute force with the problem's own cost: this catches
    wrong open-route arithmetic."""
    family = "tsp" if problem == "tsp" else "vrp"
    greedy = {"tsp": ("random_order_insertion", "regret2_insertion", "farthest_insertion",
                      "nearest_insertion"),
              "vrp": ("random_order_insertion", "regret2_insertion", "demand_first_insertion",
                      "farthest_first_insertion", "angle_sweep_insertion")}[family]
    for seed in range(4):
        inst = make_problem(problem, 9, seed=seed, capacity=25)
        data = inst.problem_data()
        x = glns.solve(inst, iterations=30, seed=seed).solution
        node = int(x[seed]) if family == "tsp" else int(x[0][seed % len(x[0])])
        if family == "tsp":
            partial = [c for c in x if c != node]
            options = [partial[:p] + [node] + partial[p:] for p in range(len(partial))]
        else:
            partial = [[c for c in r if c != node] for r in x]
            partial = [r for r in partial if r]
            options = [partial + [[node]]] + [
                partial[:i] + [r[:p] + [node] + r[p:]] + partial[i + 1:]
                for i, r in enumerate(partial) for p in range(len(r) + 1)]
        best = min(inst.cost(o) for o in options if inst.violation(o) is None)
        for e in GOOD[(family, "repair")]:
            if e.func.__name__ in greedy:
                third = data if "problem_data" in e.func.__code__.co_varnames[:3] else data["distance_matrix"]
                out = e.func([list(r) for r in partial] if family == "vrp" else list(partial), [node], third)
                assert inst.cost(out) == pytest.approx(best), e.name


# -- jitter: answers out of order, unchanged --------------------------------------------------

def test_parse_jitter_directive():
    d = parse_model("offline:jitter=0.3")
    assert (d.jitter, d.jitter_salt, d.slow) == (0.3, 0, 0.0)
    d = parse_model("offline:good,jitter=0.25~-7,slow=0.1")
    assert (d.jitter, d.jitter_salt, d.slow, d.good) == (0.25, -7, 0.1, True)
    for bad in ("jitter", "jitter=", "jitter=fast", "jitter=-0.1", "jitter=0.3~", "jitter=0.3~1.5",
                "jitter=0.3~x", "jitter=0.3x2"):
        with pytest.raises(DirectiveError, match="jitter must be SECONDS or SECONDS~SALT"):
            parse_model(f"offline:{bad}")


def test_jitter_delay_is_bounded_deterministic_and_salted():
    messages = prompt("cvrp", "destroy")
    delays = {salt: [jitter_delay(parse_model(f"offline:jitter=0.3~{salt}"), messages, s)
                     for s in range(200)] for salt in (0, 1)}
    for values in delays.values():
        assert all(0.0 <= v < 0.3 for v in values)
        assert min(values) < 0.03 and max(values) > 0.27  # spread over the whole range
    unsalted = parse_model("offline:jitter=0.3")
    assert delays[0] == [jitter_delay(unsalted, messages, s) for s in range(200)]
    other_messages = prompt("tsp", "repair")  # with a request seed, the messages do not count
    assert delays[1] == [jitter_delay(Directives(jitter=0.3, jitter_salt=1), other_messages, s)
                         for s in range(200)]

    def order(values):
        return sorted(range(len(values)), key=values.__getitem__)

    assert order(delays[0][:10]) != order(delays[1][:10])
    # without a request seed, the messages decide
    by_messages = [jitter_delay(Directives(jitter=0.3), prompt("tsp", "destroy", str(i)))
                   for i in range(20)]
    assert len(set(by_messages)) == 20 and all(0.0 <= v < 0.3 for v in by_messages)
    assert by_messages[3] == jitter_delay(Directives(jitter=0.3), prompt("tsp", "destroy", "3"))
    assert jitter_delay(Directives(), messages, 1) == 0.0


def test_jitter_reorders_concurrent_requests(client, server):
    """Three requests sent longest-delay first come back shortest-delay first, each after at
    least its delay (slow included)."""
    model = "offline:good,jitter=0.3~5,slow=0.02"
    directives = parse_model(model)
    messages = prompt("tsp", "destroy")
    delay = {s: jitter_delay(directives, messages, s) for s in range(200)}
    # well-separated delays, so thread scheduling on a busy machine cannot swap them
    seeds = [next(s for s in delay if low <= delay[s] < low + 0.05) for low in (0.24, 0.13, 0.02)]
    start = time.monotonic()

    def call(seed):
        client.chat.completions.create(model=model, messages=messages, seed=seed)
        return seed, time.monotonic() - start

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        futures = []
        for seed in seeds:
            futures.append(pool.submit(call, seed))
            time.sleep(0.01)
        done = [f.result() for f in futures]
    assert [s for s, _ in sorted(done, key=lambda item: item[1])] == seeds[::-1]
    for seed, elapsed in done:
        assert elapsed >= delay[seed] + 0.02 - 0.005
    other = {s: jitter_delay(parse_model("offline:jitter=0.3~6"), messages, s) for s in range(8)}
    assert sorted(other, key=other.get) != sorted(range(8), key=delay.get)


def test_jitter_does_not_change_answers(client):
    brain = OfflineLLM(seed=4, bad_rate=0.4)
    for i, problem in enumerate(PROBLEMS):
        for kind in ("destroy", "repair", "joint"):
            messages = prompt(problem, kind)
            assert brain.answer(messages, parse_model("offline:jitter=0.3~9"), i).text == \
                brain.answer(messages, Directives(), i).text
    for seed in range(3):  # over HTTP, with a request seed
        assert ask(client, "cvrp", "repair", "offline:jitter=0.05~2", seed=seed) == \
            ask(client, "cvrp", "repair", "offline", seed=seed)
    # and without one: the same request sequence gets the same answers
    requests = [prompt(p, "destroy") for p in PROBLEMS] * 2

    def run(model):
        with OfflineLLMServer(seed=11, bad_rate=0.3) as srv:
            c = openai.OpenAI(base_url=srv.base_url, api_key="none", max_retries=0)
            return [c.chat.completions.create(model=model, messages=m).choices[0].message.content
                    for m in requests]

    assert run("offline:jitter=0.04~1") == run("offline")
