"""The G-LNS evolution loop (SPEC §4, paper Algorithm 1).

A run is a sequence of cycles. Cycle c:

1. fills the populations: cycle 1 with the seeds and the initialisation actions ``i1``/``i2``;
   later cycles rank both populations by the global fitness F of cycle c - 1, drop the worst M,
   refill them (mutation ``m1``/``m2``, homogeneous crossover ``c1``, joint crossover ``c2``
   from the synergy matrix S) and reset F and S;
2. runs K episodes; an episode is one solver run of T iterations on every training instance,
   each from a random solution with weights reset to 1, in parallel sandbox workers; F and S add
   up over all runs of the cycle;
3. validates the pairs with the highest synergy on the validation set (mean best cost) and keeps
   the best pair found so far;
4. writes the populations, the best-so-far module and an atomic checkpoint.

Everything random (instances' run seeds, strategy draws, parents, the LLM requests' ``seed``)
comes from the master seed and one checkpointed ``random.Random``, so a run resumed from its
checkpoint continues exactly as if it had not been interrupted (with an endpoint that honours
``seed``, like the offline test server).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glns.evolution import prompts
from glns.evolution.config import EvolutionConfig
from glns.evolution.generate import Candidate, Counters, EvolutionAborted, Generator, source_key
from glns.evolution.population import (
    Member, Scores, choose_pair, homogeneous_parents, mutation_action, prune, rank, sample_strategy,
)
from glns.evolution.rundir import RunDirectory, RunDirectoryError
from glns.evolution.seeds import seed_members
from glns.llm import LLMClient, LLMConfig
from glns.operators.accelerate import precompile
from glns.problems import Problem
from glns.rng import run_seed
from glns.sandbox import WorkerPool, evaluate

__all__ = ["Evolution", "EvolutionResult", "EvolutionAborted", "training_instances",
           "validation_instances", "run_seed"]

CHECKPOINT_VERSION = 1
#: requests per empty slot before a refill gives up and the population stays short
REQUESTS_PER_SLOT = 3


def _instances(cfg: EvolutionConfig, split: str) -> list[Problem]:
    from glns import datasets

    if cfg.instances == "paper":
        size = cfg.train_size if split == "train" else cfg.validation_size
        return datasets.paper_instances(cfg.problem, size, split)
    make = {"tsp": datasets.generate_tsp, "cvrp": datasets.generate_cvrp,
            "ovrp": datasets.generate_ovrp}[cfg.problem]
    if split == "train":
        return [make(cfg.train_size, cfg.train_seed + i) for i in range(cfg.train_count)]
    return [make(cfg.validation_size, cfg.validation_seed + i) for i in range(cfg.validation_count)]


def training_instances(cfg: EvolutionConfig) -> list[Problem]:
    """The instances of every episode."""
    return _instances(cfg, "train")


def validation_instances(cfg: EvolutionConfig) -> list[Problem]:
    """The instances the best pair is chosen on."""
    return _instances(cfg, "validation")


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


def _score(value: Any) -> float:
    return float(value)   # JSON keeps inf as the string "inf"; float() reads both


class Evolution:
    """One evolution run bound to its run directory. Use :meth:`start` or :meth:`resume`,
    then :meth:`run`."""

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
        # state (checkpointed)
        self.cycle = 0
        self.episodes = 0
        self.destroy: list[Member] = []
        self.repair: list[Member] = []
        self.members: dict[str, Member] = {}
        self.next_index = {"destroy": 0, "repair": 0}
        self.scores = Scores()
        self.rng = random.Random(config.seed)
        self.history: list[dict[str, Any]] = []
        self.counters = Counters()
        self.validation_cache: dict[str, float] = {}
        self.best: dict[str, Any] | None = None
        self.elapsed_before = 0.0
        self._t0 = time.monotonic()
        self._train: list[Problem] | None = None
        self._validation: list[Problem] | None = None
        self._pool: WorkerPool | None = None
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
            state = rd.read_checkpoint()
            if generations is None and state is not None:
                generations = state.get("generations")   # an extension given to an earlier resume
            if generations is not None:
                cfg = dataclasses.replace(cfg, generations=int(generations))
            evo = cls(rd, cfg, llm, **kwargs)
            if state is not None:
                evo._load(state)
                if generations is not None and generations < evo.episodes:
                    raise RunDirectoryError(f"the run already did {evo.episodes} episodes; "
                                            f"--generations {generations} would shrink it")
        except BaseException:
            rd.close()
            raise
        rd.log("resumed", cycle=evo.cycle, episodes=evo.episodes, generations=cfg.generations)
        return evo

    # ------------------------------------------------------------------ state
    def _state(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {
            "version": CHECKPOINT_VERSION, "cycle": self.cycle, "episodes": self.episodes,
            "destroy": [m.id for m in self.destroy], "repair": [m.id for m in self.repair],
            "members": {k: m.to_dict() for k, m in self.members.items()},
            "next_index": dict(self.next_index), "scores": self.scores.to_dict(),
            "rng": [version, list(internal), gauss], "history": self.history,
            "counters": vars(self.counters).copy(), "validation_cache": self.validation_cache,
            "best": self.best, "elapsed": self.elapsed(), "generations": self.cfg.generations,
        }

    def _load(self, s: dict[str, Any]) -> None:
        if s.get("version") != CHECKPOINT_VERSION:
            raise RunDirectoryError(f"checkpoint version {s.get('version')} is not supported "
                                    f"(this glns writes version {CHECKPOINT_VERSION})")
        self.cycle, self.episodes = int(s["cycle"]), int(s["episodes"])
        self.members = {k: Member.from_dict(v) for k, v in s["members"].items()}
        self.destroy = [self.members[i] for i in s["destroy"]]
        self.repair = [self.members[i] for i in s["repair"]]
        self.next_index = {k: int(v) for k, v in s["next_index"].items()}
        self.scores = Scores.from_dict(s["scores"])
        version, internal, gauss = s["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.history = list(s["history"])
        self.counters = Counters(**s["counters"])
        self.validation_cache = {k: _score(v) for k, v in s["validation_cache"].items()}
        self.best = s["best"]
        self.elapsed_before = float(s["elapsed"])

    def elapsed(self) -> float:
        """Wall seconds of the run over all its processes (finished cycles only, plus this one)."""
        return self.elapsed_before + (time.monotonic() - self._t0)

    def _checkpoint(self) -> None:
        self.rundir.write_checkpoint(self._state())

    # ------------------------------------------------------------------ the loop
    def run(self) -> EvolutionResult:
        """Run the remaining cycles and write the outputs. Closes the run directory."""
        cfg = self.cfg
        try:
            with contextlib.ExitStack() as stack:
                # generated code is checked in local sandbox processes whatever the backend
                pool = stack.enter_context(WorkerPool(
                    workers=cfg.workers if cfg.backend == "process" else None, memory_mb=cfg.memory_mb))
                self._pool = pool
                if cfg.backend == "ray":
                    from glns.batch import make_executor

                    self._pool = make_executor("ray", cfg.workers, address=cfg.address)
                    stack.callback(self._pool.close)
                self._generator = Generator(
                    self.client, pool, cfg.problem, self.check, cfg.max_attempts, self.rng,
                    self.rundir.log, self.counters, temperature=cfg.temperature)
                while self.episodes < cfg.generations:
                    self._cycle(self.cycle + 1)
                result = self._finish()
            return result
        finally:
            self._pool = None
            self.rundir.close()

    def _cycle(self, c: int) -> None:
        cfg = self.cfg
        self.rundir.log("cycle_started", cycle=c)
        self._generator.known_sources = {source_key(m.source) for m in self.destroy + self.repair}
        if c == 1 or not self.destroy or not self.repair:
            self._initialise(c)
        else:
            self._evolve(c)
        self.scores = Scores()
        n_episodes = min(cfg.episodes_per_cycle, cfg.generations - self.episodes)
        for _ in range(n_episodes):
            self._episode(c)
        validated = self._validate(c)
        self.cycle = c
        record = {
            "cycle": c, "episodes": self.episodes, "seconds": round(self.elapsed(), 3),
            "admitted": self.counters.admitted, "rejected": self.counters.rejected,
            "llm_calls": self.counters.llm_calls, "llm_failures": self.counters.llm_failures,
            "tokens": self.counters.tokens,
            "destroy": [m.id for m in self.destroy], "repair": [m.id for m in self.repair],
            "fitness": dict(self.scores.fitness), "validation": validated,
            "best": dict(self.best) if self.best else None,
        }
        self.history.append(record)
        self.rundir.write_population(c, {
            "cycle": c, "destroy": [m.to_dict() for m in self.destroy],
            "repair": [m.to_dict() for m in self.repair], "scores": self.scores.to_dict(),
            "validation": validated, "best": self.best})
        self._export()
        self.rundir.log("cycle_finished", **{k: v for k, v in record.items() if k != "fitness"})
        self._checkpoint()
        best = f"{self.best['score']:.4f} ({self.best['destroy']}+{self.best['repair']})" if self.best else "-"
        self.progress(f"cycle {c}/{cfg.cycles} done: episodes {self.episodes}/{cfg.generations}, "
                      f"admitted {self.counters.admitted}, rejected {self.counters.rejected}, "
                      f"LLM calls {self.counters.llm_calls}, best {best}, {self.elapsed():.0f} s")

    # ------------------------------------------------------------------ populations
    def _population(self, kind: str) -> list[Member]:
        return self.destroy if kind == "destroy" else self.repair

    def _add(self, cand: Candidate, action: str, parents: Sequence[str], cycle: int) -> Member:
        kind = cand.kind
        member = Member(id=f"{kind[0]}{self.next_index[kind]}", kind=kind, source=cand.source,
                        function=cand.function, idea=cand.idea, action=action,
                        parents=tuple(parents), cycle=cycle)
        self.next_index[kind] += 1
        self._register(member, attempt=cand.attempt, warnings=list(cand.warnings),
                       timings=cand.timings)
        self.counters.admitted += 1
        return member

    def _register(self, member: Member, **extra: Any) -> None:
        self.members[member.id] = member
        self._population(member.kind).append(member)
        self._generator.known_sources.add(source_key(member.source))
        self.rundir.write_operator(member.id, _operator_file(member))
        if member.native is None:  # its compiled twin is ready by the time episodes need it
            precompile(member.source, self.build_params)
        self.rundir.log("admitted", id=member.id, kind=member.kind, action=member.action,
                        parents=list(member.parents), cycle=member.cycle, idea=member.idea,
                        function=member.function, native=member.native, code=member.source, **extra)

    def _initialise(self, c: int) -> None:
        """Seeds, then i1/i2 until both populations are full."""
        if not self.destroy and not self.repair:
            seeds_d, seeds_r = seed_members(self.cfg.problem, native=self.cfg.native_seeds)
            for m in seeds_d + seeds_r:
                self._register(m)
            self.next_index = {"destroy": len(seeds_d), "repair": len(seeds_r)}
        for kind, action in (("destroy", "i1"), ("repair", "i2")):
            pop = self._population(kind)
            budget = REQUESTS_PER_SLOT * max(0, self.cfg.population - len(pop))
            while len(pop) < self.cfg.population and budget > 0:
                budget -= 1
                prompt = prompts.init_prompt(self.cfg.problem, kind, list(pop), limits=self.check)
                cand = self._generator.single(action, kind, prompt, [m.id for m in pop], c)
                if cand is not None:
                    self._add(cand, action, [], c)
            self._report_short(kind, c)

    def _report_short(self, kind: str, c: int) -> None:
        pop = self._population(kind)
        if len(pop) < self.cfg.population:
            self.rundir.log("population_short", cycle=c, kind=kind, size=len(pop),
                            capacity=self.cfg.population)
            self.progress(f"warning: the {kind} population has {len(pop)} of "
                          f"{self.cfg.population} operators (requests failed)")

    def _evolve(self, c: int) -> None:
        """Prune the worst M by F of the last cycle, refill both populations, reset F and S."""
        cfg, rng, fitness = self.cfg, self.rng, self.scores.fitness
        for kind in ("destroy", "repair"):
            pop = self._population(kind)
            survivors, dropped = prune(pop, fitness, cfg.prune)
            pop[:] = survivors
            self.rundir.log("pruned", cycle=c, kind=kind, dropped=[m.id for m in dropped],
                            kept=[m.id for m in survivors],
                            fitness={m.id: fitness.get(m.id, 0.0) for m in dropped + survivors})
        elite = {"destroy": rank(list(self.destroy), fitness), "repair": rank(list(self.repair), fitness)}
        synergy = self.scores.matrix([m.id for m in elite["destroy"]], [m.id for m in elite["repair"]])
        mix = cfg.effective_mix()
        need = {k: cfg.population - len(self._population(k)) for k in ("destroy", "repair")}
        budget = REQUESTS_PER_SLOT * sum(need.values())
        while budget > 0 and any(v > 0 for v in need.values()):
            budget -= 1
            short = [k for k in ("destroy", "repair") if need[k] > 0]
            if len(short) == 2 and need["destroy"] != need["repair"]:
                kind = max(short, key=lambda k: need[k])
            else:
                kind = short[0] if len(short) == 1 else ("destroy" if rng.random() < 0.5 else "repair")
            allowed = ["mutation"]
            if len(elite[kind]) >= 2:
                allowed.append("homogeneous")
            if len(short) == 2:
                allowed.append("joint")
            try:
                strategy = sample_strategy(mix, rng, allowed)
            except ValueError:   # e.g. only the joint crossover is on and one population is full
                self.rundir.log("refill_stuck", cycle=c, need=need, allowed=allowed, mix=mix)
                break
            added = self._refill_one(strategy, kind, elite, synergy, c)
            for m in added:
                need[m.kind] -= 1
        for kind in ("destroy", "repair"):
            self._report_short(kind, c)

    def _refill_one(self, strategy: str, kind: str, elite: dict[str, list[Member]],
                    synergy: np.ndarray, c: int) -> list[Member]:
        cfg, rng, problem = self.cfg, self.rng, self.cfg.problem
        self.rundir.log("strategy", cycle=c, strategy=strategy, kind=kind if strategy != "joint" else "joint")
        if strategy == "joint":
            i, j = choose_pair(synergy, rng, cfg.pair_choice)
            d, r = elite["destroy"][i], elite["repair"][j]
            prompt = prompts.joint_crossover_prompt(problem, d, r, limits=self.check)
            pair = self._generator.joint(prompt, [d.id, r.id], c)
            return [self._add(cand, "c2", [d.id, r.id], c) for cand in pair or ()]
        if strategy == "mutation":
            ranked = elite[kind]
            position = rng.randrange(len(ranked))
            parent = ranked[position]
            action, parents = mutation_action(position, len(ranked), rng), [parent.id]
            prompt = prompts.mutation_prompt(problem, parent, action, limits=self.check)
        else:   # homogeneous crossover
            p1, p2 = homogeneous_parents(elite[kind], self.scores.fitness, rng)
            action, parents = "c1", [p1.id, p2.id]
            prompt = prompts.homogeneous_crossover_prompt(problem, p1, p2, limits=self.check)
        cand = self._generator.single(action, kind, prompt, parents, c)
        return [self._add(cand, action, parents, c)] if cand else []

    # ------------------------------------------------------------------ evaluation
    def _train_set(self) -> list[Problem]:
        if self._train is None:
            self._train = training_instances(self.cfg)
        return self._train

    def _validation_set(self) -> list[Problem]:
        if self._validation is None:
            self._validation = validation_instances(self.cfg)
        return self._validation

    def _episode(self, c: int) -> None:
        e = self.episodes
        train = self._train_set()
        seeds = [run_seed(self.cfg.seed, "train", e, i) for i in range(len(train))]
        d_ids, r_ids = [m.id for m in self.destroy], [m.id for m in self.repair]
        t0 = time.monotonic()
        outcomes = evaluate(train, [m.spec() for m in self.destroy], [m.spec() for m in self.repair],
                            pool=self._pool, iterations=self.cfg.iterations, seeds=seeds,
                            params=self.params)
        episode = Scores()
        costs, failed = [], []
        calls = {k: 0 for k in d_ids + r_ids}
        forms: dict[str, str] = {}
        op_failures = {k: 0 for k in d_ids + r_ids}
        errors: dict[str, str] = {}
        for out in outcomes:
            if not out.ok:
                failed.append({"instance": out.instance, "status": out.status, "error": out.error})
                continue
            res = out.result
            episode.add_run(d_ids, r_ids, [s.fitness for s in res.destroy_stats],
                            [s.fitness for s in res.repair_stats], res.synergy)
            costs.append(res.cost)
            for st in res.destroy_stats + res.repair_stats:
                calls[st.name] += st.calls
                op_failures[st.name] += st.failures
                forms.setdefault(st.name, st.form)
                if st.last_error and st.name not in errors:
                    errors[st.name] = st.last_error
        self.scores.add_run(d_ids, r_ids, [episode.fitness.get(k, 0.0) for k in d_ids],
                            [episode.fitness.get(k, 0.0) for k in r_ids],
                            episode.matrix(d_ids, r_ids))
        self.episodes += 1
        self.forms.update(forms)
        mean_cost = sum(costs) / len(costs) if costs else None
        seconds = time.monotonic() - t0
        self.rundir.log("episode", cycle=c, episode=self.episodes, fitness=episode.fitness,
                        calls=calls, failures=op_failures, errors=errors, failed_runs=failed, forms=forms,
                        mean_cost=mean_cost, seconds=round(seconds, 3))
        self.progress(f"cycle {c}/{self.cfg.cycles} episode {self.episodes}/{self.cfg.generations}: "
                      f"mean cost {mean_cost or 0.0:.4f}, {len(failed)} failed runs, {seconds:.1f} s")

    def _validate(self, c: int) -> list[dict[str, Any]]:
        """Validate the pairs with the highest synergy this cycle; update the best pair."""
        d_ids, r_ids = [m.id for m in self.destroy], [m.id for m in self.repair]
        s = self.scores.matrix(d_ids, r_ids)
        order = sorted(((i, j) for i in range(len(d_ids)) for j in range(len(r_ids))),
                       key=lambda ij: (-s[ij], ij))
        out = []
        for i, j in order[: self.cfg.validation_pairs]:
            d, r = self.destroy[i], self.repair[j]
            score = self._validation_score(d, r)
            item = {"destroy": d.id, "repair": r.id, "synergy": float(s[i, j]), "score": score}
            out.append(item)
            self.rundir.log("validation", cycle=c, **item)
            if math.isfinite(score) and (self.best is None or score < _score(self.best["score"])):
                self.best = {"destroy": d.id, "repair": r.id, "score": score, "cycle": c}
        return out

    def _validation_score(self, d: Member, r: Member) -> float:
        key = f"{d.native or source_key(d.source)}|{r.native or source_key(r.source)}"
        if key in self.validation_cache:
            return self.validation_cache[key]
        inst = self._validation_set()
        seeds = [run_seed(self.cfg.seed, "validation", i) for i in range(len(inst))]
        outcomes = evaluate(inst, [d.spec()], [r.spec()], pool=self._pool,
                            iterations=self.cfg.validation_iterations, seeds=seeds, params=self.params)
        costs = [o.result.cost for o in outcomes if o.ok]
        score = float(np.mean(costs)) if len(costs) == len(inst) else math.inf
        self.validation_cache[key] = score
        return score

    # ------------------------------------------------------------------ outputs
    def _best_members(self) -> tuple[Member | None, Member | None]:
        if self.best is None:
            return None, None
        return self.members[self.best["destroy"]], self.members[self.best["repair"]]

    def _export(self) -> Path:
        from glns.evolution.export import export_module

        d, r = self._best_members()
        meta = {"problem": self.cfg.problem, "run_dir": str(self.rundir.path), "seed": self.cfg.seed,
                "cycle": self.cycle, "episodes": self.episodes,
                "best_score": self.best["score"] if self.best else None,
                "best_cycle": self.best["cycle"] if self.best else None,
                "validation": f"{self.cfg.validation_count} x n={self.cfg.validation_size}, "
                              f"{self.cfg.validation_iterations} iterations, mean best cost",
                "operator_forms": {m.id: self.forms[m.id] for m in self.destroy + self.repair
                                   if m.id in self.forms}}
        return export_module(self.rundir.path / "best_operators.py", self.destroy, self.repair,
                             (d, r) if d is not None else None, meta)

    def _finish(self) -> EvolutionResult:
        from glns.evolution import report

        path = self._export()
        table = report.summary_table(self.history, self.members)
        (self.rundir.path / "summary.txt").write_text(table + "\n", encoding="utf-8")
        try:
            report.plot_convergence(self.history, self.rundir.path / "convergence.png",
                                    title=f"G-LNS {self.cfg.problem.upper()} (seed {self.cfg.seed})")
        except ImportError as exc:
            self.rundir.log("plot_skipped", reason=str(exc))
            self.progress(f"no convergence plot: {exc}")
        d, r = self._best_members()
        self.rundir.log("run_finished", cycle=self.cycle, episodes=self.episodes, best=self.best,
                        counters=vars(self.counters).copy(), seconds=round(self.elapsed(), 3))
        return EvolutionResult(self.rundir.path, list(self.destroy), list(self.repair), d, r,
                               _score(self.best["score"]) if self.best else math.inf,
                               list(self.history), path, vars(self.counters).copy())


def _operator_file(m: Member) -> str:
    lines = [f"# glns operator {m.id}: {m.kind}, action {m.action}, cycle {m.cycle}",
             f"# parents: {', '.join(m.parents) or '-'}; entry function: {m.function}"]
    if m.native:
        lines.append(f"# runs as the native operator {m.native!r}; the code below is its twin")
    if m.idea:
        lines.append(f"# idea: {m.idea}")
    return "\n".join(lines) + "\n\n" + m.source
