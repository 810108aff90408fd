"""Shared fixtures: small generated instances (no external data needed).

The tests never touch the user's compiled-operator cache: the session gets a private one
(``GLNS_CACHE_DIR``, inherited by every worker process), and ``GLNS_COMPILE=cached`` keeps the
default ``compile="auto"`` from starting builds in tests that are not about compiling (those
that are set ``compile="wait"`` or call ``glns.compiler`` themselves). Form decisions are kept
per test (``GLNS_DECISION_DIR``, emptied before each test).
"""

import os
import shutil
import signal
import tempfile

import numpy as np
import pytest

_CACHE = tempfile.mkdtemp(prefix="glns-test-cache-")
os.environ["GLNS_CACHE_DIR"] = _CACHE
os.environ.setdefault("GLNS_COMPILE", "cached")
# (one directory for the session: worker processes, forked from a server started by any test,
# see the same one; each test empties it)
_DECISIONS = os.path.join(_CACHE, "test-decisions")
os.environ["GLNS_DECISION_DIR"] = _DECISIONS
# The Ctrl-C tests interrupt child processes with SIGINT. A shell without job control starts a
# background command with SIGINT ignored, its children inherit that, and Python only turns
# SIGINT into KeyboardInterrupt when it starts with the default: give the children the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import glns
from glns import datasets


@pytest.fixture(autouse=True)
def _own_decisions(monkeypatch):
    """Each test starts with no kept form decisions (glns.operators.decisions): tests that
    negotiate, or change what a negotiation takes, see their own decisions only."""
    from glns.operators import decisions

    shutil.rmtree(_DECISIONS, ignore_errors=True)
    monkeypatch.setattr(decisions, "_OFFERED", {})
    monkeypatch.setattr(decisions, "_NEW", {})


def make_tsp(n: int, seed: int) -> glns.TSP:
    """The paper's recipe (``RandomState(seed)``), as ``glns.datasets.generate_tsp``."""
    return datasets.generate_tsp(n, seed)


def make_vrp(cls, n: int, seed: int, capacity: int = 50):
    """A CVRP or OVRP (`cls`) by the paper's recipe: depot (0.5, 0.5), demands 1..9."""
    gen = datasets.generate_cvrp if cls is glns.CVRP else datasets.generate_ovrp
    return gen(n, seed, capacity)


def make_problem(kind: str, n: int, seed: int, capacity: int):
    """A random instance of `kind` from numpy's Generator (depot first, demands 1..9)."""
    rng = np.random.default_rng(seed)
    if kind == "tsp":
        return glns.TSP(rng.random((n, 2)))
    xy = rng.random((n + 1, 2))
    q = rng.integers(1, 10, n + 1)
    q[0] = 0
    if kind == "vrptw":
        return make_vrptw_like(xy, q, capacity, rng)
    return (glns.CVRP if kind == "cvrp" else glns.OVRP)(xy, q, capacity)


def make_vrptw_like(xy, q, capacity, rng, horizon: float = 4.0, service: float = 0.05,
                    half_width=(0.1, 0.6)):
    """A VRPTW on these nodes: windows of random half-widths centred where a customer can be
    served by a route of its own (so every instance is valid), horizon and service times in
    the units of the unit square's distances."""
    n = len(xy)
    reach = np.sqrt(((xy - xy[0]) ** 2).sum(axis=1))
    latest = horizon - service - reach
    centre = reach + rng.random(n) * (latest - reach)
    half = half_width[0] + rng.random(n) * (half_width[1] - half_width[0])
    tw = np.column_stack([np.maximum(0.0, centre - half), np.maximum(np.minimum(latest, centre + half), reach)])
    tw[0] = (0.0, horizon)
    return glns.VRPTW(xy, q, capacity, tw, service)


def native_chain_step(inst, kind: str, sol, step: int, rng, n: int, check=lambda: None) -> None:
    """One step of a long chain of native operator calls on one Solution, as the loop reuses
    its solutions: destroy 1 .. n/2 nodes (the step-th operator in turn), check(), repair
    (every few steps with local search, of either level, or granular lists), check()."""
    from glns._core._native_ops import NATIVE_DESTROY, NATIVE_REPAIR, apply_destroy, apply_repair

    destroys = sorted(name for name, d in NATIVE_DESTROY.items() if kind in d.problems)
    repairs = sorted(name for name, d in NATIVE_REPAIR.items() if kind in d.problems)
    k = 1 + rng.randrange(max(1, n // 2))
    removed, _, _ = apply_destroy(destroys[step % len(destroys)], inst, sol, k, rng.next_u64())
    check()
    params = {"local_search": 1 + (step // 3) % 2} if step % 3 else {}
    if step % 4 == 1:
        params["neighbours"] = 5
    name = repairs[(step // len(destroys)) % len(repairs)]
    params = {p: v for p, v in params.items()
              if p in {q.name for q in NATIVE_REPAIR[name].all_params}}
    apply_repair(name, inst, sol, removed, rng.next_u64(), params)
    check()


@pytest.fixture
def tsp20() -> glns.TSP:
    return make_tsp(20, 1)


@pytest.fixture
def cvrp20() -> glns.CVRP:
    return make_vrp(glns.CVRP, 20, 2)


@pytest.fixture
def ovrp20() -> glns.OVRP:
    return make_vrp(glns.OVRP, 20, 3)


@pytest.fixture(params=["tsp", "cvrp", "ovrp"])
def any_problem(request):
    return {"tsp": lambda: make_tsp(25, 4), "cvrp": lambda: make_vrp(glns.CVRP, 25, 5),
            "ovrp": lambda: make_vrp(glns.OVRP, 25, 6)}[request.param]()


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)
