"""Chat-completions client with its own retry loop and per-call accounting.

The ``openai`` package (extra ``llm``) does the HTTP; it is created with ``max_retries=0`` so
that every attempt, wait and error is visible here and lands in the :class:`CallRecord` the
evolution controller writes to its event log.

Retried: transport errors, timeouts, HTTP 429 and 5xx. Not retried: other 4xx (bad request,
authentication, unknown model...), which raise :class:`LLMError` at once. The n-th retry waits
``d * (1 + u) / 2`` seconds with ``d = min(backoff_max, backoff_base * 2**(n-1))`` and u uniform
in [0, 1) ("equal jitter": waits never shrink from one retry to the next, and clients that
failed together do not retry in lockstep); a ``Retry-After`` header raises the wait up to
``backoff_max``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import typing
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from glns.exceptions import GlnsError
from glns.llm.config import LLMConfig

__all__ = ["LLMClient", "LLMReply", "CallRecord", "LLMError", "Message", "build_response_models"]

logger = logging.getLogger(__name__)

#: one chat message: {"role": "system"|"user"|"assistant", "content": str}
Message = dict


class LLMError(GlnsError, RuntimeError):
    """An LLM call failed for good.

    status: the HTTP status of the last attempt (None for transport errors and timeouts);
    retryable: whether the last error was of a retryable type (True means retries ran out);
    record: the :class:`CallRecord` of the call, for the event log.
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 record: "CallRecord | None" = None) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.record = record


@dataclass
class CallRecord:
    """What one :meth:`LLMClient.complete` call did; ``to_dict()`` is JSON-ready.

    latency: wall seconds from the call to its end, waits included; attempt_seconds: the
    duration of each HTTP attempt; sleeps: the backoff waits; errors: one line per failed
    attempt; tokens from the endpoint's ``usage`` (None if it sent none).
    """

    model: str
    started_at: float
    ok: bool = False
    attempts: int = 0
    latency: float = 0.0
    attempt_seconds: list[float] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    status: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    response_id: str | None = None
    response_model: str | None = None
    finish_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LLMReply:
    """text: the assistant message (empty string if the endpoint sent none); record: accounting."""

    text: str
    record: CallRecord


_MODELS_BUILT = threading.Lock()
_models_built = False


def build_response_models() -> None:
    """Build the openai client's chat response models now, once per process, in one thread.

    openai declares its pydantic models with a deferred build, done on first use, and that
    build is not thread-safe: two threads parsing their first responses at once can fail
    with "type object 'ChatCompletion' has no attribute '__pydantic_core_schema__'". The
    evolution sends its first requests from several threads at once, so the models (the
    response type and every model its fields refer to) are built before the first request.
    """
    global _models_built
    if _models_built:
        return
    with _MODELS_BUILT:
        if _models_built:
            return
        from openai.types.chat import ChatCompletion

        _build_models(ChatCompletion, set())
        _models_built = True


def _build_models(annotation: Any, seen: set) -> None:
    """model_rebuild() of every pydantic model in a type annotation, nested ones included."""
    if annotation in seen:
        return
    seen.add(annotation)
    fields = getattr(annotation, "model_fields", None)
    if isinstance(annotation, type) and isinstance(fields, dict):
        annotation.model_rebuild()
        for f in fields.values():
            _build_models(f.annotation, seen)
    for arg in typing.get_args(annotation):
        try:
            _build_models(arg, seen)
        except TypeError:        # an unhashable argument (a Literal's value, say): no model
            pass


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise LLMError("the LLM client needs the openai package: pip install 'glns[llm]'") from None
    return openai


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", None) or exc)


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        value = float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


class LLMClient:
    """Calls an OpenAI-compatible endpoint; see the module doc for the retry policy.

    config: endpoint and retry settings; sleep: how to wait (tests pass a recorder);
    rng: source of the jitter (an object with ``random()``; default a fresh ``random.Random``);
    clock: monotonic seconds (for latencies); openai_client: an existing ``openai.OpenAI``
    (default: one built from config with ``max_retries=0``).
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep,
                 rng: Any = None, clock: Callable[[], float] = time.monotonic,
                 openai_client: Any = None) -> None:
        self.config = config
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._clock = clock
        self._client = openai_client
        #: totals over all calls of this client
        self.calls = 0
        self.failed_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def _openai(self) -> Any:
        openai = _import_openai()
        if self._client is None:
            build_response_models()
            # local servers need no key, but the openai client insists on one
            self._client = openai.OpenAI(base_url=self.config.base_url,
                                         api_key=self.config.api_key or "no-key",
                                         timeout=self.config.timeout, max_retries=0)
        return self._client

    def backoff(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        cfg = self.config
        d = min(cfg.backoff_max, cfg.backoff_base * 2.0 ** (retry - 1))
        wait = d * (1.0 + self._rng.random()) / 2.0
        if retry_after is not None:
            wait = max(wait, min(retry_after, cfg.backoff_max))
        return wait

    def complete(self, messages: str | Sequence[Message], *, system: str | None = None,
                 temperature: float | None = None, max_tokens: int | None = None,
                 seed: int | None = None, model: str | None = None) -> LLMReply:
        """Send a chat completion and return the reply with its :class:`CallRecord`.

        messages: a list of chat messages, or a prompt string (sent as one user message,
            after `system` if given).
        temperature, max_tokens, model: per-call overrides of the configuration.
        seed: passed to the endpoint (honoured by some; the offline server derives its
            answer from it).
        Raises LLMError (with ``.record``) when the call fails for good.
        """
        openai = _import_openai()
        msgs = self._messages(messages, system)
        cfg = self.config
        model = model or cfg.model
        kwargs: dict[str, Any] = {"model": model, "messages": msgs,
                                  "temperature": cfg.temperature if temperature is None else temperature}
        limit = max_tokens if max_tokens is not None else cfg.max_tokens
        if limit is not None:
            kwargs["max_tokens"] = limit
        if seed is not None:
            kwargs["seed"] = int(seed)
        client = self._openai()
        record = CallRecord(model=model, started_at=time.time())
        t0 = self._clock()
        self.calls += 1
        try:
            for attempt in range(1, cfg.max_retries + 2):
                record.attempts = attempt
                t_attempt = self._clock()
                retry_after = None
                try:
                    response = client.chat.completions.create(**kwargs)
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    record.status = status
                    text = _status_message(exc)
                    record.errors.append(f"HTTP {status}: {text}")
                    if status != 429 and status < 500:
                        raise LLMError(f"LLM endpoint refused the request (HTTP {status}): {text}",
                                       status=status, retryable=False, record=record) from None
                    retry_after = _retry_after(exc)
                    last = LLMError(f"LLM endpoint failed (HTTP {status}): {text}",
                                    status=status, retryable=True, record=record)
                except openai.APITimeoutError:
                    record.status = None
                    record.errors.append(f"timeout after {cfg.timeout:g} s")
                    last = LLMError(f"LLM request timed out after {cfg.timeout:g} s",
                                    retryable=True, record=record)
                except openai.APIConnectionError as exc:
                    record.status = None
                    cause = exc.__cause__ or exc
                    record.errors.append(f"connection error: {type(cause).__name__}: {cause}")
                    last = LLMError(f"cannot reach the LLM endpoint {cfg.base_url}: {cause}",
                                    retryable=True, record=record)
                except openai.APIError as exc:  # e.g. a response that is not chat-completion JSON
                    record.errors.append(f"{type(exc).__name__}: {exc}")
                    raise LLMError(f"unusable LLM response: {exc}", record=record) from None
                else:
                    return self._reply(response, record)
                finally:   # every attempt's duration, whatever its outcome
                    record.attempt_seconds.append(self._clock() - t_attempt)
                if attempt <= cfg.max_retries:
                    wait = self.backoff(attempt, retry_after)
                    record.sleeps.append(wait)
                    logger.warning("LLM call attempt %d of %d failed (%s); retrying in %.1f s",
                                   attempt, cfg.max_retries + 1, record.errors[-1], wait)
                    self._sleep(wait)
            last.args = (f"{last.args[0]} (gave up after {record.attempts} attempts)",)
            raise last
        except LLMError:
            self.failed_calls += 1
            raise
        finally:
            record.latency = self._clock() - t0

    def _reply(self, response: Any, record: CallRecord) -> LLMReply:
        record.ok = True
        record.status = 200
        record.response_id = getattr(response, "id", None)
        record.response_model = getattr(response, "model", None)
        usage = getattr(response, "usage", None)
        if usage is not None:
            record.prompt_tokens = getattr(usage, "prompt_tokens", None)
            record.completion_tokens = getattr(usage, "completion_tokens", None)
            record.total_tokens = getattr(usage, "total_tokens", None)
            self.prompt_tokens += record.prompt_tokens or 0
            self.completion_tokens += record.completion_tokens or 0
        choices = getattr(response, "choices", None) or []
        if not choices:
            record.ok = False
            record.errors.append("response has no choices")
            raise LLMError("LLM response has no choices", status=200, record=record)
        record.finish_reason = getattr(choices[0], "finish_reason", None)
        text = getattr(choices[0].message, "content", None) or ""
        return LLMReply(text=text, record=record)

    @staticmethod
    def _messages(messages: str | Sequence[Message], system: str | None) -> list[dict]:
        if isinstance(messages, str):
            msgs = [{"role": "user", "content": messages}]
        else:
            msgs = [dict(m) for m in messages]
            for m in msgs:
                if not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                    raise ValueError(f"each message needs a 'role' and a text 'content', got {m!r}")
        if not msgs:
            raise ValueError("no messages to send")
        if system is not None:
            msgs.insert(0, {"role": "system", "content": system})
        return msgs
