"""Time per iteration and peak memory of ``glns.solve`` against n.

For every problem (TSP, CVRP) and size n (100 ... 30,000), one at a time, a fresh child process
generates a uniform instance (``glns.datasets.generate(problem, n, seed)``), prepares the core's
copy of it (``problem.core``) and runs ``glns.solve(problem, time_limit=T, seed=seed)`` with the
default portfolio. Per size:

- generate s: building the instance (coordinates; the core computes distances on demand);
- core s: the core's private copy of what the solve searches: on 1,000 nodes and more the
  curve-ordered copy (``glns.problems.renumber``) and its core, else ``problem.core``;
- solve s / overhead s: the whole ``glns.solve`` call, and what it spends outside its
  iterations (initial solution, per-run set-up);
- iterations, median and mean seconds per iteration (``result.iteration_seconds``), the first
  iteration's seconds (from the random start it grew with n: 5 s at 30,000 cities), and the
  median over that of the smallest n measured for the same problem (the table only; the
  target is at most 3x from 100 to 10,000);
- peak RSS: the child's maximum resident set size (``ru_maxrss`` of ``os.wait4``, known even
  for a child that was killed), and the peak seen after generating and after the core.

A child that fails is a row with its status, not a crash of the script: "memory" (MemoryError,
under the ``--memory-gb`` address-space limit each child sets, so a size that does not fit fails
in Python instead of waking the system's out-of-memory killer), "killed" (a signal), "timeout"
(``--timeout``), "error" (any other exception). Rows go to ``DIR/scaling.json`` and
``DIR/scaling.md`` after every size. Usage::

    python bench/scaling.py                                     # tsp cvrp, n = 100 ... 30000, 10 s
    python bench/scaling.py --problems cvrp --sizes 1000 3000 --seconds 5 --out scaling-cvrp
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Sequence

PROBLEMS = ("tsp", "cvrp")
SIZES = (100, 300, 1000, 3000, 10000, 30000)
COLUMNS = (("problem", "problem", "{}"), ("n", "n", "{}"), ("status", "status", "{}"),
           ("iterations", "iterations", "{}"), ("median_iteration_ms", "median it. ms", "{:.3f}"),
           ("per_smallest", "median / smallest n", "{:.2f}x"),
           ("mean_iteration_ms", "mean it. ms", "{:.3f}"), ("first_iteration_s", "first it. s", "{:.3f}"),
           ("generate_s", "generate s", "{:.2f}"),
           ("core_s", "core s", "{:.2f}"), ("solve_s", "solve s", "{:.2f}"),
           ("overhead_s", "overhead s", "{:.2f}"), ("peak_rss_mb", "peak RSS MB", "{:.0f}"))


# ------------------------------------------------------------------------------------- child


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # Linux: kB


def fixed_removals(k: int) -> Any:
    """SolveParams that remove exactly k nodes every iteration at every n >= k (the default
    draws k from 20-60 % of n, at most 60; on VRPs at most 30 from 400 customers on)."""
    import glns
    return glns.SolveParams(destroy_fraction=1.0, max_destroy=k, large_destroy=None,
                            large_tour=glns.LargeTour(max_destroy=k))


def measure(problem: str, n: int, seconds: float, seed: int, removals: int = 0,
            renumber: bool = True) -> dict[str, Any]:
    """One size, in this process: the figures of the module docstring (peak RSS aside);
    removals > 0: exactly that many nodes removed per iteration (:func:`fixed_removals`);
    renumber False: SolveParams(renumber=None), the original numbering at every n."""
    import numpy as np

    import glns
    from glns.datasets import generate
    from glns.problems.renumber import renumbered

    row: dict[str, Any] = {"phase": "generate"}
    try:
        t0 = time.perf_counter()
        instance = generate(problem, n, seed)
        t1 = time.perf_counter()
        row.update(generate_s=t1 - t0, rss_after_generate_mb=_rss_mb(), phase="core")
        params = fixed_removals(removals) if removals else glns.SolveParams()
        if not renumber:
            params = dataclasses.replace(params, renumber=None)
        copy = renumbered(instance, params.renumber)      # what the solve searches
        (copy.problem if copy is not None else instance).core
        t2 = time.perf_counter()
        row.update(core_s=t2 - t1, rss_after_core_mb=_rss_mb(), phase="solve")
        result = glns.solve(instance, time_limit=seconds, seed=seed, params=params)
        t3 = time.perf_counter()
    except MemoryError as exc:
        return {**row, "status": "memory", "error": f"MemoryError in {row['phase']}: {exc}"}
    except Exception as exc:  # noqa: BLE001 - reported as the row's status, not raised
        return {**row, "status": "error", "error": "".join(traceback.format_exception_only(exc)).strip()}
    its = np.asarray(result.iteration_seconds, dtype=np.float64)
    loop = float(its.sum())
    return {**row, "phase": "done", "status": "ok", "iterations": int(result.iterations),
            "median_iteration_ms": 1000 * float(np.median(its)) if its.size else None,
            "mean_iteration_ms": 1000 * float(its.mean()) if its.size else None,
            "first_iteration_s": float(its[0]) if its.size else None,
            "solve_s": t3 - t2, "loop_s": loop, "overhead_s": t3 - t2 - loop, "cost": float(result.cost)}


def child_main(problem: str, n: int, seconds: float, seed: int, memory_gb: float | None, out: str,
               removals: int = 0, renumber: bool = True) -> None:
    """The child's entry: limit the address space, measure, write the row as JSON to ``out``."""
    if memory_gb:
        limit = int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    row = measure(problem, n, seconds, seed, removals, renumber)
    Path(out).write_text(json.dumps(row))


# ------------------------------------------------------------------------------------ parent


def exit_status(wait_status: int) -> tuple[str, str | None]:
    """(status, message) of a child that wrote no row, from its ``os.wait4`` status."""
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        hint = " (possibly the system's out-of-memory killer)" if sig == signal.SIGKILL else ""
        return "killed", f"killed by {name}{hint}"
    return "error", f"the child exited with code {os.waitstatus_to_exitcode(wait_status)} and no result"


def run_child(problem: str, n: int, seconds: float, seed: int, memory_gb: float | None,
              timeout: float, removals: int = 0, renumber: bool = True) -> dict[str, Any]:
    """One size in a fresh ``python bench/scaling.py --child ...`` process: its row, with its
    peak RSS and status whatever became of it."""
    with tempfile.TemporaryDirectory(prefix="glns-scaling-") as tmp:
        out, log = Path(tmp) / "row.json", Path(tmp) / "stderr.txt"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", problem, str(n), str(seconds),
               str(seed), str(memory_gb or 0), str(out), str(removals), str(int(renumber))]
        with open(log, "w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        timed_out = False
        while True:   # os.wait4, not Popen.wait: it also gives the child's rusage
            pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                timed_out = True
                _, wait_status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(wait_status)   # reaped: keep Popen from waiting
        base = {"problem": problem, "n": n, "seconds": seconds, "seed": seed,
                "peak_rss_mb": usage.ru_maxrss / 1024}
        if timed_out:
            return {**base, "status": "timeout", "error": f"no result within {timeout:g} s; killed"}
        if out.is_file():
            return {**base, **json.loads(out.read_text())}
        status, message = exit_status(wait_status)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return {**base, "status": status, "error": message + (": " + " | ".join(tail) if tail else "")}


def per_smallest(rows: Sequence[dict[str, Any]]) -> list[float | None]:
    """Each row's median time per iteration over that of the smallest n measured for its problem
    (the target: within 3x from 100 to 10,000); None for a row without a median."""
    base: dict[str, tuple[int, float]] = {}
    for row in rows:
        ms = row.get("median_iteration_ms")
        if ms and (row["problem"] not in base or row["n"] < base[row["problem"]][0]):
            base[row["problem"]] = (row["n"], ms)
    return [row["median_iteration_ms"] / base[row["problem"]][1] if row.get("median_iteration_ms") else None
            for row in rows]


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as a Markdown table (– for what a failed size did not reach); errors below."""
    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row, ratio in zip(rows, per_smallest(rows)):
        row = {**row, "per_smallest": ratio}
        cells = ["–" if row.get(key) is None else fmt.format(row[key]) for key, _, fmt in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    errors = [f"- {r['problem']} n = {r['n']}: {r['error']}" for r in rows if r.get("error")]
    return "\n".join(lines) + ("\n\n" + "\n".join(errors) if errors else "") + "\n"


def default_memory_gb() -> float:
    """Three quarters of the machine's memory: a child may take that much address space."""
    return round(0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)


def run(problems: Sequence[str], sizes: Sequence[int], seconds: float, out: Path, seed: int = 0,
        memory_gb: float | None = None, timeout: float | None = None, removals: int = 0,
        renumber: bool = True) -> list[dict[str, Any]]:
    """Every (problem, size), one child at a time; scaling.json and scaling.md in ``out``
    rewritten after each. removals > 0: that many nodes removed per iteration at every n."""
    from glns.benchmark.report import environment

    out.mkdir(parents=True, exist_ok=True)
    timeout = timeout if timeout is not None else 600 + 3 * seconds
    settings = {"problems": list(problems), "sizes": list(sizes), "seconds": seconds, "seed": seed,
                "memory_gb": memory_gb, "timeout": timeout, "removals": removals or None, "renumber": renumber,
                "solver": "glns.solve default portfolio" + (f", {removals} removals per iteration" if removals else "")
                + ("" if renumber else ", renumber=None")}
    document: dict[str, Any] = {"settings": settings, "environment": environment(), "rows": []}
    for problem in problems:
        for n in sizes:
            print(f"scaling: {problem} n = {n} ...", file=sys.stderr, flush=True)
            document["rows"].append(run_child(problem, n, seconds, seed, memory_gb, timeout, removals, renumber))
            (out / "scaling.json").write_text(json.dumps(document, indent=1) + "\n")
            (out / "scaling.md").write_text(markdown(document["rows"]))
    return document["rows"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        problem, n, seconds, seed, memory_gb, out, removals, renumber = argv[1:]
        child_main(problem, int(n), float(seconds), int(seed), float(memory_gb), out, int(removals),
                   renumber == "1")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="n: cities or customers")
    ap.add_argument("--seconds", type=float, default=10.0, help="time limit of each glns.solve (default 10)")
    ap.add_argument("--seed", type=int, default=0, help="instance and solver seed (default 0)")
    ap.add_argument("--out", default="scaling", help="output directory (default ./scaling)")
    ap.add_argument("--memory-gb", type=float, default=default_memory_gb(),
                    help="address-space limit of each child (default: 3/4 of the machine's memory; 0: none)")
    ap.add_argument("--timeout", type=float, help="kill a child after this many seconds (default 600 + 3 x --seconds)")
    ap.add_argument("--removals", type=int, default=0,
                    help="remove exactly this many nodes per iteration at every n (default: the default rules)")
    ap.add_argument("--no-renumber", action="store_true",
                    help="keep the instance's numbering at every n (SolveParams(renumber=None))")
    args = ap.parse_args(argv)
    if args.removals < 0 or min(args.sizes) < args.removals:
        ap.error(f"--removals must be between 0 and the smallest size, got {args.removals}")
    rows = run(args.problems, args.sizes, args.seconds, Path(args.out), args.seed, args.memory_gb or None,
               args.timeout, args.removals, not args.no_renumber)
    print(markdown(rows), end="")
    print(f"\nfull results: {Path(args.out) / 'scaling.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
