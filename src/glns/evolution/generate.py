"""Asking the LLM for operators until they pass the pre-evaluation filter (docs/method.md).

A refill is planned first (:class:`Request`: action, prompt, parents, model and seed, all drawn
from the run's random stream) and then executed here with up to ``concurrency`` requests in
flight. One request is a conversation: the action's prompt, the answer, and, when the answer is
rejected (no code block, duplicate of a population member, or a failed sandbox check), a
follow-up message with the precise reason, up to ``max_attempts`` answers. Admission checks run
in the request's thread as its answers arrive. Each request's attempt seeds come from its own
seed, so its conversation does not depend on the others or on the order answers arrive in.
Every LLM call and every verdict goes to the run's event log, rejected code included.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from glns.evolution import prompts
from glns.evolution.concurrency import StopSignal, run_jobs
from glns.evolution.fingerprint import code_fingerprint, source_key
from glns.evolution.usage import Counters
from glns.exceptions import GlnsError
from glns.llm import AnswerParseError, LLMClient, LLMError, parse_answer, parse_joint_answer
from glns.sandbox import CheckConfig, CheckRequest, WorkerPool, check_operators

__all__ = ["Candidate", "Counters", "Generator", "EvolutionAborted", "Request", "attempt_seeds",
           "source_key"]

logger = logging.getLogger(__name__)


class EvolutionAborted(GlnsError, RuntimeError):
    """The run cannot go on (e.g. the LLM endpoint keeps failing); the run directory holds the
    state after the last finished cycle and the run can be resumed."""


@dataclass(frozen=True)
class Request:
    """One planned LLM request of a refill.

    index: its position in the refill's plan (the `request` of its events); action: i1, i2, m1,
    m2, c1 or c2; kind: "destroy", "repair" or "joint" (c2); parents: ids of the operators it
    starts from; seed: the request's own seed (its attempts' seeds derive from it); model: the
    name of the ensemble model that answers it; slot: the empty place in a population it is
    for (a slot's requests are tried in order, see :meth:`Generator.run_slots`).
    """

    index: int
    action: str
    kind: str
    prompt: str
    parents: tuple[str, ...]
    seed: int
    model: str
    slot: int = 0


@dataclass(frozen=True)
class Candidate:
    """An operator that passed the filter: its code, entry function, idea and check report."""

    kind: str
    source: str
    function: str
    idea: str | None
    attempt: int
    warnings: tuple[str, ...] = ()
    timings: dict = field(default_factory=dict)
    model: str | None = None


def _candidates(value: Any) -> tuple[Candidate, ...]:
    """The operators of a request's result: one, or a destroy/repair pair (c2)."""
    return value if isinstance(value, tuple) else (value,)


def attempt_seeds(seed: int, attempts: int) -> list[int]:
    """The ``seed`` sent with each attempt of a request with seed `seed`."""
    rng = random.Random(seed)
    return [rng.getrandbits(31) for _ in range(attempts)]


def _single_client_cost(name: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    return None


class Generator:
    """Turns planned requests into admitted operators.

    clients: the LLM client of each model name (or one client, used for every request); pool:
    sandbox workers for the checks; problem: "tsp"|"cvrp"|"ovrp"; check: the filter's settings;
    max_attempts: answers per request; rng: the run's random stream (only :meth:`single` and
    :meth:`joint` draw from it); log: ``log(event, **fields)`` of the run directory; counters:
    the run's totals; temperature: overrides the models' own; max_llm_failures: consecutive
    failed LLM calls (after the client's own retries) that abort the run; concurrency: requests
    in flight; cost: ``cost(model, prompt_tokens, completion_tokens)`` in USD or None;
    key: the duplicate key of a source (default the normalised-syntax fingerprint); known_sources: the keys of the current populations (an
    answer with one of them is rejected as a duplicate); guard: called after every LLM call,
    returns an exception (e.g. a budget that is exceeded) to stop the round with, or None.
    """

    def __init__(self, clients: LLMClient | Mapping[str, LLMClient], pool: WorkerPool, problem: str,
                 check: CheckConfig, max_attempts: int, rng: random.Random,
                 log: Callable[..., None], counters: Counters, temperature: float | None = None,
                 max_llm_failures: int = 3, concurrency: int = 1,
                 cost: Callable[[str, int, int], float | None] = _single_client_cost,
                 key: Callable[[str], str] = code_fingerprint,
                 guard: Callable[[], BaseException | None] | None = None) -> None:
        if isinstance(clients, LLMClient) or not isinstance(clients, Mapping):
            self.default_model: str = clients.config.model
            clients = {self.default_model: clients}
        else:
            self.default_model = next(iter(clients))
        self.clients = dict(clients)
        self.pool = pool
        self.problem = problem
        self.check = check
        self.max_attempts = max_attempts
        self.rng = rng
        self.log = log
        self.counters = counters
        self.temperature = temperature
        self.max_llm_failures = max_llm_failures
        self.concurrency = concurrency
        self._in_flight = threading.BoundedSemaphore(concurrency)   # LLM calls at once
        self.cost = cost
        self.key = key
        self.guard = guard
        self.known_sources: set[str] = set()
        self._failures_in_a_row = 0
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public
    def run_slots(self, slots: Sequence[Sequence[Request]], cycle: int,
                  on_done: Callable[[Request, Any], None] | None = None) -> list[tuple[Request, Any] | None]:
        """Execute a planned refill; per slot the request that filled it and its result, or
        None when all its requests gave nothing.

        A slot is a list of planned requests for one empty place in a population: the first
        is sent alone; if it gives nothing, the others are sent at once (a slot that failed
        once tends to fail again, and one request after the other would leave the run waiting
        on the LLM), and the first of them in plan order that gives an operator fills the slot.
        An operator that copies one an earlier slot brought is rejected as soon as that is
        certain (an earlier slot found the same operator, or all earlier slots are done), and
        the slot goes on with the requests it has left. Slots run side by side;
        at most ``concurrency`` LLM calls are in flight in all.
        """
        known = frozenset(self.known_sources)
        stop = StopSignal()
        state = threading.Condition()
        done = [False] * len(slots)
        brought: list[frozenset[str]] = [frozenset()] * len(slots)
        # keys of the single operators each slot has found so far: a slot either brings such
        # an operator or drops it as a copy of what an even earlier slot brought, so a later
        # slot that finds one of them knows at once that it has a copy
        found: list[set[str]] = [set() for _ in slots]

        def is_copy(i: int, keys: frozenset[str]) -> bool | None:
            """Whether slot i's operator copies an earlier slot's; None: not known yet."""
            if keys & set().union(*found[:i]):
                return True
            if all(done[:i]):
                return bool(keys & frozenset().union(*brought[:i]))
            return None

        def attempt(req: Request) -> Any:
            value = self._request(req, cycle, known, stop)
            if on_done is not None:
                on_done(req, value)
            return value

        def next_result(queue: list[Request]) -> tuple[Request | None, Any, list[Request]]:
            first = attempt(queue[0])
            if first is not None:
                return queue[0], first, queue[1:]
            rest = run_jobs([(lambda r=r: attempt(r)) for r in queue[1:]], max(1, len(queue) - 1), stop)
            for req, value in zip(queue[1:], rest):
                if value is not None:
                    return req, value, []
            return None, None, []

        def fill(i: int) -> tuple[Request, Any] | None:
            try:
                queue = list(slots[i])
                while queue:
                    req, value, queue = next_result(queue)
                    if req is None:
                        return None
                    keys = frozenset(self.key(c.source) for c in _candidates(value))
                    with state:
                        if len(keys) == 1:
                            found[i] |= keys
                            state.notify_all()
                        while (copy := is_copy(i, keys)) is None:
                            state.wait()
                        if not copy:
                            brought[i] = keys
                            return req, value
                    self._same_round_copy(req, value, cycle)
                return None
            finally:
                with state:
                    done[i] = True
                    state.notify_all()

        return run_jobs([(lambda i=i: fill(i)) for i in range(len(slots))], max(1, len(slots)), stop)

    def _same_round_copy(self, req: Request, value: Any, cycle: int) -> None:
        for cand in _candidates(value):
            self.counters.record_verdict(req.action, req.model, admitted=False, duplicate=True)
            self.log("rejected", action=req.action, kind=cand.kind, parents=list(req.parents),
                     cycle=cycle, attempt=cand.attempt, check="duplicate",
                     error="a copy of an operator an earlier slot of the same refill brought",
                     size=None, idea=cand.idea, code=cand.source, request=req.index,
                     slot=req.slot, model=req.model)

    def single(self, action: str, kind: str, prompt: str, parents: Iterable[str],
               cycle: int) -> Candidate | None:
        """One operator of `kind` for `action` (a slot of one request), or None."""
        return self._alone(self._one(action, kind, prompt, parents), cycle)

    def joint(self, prompt: str, parents: Iterable[str], cycle: int) -> tuple[Candidate, Candidate] | None:
        """A destroy and a repair operator from one joint-crossover (c2) request, or None."""
        return self._alone(self._one("c2", "joint", prompt, parents), cycle)

    def _alone(self, req: Request, cycle: int) -> Any:
        filled = self.run_slots([[req]], cycle)[0]
        return None if filled is None else filled[1]

    def _one(self, action: str, kind: str, prompt: str, parents: Iterable[str]) -> Request:
        return Request(0, action, kind, prompt, tuple(parents), self.rng.getrandbits(31),
                       self.default_model)

    # ------------------------------------------------------------------ one request
    def _request(self, req: Request, cycle: int, known: frozenset[str], stop: StopSignal) -> Any:
        examine = self._examine_joint if req.kind == "joint" else self._examine_single
        messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT},
                    {"role": "user", "content": req.prompt}]
        for attempt, seed in enumerate(attempt_seeds(req.seed, self.max_attempts), start=1):
            if stop.is_set():
                return None
            text = self._call(req, messages, seed, attempt, cycle, stop)
            if text is None:
                return None
            value, error = examine(req, text, attempt, cycle, known)
            if value is not None:
                return value
            messages = messages + [{"role": "assistant", "content": text},
                                   {"role": "user", "content": prompts.feedback_prompt(req.kind, error)}]
        self.log("request_failed", action=req.action, kind=req.kind, parents=list(req.parents),
                 attempts=self.max_attempts, cycle=cycle, request=req.index, slot=req.slot,
                 model=req.model)
        return None

    def _examine_single(self, req: Request, text: str, attempt: int, cycle: int,
                        known: frozenset[str]) -> tuple[Any, str | None]:
        try:
            answer = parse_answer(text)
        except AnswerParseError as exc:
            return None, self._reject(req, req.kind, cycle, attempt, "parse", str(exc), None, None)
        dup = self._duplicate(req, req.kind, answer.code, cycle, attempt, answer.idea, known)
        if dup:
            return None, dup
        verdict = self._admit([(req.kind, answer.code, None)])[0]
        if not verdict.ok:
            return None, self._reject(req, req.kind, cycle, attempt, verdict.check, verdict.error,
                                      answer.code, answer.idea, verdict.size)
        return self._candidate(req, req.kind, answer.code, answer.idea, attempt, verdict), None

    def _examine_joint(self, req: Request, text: str, attempt: int, cycle: int,
                       known: frozenset[str]) -> tuple[Any, str | None]:
        try:
            answer = parse_joint_answer(text)
        except AnswerParseError as exc:
            return None, self._reject(req, "joint", cycle, attempt, "parse", str(exc), None, None)
        codes = (("destroy", answer.destroy), ("repair", answer.repair))
        errors = []
        for kind, code in codes:
            dup = self._duplicate(req, kind, code, cycle, attempt, answer.idea, known)
            if dup:
                errors.append(f"{kind} operator: {dup}")
        if errors:
            return None, "\n".join(errors)
        verdicts = self._admit([(kind, code, None) for kind, code in codes])
        for (kind, code), v in zip(codes, verdicts):
            if not v.ok:
                errors.append(f"{kind} operator: " + self._reject(
                    req, kind, cycle, attempt, v.check, v.error, code, answer.idea, v.size))
        if errors:
            return None, "\n".join(errors)
        return tuple(self._candidate(req, kind, code, answer.idea, attempt, v)
                     for (kind, code), v in zip(codes, verdicts)), None

    # ------------------------------------------------------------------ the LLM call
    def _call(self, req: Request, messages: list[dict], seed: int, attempt: int, cycle: int,
              stop: StopSignal) -> str | None:
        client = self.clients.get(req.model)
        if client is None:
            raise KeyError(f"no LLM client for model {req.model!r} (known: {', '.join(self.clients)})")
        where = dict(action=req.action, kind=req.kind, parents=list(req.parents), attempt=attempt,
                     seed=seed, cycle=cycle, request=req.index, slot=req.slot, model=req.model)
        # the outcome is accounted for before the next call may start, so that a stop set by
        # this call (failures in a row, a budget) is seen by every call that comes after it
        with self._in_flight:
            if stop.is_set():   # set while this call waited for its turn
                return None
            try:
                reply = client.complete(messages, seed=seed, temperature=self.temperature)
            except LLMError as exc:
                self._failed(req, exc, where, messages, stop)
                return None
            with self._lock:
                self._failures_in_a_row = 0
            rec = reply.record
            prompt_tokens, completion_tokens = rec.prompt_tokens or 0, rec.completion_tokens or 0
            cost = self.cost(req.model, prompt_tokens, completion_tokens)
            self.counters.record_call(req.action, req.model, ok=True, prompt_tokens=prompt_tokens,
                                      completion_tokens=completion_tokens, cost=cost or 0.0,
                                      seconds=rec.latency or 0.0)
            self.log("llm_call", ok=True, **where, prompt=messages[-1]["content"], answer=reply.text,
                     record=rec.to_dict(), cost=cost)
            self._check_guard(stop)
            return reply.text

    def _failed(self, req: Request, exc: LLMError, where: dict[str, Any], messages: list[dict],
                stop: StopSignal) -> None:
        """Account for a failed call; stop the round after too many failures in a row."""
        record = exc.record.to_dict() if exc.record is not None else None
        self.counters.record_call(req.action, req.model, ok=False,
                                  seconds=exc.record.latency if exc.record else 0.0)
        self.log("llm_call", ok=False, **where, error=str(exc), record=record,
                 prompt=messages[-1]["content"])
        with self._lock:
            self._failures_in_a_row += 1
            failures = self._failures_in_a_row
        if failures >= self.max_llm_failures:
            stop.set(EvolutionAborted(
                f"the LLM endpoint failed {failures} times in a row "
                f"(last: {exc}); the run directory holds the last finished cycle, "
                "resume with `glns evolve --resume DIR`"))
        else:
            logger.warning("LLM call for %s (%s) failed, request given up (%d failure(s) in a "
                           "row): %s", req.action, req.kind, failures, exc)
        self._check_guard(stop)

    def _check_guard(self, stop: StopSignal) -> None:
        if self.guard is not None:
            error = self.guard()
            if error is not None:
                stop.set(error)

    # ------------------------------------------------------------------ verdicts
    def _admit(self, items: list[tuple[str, str, str | None]]) -> list[Any]:
        requests = [CheckRequest(code, kind, self.problem, function) for kind, code, function in items]
        return check_operators(requests, pool=self.pool, config=self.check)

    def _duplicate(self, req: Request, kind: str, code: str, cycle: int, attempt: int,
                   idea: str | None, known: frozenset[str]) -> str | None:
        if self.key(code) not in known:
            return None
        return self._reject(req, kind, cycle, attempt, "duplicate",
                            "the code is a copy of an operator already in the population (names, "
                            "comments and formatting aside); write a different operator",
                            code, idea)

    def _reject(self, req: Request, kind: str, cycle: int, attempt: int, check: str | None,
                error: str | None, code: str | None, idea: str | None,
                size: int | None = None) -> str:
        self.counters.record_verdict(req.action, req.model, admitted=False,
                                     duplicate=check == "duplicate")
        self.log("rejected", action=req.action, kind=kind, parents=list(req.parents), cycle=cycle,
                 attempt=attempt, check=check, error=error, size=size, idea=idea, code=code,
                 request=req.index, slot=req.slot, model=req.model)
        return error or f"rejected by the {check} check"

    def _candidate(self, req: Request, kind: str, code: str, idea: str | None, attempt: int,
                   verdict: Any) -> Candidate:
        return Candidate(kind=kind, source=code, function=verdict.function, idea=idea,
                         attempt=attempt, warnings=tuple(verdict.warnings),
                         timings={str(k): v for k, v in verdict.timings.items()}, model=req.model)
