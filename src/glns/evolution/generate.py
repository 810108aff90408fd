"""Asking the LLM for an operator until one passes the pre-evaluation filter (docs/method.md).

One request is a conversation: the action's prompt, the answer, and, when the answer is
rejected (no code block, duplicate of a population member, or a failed sandbox check), a
follow-up message with the precise reason, up to ``max_attempts`` answers. Every LLM call and
every verdict goes to the run's event log, rejected code included.
"""

from __future__ import annotations

import hashlib
import logging
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from glns.evolution import prompts
from glns.exceptions import GlnsError
from glns.llm import AnswerParseError, LLMClient, LLMError, parse_answer, parse_joint_answer
from glns.sandbox import CheckConfig, CheckRequest, WorkerPool, check_operators

__all__ = ["Candidate", "Generator", "EvolutionAborted", "source_key"]

logger = logging.getLogger(__name__)


class EvolutionAborted(GlnsError, RuntimeError):
    """The run cannot go on (e.g. the LLM endpoint keeps failing); the run directory holds the
    state after the last finished cycle and the run can be resumed."""


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


def source_key(source: str) -> str:
    """Identity of an operator's code, blind to trailing spaces and blank lines."""
    lines = [line.rstrip() for line in source.strip().splitlines()]
    return hashlib.sha256("\n".join(l for l in lines if l).encode()).hexdigest()[:16]


@dataclass
class Counters:
    """Totals over a run, kept in the checkpoint."""

    llm_calls: int = 0
    llm_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    admitted: int = 0
    rejected: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Generator:
    """Turns prompts into admitted operators.

    client: the LLM client; pool: sandbox workers for the checks; problem: "tsp"|"cvrp"|"ovrp";
    check: the filter's settings; max_attempts: answers per request; rng: the run's random
    stream (draws each call's ``seed``, so answers of a seeded endpoint replay on resume);
    log: ``log(event, **fields)`` of the run directory; known_sources: the code keys of the
    current populations (an identical operator is rejected as a duplicate);
    max_llm_failures: consecutive failed LLM calls (after the client's own retries) that
    abort the run.
    """

    def __init__(self, client: LLMClient, pool: WorkerPool, problem: str, check: CheckConfig,
                 max_attempts: int, rng: random.Random, log: Callable[..., None],
                 counters: Counters, temperature: float | None = None,
                 max_llm_failures: int = 3) -> None:
        self.client = client
        self.pool = pool
        self.problem = problem
        self.check = check
        self.max_attempts = max_attempts
        self.rng = rng
        self.log = log
        self.counters = counters
        self.temperature = temperature
        self.max_llm_failures = max_llm_failures
        self.known_sources: set[str] = set()
        self._failures_in_a_row = 0

    # ------------------------------------------------------------------ public
    def single(self, action: str, kind: str, prompt: str, parents: Iterable[str],
               cycle: int) -> Candidate | None:
        """One operator of `kind` for `action`, or None when every attempt was rejected."""
        parents = list(parents)

        def examine(text: str, attempt: int) -> tuple[Any, str | None]:
            try:
                answer = parse_answer(text)
            except AnswerParseError as exc:
                return None, self._reject(action, kind, parents, cycle, attempt, "parse", str(exc), None, None)
            dup = self._duplicate(answer.code, action, kind, parents, cycle, attempt, answer.idea)
            if dup:
                return None, dup
            verdict = self._admit([(kind, answer.code, None)])[0]
            if not verdict.ok:
                return None, self._reject(action, kind, parents, cycle, attempt, verdict.check,
                                          verdict.error, answer.code, answer.idea, verdict.size)
            return self._candidate(kind, answer.code, answer.idea, attempt, verdict), None

        return self._converse(action, kind, prompt, parents, examine)

    def joint(self, prompt: str, parents: Iterable[str], cycle: int) -> tuple[Candidate, Candidate] | None:
        """A destroy and a repair operator from one joint-crossover (c2) request, or None."""
        parents = list(parents)
        action = "c2"

        def examine(text: str, attempt: int) -> tuple[Any, str | None]:
            try:
                answer = parse_joint_answer(text)
            except AnswerParseError as exc:
                return None, self._reject(action, "joint", parents, cycle, attempt, "parse", str(exc), None, None)
            codes = (("destroy", answer.destroy, answer.destroy_name),
                     ("repair", answer.repair, answer.repair_name))
            errors = []
            for kind, code, _ in codes:
                dup = self._duplicate(code, action, kind, parents, cycle, attempt, answer.idea)
                if dup:
                    errors.append(f"{kind} operator: {dup}")
            if errors:
                return None, "\n".join(errors)
            verdicts = self._admit(list(codes))
            for (kind, code, _), v in zip(codes, verdicts):
                if not v.ok:
                    errors.append(f"{kind} operator: " + self._reject(
                        action, kind, parents, cycle, attempt, v.check, v.error, code, answer.idea, v.size))
            if errors:
                return None, "\n".join(errors)
            return tuple(self._candidate(kind, code, answer.idea, attempt, v)
                         for (kind, code, _), v in zip(codes, verdicts)), None

        return self._converse(action, "joint", prompt, parents, examine)

    # ------------------------------------------------------------------ conversation
    def _converse(self, action: str, kind: str, prompt: str, parents: list[str],
                  examine: Callable[[str, int], tuple[Any, str | None]]) -> Any:
        messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT},
                    {"role": "user", "content": prompt}]
        for attempt in range(1, self.max_attempts + 1):
            seed = self.rng.getrandbits(31)
            text = self._call(messages, seed, action, kind, parents, attempt)
            if text is None:
                return None
            value, error = examine(text, attempt)
            if value is not None:
                return value
            messages = messages + [{"role": "assistant", "content": text},
                                   {"role": "user", "content": prompts.feedback_prompt(kind, error)}]
        self.log("request_failed", action=action, kind=kind, parents=parents,
                 attempts=self.max_attempts)
        return None

    def _call(self, messages: list[dict], seed: int, action: str, kind: str, parents: list[str],
              attempt: int) -> str | None:
        c = self.counters
        c.llm_calls += 1
        try:
            reply = self.client.complete(messages, seed=seed, temperature=self.temperature)
        except LLMError as exc:
            c.llm_failures += 1
            self._failures_in_a_row += 1
            record = exc.record.to_dict() if exc.record is not None else None
            self.log("llm_call", ok=False, action=action, kind=kind, parents=parents,
                     attempt=attempt, seed=seed, error=str(exc), record=record,
                     prompt=messages[-1]["content"])
            if self._failures_in_a_row >= self.max_llm_failures:
                raise EvolutionAborted(
                    f"the LLM endpoint failed {self._failures_in_a_row} times in a row "
                    f"(last: {exc}); the run directory holds the last finished cycle, "
                    "resume with `glns evolve --resume DIR`") from None
            logger.warning("LLM call for %s (%s) failed, request given up (%d failure(s) in a "
                           "row): %s", action, kind, self._failures_in_a_row, exc)
            return None
        self._failures_in_a_row = 0
        rec = reply.record
        c.prompt_tokens += rec.prompt_tokens or 0
        c.completion_tokens += rec.completion_tokens or 0
        self.log("llm_call", ok=True, action=action, kind=kind, parents=parents, attempt=attempt,
                 seed=seed, prompt=messages[-1]["content"], answer=reply.text,
                 record=rec.to_dict())
        return reply.text

    # ------------------------------------------------------------------ verdicts
    def _admit(self, items: list[tuple[str, str, str | None]]) -> list[Any]:
        requests = [CheckRequest(code, kind, self.problem, function) for kind, code, function in items]
        return check_operators(requests, pool=self.pool, config=self.check)

    def _duplicate(self, code: str, action: str, kind: str, parents: list[str], cycle: int,
                   attempt: int, idea: str | None) -> str | None:
        if source_key(code) not in self.known_sources:
            return None
        return self._reject(action, kind, parents, cycle, attempt, "duplicate",
                            "the code is identical to an operator already in the population; "
                            "write a different operator", code, idea)

    def _reject(self, action: str, kind: str, parents: list[str], cycle: int, attempt: int,
                check: str | None, error: str | None, code: str | None, idea: str | None,
                size: int | None = None) -> str:
        self.counters.rejected += 1
        self.log("rejected", action=action, kind=kind, parents=parents, cycle=cycle,
                 attempt=attempt, check=check, error=error, size=size, idea=idea, code=code)
        return error or f"rejected by the {check} check"

    def _candidate(self, kind: str, code: str, idea: str | None, attempt: int, verdict: Any) -> Candidate:
        return Candidate(kind=kind, source=code, function=verdict.function, idea=idea,
                         attempt=attempt, warnings=tuple(verdict.warnings),
                         timings={str(k): v for k, v in verdict.timings.items()})
