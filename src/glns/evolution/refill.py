"""Filling the populations (docs/method.md, "evolution"): the seeds and the initialisation
actions i1/i2 in the first cycle; later, pruning the worst M by fitness and refilling with
mutation (m1/m2), homogeneous crossover (c1) and joint crossover (c2) from the synergy matrix.

A refill is planned first: for every empty slot of a population up to
:data:`REQUESTS_PER_SLOT` requests -- the slot's strategy, and for each request its parents,
prompt, model and seed -- all drawn from the run's random stream. Then the slots run side by
side (:meth:`glns.evolution.generate.Generator.run_slots`): a slot's first request is sent
alone, and if it gives nothing its other requests are sent at once; the first of them that
gives an operator fills the slot. A slot whose operator copies one an earlier slot brought
goes on with the requests it has left as soon as that is certain. Results are admitted
in slot order. Requests a slot does not need are never sent, and nothing here depends on how
many requests are in flight or on the order their answers arrive in.

Every admitted operator becomes a :class:`Member` here: its file is written to the run
directory, its compiled twin is started, and the event log records it.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable, Sequence

import numpy as np

from glns.evolution import prompts
from glns.evolution.config import EvolutionConfig
from glns.evolution.generate import Candidate, Generator, Request
from glns.evolution.population import (
    Member, choose_pair, homogeneous_parents, mutation_action, prune, rank, sample_strategy,
)
from glns.evolution.rundir import RunDirectory
from glns.evolution.seeds import seed_members
from glns.evolution.state import RunState
from glns.operators.accelerate import precompile
from glns.params import SolveParams
from glns.sandbox import CheckConfig

__all__ = ["REQUESTS_PER_SLOT", "Refill", "operator_file"]

logger = logging.getLogger(__name__)

#: requests per empty slot (the first, then the others at once) before a refill gives up and
#: the population stays short
REQUESTS_PER_SLOT = 3
KINDS = ("destroy", "repair")


def operator_file(m: Member) -> str:
    """The text of a member's file in the run directory: a comment header, then its code."""
    lines = [f"# glns operator {m.id}: {m.kind}, action {m.action}, cycle {m.cycle}",
             f"# parents: {', '.join(m.parents) or '-'}; entry function: {m.function}"]
    if m.native:
        lines.append(f"# runs as the native operator {m.native!r}; the code below is its twin")
    if m.idea:
        lines.append(f"# idea: {m.idea}")
    return "\n".join(lines) + "\n\n" + m.source


class Refill:
    """The population actions of one run.

    state: the run's state (populations, members, RNG; changed in place); generator: runs the
    planned requests; check: the filter settings quoted in prompts; build_params: the settings
    compiled twins are built for; progress: one-line messages; choose_model: draws the model
    of a request from the run's random stream; log: the event log (default the run
    directory's).
    """

    def __init__(self, cfg: EvolutionConfig, state: RunState, generator: Generator,
                 rundir: RunDirectory, check: CheckConfig, build_params: SolveParams,
                 progress: Callable[[str], None],
                 choose_model: Callable[[random.Random], str] | None = None,
                 log: Callable[..., None] | None = None) -> None:
        self.cfg = cfg
        self.state = state
        self.generator = generator
        self.rundir = rundir
        self.check = check
        self.build_params = build_params
        self.progress = progress
        self.choose_model = choose_model or (lambda rng: generator.default_model)
        self.log = log or rundir.log

    # ------------------------------------------------------------------ members
    def register(self, member: Member, **extra: Any) -> None:
        """Put `member` into its population, write its file, start its compiled twin, log it."""
        st = self.state
        st.members[member.id] = member
        st.population(member.kind).append(member)
        self.generator.known_sources.add(self.generator.key(member.source))
        self.rundir.write_operator(member.id, operator_file(member))
        if member.native is None:  # its compiled twin is ready by the time episodes need it
            precompile(member.source, self.build_params)
        self.log("admitted", id=member.id, kind=member.kind, action=member.action,
                 parents=list(member.parents), cycle=member.cycle, idea=member.idea,
                 function=member.function, native=member.native, code=member.source,
                 model=member.model, **extra)

    def _add(self, cand: Candidate, action: str, parents: Sequence[str], cycle: int) -> Member:
        kind, st = cand.kind, self.state
        member = Member(id=f"{kind[0]}{st.next_index[kind]}", kind=kind, source=cand.source,
                        function=cand.function, idea=cand.idea, action=action,
                        parents=tuple(parents), cycle=cycle, model=cand.model)
        st.next_index[kind] += 1
        self.register(member, attempt=cand.attempt, warnings=list(cand.warnings),
                      timings=cand.timings)
        st.counters.record_verdict(action, cand.model, admitted=True)
        return member

    def _report_short(self, kind: str, c: int) -> None:
        pop = self.state.population(kind)
        if len(pop) < self.cfg.population:
            self.log("population_short", cycle=c, kind=kind, size=len(pop),
                     capacity=self.cfg.population)
            self.progress(f"warning: the {kind} population has {len(pop)} of "
                          f"{self.cfg.population} operators (requests failed)")
            logger.warning("cycle %d: the %s population has %d of %d operators (requests failed)",
                           c, kind, len(pop), self.cfg.population)

    # ------------------------------------------------------------------ rounds
    def _request(self, plan: list[Request], action: str, kind: str, prompt: str,
                 parents: Sequence[str], slot: int) -> Request:
        """A request of slot `slot` of the round being planned (its seed and model drawn now)."""
        rng = self.state.rng
        req = Request(index=len(plan), action=action, kind=kind, prompt=prompt,
                      parents=tuple(parents), seed=rng.getrandbits(31),
                      model=self.choose_model(rng), slot=slot)
        plan.append(req)
        return req

    def _execute(self, slots: list[list[Request]], c: int) -> list[Member]:
        """Run a planned refill and admit its results in slot order; the admitted members."""
        if not slots:
            return []
        plan = [req for slot in slots for req in slot]
        self.log("round", cycle=c, requests=[
            {"request": r.index, "slot": r.slot, "action": r.action, "kind": r.kind,
             "parents": list(r.parents), "model": r.model, "seed": r.seed} for r in plan])

        def done(req: Request, value: Any) -> None:
            outcome = "passed the checks" if value is not None else "gave nothing"
            self.progress(f"cycle {c}: request {req.index + 1}/{len(plan)} (slot {req.slot + 1}, "
                          f"{req.action}, {req.model}) {outcome}")

        added: list[Member] = []
        for filled in self.generator.run_slots(slots, c, on_done=done):
            if filled is not None:
                req, result = filled
                cands = list(result) if isinstance(result, tuple) else [result]
                added += [self._add(cand, req.action, req.parents, c) for cand in cands]
        return added

    # ------------------------------------------------------------------ actions
    def initialise(self, c: int) -> None:
        """Seeds, then rounds of i1/i2 slots until both populations are full."""
        st, cfg = self.state, self.cfg
        if not st.destroy and not st.repair:
            seeds_d, seeds_r = seed_members(cfg.problem, native=cfg.native_seeds)
            for m in seeds_d + seeds_r:
                self.register(m)
            st.next_index = {"destroy": len(seeds_d), "repair": len(seeds_r)}
        plan: list[Request] = []
        slots: list[list[Request]] = []
        for kind, action in (("destroy", "i1"), ("repair", "i2")):
            prompt = prompts.init_prompt(cfg.problem, kind, list(st.population(kind)), limits=self.check)
            for _ in range(cfg.population - len(st.population(kind))):
                slot = len(slots)
                slots.append([self._request(plan, action, kind, prompt, (), slot)
                              for _ in range(REQUESTS_PER_SLOT)])
        self._execute(slots, c)
        for kind in KINDS:
            self._report_short(kind, c)

    def evolve(self, c: int) -> None:
        """Prune the worst M by F of the last cycle and refill both populations."""
        cfg, st = self.cfg, self.state
        rng, fitness = st.rng, st.scores.fitness
        for kind in KINDS:
            pop = st.population(kind)
            survivors, dropped = prune(pop, fitness, cfg.prune)
            pop[:] = survivors
            self.log("pruned", cycle=c, kind=kind, dropped=[m.id for m in dropped],
                     kept=[m.id for m in survivors],
                     fitness={m.id: fitness.get(m.id, 0.0) for m in dropped + survivors})
        elite = {"destroy": rank(list(st.destroy), fitness), "repair": rank(list(st.repair), fitness)}
        synergy = st.scores.matrix([m.id for m in elite["destroy"]], [m.id for m in elite["repair"]])
        mix = cfg.effective_mix()
        need = {k: cfg.population - len(st.population(k)) for k in KINDS}
        plan: list[Request] = []
        slots: list[list[Request]] = []
        while any(v > 0 for v in need.values()):
            short = [k for k in KINDS if need[k] > 0]
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
                self.log("refill_stuck", cycle=c, need=need, allowed=allowed, mix=mix)
                break
            slots.append([self._plan_one(plan, strategy, kind, elite, synergy, c, len(slots))
                          for _ in range(REQUESTS_PER_SLOT)])
            for k in (KINDS if strategy == "joint" else (kind,)):
                need[k] -= 1
        self._execute(slots, c)
        for kind in KINDS:
            self._report_short(kind, c)

    def _plan_one(self, plan: list[Request], strategy: str, kind: str,
                  elite: dict[str, list[Member]], synergy: np.ndarray, c: int, slot: int) -> Request:
        """Plan one request of `strategy` for slot `slot` (parents and prompt drawn now)."""
        cfg, rng, problem = self.cfg, self.state.rng, self.cfg.problem
        self.log("strategy", cycle=c, strategy=strategy, kind=kind if strategy != "joint" else "joint",
                 slot=slot)
        if strategy == "joint":
            i, j = choose_pair(synergy, rng, cfg.pair_choice)
            d, r = elite["destroy"][i], elite["repair"][j]
            prompt = prompts.joint_crossover_prompt(problem, d, r, limits=self.check)
            return self._request(plan, "c2", "joint", prompt, (d.id, r.id), slot)
        if strategy == "mutation":
            ranked = elite[kind]
            position = rng.randrange(len(ranked))
            parent = ranked[position]
            action, parents = mutation_action(position, len(ranked), rng), (parent.id,)
            prompt = prompts.mutation_prompt(problem, parent, action, limits=self.check)
        else:   # homogeneous crossover
            p1, p2 = homogeneous_parents(elite[kind], self.state.scores.fitness, rng)
            action, parents = "c1", (p1.id, p2.id)
            prompt = prompts.homogeneous_crossover_prompt(problem, p1, p2, limits=self.check)
        return self._request(plan, action, kind, prompt, parents, slot)
