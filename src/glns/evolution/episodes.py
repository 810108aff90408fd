"""Evaluating the populations: episodes (fitness F and synergy S of every operator and pair)
and the validation of the pairs with the highest synergy (docs/method.md, "evolution").

An episode is one solver run of T iterations on every training instance, each from a random
solution with weights reset to 1, in parallel sandbox workers; F and S add up over the runs.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from glns.evolution.config import EvolutionConfig
from glns.evolution.fingerprint import source_key
from glns.evolution.instances import training_instances, validation_instances
from glns.evolution.population import Member, Scores
from glns.evolution.state import RunState, score_value
from glns.params import SolveParams
from glns.problems import Problem
from glns.rng import run_seed
from glns.sandbox import RunOutcome, evaluate

__all__ = ["EpisodeSummary", "summarise_episode", "Evaluation"]


@dataclass
class EpisodeSummary:
    """What one episode's runs say about the operators (ids of the populations as keys)."""

    scores: Scores = field(default_factory=Scores)
    costs: list[float] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    forms: dict[str, str] = field(default_factory=dict)

    @property
    def mean_cost(self) -> float | None:
        return sum(self.costs) / len(self.costs) if self.costs else None


def summarise_episode(outcomes: Sequence[RunOutcome], d_ids: Sequence[str],
                      r_ids: Sequence[str]) -> EpisodeSummary:
    """F, S, costs and call statistics of one episode's runs; failed runs are listed, not scored."""
    out = EpisodeSummary(calls={k: 0 for k in [*d_ids, *r_ids]},
                         failures={k: 0 for k in [*d_ids, *r_ids]})
    for run in outcomes:
        if not run.ok:
            out.failed.append({"instance": run.instance, "status": run.status, "error": run.error})
            continue
        res = run.result
        out.scores.add_run(d_ids, r_ids, [s.fitness for s in res.destroy_stats],
                           [s.fitness for s in res.repair_stats], res.synergy)
        out.costs.append(res.cost)
        for st in res.destroy_stats + res.repair_stats:
            out.calls[st.name] += st.calls
            out.failures[st.name] += st.failures
            out.forms.setdefault(st.name, st.form)
            if st.last_error and st.name not in out.errors:
                out.errors[st.name] = st.last_error
    return out


class Evaluation:
    """Episodes and validations of one run on one executor (sandbox pool or Ray).

    state: the run's state (scores, episode count, validation cache and best pair change in
    place); params: the solver settings of every run; log/progress: the run directory's event
    log and one-line messages. forms: how each operator ran in its latest episode.
    """

    def __init__(self, cfg: EvolutionConfig, state: RunState, executor: Any, params: SolveParams,
                 log: Callable[..., None], progress: Callable[[str], None]) -> None:
        self.cfg = cfg
        self.state = state
        self.executor = executor
        self.params = params
        self.log = log
        self.progress = progress
        self.forms: dict[str, str] = {}
        self._train: list[Problem] | None = None
        self._validation: list[Problem] | None = None

    def train_set(self) -> list[Problem]:
        if self._train is None:
            self._train = training_instances(self.cfg)
        return self._train

    def validation_set(self) -> list[Problem]:
        if self._validation is None:
            self._validation = validation_instances(self.cfg)
        return self._validation

    def episode(self, c: int) -> None:
        """Run one episode of cycle c and add its F and S to the cycle's scores."""
        st, e = self.state, self.state.episodes
        train = self.train_set()
        seeds = [run_seed(self.cfg.seed, "train", e, i) for i in range(len(train))]
        d_ids, r_ids = [m.id for m in st.destroy], [m.id for m in st.repair]
        t0 = time.monotonic()
        outcomes = evaluate(train, [m.spec() for m in st.destroy], [m.spec() for m in st.repair],
                            pool=self.executor, iterations=self.cfg.iterations, seeds=seeds,
                            params=self.params)
        ep = summarise_episode(outcomes, d_ids, r_ids)
        st.scores.add_run(d_ids, r_ids, [ep.scores.fitness.get(k, 0.0) for k in d_ids],
                          [ep.scores.fitness.get(k, 0.0) for k in r_ids],
                          ep.scores.matrix(d_ids, r_ids))
        st.episodes += 1
        self.forms.update(ep.forms)
        seconds = time.monotonic() - t0
        self.log("episode", cycle=c, episode=st.episodes, fitness=ep.scores.fitness,
                 calls=ep.calls, failures=ep.failures, errors=ep.errors, failed_runs=ep.failed,
                 forms=ep.forms, mean_cost=ep.mean_cost, seconds=round(seconds, 3))
        self.progress(f"cycle {c}/{self.cfg.cycles} episode {st.episodes}/{self.cfg.generations}: "
                      f"mean cost {ep.mean_cost or 0.0:.4f}, {len(ep.failed)} failed runs, {seconds:.1f} s")

    def validation_pairs(self) -> list[tuple[Member, Member, float]]:
        """The pairs to validate after this cycle's episodes: the highest synergy first."""
        st = self.state
        d_ids, r_ids = [m.id for m in st.destroy], [m.id for m in st.repair]
        s = st.scores.matrix(d_ids, r_ids)
        order = sorted(((i, j) for i in range(len(d_ids)) for j in range(len(r_ids))),
                       key=lambda ij: (-s[ij], ij))
        return [(st.destroy[i], st.repair[j], float(s[i, j]))
                for i, j in order[: self.cfg.validation_pairs]]

    def validate(self, c: int, pairs: Sequence[tuple[Member, Member, float]] | None = None,
                 log: Callable[..., None] | None = None) -> list[dict[str, Any]]:
        """Validate `pairs` (default: :meth:`validation_pairs`) of cycle c; update the best
        pair and the validation cache. Touches no other state, so it may run in another
        thread while the next cycle's refill changes the populations."""
        st, log = self.state, log or self.log
        out = []
        for d, r, synergy in (self.validation_pairs() if pairs is None else pairs):
            score = self.validation_score(d, r)
            item = {"destroy": d.id, "repair": r.id, "synergy": synergy, "score": score}
            out.append(item)
            log("validation", cycle=c, **item)
            if math.isfinite(score) and (st.best is None or score < score_value(st.best["score"])):
                st.best = {"destroy": d.id, "repair": r.id, "score": score, "cycle": c}
        return out

    def validation_score(self, d: Member, r: Member) -> float:
        """Mean best cost of the pair on the validation set (inf when a run failed); cached."""
        key = f"{d.native or source_key(d.source)}|{r.native or source_key(r.source)}"
        cache = self.state.validation_cache
        if key in cache:
            return cache[key]
        inst = self.validation_set()
        seeds = [run_seed(self.cfg.seed, "validation", i) for i in range(len(inst))]
        outcomes = evaluate(inst, [d.spec()], [r.spec()], pool=self.executor,
                            iterations=self.cfg.validation_iterations, seeds=seeds, params=self.params)
        costs = [o.result.cost for o in outcomes if o.ok]
        score = float(np.mean(costs)) if len(costs) == len(inst) else math.inf
        cache[key] = score
        return score
