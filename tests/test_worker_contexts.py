"""Worker processes from every way a program can start: a guarded script, an unguarded one,
standard input, ``python -c``, ``python -m`` and a notebook-like ``__main__`` without a file.

Each context runs as a real subprocess of this interpreter and must give the results of the
in-process ("serial") runs, for ``glns.solve_many`` and for the sandbox's ``evaluate``; what
cannot reach a worker (a function defined in ``__main__``) must fail at once, saying what to do.
``glns bench`` and ``glns evolve`` start their workers through the same pool, from the glns
command (whose ``__main__`` is glns itself), so what holds here holds for them.
"""

import functools
import json
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time
from multiprocessing import spawn

import pytest

import glns
from glns import datasets
from glns.executors import MainModuleError, SerialExecutor, WorkerPool, dump_task
from glns.executors.main_module import main_module_skipped
from glns.sandbox import PythonSource, evaluate

#: a Python destroy operator travelling as source code (it works in every context)
DESTROY = textwrap.dedent("""
    import random

    def destroy(x, destroy_cnt, problem_data):
        routes = [list(r) for r in x]
        k = random.randrange(len(routes))
        return [routes[k].pop()], [r for r in routes if r]
""")

#: what every context runs; `run()` prints one line "RESULT <json>"
PROGRAM = '''
import json, os, sys, time

import glns
from glns import datasets
from glns.executors import MainModuleError, WorkerPool
from glns.sandbox import PythonSource, evaluate

with open(os.environ["CONTEXT_IMPORT_LOG"], "a") as log:   # who runs this module's top level
    log.write(f"{os.getpid()}\\n")

DESTROY = %(destroy)r


def instances():
    return [datasets.generate_cvrp(12, 1), datasets.generate_ovrp(10, 3), datasets.generate_cvrp(9, 4)]


def square(v):
    return v * v


def main_destroy(x, destroy_cnt, problem_data):
    return [], x


def refusal(call):
    t0 = time.monotonic()
    try:
        call()
    except Exception as exc:
        return [type(exc).__name__, str(exc), time.monotonic() - t0]
    return None


def run():
    out = {}
    ops = [PythonSource(DESTROY, "destroy", "py"), "worst_removal"], "greedy_insertion"
    res = glns.solve_many(instances(), *ops, iterations=30, seed=5, backend="process", workers=2)
    out["solve_many"] = [[r.cost, r.solution_array().tolist()] for r in res]
    with WorkerPool(workers=2) as pool:
        runs = evaluate(instances(), *ops, pool=pool, iterations=30, seeds=[1, 2, 3])
        out["evaluate"] = [[o.status, o.result.cost if o.ok else o.error] for o in runs]
        out["refused"] = refusal(lambda: pool.map(square, [(3,)], timeout=30))
        out["pool_still_works"] = pool.run(abs, -4, timeout=30).value
    if os.environ.get("CONTEXT_SPAWN"):
        with WorkerPool(workers=1, context="spawn") as pool:
            runs = evaluate(instances()[:1], *ops, pool=pool, iterations=30, seeds=[1])
            out["spawn"] = [[o.status, o.result.cost if o.ok else o.error] for o in runs]
    out["operator_refused"] = refusal(lambda: glns.solve_many(
        instances(), main_destroy, "greedy_insertion", iterations=5, backend="process", workers=2))
    print("RESULT " + json.dumps(out), flush=True)
''' % {"destroy": DESTROY}

GUARD = '\nif __name__ == "__main__":\n    run()\n'
NO_GUARD = "\nrun()\n"

#: a launcher that runs a file like a notebook kernel runs a cell: in a __main__ without __file__
NOTEBOOK = textwrap.dedent("""
    import sys, types

    source = open(sys.argv[1]).read()
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    exec(compile(source, "<cell>", "exec"), main.__dict__)
""")


def _ops():
    return [PythonSource(DESTROY, "destroy", "py"), "worst_removal"], "greedy_insertion"


def _instances():
    return [datasets.generate_cvrp(12, 1), datasets.generate_ovrp(10, 3), datasets.generate_cvrp(9, 4)]


@pytest.fixture(scope="module")
def expected():
    """The in-process results every context must reproduce."""
    res = glns.solve_many(_instances(), *_ops(), iterations=30, seed=5, backend="serial")
    runs = evaluate(_instances(), *_ops(), pool=SerialExecutor(), iterations=30, seeds=[1, 2, 3])
    return {"solve_many": [[r.cost, r.solution_array().tolist()] for r in res],
            "evaluate": [[o.status, o.result.cost] for o in runs]}


def _run(tmp_path, context: str, spawn_too: bool) -> tuple[dict, list[str]]:
    """Run PROGRAM in `context`; its RESULT and the pids that ran its top level."""
    script = tmp_path / "ctx_program.py"
    script.write_text(PROGRAM + (GUARD if context == "guarded script" else NO_GUARD))
    log = tmp_path / "imports.log"
    env = {**os.environ, "CONTEXT_IMPORT_LOG": str(log), "CONTEXT_SPAWN": "1" if spawn_too else ""}
    stdin = None
    if context in ("guarded script", "unguarded script"):
        cmd = [sys.executable, str(script)]
    elif context == "standard input":
        cmd, stdin = [sys.executable, "-"], script.open()
    elif context == "python -c":
        cmd = [sys.executable, "-c", script.read_text()]
    elif context == "python -m":
        cmd = [sys.executable, "-m", "ctx_program"]
    else:
        (tmp_path / "notebook.py").write_text(NOTEBOOK)
        cmd = [sys.executable, str(tmp_path / "notebook.py"), str(script)]
    try:
        done = subprocess.run(cmd, cwd=tmp_path, env=env, stdin=stdin, capture_output=True, text=True,
                              timeout=300)
    finally:
        if stdin is not None:
            stdin.close()
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"{context}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return json.loads(lines[0][len("RESULT "):]), log.read_text().split()


CONTEXTS = {
    # context: (words of the refusal that say where __main__ comes from, also try "spawn")
    "guarded script": ("the script", False),
    "unguarded script": ("the script", True),
    "standard input": ("a script read from standard input", True),
    "python -c": ("a `python -c` command", False),
    "python -m": ("the module ctx_program (run with python -m)", False),
    "notebook": ("an interactive session or notebook", False),
}


@pytest.mark.parametrize("context", list(CONTEXTS))
def test_process_workers_from_every_caller_context(tmp_path, expected, context):
    origin, spawn_too = CONTEXTS[context]
    out, pids = _run(tmp_path, context, spawn_too)
    assert out["solve_many"] == expected["solve_many"]
    assert out["evaluate"] == expected["evaluate"]
    if spawn_too:
        assert out["spawn"] == expected["evaluate"][:1]
    # no worker ran the caller's main module again: only the caller itself wrote its pid
    assert len(pids) == 1
    # a task that needs __main__ fails at once, before any worker gets it, and says what to do
    kind, message, seconds = out["refused"]
    assert kind == "MainModuleError" and seconds < 5
    assert f"function 'square' is defined in __main__ of {origin}" in message
    assert "put it in a module" in message
    assert out["pool_still_works"] == 4
    # an operator defined in __main__: refused by the operator parser, at once
    kind, message, seconds = out["operator_refused"]
    assert kind == "OperatorError" and "__main__" in message and seconds < 5


# ============================================================================ in this process


def test_workers_are_started_without_the_main_module_fix_up():
    keys = {"init_main_from_name", "init_main_from_path"}
    seen = {}

    def other_thread():
        seen["other"] = spawn.get_preparation_data("x")

    with main_module_skipped():
        inside = spawn.get_preparation_data("x")
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert not keys & set(inside)
    # only processes started by this thread inside the block: the rest of the program is unchanged
    outside = spawn.get_preparation_data("x")
    assert set(seen["other"]) == set(outside) and inside == {k: v for k, v in outside.items() if k not in keys}
    wrapper = spawn.get_preparation_data
    with main_module_skipped():   # wrapped once per process, however often it is used
        pass
    assert spawn.get_preparation_data is wrapper


def _in_main(obj):
    obj.__module__ = "__main__"
    return obj


def test_tasks_that_refer_to_main_are_refused_before_they_run():
    def f(v):
        return v

    class Box:
        pass

    f, Box = _in_main(f), _in_main(Box)
    for args in [(f,), (Box(),), (functools.partial(f, 1),), ({"nested": [Box]},)]:
        with pytest.raises(MainModuleError, match="is defined in __main__ of"):
            dump_task(abs, args)
    with pytest.raises(MainModuleError, match="function 'test_tasks_that_refer_to_main_are_refused"):
        dump_task(f, ())
    # anything else pickles as multiprocessing would send it
    assert pickle.loads(dump_task(divmod, (7, 2))) == (divmod, (7, 2))
    with WorkerPool(workers=1, memory_mb=256) as pool:
        t0 = time.monotonic()
        with pytest.raises(MainModuleError):
            pool.map(f, [(1,)], timeout=30)
        assert time.monotonic() - t0 < 1.0 and pool.pids() == []   # no worker was started for it
        with pytest.raises(MainModuleError):
            pool.map(abs, [(-1,), (Box(),)], timeout=30)
        assert pool.map(abs, [(-1,), (-2,)], timeout=30)[1].value == 2
        # a task that cannot be pickled at all is one failed task, as before
        res = pool.map(abs, [(-1,), (threading.Lock(),)], timeout=30)
        assert res[0].value == 1 and res[1].status == "error" and "cannot send the task" in res[1].message
