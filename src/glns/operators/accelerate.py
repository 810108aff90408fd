"""How a Python operator runs: which form of ``problem_data`` it gets and whether it runs compiled.

When a Python operator is bound to a problem (:meth:`glns.operators.Operator.bind`), this module

1. finds a compiled twin of its source: a Cython build in the on-disk cache
   (:mod:`glns.compiler`), built now (``compile="wait"``) or in the background
   (``compile="auto"``: the run starts interpreted and switches when the build is ready);
2. runs the operator's first calls of the run in the reference form (numpy arrays,
   interpreted) and records them: inputs, random state, output (:class:`Recording`);
3. negotiates the form on those recorded calls (:func:`glns.operators.probe.negotiate`): each
   candidate form (numpy arrays or immutable Python tuples, interpreted or compiled) replays
   them with the same random state, and a form is taken only when every output is exactly the
   recorded one and no call raises or exceeds its bounded time;
4. switches the :class:`glns.operators.bridge.BoundPythonOperator` to the chosen form, which
   records it (``OperatorStats.form`` / ``form_reason``).

Decisions are cached per process by operator, problem kind and what is available, so a sandbox
worker records and negotiates an operator once, not once per instance; and kept on disk and
carried by tasks (:mod:`glns.operators.decisions`), so that a later process or another worker
adopts them and negotiates nothing. Nothing here changes
what the core validates: every call's output is still checked before it reaches the solver's
data. See docs/fast-operators.md.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import logging
import os
import random
import textwrap
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from glns.operators import decisions
from glns.operators.bridge import OPERATOR_GLOBALS, BoundPythonOperator, limit_stops_compiled_code
from glns.policy import parse_source, policy_violation
from glns.params import COMPILE_SETTINGS
from glns.operators.probe import (Form, Negotiation, RecordedCall, canonical, fresh_copy, has_coincident_nodes,
                                  needs_synthetic_evidence, negotiate)
from glns.operators.spec import DEPLOY_MARK, deployed_source
from glns.operators.views import MAX_PYTHON_VIEW_NODES, view_data, view_of_matrix

__all__ = ["bind_python", "accelerate_settings", "compilable_source", "precompile", "ENV_SWITCH",
           "Recording", "RECORD_CALLS", "RECORD_SECONDS", "negotiations"]

logger = logging.getLogger(__name__)

#: environment variable that turns views and compilation off everywhere when set to 0/off/false
ENV_SWITCH = "GLNS_ACCELERATE"
#: environment variable that replaces compile="auto" (e.g. "cached" on CI machines: use compiled
#: twins found in the cache, never build one)
ENV_COMPILE = "GLNS_COMPILE"


def accelerate_settings(params: Any) -> tuple[str, str]:
    """(views, compile) of `params` (a SolveParams), with the environment switches applied."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("0", "off", "false", "no"):
        return "numpy", "off"
    mode = params.compile
    if mode == "auto":
        env = os.environ.get(ENV_COMPILE, "").strip().lower()
        if env:
            if env not in COMPILE_SETTINGS:
                raise ValueError(f"{ENV_COMPILE} must be one of {COMPILE_SETTINGS}, got {env!r}")
            mode = env
    return params.views, mode


# ============================================================================ source to compile

def compilable_source(op: Any) -> tuple[str | None, str | None, str]:
    """(source, entry function name, why not) of what can be compiled for Python operator `op`.

    Source given to ``from_source`` is compiled as it is. For a plain callable, its own source
    when it is self-contained (every global it reads is a builtin or one of the modules operator
    code may use without importing them); else the whole source of the module that defines it
    (helpers and constants included). A function of a module deployed by ``glns compile`` is
    always its module's source, as ``glns compile`` compiled it (without the lines it added).
    """
    func = op.func
    name = getattr(func, "__name__", None)
    if op.source is not None:
        return op.source, name, ""
    if not inspect.isfunction(func) or name == "<lambda>":
        return None, None, "not a plain Python function (a lambda, a builtin or a callable object)"
    if func.__closure__:
        return None, None, "a closure (its free variables are not in its source)"
    whole = _module_source(func)
    usable = whole is not None and func.__globals__.get("__name__") != "__main__" \
        and func.__globals__.get(name) is func
    if usable and DEPLOY_MARK in whole:
        return deployed_source(whole), name, ""
    try:
        own = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return None, None, "its source is not available"
    try:
        tree = parse_source(own)
    except SyntaxError:
        return None, None, "its source does not parse on its own"
    if (len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef)
            and not tree.body[0].decorator_list and tree.body[0].name == name):
        if not _free_globals(tree):
            return own, name, ""
    if not usable:
        return None, None, "it reads module globals and its module's source is not usable"
    return whole, name, ""


def _module_source(func: Callable) -> str | None:
    """The source of the module that defines `func`: also of a module loaded from a file by
    path and not in ``sys.modules`` (``glns.evolution.load_module``)."""
    module = inspect.getmodule(func)
    try:
        if module is not None:
            return inspect.getsource(module)
        path = func.__globals__.get("__file__")
        if isinstance(path, str) and path == func.__code__.co_filename:
            with open(path, encoding="utf-8") as f:
                return f.read()
    except (OSError, TypeError, UnicodeDecodeError):
        pass
    return None


def _free_globals(tree: ast.AST) -> set[str]:
    """Names a function's source reads without binding them, beyond builtins and operator globals."""
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound - set(dir(builtins)) - set(OPERATOR_GLOBALS)


def stateful_reason(source: str | None, func: Callable) -> str | None:
    """Why `func` must not be probed: it may keep state between calls, or it breaks the operator
    rules (None when it can be probed).

    Probe calls must not change what the run does later, so only operators that keep no state
    between calls are probed: no module-level mutable values, no ``global`` statements, no
    mutable default arguments, no closure, no attributes set on functions. A pure function of
    its three arguments (and the seeded random streams) gives the same outputs whether or not
    it was probed first.
    """
    if getattr(func, "__closure__", None):
        return "it is a closure"
    if any(isinstance(v, (list, dict, set, bytearray)) for v in (getattr(func, "__defaults__", None) or ())):
        return "it has a mutable default argument"
    if source is None:
        return "its source is not available to check it keeps no state"
    try:
        tree = parse_source(source)
    except SyntaxError:
        return "its source does not parse"
    # code outside the operator rules (I/O, processes, signals ...) may do anything when called
    # on the probe inputs; it runs exactly as it is told to, and no more often
    violation = policy_violation(source, tree=tree)
    if violation is not None:
        return f"its source breaks the operator rules: {violation}"
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = node.value
            if value is not None and not _immutable_literal(value):
                return f"it keeps module-level state (line {node.lineno})"
    functions = _function_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            return f"it declares global {', '.join(node.names)} (line {node.lineno})"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                if not _immutable_literal(default) and not isinstance(default, (ast.Name, ast.Attribute)):
                    return f"it has a mutable default argument (line {default.lineno})"
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                        t.value.id in functions:
                    return f"it sets an attribute on a function (line {node.lineno})"
    return None


def _immutable_literal(node: ast.AST) -> bool:
    """An expression of constants, tuples and arithmetic on them (e.g. 1e-9, (0, 1), -1, 2**31)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(_immutable_literal(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _immutable_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _immutable_literal(node.left) and _immutable_literal(node.right)
    if isinstance(node, ast.Attribute):  # e.g. math.inf, np.inf
        return isinstance(node.value, ast.Name) and node.value.id in OPERATOR_GLOBALS
    if isinstance(node, ast.Call):  # float("inf"), frozenset(...) of literals
        return isinstance(node.func, ast.Name) and node.func.id in ("float", "int", "frozenset", "tuple") \
            and all(_immutable_literal(a) for a in node.args) and not node.keywords
    return False


def _function_names(tree: ast.AST) -> set[str]:
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


# ============================================================================ compiled twins

@dataclass
class _Build:
    """One source's compiled twin: looked up, being built in a background thread, or done."""

    source: str
    outcome: Any = None              # glns.compiler.CompileOutcome once known
    module: Any = None               # the loaded extension module
    error: str | None = None         # why there is no usable module
    thread: threading.Thread | None = None
    spawned: threading.Event = field(default_factory=threading.Event)  # its build process runs

    def ready(self) -> bool:
        return self.thread is None or not self.thread.is_alive()

    def function(self, name: str) -> Callable | None:
        """The compiled entry function (None, with self.error set, when there is none)."""
        if self.module is None and self.error is None:
            if self.outcome is None or not self.outcome.ok:
                status = getattr(self.outcome, "status", "unavailable")
                self.error = f"not compiled ({status}): {getattr(self.outcome, 'reason', '')}"
            else:
                from glns import compiler

                try:
                    self.module = compiler.load_module(self.outcome, OPERATOR_GLOBALS)
                except Exception as exc:
                    self.error = f"compiled module does not load: {type(exc).__name__}: {exc}"
        if self.module is None:
            return None
        func = getattr(self.module, name, None)
        if func is None or not callable(func):
            self.error = f"compiled module has no function {name!r}"
            return None
        return func


_BUILDS: dict[str, _Build] = {}
_ONE_BACKGROUND_BUILD = threading.Lock()
_BUILDS_LOCK = threading.Lock()


_UNAVAILABLE_NOTED: list[str] = []


def _note_unavailable(reason: str) -> None:
    """Say once per process that operators run interpreted because compiling cannot work here
    (every operator's form_reason says it too; once is enough for a log)."""
    if not _UNAVAILABLE_NOTED:
        _UNAVAILABLE_NOTED.append(reason)
        logger.info("Python operators run interpreted: compiling is unavailable (%s)", reason)


def _build_for(source: str, mode: str) -> _Build | None:
    """The process-wide _Build of `source`: a cache hit, a blocking build ("wait") or a
    background one ("auto"). None when compiling cannot work here at all."""
    from glns import compiler

    key = source  # (a str caches its hash: looking it up again at every binding is cheap)
    with _BUILDS_LOCK:
        build = _BUILDS.get(key)
        if build is not None:
            return build
        build = _Build(source)
        _BUILDS[key] = build
    # compile="cached" looks again at every binding (a build elsewhere may have landed): cheaply
    build.outcome = compiler.lookup(source, explain=mode != "cached")
    if build.outcome is not None:
        return build
    unavailable = compiler.unavailable_reason()
    if unavailable is not None:
        build.error = unavailable
        _note_unavailable(unavailable)
        return build
    if mode == "wait":
        build.outcome = compiler.compile_source(source)
        return build
    if mode == "cached":
        build.error = "not in the compiled-operator cache (compile='cached' builds nothing)"
        with _BUILDS_LOCK:  # a later "auto" or "wait" binding may still build it
            _BUILDS.pop(key, None)
        return build

    def run() -> None:
        try:
            with _ONE_BACKGROUND_BUILD:  # one at a time: they are for later, not for now
                build.outcome = compiler.compile_source(source, background=True,
                                                        on_spawn=build.spawned.set)
        except Exception as exc:  # never let a background build take the process down
            build.error = f"compile failed: {type(exc).__name__}: {exc}"
            logger.warning("background build of an operator failed: %s", build.error)

    # a daemon thread: a script that ends does not wait for its build; the build process
    # finishes on its own and fills the cache for the next run (see _let_builds_start)
    build.thread = threading.Thread(target=run, name="glns-compile", daemon=True)
    build.thread.start()
    _register_exit_hook()
    return build


_EXIT_HOOK: list[bool] = []
#: at exit, how long to wait for pending background builds to start their build process
EXIT_WAIT_SECONDS = 2.0


def _register_exit_hook() -> None:
    if not _EXIT_HOOK:
        import atexit

        atexit.register(_let_builds_start)
        _EXIT_HOOK.append(True)


def _let_builds_start() -> None:
    """At interpreter exit: give background builds that have not started their build process
    yet a moment to do so (bounded), so that a short script still fills the cache."""
    import time

    deadline = time.monotonic() + EXIT_WAIT_SECONDS
    for build in list(_BUILDS.values()):
        if build.thread is not None and build.thread.is_alive():
            build.spawned.wait(max(0.0, deadline - time.monotonic()))


def precompile(source: str, params: Any) -> None:
    """Start building the compiled twin of `source` in the background (when `params` allow
    compiling), so that the processes that run it later find it in the cache. Never runs the
    code: the evolution controller calls this when it admits an operator."""
    if accelerate_settings(params)[1] in ("auto", "wait"):  # not "cached" or "off"
        _build_for(source, "auto")


# ============================================================================ negotiation

#: the speed-up a form needs over the reference, on the synthetic probes and on the recorded calls
MIN_GAIN = 0.1

#: a form is decided after the operator's first RECORD_CALLS calls in the run, or sooner once
#: the recorded calls took RECORD_SECONDS (a slow operator is decided on fewer calls)
RECORD_CALLS, RECORD_SECONDS = 5, 0.25


class Recording:
    """The first calls of a bound operator in its reference form, kept as probes."""

    def __init__(self, problem: Any) -> None:
        self.problem = problem
        self.calls: list[RecordedCall] = []
        self.seconds = 0.0

    def record(self, run: Callable[[Any, Any], Any], first: Any, second: Any) -> Any:
        """run(first, second), keeping the inputs, the random state and the output.

        A call with nothing to do (no node to remove or to insert) is no evidence: most of an
        operator's code does not run in it, so it is not kept."""
        if not _has_work(second):
            return run(first, second)
        inputs = (fresh_copy(first), fresh_copy(second), random.getstate(), np.random.get_state())
        t0 = time.perf_counter()
        out = run(first, second)   # a call that raises is no evidence: nothing kept
        seconds = time.perf_counter() - t0
        try:
            image = canonical(out)
        except Exception:   # an output whose repr raises: the core will refuse it anyway
            return out
        self.calls.append(RecordedCall(self.problem, *inputs, image, seconds))
        self.seconds += seconds
        return out

    def enough(self) -> bool:
        return len(self.calls) >= RECORD_CALLS or (bool(self.calls) and self.seconds >= RECORD_SECONDS)


def _has_work(second: Any) -> bool:
    """Whether a call's second argument asks for work: a count >= 1 or a non-empty node list."""
    try:
        return len(second) > 0
    except TypeError:
        try:
            return second >= 1
        except TypeError:
            return True


_DECISIONS: dict[tuple, tuple[Negotiation, Any]] = {}
_DECISIONS_LOCK = threading.Lock()


def _decision_key(op: Any, problem: Any, views: str, compiled: Callable | None, op_key: tuple) -> tuple:
    python_ok = problem.n_nodes <= MAX_PYTHON_VIEW_NODES
    return (op_key, op.kind, problem.kind, op.convention, views, python_ok, compiled is not None,
            _coincident(problem, python_ok))


def _coincident(problem: Any, python_ok: bool) -> bool:
    """Whether a decision on problem is one for instances with coincident nodes: there the
    python view parts from the numpy view (x / 0.0), so a decision made without them does not
    hold. (Compiled numpy forms are exact everywhere: above the python view's size it does not
    matter.)"""
    return python_ok and has_coincident_nodes(problem)


def _candidates(op: Any, problem: Any, views: str, compiled: Callable | None) -> list[tuple[Form, Callable]]:
    python_ok = problem.n_nodes <= MAX_PYTHON_VIEW_NODES
    candidates: list[tuple[Form, Callable]] = []
    # with a compiled twin, the interpreted python view is not tried: on the offline corpus
    # and the paper-style sets it is never faster than the twin on the same view by more
    # than timing noise, and each candidate costs replayed calls of the first instance
    if views == "auto" and python_ok and compiled is None:
        candidates.append((Form("python"), op.func))
    if compiled is not None:
        if views in ("auto", "numpy"):
            candidates.append((Form("numpy", True), compiled))
        if views in ("auto", "python") and python_ok:
            candidates.append((Form("python", True), compiled))
    return candidates


def _cached_decision(key: tuple) -> Negotiation | None:
    with _DECISIONS_LOCK:
        hit = _DECISIONS.get(key)
    return None if hit is None else hit[0]


_NEGOTIATED = [0]


def negotiations() -> int:
    """How many forms this process negotiated (recorded calls replayed, probes run); decisions
    found in this process, on disk or in a task are not counted."""
    return _NEGOTIATED[0]


def _stored_place(op: Any, problem: Any, views: str, compiled: Callable | None) -> tuple[str, str] | None:
    """(operator id, context) under which op's decision on problem's kind is kept, or None for
    an operator without source (a decision on it lives only in this process)."""
    source, entry, _, _, op_id = _static_facts(op)
    if op_id is None or source is None:
        return None
    python_ok = problem.n_nodes <= MAX_PYTHON_VIEW_NODES
    # a decision on a compiled twin holds for that build only (a new Cython, compiler or
    # glns release builds another twin, which is decided afresh)
    twin = _twin_key(op_id, source) if compiled is not None else ""
    return (op_id, decisions.context_key(entry or "", op.kind, problem.kind, op.convention, views,
                                         python_ok, twin, _coincident(problem, python_ok)))


_TWIN_KEYS: dict[str, str] = {}


def _twin_key(op_id: str, source: str) -> str:
    """The compile-cache key of a source's twin, computed once per process."""
    key = _TWIN_KEYS.get(op_id)
    if key is None:
        from glns import compiler

        key = _TWIN_KEYS[op_id] = compiler.cache_key(source)
    return key


def _known_decision(op: Any, problem: Any, views: str, compiled: Callable | None,
                    op_key: tuple) -> tuple[tuple, Negotiation | None]:
    """(cache key, the decision made earlier in this process or kept elsewhere, or None)."""
    key = _decision_key(op, problem, views, compiled, op_key)
    return key, _cached_decision(key) or _stored_decision(op, problem, views, compiled, key)


def _stored_decision(op: Any, problem: Any, views: str, compiled: Callable | None,
                     key: tuple) -> Negotiation | None:
    """The decision made earlier in another process (on disk, or carried by this task), now
    also cached in this process; None when there is none."""
    place = _stored_place(op, problem, views, compiled)
    hit = None if place is None else decisions.lookup(*place)
    if hit is None:
        return None
    label, reason = hit
    form = Form(label.split("+")[-1], label.startswith("compiled+"))
    if form.compiled and compiled is None:
        return None
    decision = Negotiation(form, (), f"{reason} (decided earlier, adopted without probes)")
    _remember(_DECISIONS, key, (decision, op.func))
    return decision


def _decide(op: Any, problem: Any, views: str, compiled: Callable | None, timeout: float | None,
            op_key: tuple, recorded: list[RecordedCall] | None) -> Negotiation:
    """The form of op on problem's kind, from its recorded calls (or, for a forced python view,
    the synthetic probes); cached per process."""
    key, hit = _known_decision(op, problem, views, compiled, op_key)
    if hit is not None:
        return hit
    python_ok = key[5]
    candidates = _candidates(op, problem, views, compiled)
    negotiated = False   # (probes run: counted, and the decision is kept)
    if views == "python" and python_ok:
        negotiated = bool(candidates)
        forced = Form("python")
        decision = negotiate(op.func, op.kind, problem, op.convention,
                             candidates=candidates, timeout=timeout) if candidates else None
        if decision is None or not decision.chosen.compiled:
            decision = Negotiation(forced, decision.trials if decision else (),
                                   "python view forced (views='python'), not probed")
    elif candidates and recorded:
        negotiated = True
        decision = _decide_on_both(op, problem, candidates, timeout, recorded) \
            if needs_synthetic_evidence(problem) else \
            negotiate(op.func, op.kind, None, op.convention, candidates=candidates, timeout=timeout,
                      recorded=recorded)
    else:
        why = "views='numpy'" if views == "numpy" else \
            f"more than {MAX_PYTHON_VIEW_NODES} nodes" if not python_ok else "nothing else to try"
        decision = Negotiation(Form("numpy"), (), f"numpy arrays ({why})")
    _remember(_DECISIONS, key, (decision, op.func))  # (keeps func alive: see _operator_key)
    if negotiated:
        _NEGOTIATED[0] += 1
        place = _stored_place(op, problem, views, compiled)
        if place is not None:
            decisions.remember(*place, decision.chosen.label(), decision.reason)
    logger.debug("%s operator %r on %s runs as %s: %s", op.kind, op.name, problem.kind,
                 decision.chosen.label(), decision.reason)
    return decision


def _decide_on_both(op: Any, problem: Any, candidates: list[tuple[Form, Callable]],
                    timeout: float | None, recorded: list[RecordedCall]) -> Negotiation:
    """The form that is identical on the synthetic probes and on the recorded calls, chosen
    by its speed on the recorded calls: for instances whose recorded calls are weak evidence
    (:func:`needs_synthetic_evidence`: on an instance of one customer a repair never compares
    two distances; with coincident nodes the views part only on the calls that meet them).
    Where the reference itself fails or stalls on a synthetic probe (an input the run never
    gives it), the recorded calls decide alone."""
    synthetic = negotiate(op.func, op.kind, problem, op.convention, candidates=candidates,
                          timeout=timeout)
    if synthetic.trials and synthetic.trials[0].identical:
        # identical there, and faster there too: five recorded calls alone time noisily
        ref = synthetic.trials[0].seconds
        passed = {t.form for t in synthetic.trials[1:]
                  if t.identical and t.seconds > 0 and ref / t.seconds >= 1.0 + MIN_GAIN}
        kept = [(form, func) for form, func in candidates if form in passed]
        also = " and on the synthetic probes"
    else:
        kept, also = candidates, f" (the synthetic probes are no evidence here: {synthetic.reason})"
    if not kept:
        return Negotiation(Form("numpy"), synthetic.trials,
                           f"numpy: no other form is identical and {MIN_GAIN:.0%} faster on the synthetic "
                           f"probes ({synthetic.reason})")
    decision = negotiate(op.func, op.kind, None, op.convention, candidates=kept, timeout=timeout,
                         recorded=recorded)
    if not decision.chosen.compiled and decision.chosen.view == "numpy":
        return decision
    reason = decision.reason.replace("recorded calls of the run", "recorded calls of the run" + also, 1)
    return Negotiation(decision.chosen, decision.trials, reason)


def _operator_key(op: Any) -> tuple:
    """What identifies an operator in this process's caches: its source and entry, else its
    function object (kept alive by the cache entry, so its id stays unique)."""
    if op.source is not None:
        return ("source", op.source, op.func.__name__)
    return ("callable", id(op.func))


#: entries a per-process cache keeps (a long evolution admits thousands of operators)
_CACHE_SIZE = 4096


def _remember(cache: dict, key: Any, value: Any) -> None:
    """cache[key] = value under the lock, dropping the oldest entry past _CACHE_SIZE."""
    with _DECISIONS_LOCK:
        if len(cache) >= _CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = value


_RECORDING_REASON = ("numpy arrays: its first calls of the run are recorded as the evidence for "
                     "faster forms, and the run ended before {} were")


class _Pending:
    """What a bound operator waits for before its form is final: enough recorded calls, then
    (when a compiled twin is being built in the background) the build.

    Checked by the bound operator before each call (in the thread that runs the solver, so the
    replayed calls never race with the run's own use of ``random``/``np.random``)."""

    def __init__(self, op: Any, problem: Any, views: str, timeout: float | None,
                 build: _Build | None, compiled: Callable | None, op_key: tuple) -> None:
        self.op, self.problem, self.views, self.timeout = op, problem, views, timeout
        self.build, self.compiled, self.op_key = build, compiled, op_key
        self.recording: Recording | None = None
        #: a form was chosen on the recorded calls (then only the build can change it)
        self.decided = False
        #: why it is not compiled, said after whatever form is chosen (setting_note: because of
        #: where it runs, said whether or not it is compiled)
        self.note = self.setting_note = ""
        #: said once the run switched to a compiled twin that landed during it
        self.switched = ""

    def start_recording(self, bound: BoundPythonOperator) -> None:
        self.recording = Recording(self.problem)
        bound.recorder = self.recording
        bound.upgrade = self

    def ready(self) -> bool:
        if self.recording is not None and self.recording.enough() and not self.decided:
            return True
        return self.build is not None and self.build.ready() and (
            self.recording is None or bool(self.recording.calls))

    def apply(self, bound: BoundPythonOperator) -> None:
        switched = ""
        if self.build is not None and self.build.ready():
            build, self.build = self.build, None
            self.compiled = build.function(self.op.func.__name__)
            if self.compiled is None:
                self.note += f"; {build.error}"
                bound.form_reason += f"; {build.error}"
                logger.debug("%s operator %r stays interpreted: %s", self.op.kind, self.op.name, build.error)
                if self.recording is None or not self.recording.enough():
                    bound.upgrade = self if self.recording is not None else None
                    return
            else:
                switched = self.switched = " (switched to after the background build, during the run)"
        if self.recording is None:      # decided at binding: now with the twin decided too?
            known = _known_decision(self.op, self.problem, self.views, self.compiled, self.op_key)[1]
            if known is not None:
                _apply(bound, self.op, self.problem, known, self.compiled)
                bound.form_reason += self.switched + self.setting_note
                return
            self.start_recording(bound)  # no: record now, for the new candidates
            return
        if not self.recording.enough():  # (a build that landed early waits for the evidence)
            bound.upgrade = self
            return
        if self.decided and not switched:      # (a build that failed: nothing new to try)
            return
        self.decided = True
        bound.recorder = None
        decision = _decide(self.op, self.problem, self.views, self.compiled, self.timeout, self.op_key,
                           self.recording.calls)
        _apply(bound, self.op, self.problem, decision, self.compiled)
        bound.form_reason += (self.note if self.compiled is None else "") + self.switched + self.setting_note
        if self.build is not None:      # still building: decide again when it is ready
            bound.upgrade = self


def _apply(bound: BoundPythonOperator, op: Any, problem: Any, decision: Negotiation,
           compiled: Callable | None) -> None:
    form = decision.chosen
    func = compiled if form.compiled else op.func
    bound.set_form(func, view_data(problem, form.view), view_of_matrix(problem, form.view),
                   form.label(), decision.reason, decision)


_STATIC: dict[tuple, tuple] = {}


def _static_facts(op: Any) -> tuple[str | None, str | None, str, str | None, str | None]:
    """(source, entry, why not compilable, why not probed, id of its kept decisions) of op,
    computed once per operator:
    a sandbox worker binds the same operator to every instance of every episode."""
    key = _operator_key(op)
    facts = _STATIC.get(key)
    if facts is None:
        source, entry, why_not = compilable_source(op)
        op_id = None if source is None or entry is None else decisions.operator_id(source)
        facts = (source, entry, why_not, stateful_reason(source, op.func), op_id, op.func)
        _remember(_STATIC, key, facts)
    return facts[:5]


def bind_python(op: Any, problem: Any, timeout: float | None, params: Any) -> BoundPythonOperator:
    """A Python operator bound to `problem` in the form chosen for it (see the module doc)."""
    views, mode = accelerate_settings(params)
    note = ""
    if mode != "off" and timeout and not limit_stops_compiled_code():
        # outside the main thread the limit stops interpreted code only (glns.operators.watchdog)
        mode, note = "off", ("; not compiled: outside the main thread the time limit stops only "
                             "interpreted code (op_timeout=None allows compiled forms)")
    bound = _bind(op, problem, timeout, views, mode, note)
    bound.form_reason += note
    return bound


def _bind(op: Any, problem: Any, timeout: float | None, views: str, mode: str,
          setting_note: str = "") -> BoundPythonOperator:
    bound = BoundPythonOperator(op.func, view_data(problem, "numpy"),
                                view_of_matrix(problem, "numpy"), op.convention, timeout)
    if views == "numpy" and mode == "off":
        bound.form_reason = "numpy arrays (views='numpy', compile='off')"
        return bound
    source, entry, why_not, state, _ = _static_facts(op)
    if state is not None:  # probe calls could change what it does later: no probes
        if views == "python" and problem.n_nodes <= MAX_PYTHON_VIEW_NODES:
            _apply(bound, op, problem, Negotiation(Form("python"), (), "python view forced (views='python'), "
                                                   "not probed"), None)
        else:
            bound.form_reason = f"numpy arrays, not probed: {state}"
        return bound
    build, note = None, ""
    if mode != "off":
        if source is None:
            note = f"; not compiled: {why_not}"
        else:
            build = _build_for(source, mode)
    op_key = _operator_key(op)
    compiled = None
    ready_at_bind = build is not None and build.ready()
    if ready_at_bind:
        compiled = build.function(op.func.__name__)
        if compiled is None:
            note = f"; {build.error}"
    pending = _Pending(op, problem, views, timeout, None if ready_at_bind else build, compiled, op_key)
    key, decision = _known_decision(op, problem, views, compiled, op_key)
    forced = views == "python" and key[5]
    if decision is None and (forced or not _candidates(op, problem, views, compiled)):
        decision = _decide(op, problem, views, compiled, timeout, op_key, None)
    if decision is not None:       # decided in this process before, or nothing to try
        _apply(bound, op, problem, decision, compiled)
        bound.form_reason += note
        if pending.build is not None:   # (it may have finished while we negotiated)
            bound.upgrade = pending
        return bound
    bound.form_reason = _RECORDING_REASON.format(RECORD_CALLS) + note
    pending.note, pending.setting_note = note, setting_note
    pending.start_recording(bound)
    return bound
