"""Scaling of ``glns.solve_many``: speed-up and per-task overhead per backend.

The workload: the paper's 64 CVRP100 test instances (``paper_instances("cvrp", 100)``) x 500
iterations with the Python seed operators (random and worst removal, greedy insertion:
``glns.evolution.seeds.seed_members("cvrp")``, passed as source code and compiled in the
workers), paper preset. Each configuration (backend, workers) gets one executor, warmed up by
an untimed tiny batch (starts the workers, compiles the operators, as a long-lived executor
would have), then one timed ``solve_many`` call.

Figures per configuration:

- wall: seconds of the timed call;
- in-task: sum over tasks of the time measured inside the worker (``extra["task_seconds"]``);
- speed-up: wall of the first configuration of the same backend with 1 worker / this wall;
- overhead per task: ``workers * wall / tasks - in-task / tasks`` -- the worker-seconds a task
  costs beyond its own run (scheduling, pickling the instance and the result, idle workers at
  the end of the batch).

Every configuration must produce the same costs (checked). ``--evolution`` measures instead
the two task shapes of a G-LNS evolution run (the inputs of docs/scaling.md): an episode task
(one training instance, CVRP50 ``generate_cvrp(50, 20000 + i)``, 100 iterations, the 5 x 5
Python operators of the offline corpus, paper preset with ``op_timeout=1.0``; 16 per episode)
and a validation task (CVRP50 ``generate_cvrp(50, 30000 + i)``, 500 iterations, one pair: the
Python seeds random removal and greedy insertion; 64 per validated pair). Usage::

    python bench/batch_scaling.py                      # process and ray, 1 and 2 workers
    python bench/batch_scaling.py --backends process --workers 1 2 4 --instances 16
    python bench/batch_scaling.py --evolution --backends process --workers 1
"""

from __future__ import annotations

import argparse
import json
import os
import time

import glns
from glns.batch import make_executor, solve_many
from glns.datasets import generate_cvrp, paper_instances
from glns.evolution.seeds import seed_members


def operators() -> tuple[list, list]:
    destroy, repair = seed_members("cvrp")
    return [m.spec() for m in destroy], [m.spec() for m in repair]


def timed(ex, warm: list, instances: list, d: list, r: list, iterations: int,
          params: glns.SolveParams) -> tuple[list, float, float]:
    """(results, wall seconds, summed in-task seconds) of one solve_many call on `ex`, after an
    untimed 5-iteration call on `warm` (starts the workers, compiles the operators)."""
    solve_many(warm, d, r, iterations=5, params=params, executor=ex)
    t0 = time.perf_counter()
    results = solve_many(instances, d, r, iterations=iterations, params=params, executor=ex)
    wall = time.perf_counter() - t0
    return results, wall, sum(res.extra["task_seconds"] for res in results)


def measure(backend: str, workers: int, instances: list, iterations: int) -> dict:
    d, r = operators()
    params = glns.SolveParams.paper()
    with make_executor(backend, workers) as ex:
        warm = [generate_cvrp(10, s) for s in range(2 * workers)]
        results, wall, in_task = timed(ex, warm, instances, d, r, iterations, params)
    solver = sum(res.runtime for res in results)
    n = len(results)
    return {"backend": backend, "workers": workers, "tasks": n, "wall": wall, "in_task": in_task,
            "solver_runtime": solver, "per_task": in_task / n,
            "overhead_per_task": workers * wall / n - in_task / n,
            "costs": [res.cost for res in results]}


def measure_evolution(backend: str, workers: int) -> None:
    """Per-task times of an episode and of a validation, one timed call each."""
    from glns.offline_llm.corpus import good_entries

    params = glns.SolveParams.paper(op_timeout=1.0)
    episode = ([e.source() for e in good_entries("cvrp", "destroy")[:5]],
               [e.source() for e in good_entries("cvrp", "repair")[:5]])
    d, r = operators()
    validation = ([d[0]], r)
    shapes = [("episode", [generate_cvrp(50, 20000 + i) for i in range(16)], 100, episode),
              ("validation", [generate_cvrp(50, 30000 + i) for i in range(64)], 500, validation)]
    with make_executor(backend, workers) as ex:
        for name, insts, iterations, (dd, rr) in shapes:
            results, wall, in_task = timed(ex, insts[:2 * workers], insts, dd, rr, iterations, params)
            n = len(results)
            print(f"{backend} x{workers} {name:10}: {n} tasks, wall {wall:.2f} s, in-task "
                  f"{in_task / n:.4f} s/task, overhead {1000 * (workers * wall - in_task) / n:.1f} ms/task",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", nargs="+", default=["process", "ray"], choices=["serial", "process", "ray"])
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--instances", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--evolution", action="store_true", help="time the task shapes of an evolution run")
    args = ap.parse_args()
    if args.evolution:
        for backend in args.backends:
            for workers in args.workers:
                measure_evolution(backend, workers)
        return
    instances = paper_instances("cvrp", 100)[: args.instances]
    rows = []
    print(f"{len(instances)} x CVRP100 x {args.iterations} iterations, Python seed operators; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"{'backend':8} {'workers':>7} {'wall s':>8} {'in-task s':>10} {'per task s':>10} "
          f"{'speed-up':>8} {'overhead/task ms':>17}")
    for backend in args.backends:
        base = None
        for workers in args.workers:
            if backend == "serial" and workers != 1:
                continue
            row = measure(backend, workers, instances, args.iterations)
            base = base or row["wall"]
            row["speedup"] = base / row["wall"]
            rows.append(row)
            print(f"{backend:8} {workers:7d} {row['wall']:8.2f} {row['in_task']:10.2f} "
                  f"{row['per_task']:10.4f} {row['speedup']:8.2f} {1000 * row['overhead_per_task']:17.1f}",
                  flush=True)
    costs = {tuple(r["costs"]) for r in rows}
    print("identical costs in every configuration:", len(costs) == 1,
          f"(mean cost {sum(rows[0]['costs']) / len(rows[0]['costs']):.4f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
