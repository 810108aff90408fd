"""Python operators in their negotiated form against the paper's plain-Python evaluator.

One G-LNS episode (16 instances of 50 customers / cities x 100 iterations, paper preset with the
sandbox's ``op_timeout=1.0``, 5 destroy x 5 repair Python operators given as source code) is
timed three ways in one run, for six operator sets:

1. ``fast``: ``glns.sandbox.evaluate`` on a warm ``WorkerPool(1)`` with the defaults (data views
   negotiated, operators compiled by Cython; ``compile="wait"`` so that the untimed warm-up
   episode builds them, as the evolution's background builds do before an operator's episodes);
2. ``plain``: the same pool with ``views="numpy", compile="off"`` (glns without negotiated views and compiled twins);
3. ``reference``: the plain-Python, deepcopy-based loop of the paper's evaluator
   (``glns.reference.reference_alns``) with numpy ``problem_data``, serially.

All three replay the same trajectories (operators reseeded from the run's stream before every
call), and the test asserts that the best costs agree exactly, so the timings compare identical
work. Operator sets: the offline LLM corpus (numpy style: ``np.asarray(...)`` then ``d[a, b]``)
for CVRP, OVRP and TSP, and the paper-style sets of ``glns.offline_llm.paper_style``
(element-wise ``dist_mat[a][b]`` on ``problem_data`` like the paper's evolved operators).

    python -m pytest bench/test_operator_forms_speed.py --benchmark-columns=median,iqr,rounds -q -s
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import glns
from glns.datasets import generate_cvrp, generate_ovrp, generate_tsp
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries
from glns.operators import from_source
from glns.reference import reference_alns, reseeding
from glns.sandbox import PythonSource, WorkerPool, evaluate

N_INSTANCES = 16
ITERATIONS = 100
ROUNDS = 5
BASE = glns.SolveParams.paper(op_timeout=1.0)
MODES = {"fast": glns.SolveParams.paper(op_timeout=1.0, compile="wait"),
         "plain": glns.SolveParams.paper(op_timeout=1.0, views="numpy", compile="off")}
GENERATE = {"tsp": generate_tsp, "cvrp": generate_cvrp, "ovrp": generate_ovrp}


def _sources(style: str, kind: str, op_kind: str) -> list[str]:
    if style == "corpus":
        return [e.source() for e in good_entries(kind, op_kind)[:5]]
    family = "tsp" if kind == "tsp" else "vrp"
    return list(paper_style.SOURCES[family][op_kind][:5])


SETS = [(style, kind) for style in ("corpus", "paper-style") for kind in ("cvrp", "ovrp", "tsp")]
_MEDIANS: dict[tuple[str, str, str], float] = {}
_COSTS: dict[tuple[str, str, str], list[float]] = {}
_FORMS: dict[tuple[str, str], dict[str, str]] = {}


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1) as p:
        yield p


def _episode(pool: WorkerPool, style: str, kind: str, mode: str) -> list[Any]:
    instances = [GENERATE[kind](50, 20000 + i) for i in range(N_INSTANCES)]
    destroy = [PythonSource(s, name=f"d{i}") for i, s in enumerate(_sources(style, kind, "destroy"))]
    repair = [PythonSource(s, name=f"r{i}") for i, s in enumerate(_sources(style, kind, "repair"))]
    outcomes = evaluate(instances, destroy, repair, pool=pool, iterations=ITERATIONS,
                        seeds=list(range(N_INSTANCES)), params=MODES[mode])
    bad = [(o.instance, o.status, o.error) for o in outcomes if not o.ok]
    assert not bad, bad
    return outcomes


@pytest.mark.parametrize("style,kind", SETS, ids=[f"{s}-{k}" for s, k in SETS])
@pytest.mark.parametrize("mode", ["fast", "plain", "reference"])
def test_episode(benchmark, pool, style, kind, mode):
    benchmark.group = f"episode {style} {kind}: 16 x n=50 x 100 iterations, 5 x 5 operators"
    if mode == "reference":
        instances = [GENERATE[kind](50, 20000 + i) for i in range(N_INSTANCES)]
        d = [reseeding(from_source(s, "destroy")) for s in _sources(style, kind, "destroy")]
        r = [reseeding(from_source(s, "repair")) for s in _sources(style, kind, "repair")]
        runs = benchmark.pedantic(lambda: [reference_alns(p, d, r, ITERATIONS, seed, BASE)
                                           for seed, p in enumerate(instances)], rounds=ROUNDS, iterations=1)
        costs = [run["best_cost"] for run in runs]
    else:
        _episode(pool, style, kind, mode)  # untimed: negotiation, builds, caches
        outcomes = benchmark.pedantic(lambda: _episode(pool, style, kind, mode), rounds=ROUNDS, iterations=1)
        costs = [o.result.cost for o in outcomes]
        if mode == "fast":
            _FORMS[(style, kind)] = {s.name: s.form for s in outcomes[0].result.destroy_stats
                                     + outcomes[0].result.repair_stats}
    key = (style, kind, mode)
    _MEDIANS[key] = benchmark.stats.stats.median
    _COSTS[key] = costs
    for other in ("fast", "plain", "reference"):  # same trajectories: the timings compare the same work
        if (style, kind, other) in _COSTS:
            assert _COSTS[(style, kind, other)] == costs, f"{other} and {mode} disagree"
    benchmark.extra_info["mean_objective"] = float(np.mean(costs))
    if mode == "reference" and (style, kind, "fast") in _MEDIANS:
        fast, plain = _MEDIANS[(style, kind, "fast")], _MEDIANS[(style, kind, "plain")]
        benchmark.extra_info["reference_over_fast"] = _MEDIANS[key] / fast
        benchmark.extra_info["plain_over_fast"] = plain / fast
        print(f"\n{style} {kind}: reference {_MEDIANS[key]:.3f} s, plain {plain:.3f} s, fast {fast:.3f} s; "
              f"reference / fast = {_MEDIANS[key] / fast:.2f}x, plain / fast = {plain / fast:.2f}x; "
              f"forms {_FORMS.get((style, kind))}")
