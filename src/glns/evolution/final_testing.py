"""The final test of a run (the paper's section 4): its best pair on a held-out test set.

The default test set is the paper's synthetic test set of the run's problem at its training
size (64 instances; ``glns.datasets.paper_instances(problem, n, "test")``) with T_test = 500
iterations per instance, and the gap is taken to the shipped reference objectives of that set
(``glns.datasets.reference_objectives``); a problem without a paper set (VRPTW) is tested on
generated instances (``GENERATED_COUNT``), with the mean cost and no gap. The runs go through the sandbox (the pair is
generated code) with the run's own solver settings (its sigma preset and adaptive switch), and
instance i runs with seed ``run_seed(seed, "test", i)`` for every run, so the runs of an
experiment are tested on identical tasks.

The result is cached in the run directory (``final_test.json``), keyed by the test settings
and the pair's code, so it is computed once; a run extended later to a new best pair is
tested again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from glns import datasets
from glns.checks import check_seed
from glns.evolution.config import EvolutionConfig
from glns.evolution.fingerprint import source_key
from glns.evolution.population import Member
from glns.evolution.rundir import RunDirectory, atomic_write_json
from glns.executors import Executor
from glns.rng import run_seed
from glns.sandbox import WorkerPool, evaluate
from glns.sandbox.confine import sandbox_confinement

__all__ = ["FinalTestSettings", "TEST_FILE", "final_test", "cached_final_test", "best_pair"]

#: the cache of a run's final tests, in its run directory
TEST_FILE = "final_test.json"
_FORMAT = "glns-final-test/1"


@dataclass(frozen=True)
class FinalTestSettings:
    """Which test set and budget the final test uses.

    count: the first `count` instances of the test set (None: all 64). size: its instance size
    (None: the run's training size; the paper's test sets have 10, 20, 50, 100 and 200).
    iterations: T_test, solver iterations per instance (the paper: 500). seed: the master seed
    of the test runs (the same for every run of an experiment, so they face the same tasks).
    """

    count: int | None = None
    size: int | None = None
    iterations: int = 500
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("count", "size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or int(value) != value or value < 1):
                raise ValueError(f"test {name} must be a positive integer, got {value!r}")
        if isinstance(self.iterations, bool) or int(self.iterations) != self.iterations or self.iterations < 1:
            raise ValueError(f"test iterations must be a positive integer, got {self.iterations!r}")
        object.__setattr__(self, "seed", check_seed(self.seed))

    def resolved(self, cfg: EvolutionConfig) -> dict[str, Any]:
        """The concrete settings for a run of `cfg`: problem, size, count, iterations, seed."""
        size = self.size if self.size is not None else cfg.train_size
        available = len(_instances(cfg.problem, size))
        if self.count is not None and self.count > available:
            raise ValueError(f"the {cfg.problem} test set of size {size} has {available} instances, "
                             f"not {self.count}")
        return {"problem": cfg.problem, "size": size, "count": self.count or available,
                "iterations": self.iterations, "seed": self.seed}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FinalTestSettings":
        return cls(**dict(d))


#: a problem the paper has no test sets for (VRPTW) is tested on GENERATED_COUNT generated
#: instances, seeds GENERATED_SEED + i (for VRPTW these cycle through its twelve classes)
GENERATED_COUNT = 64
GENERATED_SEED = 40000


def _instances(problem: str, size: int) -> list[Any]:
    if problem not in datasets.PROBLEMS:
        return [datasets.generate(problem, size, GENERATED_SEED + i) for i in range(GENERATED_COUNT)]
    try:
        return datasets.paper_instances(problem, size, "test")
    except ValueError as exc:
        raise ValueError(f"no test set for the final test: {exc} (choose one with --test-size)") from None


def best_pair(run_dir: str | Path) -> tuple[Member, Member] | None:
    """The best pair of the run in `run_dir` from its checkpoint (None before any validation)."""
    state = RunDirectory(Path(run_dir)).read_checkpoint()
    if not state or not state.get("best"):
        return None
    members = state["members"]
    return (Member.from_dict(members[state["best"]["destroy"]]),
            Member.from_dict(members[state["best"]["repair"]]))


def _pair_key(d: Member, r: Member) -> str:
    # by code, like the validation cache: ids are only unique within one run
    return f"{d.native or source_key(d.source)}|{r.native or source_key(r.source)}"


def _read_cache(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data.get("tests", [])) if data.get("format") == _FORMAT else []


def cached_final_test(run_dir: str | Path, settings: FinalTestSettings) -> dict[str, Any] | None:
    """The cached final test of the run's current best pair with `settings` (None: not tested)."""
    run_dir = Path(run_dir)
    pair = best_pair(run_dir)
    if pair is None:
        return None
    cfg = EvolutionConfig.from_dict(RunDirectory.read_run_config(run_dir)["evolution"])
    want, key = settings.resolved(cfg), _pair_key(*pair)
    for record in _read_cache(run_dir / TEST_FILE):
        if record.get("settings") == want and record.get("pair_key") == key:
            return record
    return None


def final_test(run_dir: str | Path, settings: FinalTestSettings, *, executor: Executor | None = None,
               progress: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Test the best pair of the finished run in `run_dir` (cached; see the module doc).

    executor: where the runs go (default: a sandbox pool with the run's workers and memory
    limit). Returns the record also written to ``final_test.json``: settings, the pair, the
    per-instance costs (None where a run failed), ``mean`` (over the solved instances, None if
    none), ``mean_reference`` and ``mean_gap`` (mean per-instance gap in %, None without
    references), ``failed`` and ``seconds``; None when the run has no validated pair.
    """
    run_dir = Path(run_dir)
    cached = cached_final_test(run_dir, settings)
    if cached is not None:
        return cached
    pair = best_pair(run_dir)
    if pair is None:
        return None
    d, r = pair
    cfg = EvolutionConfig.from_dict(RunDirectory.read_run_config(run_dir)["evolution"])
    want = settings.resolved(cfg)
    instances = _instances(cfg.problem, want["size"])[: want["count"]]
    refs = (datasets.reference_objectives(cfg.problem, want["size"])
            if cfg.problem in datasets.PROBLEMS else None)
    seeds = [run_seed(want["seed"], "test", i) for i in range(len(instances))]
    # the run's solver settings; compiled twins only from the cache, as in the run's episodes
    params = cfg.solve_params()
    if params.compile == "auto":
        params = dataclasses.replace(params, compile="cached")
    t0 = time.monotonic()
    with (WorkerPool(workers=cfg.workers, memory_mb=cfg.memory_mb,
                     sandbox=sandbox_confinement(cfg.sandbox)) if executor is None
          else contextlib.nullcontext(executor)) as pool:
        outcomes = evaluate(instances, [d.spec()], [r.spec()], pool=pool, iterations=want["iterations"],
                            seeds=seeds, params=params)
    costs = [float(o.result.cost) if o.ok else None for o in outcomes]
    solved = [(i, c) for i, c in enumerate(costs) if c is not None]
    gaps = [100.0 * (c / float(refs[i]) - 1.0) for i, c in solved if refs is not None and refs[i] > 0]
    record = {
        "settings": want, "pair_key": _pair_key(d, r), "destroy": d.id, "repair": r.id,
        "costs": costs, "mean": float(np.mean([c for _, c in solved])) if solved else None,
        "mean_reference": float(np.mean([refs[i] for i, _ in solved])) if refs is not None and solved else None,
        "mean_gap": float(np.mean(gaps)) if gaps else None,
        "failed": len(costs) - len(solved),
        "errors": [o.error for o in outcomes if not o.ok][:5],
        "seconds": round(time.monotonic() - t0, 3),
    }
    path = run_dir / TEST_FILE
    atomic_write_json(path, {"format": _FORMAT, "tests": [*_read_cache(path), record]})
    if progress is not None:
        mean = "-" if record["mean"] is None else f"{record['mean']:.4f}"
        gap = "" if record["mean_gap"] is None else f", gap {record['mean_gap']:.2f} %"
        failed = f", {record['failed']} failed" if record["failed"] else ""
        progress(f"final test of {d.id}+{r.id}: {len(instances)} x {cfg.problem}{want['size']}, "
                 f"{want['iterations']} iterations: mean {mean}{gap}{failed}")
    return record
