"""OS-level confinement of the workers that run untrusted code (docs/sandbox.md).

An escape corpus -- file writes, reads outside the allowed paths, deletions, shell commands,
new processes, sockets, signals to this process, credentials in the environment -- each in a
plain form and in a form hidden from a string check, runs through the pre-evaluation filter
and through episodes in confined workers: every attempt fails, nothing is created, nothing
connects, the run goes on. The same operators in unconfined workers do what they say (the
controls), and the static check refuses each of them in this process.
"""

from __future__ import annotations

import logging
import os
import signal
import socket

import numpy as np
import pytest

import glns
from glns import datasets
from glns.executors import WorkerPool, confinement, landlock, seccomp
from glns.policy import policy_violation
from glns.sandbox import CheckConfig, check_operator, evaluate
from glns.sandbox.confine import sandbox_confinement

FULL = confinement.support()["seccomp"] is None and confinement.support()["landlock"] >= 1
needs_kernel = pytest.mark.skipif(not FULL, reason=f"needs seccomp and Landlock: {confinement.support()}")

#: the filter without its static check: what the OS layers contain on their own
RUNTIME = CheckConfig(sizes=(10,), instances_per_size=1, call_timeout=2.0, growth_n=None,
                      kill_grace=1.0, allowed_imports=None)

#: attempts: a line (or lines) an operator runs before returning a valid answer; each raises
#: when it is blocked. {mark}: a file that must not appear; {secret}: a file outside the
#: allowed paths; {victim}: a file that must not disappear; {port}: a listener of this test;
#: {pid}: this process.
ATTEMPTS = {
    "write, open": 'open("{mark}", "w").write("x")',
    "write, np.save": 'np.save("{mark}", np.zeros(3))',
    "write, tofile": 'np.zeros(3).tofile("{mark}")',
    "write, memmap": 'np.memmap("{mark}", mode="w+", shape=(3,))',
    "write, getattr": 'getattr(random, "_o" + "s").open("{mark}", 0o101)',
    "delete, module attribute": 'random._os.remove("{victim}")',
    "read, open": 'open("{secret}").read()',
    "read, np.fromfile": 'np.fromfile("{secret}", dtype=np.uint8)',
    "read, environ file": 'open("/proc/self/environ").read()',
    "shell, os": 'import os\n    if os.system("touch {mark}") != 0:\n        raise OSError("no shell")',
    "shell, module attribute": 'if random._os.system("touch {mark}") != 0:\n        raise OSError("no shell")',
    "process, subprocess": 'import subprocess\n    subprocess.run(["touch", "{mark}"])',
    "process, typing.sys": 'typing.sys.modules["os"].posix_spawn("/usr/bin/touch", ["touch", "{mark}"], {{}})',
    "process, fork": 'if random._os.fork() == 0:\n        random._os._exit(0)',
    "socket, socket": 'import socket\n    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()',
    "socket, dataclasses.sys": 'dataclasses.sys.modules["socket"].create_connection(("127.0.0.1", {port}), timeout=2)',
    "signal, os.kill": 'import os, signal\n    os.kill({pid}, signal.SIGUSR1)',
    "signal, attrgetter": 'operator.attrgetter("_os")(random).kill({pid}, 10)',
    "environment, os.environ": 'import os\n    os.environ["GLNS_LLM_API_KEY"]',
    "environment, collections._sys": 'collections._sys.modules["os"].environ["GLNS_LLM_API_KEY"]',
}

HEADER = "import random, typing, dataclasses, collections, operator\nimport numpy as np\n"


def operator_source(attempt: str, **where: object) -> str:
    body = attempt.format(**where)   # continuation lines carry their indent
    return (HEADER + "def destroy(x, destroy_cnt, problem_data):\n"
            f"    {body}\n    return [x[0][0]], [x[0][1:]] + x[1:]\n")


@pytest.fixture()
def target(tmp_path, monkeypatch):
    """What the attempts aim at, and a way to see whether any of them got through."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda *a: received.append(1))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    where = dict(mark=tmp_path / "created", secret=secret, victim=victim,
                 port=listener.getsockname()[1], pid=os.getpid())

    def breaches() -> list[str]:
        out = []
        if os.path.exists(where["mark"]) or any(tmp_path.glob("created*")):
            out.append("a file was created")
        if not victim.exists():
            out.append("a file was deleted")
        try:
            listener.accept()[0].close()
            out.append("a connection reached the listener")
        except BlockingIOError:
            pass
        if received:
            out.append("a signal reached this process")
        return out

    yield where, breaches
    signal.signal(signal.SIGUSR1, previous)
    listener.close()


@pytest.fixture(scope="module")
def confined():
    with WorkerPool(workers=2, memory_mb=512, sandbox="strict") as pool:
        yield pool


# ============================================================================ the layers


@needs_kernel
def test_a_confined_worker_reports_every_layer(confined):
    report = confined.run(confinement.applied, timeout=10).value
    assert report["mode"] == "strict" and report["rlimits"]
    assert report["seccomp"] is True and report["landlock"]["abi"] >= 1
    import numpy
    granted = report["landlock"]["read_paths"]
    assert any(os.path.realpath(numpy.__file__).startswith(p) for p in granted)
    assert not any(p in ("/", "/etc", "/tmp", "/proc", os.path.expanduser("~")) for p in granted)


@needs_kernel
@pytest.mark.parametrize("call,args,error", [
    (os.open, ("{tmp}/f", os.O_WRONLY | os.O_CREAT), "Operation not permitted"),
    (os.mkdir, ("{tmp}/d",), "Operation not permitted"),
    (os.fork, (), "Operation not permitted"),
    (socket.socket, (), "Operation not permitted"),
    (os.kill, ("{pid}", signal.SIGUSR1), "Operation not permitted"),
    (os.open, ("/etc/hostname", os.O_RDONLY), "Permission denied"),
    (os.setsid, (), "Operation not permitted"),
])
def test_system_calls_outside_the_allowlist_fail(confined, tmp_path, call, args, error):
    args = tuple(a.format(tmp=tmp_path, pid=os.getpid()) if isinstance(a, str) else a for a in args)
    args = tuple(int(a) if isinstance(a, str) and a.isdigit() else a for a in args)
    res = confined.run(call, *args, timeout=10)
    assert res.status == "error" and error in res.message, res
    assert list(tmp_path.iterdir()) == []


@needs_kernel
def test_computing_still_works_in_a_confined_worker(confined):
    import math
    assert confined.run(math.factorial, 20, timeout=10).value == math.factorial(20)
    # threads, importing from the interpreter's files, limits that can be read but not raised
    code = ("import threading, fractions\nout = []\n"
            "t = threading.Thread(target=out.append, args=(fractions.Fraction(1, 3),))\n"
            "t.start(); t.join()\nassert out\n")
    assert confined.run(exec, code, {}, timeout=10).ok
    import resource
    soft = confined.run(resource.getrlimit, resource.RLIMIT_FSIZE, timeout=10).value
    assert soft == (0, 0)
    raised = confined.run(resource.setrlimit, resource.RLIMIT_NOFILE, (4096, 4096), timeout=10)
    assert raised.status == "error"


def test_strict_mode_refuses_a_machine_without_the_kernel_features(monkeypatch, caplog):
    monkeypatch.setattr(confinement, "support", lambda: {"seccomp": "no filters here", "landlock": 0})
    with pytest.raises(confinement.SandboxUnavailableError, match="seccomp .*no filters here.* and Landlock"):
        WorkerPool(workers=1, sandbox="strict")
    with pytest.raises(glns.GlnsError):
        WorkerPool(workers=1, sandbox="strict")
    monkeypatch.setattr(confinement, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger="glns.executors.confinement"):
        WorkerPool(workers=1, sandbox="auto").close()
    assert "seccomp (no filters here) is not available" in caplog.text
    assert "Landlock" in caplog.text


def test_sandbox_settings_are_validated():
    with pytest.raises(ValueError, match="sandbox mode"):
        confinement.Confinement(mode="on")
    with pytest.raises(TypeError, match="sandbox must be"):
        WorkerPool(workers=1, sandbox=3)
    with pytest.raises(ValueError, match="sandbox"):
        CheckConfig(sandbox="yes")
    with pytest.raises(ValueError, match="process"):
        glns.solve_many([datasets.generate_tsp(10, 0)], iterations=5, backend="serial", sandbox=True)
    assert sandbox_confinement("off") is None and sandbox_confinement(False) is None
    assert sandbox_confinement(True).mode == "auto"


def test_secret_names():
    env = {"GLNS_LLM_API_KEY": "a", "OPENAI_API_KEY": "b", "AWS_SECRET_ACCESS_KEY": "c",
           "GITHUB_TOKEN": "d", "HOME": "/root", "PATH": "/bin", "MINE": "e",
           "GLNS_SANDBOX_SCRUB": "MINE, OTHER"}
    assert sorted(confinement.secret_names(env)) == sorted(
        ["GLNS_LLM_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MINE"])
    assert confinement.secret_names({"X": "1"}, ["X"]) == ["X"]


def test_the_seccomp_program_jumps_forward_within_range():
    code = seccomp.program(1234)
    assert all(0 <= jt <= 255 and 0 <= jf <= 255 for _, jt, jf, _ in code)
    assert code[-1] == (0x06, 0, 0, 0x7FFF0000)      # the last instruction allows
    assert len(code) < 4096                           # BPF_MAXINSNS


# ============================================================================ the escape corpus


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_the_static_check_refuses_every_attempt(name, tmp_path):
    source = operator_source(ATTEMPTS[name], mark=tmp_path / "m", secret=tmp_path / "s",
                             victim=tmp_path / "v", port=1, pid=1)
    assert policy_violation(source) is not None


@needs_kernel
@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_admission_contains_every_attempt(confined, target, name, monkeypatch):
    where, breaches = target
    adm = check_operator(operator_source(ATTEMPTS[name], **where), "destroy", "cvrp",
                         pool=confined, config=RUNTIME)
    assert not adm.ok and adm.check == "exception", adm
    assert breaches() == []


@needs_kernel
def test_episodes_contain_every_attempt_and_go_on(confined, target):
    where, breaches = target
    instances = [datasets.generate_cvrp(20, 1)]
    for name, attempt in ATTEMPTS.items():
        out = evaluate(instances, [operator_source(attempt, **where), "random_removal"], ["greedy_insertion"],
                       pool=confined, iterations=15, params=glns.SolveParams(op_timeout=2.0))
        assert out[0].ok, (name, out[0])
        st = out[0].result.destroy_stats[0]
        assert st.calls > 0 and st.failures == st.calls, (name, st)
        assert breaches() == [], name


def test_unconfined_workers_let_the_same_attempts_through(target):
    """The control: without confinement the corpus does what it says, so the tests above can fail."""
    where, breaches = target
    with WorkerPool(workers=1, memory_mb=512) as pool:
        for name in ("write, np.save", "signal, os.kill", "socket, socket"):
            adm = check_operator(operator_source(ATTEMPTS[name], **where), "destroy", "cvrp",
                                 pool=pool, config=RUNTIME)
            assert adm.ok, (name, adm)
    found = breaches()
    assert "a file was created" in found and "a connection reached the listener" in found
    assert "a signal reached this process" in found


@needs_kernel
def test_credentials_stay_out_of_every_worker(monkeypatch):
    """A spawned worker gets the environment of its start: planted keys never reach it, a
    plain variable does (the control)."""
    monkeypatch.setenv("GLNS_LLM_API_KEY", "sk-planted")
    monkeypatch.setenv("DEEPSEEK", "sk-named-by-the-user")
    monkeypatch.setenv("GLNS_TEST_PLAIN", "visible")
    conf = sandbox_confinement("strict", scrub=["DEEPSEEK"])
    with WorkerPool(workers=1, context="spawn", sandbox=conf) as pool:
        assert pool.run(os.getenv, "GLNS_TEST_PLAIN", timeout=60).value == "visible"
        for name in ("GLNS_LLM_API_KEY", "DEEPSEEK"):
            assert pool.run(os.getenv, name, timeout=10).value is None, name
        leaked = pool.run(open, "/proc/self/environ", timeout=10)
        assert leaked.status == "error" and "Permission denied" in leaked.message
    assert os.environ["GLNS_LLM_API_KEY"] == "sk-planted"      # the caller keeps its own


# ============================================================================ same results


@needs_kernel
def test_confined_runs_give_the_same_results(confined):
    instances = [datasets.generate_cvrp(30, 3), datasets.generate_tsp(25, 4)]
    from glns.operators.seeds import vrp
    import inspect
    seeds = inspect.getsource(vrp)
    args = dict(iterations=40, params=glns.SolveParams(op_timeout=5.0))
    cvrp = [instances[0]]
    with WorkerPool(workers=2, memory_mb=512) as plain:
        expected = evaluate(cvrp, [seeds], [seeds], pool=plain, **args)
    got = evaluate(cvrp, [seeds], [seeds], pool=confined, **args)
    assert got[0].ok and got[0].result.cost == expected[0].result.cost
    assert np.array_equal(got[0].result.best_curve, expected[0].result.best_curve)
    a = glns.solve_many(instances, iterations=30, seed=2, workers=2)
    b = glns.solve_many(instances, iterations=30, seed=2, workers=2, sandbox="strict")
    assert [r.cost for r in a] == [r.cost for r in b]
    assert [r.solution for r in a] == [r.solution for r in b]


@needs_kernel
def test_the_parent_reads_a_confined_workers_answer_as_data_only(confined):
    """An answer that names a callable (here os.system, which unpickling would call with the
    pickle's arguments in a crafted answer) is refused, and the pool goes on."""
    import pickle
    res = confined.run(pickle.loads, b"cposix\nsystem\n.", timeout=10)   # answers os.system
    assert res.status == "error" and "posix.system" in res.message and "not a data type" in res.message
    assert confined.run(sum, [1, 2], timeout=10).value == 3
    from glns.executors.answers import UnsafeAnswerError, load_answer
    crafted = b"cposix\nsystem\n(Vtouch /tmp/never\ntR."      # what a hijacked pipe could send
    with pytest.raises(UnsafeAnswerError):
        load_answer(crafted)
    assert not os.path.exists("/tmp/never")
    data = pickle.dumps(("ok", {"a": np.arange(3), "b": np.float64(1.5)}, None, 0.1, False))
    assert load_answer(data)[1]["b"] == 1.5


# ============================================================================ where it is used


def _escaping_export(tmp_path, mark):
    """An exported population whose destroy operator writes a file: code a user did not write."""
    from glns.evolution.export import export_module
    from glns.evolution.population import Member
    from glns.offline_llm.corpus import good_entries
    evil = operator_source('if random.random() < 2:\n        np.save("{mark}", np.zeros(3))',
                           mark=mark)
    destroy = [Member("d0", "destroy", evil, "destroy", "writes a file", "i1")]
    e = good_entries("cvrp", "repair")[0]
    repair = [Member("r0", "repair", e.source("repair"), "repair", e.idea, "i2")]
    return export_module(tmp_path / "best_operators.py", destroy, repair, None, {"problem": "cvrp"})


@needs_kernel
def test_solve_many_and_bench_run_an_untrusted_export_confined(tmp_path):
    import json
    from glns.cli import main
    mark = tmp_path / "written"
    path = _escaping_export(tmp_path, mark)
    instances = datasets.paper_instances("cvrp", 10)[:2]
    results = glns.solve_many(instances, str(path), iterations=10, workers=1, sandbox="strict")
    assert all(r.destroy_stats[0].failures == r.destroy_stats[0].calls > 0 for r in results)
    out = tmp_path / "bench"
    assert main(["bench", "synthetic", "--problems", "cvrp", "--sizes", "10", "--instances", "2",
                 "--iterations", "10", "--solvers", f"population:{path}", "--sandbox", "strict",
                 "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert len(runs) == 2 and all(r["cost"] is not None for r in runs)
    assert not list(tmp_path.glob("written*"))
    # the control: the same export unconfined writes its file
    glns.solve_many(instances[:1], str(path), iterations=3, workers=1)
    assert list(tmp_path.glob("written*"))


def test_evolve_takes_a_sandbox_mode(tmp_path):
    from glns.evolution import EvolutionConfig
    assert EvolutionConfig().sandbox == "auto"
    with pytest.raises(ValueError, match="sandbox"):
        EvolutionConfig(sandbox="maybe")
    with pytest.raises(ValueError, match="Ray actors are not confined"):
        EvolutionConfig(sandbox="strict", backend="ray")
    from glns.cli import build_parser
    args = build_parser().parse_args(["evolve", "--offline", "--sandbox", "strict"])
    assert args.sandbox == "strict"
