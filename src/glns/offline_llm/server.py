"""An OpenAI-compatible chat-completions server on 127.0.0.1 answering from the offline corpus.

>>> with OfflineLLMServer(seed=1) as srv:                       # doctest: +SKIP
...     client = openai.OpenAI(base_url=srv.base_url, api_key="none")
...     client.chat.completions.create(model="offline", messages=[...])

Endpoints: ``POST /v1/chat/completions`` (also ``/chat/completions``) and ``GET /v1/models``.
What is answered, and the model-name directives that force answers or failures, are described
in :mod:`glns.offline_llm.brain`. Every request is recorded in :attr:`OfflineLLMServer.log`.
Streaming is not supported (HTTP 400).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Sequence

from glns.offline_llm.brain import DirectiveError, OfflineLLM, jitter_delay, parse_model

__all__ = ["OfflineLLMServer", "main"]

HOST = "127.0.0.1"
MODEL_ID = "offline"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that timed out and hung up is part of the tests, not an error to print
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _tokens(text: str) -> int:
    # about four characters per token, as for English text with common tokenizers
    return max(1, (len(text) + 3) // 4)


class OfflineLLMServer:
    """The offline LLM over HTTP; start/stop it, or use it as a context manager.

    seed: makes the answers reproducible (see :mod:`glns.offline_llm.brain`).
    bad_rate: probability of a bad answer for requests without directives.
    port: TCP port on 127.0.0.1; 0 picks a free one (read :attr:`port` after start).
    """

    def __init__(self, seed: int = 0, bad_rate: float = 0.25, port: int = 0) -> None:
        self.brain = OfflineLLM(seed=seed, bad_rate=bad_rate)
        self._requested_port = int(port)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._fail_counts: dict[str, int] = {}
        self._slow_counts: dict[str, int] = {}
        self._log: list[dict[str, Any]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "OfflineLLMServer":
        """Bind and serve in a background thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("the offline LLM server is already running")
        self._stopping.clear()
        self._httpd = _HTTPServer((HOST, self._requested_port), _handler_class(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="offline-llm",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (waiting answers are cut short)."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> "OfflineLLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the offline LLM server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def log(self) -> list[dict[str, Any]]:
        """One dict per request: index, model, problem, kind, served ('good:...', 'bad:CASE',
        'fail:429', 'error'), status."""
        with self._lock:
            return [dict(item) for item in self._log]

    # -- request handling ------------------------------------------------------------------
    def _record(self, **item: Any) -> None:
        with self._lock:
            item["index"] = len(self._log)
            self._log.append(item)

    def _countdown(self, counts: dict[str, int], model: str, limit: int | None) -> bool:
        """True while fewer than `limit` requests of this model were counted (None: always)."""
        with self._lock:
            n = counts.get(model, 0)
            counts[model] = n + 1
        return limit is None or n < limit

    def handle_chat(self, body: Any) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        """(status, JSON body or None to drop the connection, extra headers) for a request."""
        if not isinstance(body, dict):
            return self._error(400, "request body must be a JSON object")
        model = body.get("model")
        messages = body.get("messages")
        if not isinstance(model, str) or not model:
            return self._error(400, "'model' is required")
        if not isinstance(messages, list) or not messages or \
                not all(isinstance(m, dict) and "role" in m for m in messages):
            return self._error(400, "'messages' must be a non-empty list of {role, content}", model)
        if body.get("stream"):
            return self._error(400, "streaming is not supported by the offline LLM server", model)
        if body.get("n", 1) != 1:
            return self._error(400, "only n = 1 is supported", model)
        seed = body.get("seed")
        if seed is not None and not isinstance(seed, int):
            return self._error(400, "'seed' must be an integer", model)
        try:
            directives = parse_model(model)
        except DirectiveError as exc:
            return self._error(400, str(exc), model)

        if directives.fail and self._countdown(self._fail_counts, model, directives.fail_count):
            self._record(model=model, problem=None, kind=None, served=f"fail:{directives.fail}",
                         status=None if directives.fail == "close" else int(directives.fail))
            if directives.fail == "close":
                return 0, None, {}
            status = int(directives.fail)
            kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 \
                else "invalid_request_error"
            return status, {"error": {"message": f"simulated HTTP {status} (directive fail)",
                                      "type": kind, "code": status}}, {}
        delay = jitter_delay(directives, messages, seed)
        if directives.slow and self._countdown(self._slow_counts, model, directives.slow_count):
            delay += directives.slow
        if delay:
            self._stopping.wait(delay)

        with self._lock:  # the brain counts repeated prompts: keep it consistent
            try:
                answer = self.brain.answer(messages, directives, seed)
            except DirectiveError as exc:
                answer = None
                error = str(exc)
        if answer is None:
            return self._error(400, error, model)
        self._record(model=model, problem=answer.problem, kind=answer.kind, served=answer.label,
                     status=200)
        prompt_tokens = sum(_tokens(str(m.get("content", ""))) + 4 for m in messages)
        completion_tokens = _tokens(answer.text)
        response = {
            "id": f"chatcmpl-offline-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "glns-offline",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": answer.text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        return 200, response, {"X-Glns-Offline-Served": answer.label}

    def _error(self, status: int, message: str, model: str | None = None
               ) -> tuple[int, dict[str, Any], dict[str, str]]:
        self._record(model=model, problem=None, kind=None, served="error", status=status,
                     error=message)
        return status, {"error": {"message": message, "type": "invalid_request_error",
                                  "code": None}}, {}

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0,
                                            "owned_by": "glns"}]}


def _handler_class(owner: OfflineLLMServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms stall
        server_version = "glns-offline-llm/1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the owner keeps a log
            pass

        def _send(self, status: int, payload: dict[str, Any] | None,
                  headers: dict[str, str] | None = None) -> None:
            if payload is None:  # simulated transport failure: no answer at all
                self.close_connection = True
                return
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, owner.models())
            else:
                self._send(404, {"error": {"message": f"no route GET {self.path}",
                                           "type": "not_found", "code": None}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"no route POST {self.path}",
                                           "type": "not_found", "code": None}})
                return
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                self._send(*owner._error(400, "request body is not valid JSON"))
                return
            self._send(*owner.handle_chat(body))

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: serve until interrupted, printing the base URL first."""
    parser = argparse.ArgumentParser(
        prog="offline_llm_server",
        description="OpenAI-compatible offline test LLM for glns (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: a free one)")
    parser.add_argument("--seed", type=int, default=0, help="answer seed (default 0)")
    parser.add_argument("--bad-rate", type=float, default=0.25,
                        help="probability of a deliberately bad answer (default 0.25)")
    args = parser.parse_args(argv)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())  # before the URL: callers may stop us at once
    server = OfflineLLMServer(seed=args.seed, bad_rate=args.bad_rate, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
