"""The G-LNS evolution loop (docs/method.md, "evolution"; the paper's Algorithm 1).

A run is a sequence of cycles. Cycle c:

1. fills the populations (:mod:`glns.evolution.refill`): cycle 1 with the seeds and the
   initialisation actions ``i1``/``i2``; later cycles prune by the fitness F of cycle c - 1
   and refill with mutation and crossover; F and S are reset;
2. runs K episodes (:mod:`glns.evolution.episodes`) in parallel sandbox workers; F and S add
   up over all runs of the cycle;
3. validates the pairs with the highest synergy and keeps the best pair found so far;
4. writes the populations, the best-so-far module and an atomic checkpoint
   (:mod:`glns.evolution.state`).

Everything random (instances' run seeds, strategy draws, parents, the LLM requests' ``seed``)
comes from the master seed and one checkpointed ``random.Random``, so a run resumed from its
checkpoint continues exactly as if it had not been interrupted (with an endpoint that honours
``seed``, like the offline test server).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from glns.batch import make_executor
from glns.evolution.config import EvolutionConfig
from glns.evolution.episodes import Evaluation
from glns.evolution.generate import Counters, EvolutionAborted, Generator, source_key
from glns.evolution.instances import training_instances, validation_instances
from glns.evolution.outputs import export_best, write_final_reports
from glns.evolution.population import Member
from glns.evolution.refill import Refill
from glns.evolution.rundir import RunDirectory, RunDirectoryError
from glns.evolution.state import RunState, score_value
from glns.llm import LLMClient, LLMConfig
from glns.rng import run_seed
from glns.sandbox import WorkerPool

__all__ = ["Evolution", "EvolutionResult", "EvolutionAborted", "training_instances",
           "validation_instances", "run_seed"]

logger = logging.getLogger(__name__)


@dataclass
class EvolutionResult:
    """What a finished run produced (also on disk in the run directory)."""

    run_dir: Path
    destroy: list[Member]
    repair: list[Member]
    best_destroy: Member | None
    best_repair: Member | None
    best_score: float
    history: list[dict[str, Any]]
    module_path: Path | None = None
    counts: dict[str, int] = field(default_factory=dict)


class Evolution:
    """One evolution run bound to its run directory. Use :meth:`start` or :meth:`resume`,
    then :meth:`run`. The run's state is :attr:`state` (:class:`RunState`)."""

    def __init__(self, rundir: RunDirectory, config: EvolutionConfig, llm: LLMConfig, *,
                 progress: Callable[[str], None] | None = None,
                 client: LLMClient | None = None) -> None:
        self.rundir = rundir
        self.cfg = config
        self.llm = llm
        self.progress = progress or (lambda line: None)
        self.client = client if client is not None else LLMClient(llm)
        # the controller builds admitted operators' compiled twins (precompile); the episode
        # workers only pick them up from the cache, so no worker process starts builds
        params = config.solve_params()
        self.build_params = params
        self.params = dataclasses.replace(params, compile="cached") if params.compile == "auto" else params
        sizes = set(config.check.sizes) | {config.train_size, config.validation_size}
        # admitted operators run in the episodes with the per-call limit they were checked with
        self.check = dataclasses.replace(config.check, sizes=tuple(sorted(sizes)),
                                         call_timeout=config.op_timeout)
        self.state = RunState(seed=config.seed)
        self._t0 = time.monotonic()
        # how each operator ran in its latest episode (docs/fast-operators.md); for the export
        self.forms: dict[str, str] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls, path: str | Path, config: EvolutionConfig, llm: LLMConfig, *,
              llm_meta: dict[str, Any] | None = None, **kwargs: Any) -> "Evolution":
        """A new run in directory `path` (which must not hold a run)."""
        meta = {"evolution": config.to_dict(), "llm": {**llm.to_dict(), **(llm_meta or {})}}
        meta["llm"].pop("api_key", None)
        rd = RunDirectory.create(path, meta)
        evo = cls(rd, config, llm, **kwargs)
        rd.log("run_started", config=config.to_dict(), llm=meta["llm"])
        return evo

    @classmethod
    def resume(cls, path: str | Path, llm: LLMConfig, *, generations: int | None = None,
               **kwargs: Any) -> "Evolution":
        """Continue the run in `path` from its last checkpoint (the cycle that was in progress
        when it stopped is redone; its events move to events.abandoned.jsonl).

        generations: a new episode budget (to extend a finished run); None keeps the old one.
        """
        rd = RunDirectory.open(path)
        try:
            meta = rd.read_config()
            cfg = EvolutionConfig.from_dict(meta["evolution"])
            saved = rd.read_checkpoint()
            if generations is None and saved is not None:
                generations = saved.get("generations")   # an extension given to an earlier resume
            if generations is not None:
                cfg = dataclasses.replace(cfg, generations=int(generations))
            evo = cls(rd, cfg, llm, **kwargs)
            if saved is not None:
                evo.state.load_checkpoint(saved)
                if generations is not None and generations < evo.state.episodes:
                    raise RunDirectoryError(f"the run already did {evo.state.episodes} episodes; "
                                            f"--generations {generations} would shrink it")
        except BaseException:
            rd.close()
            raise
        rd.log("resumed", cycle=evo.state.cycle, episodes=evo.state.episodes, generations=cfg.generations)
        logger.info("%s: resumed after cycle %d (%d episodes)", rd.path, evo.state.cycle, evo.state.episodes)
        return evo

    # ------------------------------------------------------------------ state
    @property
    def counters(self) -> Counters:
        return self.state.counters

    def elapsed(self) -> float:
        """Wall seconds of the run over all its processes (finished cycles only, plus this one)."""
        return self.state.elapsed_before + (time.monotonic() - self._t0)

    def _checkpoint(self) -> None:
        self.rundir.write_checkpoint(self.state.to_checkpoint(self.elapsed(), self.cfg.generations))

    # ------------------------------------------------------------------ the loop
    def evaluation(self, executor: Any) -> Evaluation:
        """Episodes and validations of this run on `executor` (a sandbox pool or Ray)."""
        evaluation = Evaluation(self.cfg, self.state, executor, self.params, self.rundir.log, self.progress)
        evaluation.forms = self.forms   # shared: the export reads it
        return evaluation

    def run(self) -> EvolutionResult:
        """Run the remaining cycles and write the outputs. Closes the run directory."""
        cfg = self.cfg
        try:
            with contextlib.ExitStack() as stack:
                # generated code is checked in local sandbox processes whatever the backend
                check_pool = stack.enter_context(WorkerPool(
                    workers=cfg.workers if cfg.backend == "process" else None, memory_mb=cfg.memory_mb))
                run_pool: Any = check_pool
                if cfg.backend == "ray":
                    run_pool = make_executor("ray", cfg.workers, address=cfg.address)
                    stack.callback(run_pool.close)
                generator = Generator(
                    self.client, check_pool, cfg.problem, self.check, cfg.max_attempts, self.state.rng,
                    self.rundir.log, self.state.counters, temperature=cfg.temperature)
                refill = Refill(cfg, self.state, generator, self.rundir, self.check,
                                self.build_params, self.progress)
                evaluation = self.evaluation(run_pool)
                while self.state.episodes < cfg.generations:
                    self._cycle(self.state.cycle + 1, generator, refill, evaluation)
                return self._finish()
        finally:
            self.rundir.close()

    def _cycle(self, c: int, generator: Generator, refill: Refill, evaluation: Evaluation) -> None:
        cfg, st = self.cfg, self.state
        self.rundir.log("cycle_started", cycle=c)
        logger.info("%s: cycle %d started", self.rundir.path, c)
        generator.known_sources = {source_key(m.source) for m in st.destroy + st.repair}
        if c == 1 or not st.destroy or not st.repair:
            refill.initialise(c)
        else:
            refill.evolve(c)
        st.scores.reset()
        for _ in range(min(cfg.episodes_per_cycle, cfg.generations - st.episodes)):
            evaluation.episode(c)
        validated = evaluation.validate(c)
        st.cycle = c
        record = {
            "cycle": c, "episodes": st.episodes, "seconds": round(self.elapsed(), 3),
            "admitted": st.counters.admitted, "rejected": st.counters.rejected,
            "llm_calls": st.counters.llm_calls, "llm_failures": st.counters.llm_failures,
            "tokens": st.counters.tokens,
            "destroy": [m.id for m in st.destroy], "repair": [m.id for m in st.repair],
            "fitness": dict(st.scores.fitness), "validation": validated,
            "best": dict(st.best) if st.best else None,
        }
        st.history.append(record)
        self.rundir.write_population(c, {
            "cycle": c, "destroy": [m.to_dict() for m in st.destroy],
            "repair": [m.to_dict() for m in st.repair], "scores": st.scores.to_dict(),
            "validation": validated, "best": st.best})
        export_best(cfg, st, self.rundir.path, self.forms)
        self.rundir.log("cycle_finished", **{k: v for k, v in record.items() if k != "fitness"})
        self._checkpoint()
        best = f"{st.best['score']:.4f} ({st.best['destroy']}+{st.best['repair']})" if st.best else "-"
        line = (f"cycle {c}/{cfg.cycles} done: episodes {st.episodes}/{cfg.generations}, "
                f"admitted {st.counters.admitted}, rejected {st.counters.rejected}, "
                f"LLM calls {st.counters.llm_calls}, best {best}, {self.elapsed():.0f} s")
        logger.info("%s: %s", self.rundir.path, line)
        self.progress(line)

    # ------------------------------------------------------------------ outputs
    def _finish(self) -> EvolutionResult:
        st = self.state
        path = export_best(self.cfg, st, self.rundir.path, self.forms)
        write_final_reports(self.cfg, st, self.rundir, self.progress)
        d, r = st.best_members()
        self.rundir.log("run_finished", cycle=st.cycle, episodes=st.episodes, best=st.best,
                        counters=vars(st.counters).copy(), seconds=round(self.elapsed(), 3))
        return EvolutionResult(self.rundir.path, list(st.destroy), list(st.repair), d, r,
                               score_value(st.best["score"]) if st.best else math.inf,
                               list(st.history), path, vars(st.counters).copy())
