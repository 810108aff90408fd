"""Wall time of an evolution run against the number of LLM requests in flight.

The bundled offline LLM answers every request after ``--slow`` seconds (a stand-in for a real
model's latency). The same run (same seed, same settings) is made once per concurrency level,
one after the other, and the script prints, per level: wall time, the time the main loop spent
in refills (waiting on the LLM and the admission checks), in episodes and waiting for the
previous cycle's validation, the LLM latency summed over calls, the number of calls, and
whether the final populations and best pair equal those of the first level.

    python bench/evolution_concurrency.py                       # CVRP, 40 generations, slow=5, 1 vs 4
    python bench/evolution_concurrency.py --levels 1 2 4 8 --slow 5 --json out.json

The evaluation settings are the paper's (16 training instances of n = 50, T = 100; validation
64 x n = 50, 500 iterations) unless given; the run directories are kept under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from glns.evolution import Evolution, EvolutionConfig
from glns.llm import LLMConfig
from glns.offline_llm import OfflineLLMServer


def run_once(out: Path, level: int, args: argparse.Namespace, base_url: str) -> dict:
    cfg = EvolutionConfig(problem=args.problem, generations=args.generations, seed=args.seed,
                          workers=args.workers, llm_concurrency=level,
                          train_count=args.train_count, validation_count=args.validation_count)
    llm = LLMConfig(base_url=base_url, model=f"offline:slow={args.slow}", timeout=120)
    t0 = time.monotonic()
    result = Evolution.start(out / f"concurrency-{level}", cfg, llm,
                             progress=lambda line: print(f"  [{level}] {line}", file=sys.stderr)
                             if " done:" in line else None).run()
    wall = time.monotonic() - t0
    timing = [h["timing"] for h in result.history]
    state = json.loads((result.run_dir / "checkpoint.json").read_text())
    return {
        "concurrency": level, "wall_seconds": round(wall, 1),
        "refill_seconds": round(sum(t["refill"] for t in timing), 1),
        "episode_seconds": round(sum(t["episodes"] for t in timing), 1),
        "validation_seconds": round(sum(t.get("validation", 0.0) for t in timing), 1),
        "validation_wait_seconds": round(sum(t["validation_wait"] for t in timing), 1),
        "llm_calls": result.counts["llm_calls"],
        "llm_latency_sum_seconds": round(result.counts["llm_seconds"], 1),
        "best_score": result.best_score,
        "outcome": {"destroy": [m.source for m in result.destroy],
                    "repair": [m.source for m in result.repair], "best": state["best"],
                    "members": sorted(state["members"])},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="cvrp")
    ap.add_argument("--generations", type=int, default=40)
    ap.add_argument("--slow", type=float, default=5.0, help="seconds per offline answer")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--train-count", type=int, default=16)
    ap.add_argument("--validation-count", type=int, default=64)
    ap.add_argument("--out", type=Path, default=None, help="where the run directories go")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="glns-concurrency-"))
    rows = []
    with OfflineLLMServer(seed=args.seed) as server:
        for level in args.levels:
            rows.append(run_once(out, level, args, server.base_url))
    first = rows[0]
    print(f"{args.problem.upper()}, {args.generations} generations, offline LLM slow={args.slow:g} s, "
          f"runs in {out}")
    print("concurrency  wall s  ratio  refill s  episodes s  validation s (waited)  LLM calls  "
          "LLM latency sum s  same result")
    for r in rows:
        same = r["outcome"] == first["outcome"]
        print(f"{r['concurrency']:>11}  {r['wall_seconds']:>6.1f}  {r['wall_seconds'] / first['wall_seconds']:>5.2f}"
              f"  {r['refill_seconds']:>8.1f}  {r['episode_seconds']:>10.1f}  "
              f"{r['validation_seconds']:>7.1f} ({r['validation_wait_seconds']:.1f})"
              f"  {r['llm_calls']:>9}  {r['llm_latency_sum_seconds']:>17.1f}  {same}")
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "outcome"} for r in rows],
                                        indent=2))
    return 0 if all(r["outcome"] == first["outcome"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
