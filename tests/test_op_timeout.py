"""The operator time limit: a safe default, and enforced in any thread.

In the main thread the limit is a SIGALRM timer (tests/test_bridge.py covers it in detail);
elsewhere a watchdog thread interrupts the operator (glns.operators.watchdog).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

import glns
from glns import SolveParams, datasets
from glns.operators.bridge import time_limit
from glns.operators.watchdog import TICK, WATCHDOG

HANG = "def destroy(x, k, pd):\n    while True:\n        pass\n"
HANG_BARE_EXCEPT = ("def destroy(x, k, pd):\n    while True:\n        try:\n            pass\n"
                    "        except:\n            pass\n")
SWALLOW = ("def destroy(x, k, pd):\n    try:\n        while True:\n            pass\n"
           "    except BaseException:\n        pass\n    return [x[0]], x[1:]\n")
HANG_REPAIR = "def repair(p, r, pd):\n    n = 0\n    while True:\n        n += 1\n"
LIMIT = 0.05


def _in_thread(fn, *args, timeout: float = 20.0):
    """fn(*args) in a fresh non-main thread: (its result or exception, whether it finished)."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: B902 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "the thread did not finish: the time limit did not stop the operator"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_the_default_limit_is_bounded():
    assert SolveParams().op_timeout == 60.0
    assert SolveParams.paper().op_timeout == SolveParams().op_timeout
    assert SolveParams(op_timeout=None).op_timeout is None   # still possible, on request


def _solve_hanging(source: str, kind: str):
    tsp = datasets.generate_tsp(10, 1)
    params = SolveParams(op_timeout=LIMIT)
    if kind == "destroy":
        res = glns.solve(tsp, source, "greedy_insertion", iterations=4, params=params)
        return res, res.destroy_stats[0]
    res = glns.solve(tsp, "random_removal", source, iterations=4, params=params)
    return res, res.repair_stats[0]


@pytest.mark.parametrize("thread", ["main", "worker thread"])
@pytest.mark.parametrize("source, kind", [(HANG, "destroy"), (HANG_BARE_EXCEPT, "destroy"),
                                          (SWALLOW, "destroy"), (HANG_REPAIR, "repair")],
                         ids=["while_true", "bare_except", "swallows_timeout", "repair"])
def test_an_endless_operator_is_scored_as_failed(source, kind, thread):
    t0 = time.perf_counter()
    res, st = _solve_hanging(source, kind) if thread == "main" else _in_thread(_solve_hanging, source, kind)
    assert time.perf_counter() - t0 < 10.0
    assert st.calls == st.failures == 4 and st.outcomes == (0, 0, 0, 4)
    assert st.last_error == f"raised OperatorTimeout: operator ran past its time limit of {LIMIT:g} s"
    assert st.seconds >= 4 * LIMIT * 0.9
    assert res.cost > 0


def test_a_thread_runs_python_operators_interpreted_under_a_limit():
    from glns.operators.seeds import tsp as seeds

    tsp = datasets.generate_tsp(15, 2)
    res = _in_thread(lambda: glns.solve(tsp, seeds.random_removal, seeds.greedy_insertion, iterations=30,
                                        params=SolveParams(op_timeout=5.0)))
    same = glns.solve(tsp, seeds.random_removal, seeds.greedy_insertion, iterations=30,
                      params=SolveParams(op_timeout=5.0))
    assert res.cost == same.cost and res.solution == same.solution
    st = res.destroy_stats[0]
    assert st.failures == 0 and not st.form.startswith("compiled")
    assert "outside the main thread the time limit stops only interpreted code" in st.form_reason


def test_a_timeout_in_one_thread_leaves_other_threads_alone():
    tsp = datasets.generate_tsp(10, 3)
    results: dict = {}

    def hanging():
        results["hang"] = _solve_hanging(HANG, "destroy")[1]

    def healthy():
        # a limit the healthy calls cannot reach even on a loaded machine (a call that waits for
        # the GIL behind the spinning thread can take more than LIMIT): a failure here can only
        # be an interruption meant for the other thread
        results["ok"] = glns.solve(tsp, "def destroy(x, k, pd):\n    return x[:k], x[k:]\n",
                                   "greedy_insertion", iterations=200, params=SolveParams(op_timeout=5.0))

    threads = [threading.Thread(target=hanging), threading.Thread(target=healthy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results["hang"].failures == 4
    assert results["ok"].destroy_stats[0].failures == 0 and results["ok"].destroy_stats[0].calls == 200


def test_no_interruption_is_left_behind_after_the_limited_call():
    def busy_after_timeout():
        with pytest.raises(BaseException, match="time limit"):
            WATCHDOG.call(lambda: time.sleep(0.3), (), LIMIT, _error)   # stopped after the sleep
        end = time.monotonic() + 5 * TICK   # plain code after the call: nothing may hit it
        n = 0
        while time.monotonic() < end:
            n += 1
        return n

    assert _in_thread(busy_after_timeout) > 0


#: after limited calls that were interrupted (the second one catches the first interruption),
#: a traced function entry must return: CPython 3.11 loops forever there when the
#: interpreter's "asynchronous exception pending" signal is left set
_TRACE_AFTER_TIMEOUTS = """
import sys, threading, time
from glns.operators.watchdog import WATCHDOG

def spin():
    while True:
        pass

def swallow():
    try:
        spin()
    except BaseException:
        time.sleep(0.2)     # returns after the watchdog fired again (a pending interruption)

def worker():
    for fn in (spin, swallow):
        try:
            WATCHDOG.call(fn, (), 0.05, TimeoutError)
        except TimeoutError:
            print("timeout", flush=True)

t = threading.Thread(target=worker)
t.start()
t.join()
sys.settrace(lambda *args: None)
(lambda: None)()
sys.settrace(None)
print("traced", flush=True)
"""


def test_interruptions_leave_no_pending_signal_behind():
    """Taking back an interruption must clear CPython's pending signal, not only the exception:
    a stale signal made the next traced call (coverage, hypothesis) loop forever."""
    out = subprocess.run([sys.executable, "-c", _TRACE_AFTER_TIMEOUTS], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["timeout", "timeout", "traced"]


def test_the_watchdog_passes_results_and_exceptions_through():
    def run():
        assert WATCHDOG.call(lambda a, b: a + b, (2, 3), 1.0, _error) == 5
        with pytest.raises(KeyError, match="k"):
            WATCHDOG.call(lambda: {}["k"], (), 1.0, _error)
        with pytest.raises(BaseException, match="time limit of 0.05 s") as info:
            with time_limit(LIMIT):
                while True:
                    pass
        assert type(info.value).__name__ == "OperatorTimeout"
        with time_limit(1.0):
            x = sum(range(1000))
        return x

    assert _in_thread(run) == sum(range(1000))


def _error(seconds: float) -> BaseException:
    from glns.operators.bridge import _timeout_error

    return _timeout_error(seconds)
