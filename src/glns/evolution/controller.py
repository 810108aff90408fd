"""The G-LNS evolution loop (docs/method.md, "evolution"; the paper's Algorithm 1).

A run is a sequence of cycles. Cycle c:

1. fills the populations (:mod:`glns.evolution.refill`): cycle 1 with the seeds and the
   initialisation actions ``i1``/``i2``; later cycles prune by the fitness F of cycle c - 1
   and refill with mutation and crossover; F and S are reset. The LLM requests of a refill
   are planned first and then run with up to ``llm_concurrency`` in flight;
2. runs K episodes (:mod:`glns.evolution.episodes`) in parallel sandbox workers; F and S add
   up over all runs of the cycle;
3. validates the pairs with the highest synergy and keeps the best pair found so far, in a
   background thread, while cycle c + 1 is already being refilled (the two do not depend on
   each other);
4. writes the populations, the best-so-far module and an atomic checkpoint
   (:mod:`glns.evolution.state`) of the state at the end of its episodes plus its validation.

Everything random (instances' run seeds, strategy draws, parents, models, the LLM requests'
``seed``) comes from the master seed and one checkpointed ``random.Random``, drawn only while
planning, so a run resumed from its checkpoint continues exactly as if it had not been
interrupted, whatever the concurrency (with an endpoint that honours ``seed``, like the
offline test server). Budgets (:mod:`glns.evolution.budget`) stop a run at a cycle boundary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from glns.batch import make_executor
from glns.evolution.budget import BudgetStop, Usage, largest_cycle
from glns.evolution.config import RESUMABLE, EvolutionConfig
from glns.evolution.episodes import Evaluation
from glns.evolution.generate import Counters, EvolutionAborted, Generator
from glns.evolution.instances import training_instances, validation_instances
from glns.evolution.outputs import export_best, write_final_reports
from glns.evolution.population import Member
from glns.evolution.refill import Refill
from glns.evolution.rundir import RunDirectory, RunDirectoryError, atomic_write_json
from glns.evolution.state import RunState, score_value
from glns.llm import Ensemble, LLMClient, LLMConfig
from glns.rng import run_seed
from glns.sandbox import WorkerPool
from glns.sandbox.confine import sandbox_confinement

__all__ = ["Evolution", "EvolutionResult", "EvolutionAborted", "BudgetStop", "training_instances",
           "validation_instances", "run_seed"]

logger = logging.getLogger(__name__)

PRICES = "prices.json"


@dataclass
class EvolutionResult:
    """What a finished (or budget-stopped) run produced (also on disk in the run directory).

    stopped: None for a run that did all its episodes, else why a budget stopped it
    (:meth:`glns.evolution.budget.BudgetStop.to_dict`).
    """

    run_dir: Path
    destroy: list[Member]
    repair: list[Member]
    best_destroy: Member | None
    best_repair: Member | None
    best_score: float
    history: list[dict[str, Any]]
    module_path: Path | None = None
    counts: dict[str, Any] = field(default_factory=dict)
    stopped: dict[str, Any] | None = None


@dataclass
class _Closing:
    """A cycle whose episodes are done and whose validation runs in a background thread."""

    cycle: int
    checkpoint: dict[str, Any]          # the state at the end of its episodes
    record: dict[str, Any]              # its history record, without validation results
    destroy: list[Member]
    repair: list[Member]
    scores: dict[str, Any]
    thread: threading.Thread | None = None
    error: BaseException | None = None


def _as_ensemble(llm: LLMConfig | Ensemble) -> Ensemble:
    return llm if isinstance(llm, Ensemble) else Ensemble.single(llm)


class Evolution:
    """One evolution run bound to its run directory. Use :meth:`start` or :meth:`resume`,
    then :meth:`run`. The run's state is :attr:`state` (:class:`RunState`).

    llm: one endpoint (:class:`glns.llm.LLMConfig`) or several models with sampling weights
    and prices (:class:`glns.llm.Ensemble`). client: one client for every model (tests).
    """

    def __init__(self, rundir: RunDirectory, config: EvolutionConfig, llm: LLMConfig | Ensemble, *,
                 progress: Callable[[str], None] | None = None,
                 client: LLMClient | None = None) -> None:
        self.rundir = rundir
        self.cfg = config
        self.llm = llm
        self.models = _as_ensemble(llm)
        self.progress = progress or (lambda line: None)
        self.clients = {e.name: client if client is not None else LLMClient(e.config)
                        for e in self.models.entries}
        if config.max_cost is not None and not self.models.priced:
            raise ValueError("--max-cost needs a price for every model: add price = {input = ..., "
                             "output = ...} (USD per million tokens) to the LLM config")
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
        self._closed: _Closing | None = None   # the last cycle written to disk
        self.stopped: BudgetStop | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls, path: str | Path, config: EvolutionConfig, llm: LLMConfig | Ensemble, *,
              llm_meta: dict[str, Any] | None = None, **kwargs: Any) -> "Evolution":
        """A new run in directory `path` (which must not hold a run)."""
        models = _as_ensemble(llm)
        meta = {"evolution": config.to_dict(), "llm": {**models.to_dict(), **(llm_meta or {})}}
        meta["llm"].pop("api_key", None)
        rd = RunDirectory.create(path, meta)
        try:
            evo = cls(rd, config, llm, **kwargs)
        except BaseException:
            rd.close()
            raise
        evo._write_prices()
        rd.log("run_started", config=config.to_dict(), llm=meta["llm"])
        return evo

    @classmethod
    def resume(cls, path: str | Path, llm: LLMConfig | Ensemble, *, generations: int | None = None,
               llm_concurrency: int | None = None, max_tokens: int | None = None,
               max_cost: float | None = None, max_time: float | None = None,
               sandbox: str | None = None, **kwargs: Any) -> "Evolution":
        """Continue the run in `path` from its last checkpoint (the cycle that was in progress
        when it stopped is redone; its events move to events.abandoned.jsonl).

        generations: a new episode budget (to extend a finished run); llm_concurrency and the
        budgets max_tokens / max_cost / max_time: new values (e.g. a larger budget after a
        budget stop); sandbox: the confinement mode. None keeps the value the run had last.
        """
        rd = RunDirectory.open(path)
        try:
            meta = rd.read_config()
            cfg = EvolutionConfig.from_dict(meta["evolution"])
            saved = rd.read_checkpoint()
            # values given to an earlier resume win over the run's first configuration
            changes: dict[str, Any] = dict((saved or {}).get("resumable", {}))
            if saved is not None and "generations" in saved:
                changes["generations"] = saved["generations"]
            given = dict(generations=generations, llm_concurrency=llm_concurrency,
                         max_tokens=max_tokens, max_cost=max_cost, max_time=max_time, sandbox=sandbox)
            changes.update({k: v for k, v in given.items() if v is not None})
            cfg = dataclasses.replace(cfg, **{k: v for k, v in changes.items() if k in RESUMABLE})
            evo = cls(rd, cfg, llm, **kwargs)
            if saved is not None:
                evo.state.load_checkpoint(saved)
                if generations is not None and generations < evo.state.episodes:
                    raise RunDirectoryError(f"the run already did {evo.state.episodes} episodes; "
                                            f"--generations {generations} would shrink it")
            evo._write_prices()
        except BaseException:
            rd.close()
            raise
        rd.log("resumed", cycle=evo.state.cycle, episodes=evo.state.episodes,
               **{k: getattr(cfg, k) for k in RESUMABLE})
        logger.info("%s: resumed after cycle %d (%d episodes)", rd.path, evo.state.cycle, evo.state.episodes)
        return evo

    def _write_prices(self) -> None:
        """Add the models' prices (and which cycle they apply from) to prices.json."""
        path = self.rundir.path / PRICES
        data = {"currency": "USD per million tokens", "snapshots": []}
        if path.exists():
            data = self.rundir.read_json(PRICES)
        snapshot = self.models.prices()
        if not data["snapshots"] or data["snapshots"][-1]["models"] != snapshot:
            data["snapshots"].append({"from_cycle": self.state.cycle + 1,
                                      "time": round(time.time(), 3), "models": snapshot})
            atomic_write_json(path, data)

    # ------------------------------------------------------------------ state
    @property
    def counters(self) -> Counters:
        return self.state.counters

    def elapsed(self) -> float:
        """Wall seconds of the run over all its processes (finished cycles only, plus this one)."""
        return self.state.elapsed_before + (time.monotonic() - self._t0)

    def used(self) -> Usage:
        """Tokens, cost and seconds used so far (for the budgets)."""
        c = self.state.counters
        return Usage(c.tokens, c.cost, self.elapsed())

    def _checkpoint(self) -> None:
        self.rundir.write_checkpoint(self._checkpoint_data())

    def _checkpoint_data(self) -> dict[str, Any]:
        data = self.state.to_checkpoint(self.elapsed(), self.cfg.generations)
        data["resumable"] = {k: getattr(self.cfg, k) for k in RESUMABLE}
        return data

    def key_variables(self) -> list[str]:
        """The environment variables that hold this run's API keys, whatever their names (a
        model table's api_key_env may name any variable): kept out of the sandbox's workers."""
        keys = {e.config.api_key for e in self.models.entries if e.config.api_key}
        return [name for name, value in os.environ.items() if value in keys]

    # ------------------------------------------------------------------ the loop
    def evaluation(self, executor: Any) -> Evaluation:
        """Episodes and validations of this run on `executor` (a sandbox pool or Ray)."""
        evaluation = Evaluation(self.cfg, self.state, executor, self.params, self.rundir.log, self.progress)
        evaluation.forms = self.forms   # shared: the export reads it
        return evaluation

    def run(self) -> EvolutionResult:
        """Run the remaining cycles and write the outputs. Closes the run directory."""
        cfg = self.cfg
        budgets = cfg.budgets()
        try:
            with contextlib.ExitStack() as stack:
                # generated code is checked in local sandbox processes whatever the backend; a
                # pool of its own, so checks go on while the other one validates
                confinement = sandbox_confinement(cfg.sandbox, scrub=self.key_variables())
                check_pool = stack.enter_context(WorkerPool(
                    workers=cfg.workers if cfg.backend == "process" else None, memory_mb=cfg.memory_mb,
                    sandbox=confinement))
                if cfg.backend == "ray":
                    if confinement is not None:
                        logger.warning("sandbox: episodes on Ray actors are not confined (the filter's "
                                       "checks are); use the process backend to confine them")
                    run_pool: Any = make_executor("ray", cfg.workers, address=cfg.address)
                    stack.callback(run_pool.close)
                else:
                    run_pool = stack.enter_context(WorkerPool(workers=cfg.workers, memory_mb=cfg.memory_mb,
                                                              sandbox=confinement))
                generator = Generator(
                    self.clients, check_pool, cfg.problem, self.check, cfg.max_attempts, self.state.rng,
                    self.rundir.log, self.state.counters, temperature=cfg.temperature,
                    concurrency=cfg.llm_concurrency, cost=self.models.cost,
                    guard=lambda: budgets.exceeded(self.used()))
                refill = Refill(cfg, self.state, generator, self.rundir, self.check,
                                self.build_params, self.progress,
                                choose_model=lambda rng: self.models.choose(rng).name)
                self._loop(generator, refill, self.evaluation(run_pool))
                return self._finish()
        finally:
            self.rundir.close()

    def _loop(self, generator: Generator, refill: Refill, evaluation: Evaluation) -> None:
        cfg, st = self.cfg, self.state
        budgets = cfg.budgets()
        closing: _Closing | None = None
        c = st.cycle
        try:
            while st.episodes < cfg.generations:
                history = st.history + ([closing.record] if closing is not None else [])
                stop = budgets.before_cycle(self.used(), largest_cycle(history))
                if stop is not None:
                    raise stop
                c += 1
                if closing is not None:   # this cycle's events go after the last one's checkpoint
                    self.rundir.hold()
                self.rundir.log("cycle_started", cycle=c)
                logger.info("%s: cycle %d started", self.rundir.path, c)
                t0 = time.monotonic()
                generator.known_sources = {generator.key(m.source) for m in st.destroy + st.repair}
                if c == 1 or not st.destroy or not st.repair:
                    refill.initialise(c)
                else:
                    refill.evolve(c)
                timing = {"refill": time.monotonic() - t0}
                t1 = time.monotonic()
                self._close(closing)
                closing = None
                timing["validation_wait"] = time.monotonic() - t1
                st.scores.reset()
                t2 = time.monotonic()
                for _ in range(min(cfg.episodes_per_cycle, cfg.generations - st.episodes)):
                    over = budgets.exceeded(self.used())
                    if over is not None:
                        raise over
                    evaluation.episode(c)
                timing["episodes"] = time.monotonic() - t2
                closing = self._open(c, evaluation, timing)
        except BudgetStop as stop:
            self._close(closing)
            self.stopped = stop
            # the outputs show the last finished cycle; a cycle cut short is redone on resume
            saved = self.rundir.read_checkpoint()
            if saved is not None:
                self.state.load_checkpoint(saved)
            self.rundir.log("budget_stop", cycle=self.state.cycle, **stop.to_dict())
            self.progress(f"stopped after cycle {self.state.cycle}: {stop}")
            logger.warning("%s: stopped after cycle %d: %s", self.rundir.path, self.state.cycle, stop)
            return
        except EvolutionAborted:
            self._close(closing)   # the last finished cycle is on disk when the run stops
            raise
        self._close(closing)

    # ------------------------------------------------------------------ closing a cycle
    def _open(self, c: int, evaluation: Evaluation, timing: dict[str, float]) -> _Closing:
        """Freeze cycle c's state and start validating its best pairs in the background."""
        st = self.state
        st.cycle = c
        counters = st.counters.to_dict()
        record = {
            "cycle": c, "episodes": st.episodes,
            "admitted": counters["admitted"], "rejected": counters["rejected"],
            "duplicates": counters["duplicates"],
            "llm_calls": counters["llm_calls"], "llm_failures": counters["llm_failures"],
            "tokens": st.counters.tokens, "cost": counters["cost"],
            "by_action": counters["by_action"], "by_model": counters["by_model"],
            "destroy": [m.id for m in st.destroy], "repair": [m.id for m in st.repair],
            "fitness": dict(st.scores.fitness),
            "timing": {k: round(v, 3) for k, v in timing.items()},
        }
        closing = _Closing(c, self._checkpoint_data(), record, list(st.destroy), list(st.repair),
                           st.scores.to_dict())
        pairs = evaluation.validation_pairs()

        def validate() -> None:
            try:
                t0 = time.monotonic()
                validated = evaluation.validate(c, pairs, log=self.rundir.log_now)
                closing.record["timing"]["validation"] = round(time.monotonic() - t0, 3)
                self._write_cycle(closing, validated)
            except BaseException as exc:   # re-raised by _close in the loop's thread
                closing.error = exc

        closing.thread = threading.Thread(target=validate, name=f"glns-validate-{c}", daemon=True)
        closing.thread.start()
        return closing

    def _close(self, closing: _Closing | None) -> None:
        """Wait for the validation of `closing` (and its files on disk); re-raise its error."""
        if closing is None:
            return
        assert closing.thread is not None
        closing.thread.join()
        self.rundir.release()   # already done unless the validation failed before its checkpoint
        if closing.error is not None:
            raise closing.error
        self._closed = closing

    def _write_cycle(self, closing: _Closing, validated: list[dict[str, Any]]) -> None:
        """Cycle `closing` is validated: its record, populations, best module and checkpoint."""
        cfg, st, c = self.cfg, self.state, closing.cycle
        record = closing.record
        record["validation"] = validated
        record["best"] = dict(st.best) if st.best else None
        record["seconds"] = round(self.elapsed(), 3)
        st.history.append(record)
        self.rundir.write_population(c, {
            "cycle": c, "destroy": [m.to_dict() for m in closing.destroy],
            "repair": [m.to_dict() for m in closing.repair], "scores": closing.scores,
            "validation": validated, "best": st.best})
        export_best(cfg, st, self.rundir.path, self.forms, closing.destroy, closing.repair)
        self.rundir.log_now("cycle_finished", **{k: v for k, v in record.items()
                                                 if k not in ("fitness", "by_action", "by_model")})
        data = closing.checkpoint
        data.update(history=list(st.history), validation_cache=dict(st.validation_cache),
                    best=st.best, elapsed=self.elapsed())
        self.rundir.write_checkpoint(data)
        self.rundir.release()
        best = f"{st.best['score']:.4f} ({st.best['destroy']}+{st.best['repair']})" if st.best else "-"
        line = (f"cycle {c}/{cfg.cycles} done: episodes {record['episodes']}/{cfg.generations}, "
                f"admitted {record['admitted']}, rejected {record['rejected']}, "
                f"LLM calls {record['llm_calls']}, best {best}, {self.elapsed():.0f} s")
        logger.info("%s: %s", self.rundir.path, line)
        self.progress(line)

    # ------------------------------------------------------------------ outputs
    def _finish(self) -> EvolutionResult:
        st, closed = self.state, self._closed
        destroy = closed.destroy if closed is not None else list(st.destroy)
        repair = closed.repair if closed is not None else list(st.repair)
        path = None
        if st.history:   # a budget may stop a run before its first cycle finished
            path = export_best(self.cfg, st, self.rundir.path, self.forms, destroy, repair)
        write_final_reports(self.cfg, st, self.rundir, self.progress, stopped=self.stopped)
        d, r = st.best_members()
        stopped = self.stopped.to_dict() if self.stopped is not None else None
        counts = st.counters.to_dict()
        self.rundir.log("run_finished", cycle=st.cycle, episodes=st.episodes, best=st.best,
                        counters=counts, seconds=round(self.elapsed(), 3), stopped=stopped)
        return EvolutionResult(self.rundir.path, list(destroy), list(repair), d, r,
                               score_value(st.best["score"]) if st.best else math.inf,
                               list(st.history), path, counts, stopped)
