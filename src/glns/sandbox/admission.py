"""The pre-evaluation filter for generated operators: orchestration (docs/method.md).

:func:`check_operator` runs a destroy or repair operator's source in a sandbox worker on small
generated instances of every size class used, validates every output with the core's rules,
looks for changes to ``problem_data``, and checks that it handles a large instance (n = 200 by
default) within a time bound. The answer is an :class:`Admission` whose ``error`` is written
to be fed back to the LLM as it is: which check failed, on which instance, and what was wrong.

Decisions:

- Changing ``problem_data`` (its dict or, after unlocking, its arrays) rejects the operator;
  the arrays are read-only, so most attempts fail with a ValueError that is reported as such.
- Changing the input solution or ``removed`` in place is harmless (the core hands every call
  fresh lists) and very common in generated code, so by default it only adds a warning;
  ``CheckConfig(allow_input_mutation=False)`` rejects it.
- A destroy operator must remove at least one node when ``destroy_cnt >= 1``; removing a
  different number than ``destroy_cnt`` only adds a warning.
- Each destroy output is repaired by the native greedy insertion afterwards, and each repair
  operator gets the output of the native random removal: operators are checked on what the
  solver actually feeds them.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Sequence

from glns.problems import problem_class
from glns.sandbox.check_types import Admission, CheckConfig, CheckRequest
from glns.sandbox.check_worker import case_task, compile_task, failure, run_step
from glns.sandbox.confine import sandbox_confinement
from glns.policy import policy_violation
from glns.executors import TaskResult, WorkerPool, usable_cores

__all__ = ["CheckConfig", "Admission", "CheckRequest", "check_operator", "check_operators"]

logger = logging.getLogger(__name__)


def _verdict(res: TaskResult, what: str, limit: float, memory_mb: int | None) -> dict[str, Any]:
    """A worker's TaskResult as a check dict; `what` names the instance ('on the n=20 CVRP instance')."""
    if res.ok:
        return res.value
    if res.status == "memory":
        return failure("memory", f"exceeded the memory limit of {memory_mb} MB {what}")
    if res.status == "timeout":
        return failure("timeout", f"timed out after {limit:g} s {what} (and ignored the interruption, "
                     "so its process was killed)")
    if res.status == "died":
        return failure("crash", f"crashed its process {what}: {res.message}")
    return failure("internal", f"internal error of the checker {what}: {res.message}")


class _Progress:
    """The state of one request while its checks run."""

    def __init__(self, req: CheckRequest, cfg: CheckConfig) -> None:
        self.req = req
        self.started = time.monotonic()
        self.timings: dict[int, float] = {}
        self.warnings: list[str] = []
        self.ident: dict[str, Any] = {}
        self.verdict: Admission | None = None
        # (n, seed, per-call limit, is the growth check)
        self.cases = [(n, cfg.seed + i, cfg.call_timeout, False)
                      for n in cfg.sizes for i in range(cfg.instances_per_size)]
        if cfg.growth_n is not None:
            self.cases.append((cfg.growth_n, cfg.seed, cfg.growth_timeout, True))
        self.next_case = -1   # -1: loading the source

    def finish(self, **fields: Any) -> None:
        self.verdict = Admission(kind=self.req.kind, problem=self.req.problem,
                                 timings=dict(self.timings), warnings=tuple(self.warnings),
                                 seconds=time.monotonic() - self.started, **{**self.ident, **fields})
        v = self.verdict
        log = logger.warning if v.check == "internal" else logger.debug
        outcome = "admitted" if v.ok else f"rejected by the {v.check} check: {v.error}"
        log("%s operator (%s) %s, in %.2f s", v.kind, v.problem, outcome, v.seconds)

    def task(self, cfg: CheckConfig) -> tuple[Any, tuple, float]:
        """(function, args, kill deadline) of the next step."""
        r = self.req
        if self.next_case < 0:
            return compile_task, (r.source, r.kind, r.function, cfg.call_timeout), \
                cfg.call_timeout + cfg.kill_grace
        n, seed, limit, _ = self.cases[self.next_case]
        return case_task, (r.source, r.kind, self.ident["function"], r.problem, n, seed, cfg, limit), \
            limit + cfg.kill_grace

    def record(self, res: TaskResult, cfg: CheckConfig, memory_mb: int | None) -> None:
        """Take the answer of the current step; set the verdict when done or failed."""
        if self.next_case < 0:
            head = _verdict(res, "while loading the source", cfg.call_timeout, memory_mb)
            if not head["ok"]:
                return self.finish(ok=False, check=head["check"], error=head["error"])
            self.ident = {"function": head["function"], "convention": head["convention"]}
        else:
            n, _, limit, growth = self.cases[self.next_case]
            out = _verdict(res, f"on the n={n} {problem_class(self.req.problem).label} instance", limit,
                           memory_mb)
            seconds = out.get("seconds", res.seconds)
            self.timings[n] = max(self.timings.get(n, 0.0), seconds)
            for w in out.get("warnings", ()):
                if w not in self.warnings:
                    self.warnings.append(w)
            if not out["ok"]:
                check, error = out["check"], out["error"]
                if growth and check == "timeout":
                    check = "growth"
                    error = (f"too slow: {error} (time-growth check: one call on n={n} must finish "
                             f"within {limit:g} s; avoid work that grows faster than about n^2)")
                return self.finish(ok=False, check=check, error=error, size=n)
        self.next_case += 1
        if self.next_case >= len(self.cases):
            self.finish(ok=True)


def check_operators(requests: Sequence[CheckRequest], *, pool: WorkerPool | None = None,
                    config: CheckConfig | None = None) -> list[Admission]:
    """:func:`check_operator` for many operators at once, spread over the pool's workers.

    The checks of one operator run in order and stop at its first failure; different operators
    are checked in parallel (one step of each at a time). Verdicts come back in input order
    and are the same as those of :func:`check_operator` one by one.
    """
    cfg = config if config is not None else CheckConfig()
    reqs = [r if isinstance(r, CheckRequest) else CheckRequest(*r) for r in requests]
    if pool is None:
        with WorkerPool(workers=min(len(reqs), usable_cores()) or 1,
                        sandbox=sandbox_confinement(cfg.sandbox)) as own:
            return check_operators(reqs, pool=own, config=cfg)
    states = [_Progress(r, cfg) for r in reqs]
    if cfg.allowed_imports is not None:
        for st in states:
            why = policy_violation(st.req.source, tuple(cfg.allowed_imports)) \
                if isinstance(st.req.source, str) else None
            if why:
                st.finish(ok=False, check="forbidden", error=f"the code {why}")
    while True:
        active = [st for st in states if st.verdict is None]
        if not active:
            break
        steps = [st.task(cfg) for st in active]
        answers = pool.map(run_step, [(fn, args) for fn, args, _ in steps],
                           timeout=[limit for _, _, limit in steps])
        for st, res in zip(active, answers):
            st.record(res, cfg, pool.memory_mb)
    return [st.verdict for st in states]  # type: ignore[misc]


def check_operator(source: str, kind: str, problem: str, *, pool: WorkerPool | None = None,
                   config: CheckConfig | None = None, function: str | None = None) -> Admission:
    """Admit or reject a destroy/repair operator given as source code (the pre-evaluation filter,
    docs/method.md).

    source: the operator's code (e.g. an LLM answer's code block); function: its entry
    function (default: as :func:`glns.operators.from_source` picks it). kind: "destroy" or
    "repair". problem: "tsp", "cvrp" or "ovrp". pool: the sandbox to use (default: a one-worker
    pool for this call, memory limit ``DEFAULT_MEMORY_MB``, confined as ``config.sandbox``
    says). The code never runs in the calling process. Stops at the first failed check; checks, in order: loading the source
    (syntax, module body, entry function, signature), then one call on each small instance
    (output validity, problem_data unchanged, per-call time and memory limits), then the
    time-growth call on n = ``config.growth_n``.
    """
    return check_operators([CheckRequest(source, kind, problem, function)], pool=pool, config=config)[0]
