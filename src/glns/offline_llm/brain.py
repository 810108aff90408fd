"""What the offline LLM answers: deterministic choice of a good or bad answer, without HTTP.

The request's model name may carry directives (``offline:`` then comma-separated items):

==========================  ==================================================================
``good``                    always a good corpus answer
``good=NAME``               that corpus entry (``segment_removal`` or ``tsp/segment_removal``)
``bad``                     always a bad answer (a random applicable case)
``bad=CASE``                that bad case (see :data:`glns.offline_llm.bad.BAD_CASES`)
``rate=P``                  bad-answer probability P for this request (default: the server's)
``fail=STATUSxN``           the first N requests with this model name get HTTP STATUS
                            (e.g. ``fail=429x2``, ``fail=503x1``; STATUS 400-599)
``fail=closexN``            the first N requests get the connection closed without an answer
``slow=SECONDS`` or         wait SECONDS before answering (all requests / the first N with this
``slow=SECONDSxN``          model name); longer than the client's timeout makes it time out
``jitter=SECONDS`` or       wait a further delay in [0, SECONDS) drawn from the request's
``jitter=SECONDS~SALT``     ``seed`` (else its messages) and the integer SALT (default 0), so
                            concurrent requests answer out of order, another SALT in another
                            order; every request, added to ``slow``; the answer is unchanged
==========================  ==================================================================

Any other model name (e.g. ``offline`` or ``deepseek-chat``) gets the default behaviour: a bad
answer with the server's ``bad_rate``, else a good one. Counters for ``fail`` and ``slow`` are
kept per model name, so each test can use its own name. ``jitter`` changes when an answer
comes, never its text, which draws only on what the next paragraph names.

The answer is a function of (server seed, the messages, and either the request's ``seed``
field or how many times these exact messages were asked before). Two servers with the same
seed therefore answer the same sequence of requests identically; a controller that passes a
``seed`` per call (drawn from its own checkpointed RNG) gets answers that do not depend on the
server's history at all, which is what exact resumption needs.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from glns.exceptions import GlnsError
from glns.llm import markers
from glns.offline_llm.bad import BAD_CASES, bad_answer_text
from glns.offline_llm.corpus import HEADER, CorpusEntry, GOOD, entry, family_of, good_entries

__all__ = ["OfflineLLM", "Directives", "DirectiveError", "Answer", "parse_model", "jitter_delay"]


class DirectiveError(GlnsError, ValueError):
    """The model name has an offline directive that cannot be understood (HTTP 400)."""


@dataclass
class Directives:
    good: str | bool | None = None
    bad: str | bool | None = None
    rate: float | None = None
    fail: str | None = None      # "429", "503", "close"
    fail_count: int = 0
    slow: float = 0.0
    slow_count: int | None = None  # None: every request
    jitter: float = 0.0
    jitter_salt: int = 0


_FAIL = re.compile(r"^(close|[45]\d\d)x(\d+)$")
_SLOW = re.compile(r"^(\d+(?:\.\d*)?)(?:x(\d+))?$")
_JITTER = re.compile(r"^(\d+(?:\.\d*)?)(?:~(-?\d+))?$")


def parse_model(model: str) -> Directives:
    """The directives in a model name (none unless it starts with ``offline:``)."""
    out = Directives()
    if not isinstance(model, str) or not model.startswith("offline:"):
        return out
    for item in filter(None, (s.strip() for s in model[len("offline:"):].split(","))):
        key, _, value = item.partition("=")
        if key == "good":
            out.good = value or True
        elif key == "bad":
            if value and value not in BAD_CASES:
                raise DirectiveError(f"unknown bad case {value!r}; known: {', '.join(BAD_CASES)}")
            out.bad = value or True
        elif key == "rate":
            try:
                out.rate = float(value)
            except ValueError:
                raise DirectiveError(f"rate must be a number in [0, 1], got {value!r}") from None
            if not 0.0 <= out.rate <= 1.0:
                raise DirectiveError(f"rate must be in [0, 1], got {value!r}")
        elif key == "fail":
            m = _FAIL.match(value)
            if not m:
                raise DirectiveError(f"fail must look like 429x2 or closex1, got {value!r}")
            out.fail, out.fail_count = m.group(1), int(m.group(2))
        elif key == "slow":
            m = _SLOW.match(value)
            if not m:
                raise DirectiveError(f"slow must look like 2.5 or 2.5x1, got {value!r}")
            out.slow = float(m.group(1))
            out.slow_count = int(m.group(2)) if m.group(2) else None
        elif key == "jitter":
            m = _JITTER.match(value)
            if not m:
                raise DirectiveError("jitter must be SECONDS or SECONDS~SALT with an integer SALT "
                                     f"(e.g. 0.3 or 0.3~7), got {value!r}")
            out.jitter = float(m.group(1))
            out.jitter_salt = int(m.group(2)) if m.group(2) else 0
        else:
            raise DirectiveError(f"unknown offline directive {item!r} in model {model!r}; "
                                 "known: good, good=NAME, bad, bad=CASE, rate=P, fail=429x2, "
                                 "fail=closex1, slow=SECONDS[xN], jitter=SECONDS[~SALT]")
    if out.good and out.bad:
        raise DirectiveError("give either good or bad, not both")
    return out


def _messages_digest(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode()).hexdigest()


def jitter_delay(directives: Directives, messages: list[dict[str, Any]],
                 request_seed: int | None = None) -> float:
    """The ``jitter`` part of a request's wait, in [0, directives.jitter): a function of the
    request seed (else the messages) and the salt only, so a replayed request waits as long."""
    if directives.jitter <= 0.0:
        return 0.0
    key = f"seed={request_seed}" if request_seed is not None \
        else f"messages={_messages_digest(messages)}"
    digest = hashlib.sha256(f"jitter|{key}|salt={directives.jitter_salt}".encode()).digest()
    return directives.jitter * int.from_bytes(digest[:8], "big") / 2.0**64


@dataclass(frozen=True)
class Answer:
    """A chosen answer: text, what was asked (problem, kind) and what was served (case:
    'good' or 'bad'; entries: corpus entry names; bad_case)."""

    text: str
    problem: str
    kind: str
    case: str
    entries: tuple[str, ...] = ()
    bad_case: str | None = None

    @property
    def label(self) -> str:
        return f"bad:{self.bad_case}" if self.case == "bad" else "good:" + "+".join(self.entries)


_FORMATS = (
    "{{{idea}}}\n\n```python\n{code}```\n",
    "Here is the new operator.\n\n{{{idea}}}\n\n```python\n{code}```\n",
    "{{{idea}}}\n```\n{code}```",
    "{{{idea}}}\n\n```py\n{code}```\n\nAll helper logic is defined inside the function.\n",
    "{{{idea}}}\n\n```python\n{code}```\n",
)


def message_text(messages: list[dict[str, Any]]) -> str:
    """The text of all messages (content strings, or the text parts of content lists)."""
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


@dataclass
class OfflineLLM:
    """The answering logic of the offline server (thread-compatible: call under a lock)."""

    seed: int = 0
    bad_rate: float = 0.25
    _seen: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.bad_rate <= 1.0:
            raise ValueError(f"bad_rate must be in [0, 1], got {self.bad_rate}")

    def _rng(self, messages: list[dict[str, Any]], request_seed: int | None) -> random.Random:
        digest = _messages_digest(messages)
        if request_seed is not None:
            salt = f"seed={request_seed}"
        else:
            n = self._seen.get(digest, 0)
            self._seen[digest] = n + 1
            salt = f"n={n}"
        key = hashlib.sha256(f"{self.seed}|{digest}|{salt}".encode()).digest()
        return random.Random(int.from_bytes(key[:8], "big"))

    def answer(self, messages: list[dict[str, Any]], directives: Directives,
               request_seed: int | None = None) -> Answer:
        """Choose and write the answer to a chat request (raises DirectiveError on bad asks)."""
        problem, kind = markers.detect(message_text(messages))
        rng = self._rng(messages, request_seed)
        rate = self.bad_rate if directives.rate is None else directives.rate
        draw = rng.random()
        bad = directives.bad if directives.bad else (not directives.good and draw < rate)
        if bad:
            case = directives.bad if isinstance(directives.bad, str) else None
            if case is None:
                allowed = [c.name for c in BAD_CASES.values() if problem != "tsp" or not c.vrp_only]
                case = rng.choice(allowed)
            elif BAD_CASES[case].vrp_only and problem == "tsp":
                raise DirectiveError(f"bad case {case!r} needs a CVRP or OVRP prompt")
            return Answer(bad_answer_text(case, problem, kind, rng), problem, kind, "bad",
                          bad_case=case)
        forced = directives.good if isinstance(directives.good, str) else None
        kinds = ("destroy", "repair") if kind == "joint" else (kind,)
        chosen = self._good_entries(problem, kinds, forced, rng)
        rename = rng.random() < 0.5
        bodies = [e.function_source(k if rename else None) for e, k in zip(chosen, kinds)]
        code = HEADER + "\n\n" + "\n\n".join(bodies)
        if kind == "joint":
            second = chosen[1].idea
            idea = f"{chosen[0].idea.rstrip('.')}; then {second[0].lower()}{second[1:]}"
        else:
            idea = chosen[0].idea
        text = rng.choice(_FORMATS).format(idea=idea, code=code)
        return Answer(text, problem, kind, "good", tuple(e.name for e in chosen))

    @staticmethod
    def _good_entries(problem: str, kinds: tuple[str, ...], forced: str | None,
                      rng: random.Random) -> list[CorpusEntry]:
        found = None
        if forced is not None:
            family = family_of(problem)
            try:
                found = entry(forced if "/" in forced else f"{family}/{forced}")
            except KeyError as exc:
                raise DirectiveError(str(exc.args[0])) from None
            if found.kind not in kinds or found not in good_entries(problem, found.kind):
                raise DirectiveError(f"corpus entry {found.name!r} is no answer to a "
                                     f"{problem.upper()} {'/'.join(kinds)} prompt")
        # a forced entry takes its kind's place; the other kind of a joint answer is drawn
        return [found if found is not None and found.kind == k else rng.choice(good_entries(problem, k))
                for k in kinds]


def all_entry_names() -> list[str]:
    """Every good corpus entry name."""
    return sorted(e.name for entries in GOOD.values() for e in entries)
