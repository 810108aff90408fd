"""Negotiating the form an operator runs in: which view of the data, compiled or not.

A form other than the reference (plain function, numpy view: what operators always got) is
taken only if, on a set of probe inputs with identical random state, it returns exactly what
the reference returns on every probe and raises nothing, and it is measurably faster; timing
can only change which identical form runs. The probes are, in a run, the operator's own first
calls (:class:`RecordedCall`: the inputs, the random state and the output the run really had)
and, where no run exists (``glns compile``), synthetic inputs built from a problem
(:func:`probe_cases`).

No probe call may take long: each runs under a limit derived from what a normal call of the
operator costs (:func:`call_limit`), never the user's ``op_timeout``, so an operator that hangs
on some input costs at most that bound.
"""

from __future__ import annotations

import copy
import gc
import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from glns import datasets
from glns._core._alns import OperatorTimeout
from glns.operators.bridge import time_limit
from glns.operators.views import MAX_PYTHON_VIEW_NODES, VIEWS, cached_per_problem, view_data, view_of_matrix
from glns.problems import Problem, euclidean_distances, problem_class
from glns.problems.solutions import random_solution
from glns.rng import SplitMix64

__all__ = ["Form", "Trial", "Negotiation", "ProbeCase", "RecordedCall", "probe_cases", "probe_problem",
           "negotiate", "canonical", "call_limit", "fresh_copy", "has_coincident_nodes",
           "needs_synthetic_evidence", "MIN_PROBE_CUSTOMERS", "PROBE_NODES", "PROBE_FLOOR", "FIRST_PROBE_LIMIT"]

#: what the core itself catches from an operator (OperatorTimeout is a BaseException)
_FAILURES = (Exception, SystemExit, OperatorTimeout)

#: nodes of the probe instances: the bound problem's first nodes, at most this many
PROBE_NODES = 50
#: removal counts per probe instance, as fractions of its customers (at least 1)
_COUNTS = ((0.0, 0.25, 0.5), (0.0, 0.1, 0.2, 0.4))

#: the limit of a probe call: PROBE_SLOWDOWN times what a normal call costs, at least
#: PROBE_FLOOR seconds; a synthetic probe before any call was timed gets FIRST_PROBE_LIMIT
#: (probe instances have at most PROBE_NODES nodes)
PROBE_SLOWDOWN, PROBE_FLOOR, FIRST_PROBE_LIMIT = 20.0, 0.05, 1.0

#: a candidate replayed on recorded calls is dropped once its time is this many times the
#: fastest candidate's on the same calls (it would not be chosen)
PRUNE_SLOWER = 1.5
_PRUNED = ", not replayed further"

#: timing: per probe the best of at least 2 rounds (the equality round is the first), of up to
#: 5 while the rounds so far took less than the budget in seconds (cheap operators are the
#: ones whose times are noisy)
_MIN_ROUNDS, _MAX_ROUNDS, _ROUNDS_BUDGET = 2, 5, 0.1


@dataclass(frozen=True)
class Form:
    """One way to run an operator: a view of the data ("numpy"/"python"), compiled or not."""

    view: str
    compiled: bool = False

    def __post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"unknown view {self.view!r}; expected one of {', '.join(VIEWS)}")

    def label(self) -> str:
        """"numpy", "python", "compiled+numpy" or "compiled+python"."""
        return f"compiled+{self.view}" if self.compiled else self.view


REFERENCE = Form("numpy")


@dataclass(frozen=True)
class Trial:
    """How one form did: identical to the reference on every probe, and its time."""

    form: Form
    #: every probe output equals the reference's and nothing was raised
    identical: bool
    #: sum over the probes of each call's best time over the rounds (nan when not timed)
    seconds: float
    #: the first difference or exception, e.g. "probe 3: output differs at [1][0]"
    error: str | None


@dataclass(frozen=True)
class Negotiation:
    """The form chosen for an operator, every trial (the reference first), and why."""

    chosen: Form
    trials: tuple[Trial, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (times in seconds, None when not measured)."""
        ref = self.trials[0].seconds if self.trials else math.nan

        def finite(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "chosen": self.chosen.label(),
            "reason": self.reason,
            "trials": [{"form": t.form.label(), "identical": t.identical,
                        "seconds": finite(t.seconds),
                        "speedup": finite(ref / t.seconds) if t.seconds > 0 else None,
                        "error": t.error} for t in self.trials],
        }


@dataclass(frozen=True)
class ProbeCase:
    """One probe call: ``op(first, second, data of problem)`` after seeding with `seed`."""

    problem: Problem
    #: a complete solution (destroy) or a partial one (repair)
    first: Any
    #: destroy_cnt (destroy) or the removed nodes, in the order a destroy gave them (repair)
    second: Any
    #: random and np.random are seeded with this before the call, for every form
    seed: int

    def prepare(self, view: str, convention: str) -> tuple[Any, Any, Any]:
        """Fresh copies of the inputs and the third argument in `view`; seeds the generators."""
        random.seed(self.seed)
        np.random.seed(self.seed)
        return _inputs(self.problem, self.first, self.second, view, convention)


@dataclass(frozen=True)
class RecordedCall:
    """One call of an operator in a run, in its reference form: the evidence for other forms.

    first, second: copies of the inputs taken before the call; random_state, numpy_state: the
    generators' states the call started from; image: :func:`canonical` of what it returned;
    seconds: how long it took.
    """

    problem: Problem
    first: Any
    second: Any
    random_state: Any
    numpy_state: Any
    image: Any
    seconds: float

    def prepare(self, view: str, convention: str) -> tuple[Any, Any, Any]:
        random.setstate(self.random_state)
        np.random.set_state(self.numpy_state)
        return _inputs(self.problem, self.first, self.second, view, convention)


def _inputs(problem: Problem, first: Any, second: Any, view: str, convention: str) -> tuple[Any, Any, Any]:
    third = view_of_matrix(problem, view) if convention == "distance_matrix" else dict(view_data(problem, view))
    return fresh_copy(first), fresh_copy(second), third


def fresh_copy(value: Any) -> Any:
    """A deep copy of an operator's input: what the core hands out (ints, lists of ints, lists
    of such lists) copied directly, anything else by ``copy.deepcopy``."""
    t = type(value)
    if t is int:
        return value
    if t is list:
        out = []
        for item in value:
            ti = type(item)
            if ti is int:
                out.append(item)
            elif ti is list:
                out.append(fresh_copy(item))
            else:
                return copy.deepcopy(value)
        return out
    return copy.deepcopy(value)


def call_limit(seconds: Sequence[float], timeout: float | None = None) -> float:
    """The time limit of a probe call of an operator whose normal calls took `seconds`:
    PROBE_SLOWDOWN times their median, at least PROBE_FLOOR, at most `timeout` (the run's
    op_timeout, if any); FIRST_PROBE_LIMIT when nothing was timed yet."""
    finite = sorted(x for x in seconds if math.isfinite(x))
    limit = max(PROBE_FLOOR, PROBE_SLOWDOWN * finite[len(finite) // 2]) if finite else FIRST_PROBE_LIMIT
    return min(limit, timeout) if timeout else limit


# ---------------------------------------------------------------------------------------------
# Probe inputs


def _sub_problem(problem: Problem, nodes: int, harsh: bool) -> Problem:
    """The instance on the first `nodes` nodes of `problem` (its distances and demands).

    harsh: a twin of the same size whose distances are integral (rounded after scaling the
    largest to 100) with two coincident nodes, 1 and 2: a zero off-diagonal distance, where
    NumPy and Python arithmetic part (x / 0.0 is inf in one and an exception in the other).
    """
    m = min(nodes, problem.n_nodes)
    coords = None if problem.coords is None else np.array(problem.coords[:m], dtype=float)
    # never the whole matrix of a coordinate instance: only its first m nodes are needed
    dist = (np.array(problem.distances[:m, :m], dtype=float) if problem.explicit_distances
            else euclidean_distances(coords, problem.rounding))
    extra = problem.extra_parts_of(np.arange(m))
    if harsh and m > 2:
        top = float(dist.max())
        dist = np.rint(dist * (100.0 / top)) if top > 0 else dist
        dist[1, :], dist[:, 1] = dist[2, :], dist[:, 2]
        dist[1, 2] = dist[2, 1] = dist[1, 1] = 0.0
        if coords is not None:
            coords[1] = coords[2]
        if problem.timed:
            extra = _harsh_times(extra, dist, 100.0 / top if top > 0 else 1.0)
    name = f"probe-{problem.kind}{m}{'-harsh' if harsh else ''}"
    return type(problem).from_parts(coords, dist, problem.demands[:m], problem.capacity, name=name,
                                    **extra)


def _harsh_times(extra: dict, dist: np.ndarray, factor: float) -> dict:
    """The time data of a harsh twin: scaled as its distances were, the travel times the
    twin's distances, and every due time moved out as far as the twin's rounding and its
    coincident nodes need for a route of one customer to stay feasible."""
    windows = np.array(extra["time_windows"], dtype=float) * factor
    service = np.array(extra["service_times"], dtype=float) * factor
    windows[1:, 1] = np.maximum(windows[1:, 1], windows[0, 0] + dist[0, 1:])
    back = windows[1:, 0].clip(min=windows[0, 0] + dist[0, 1:]) + service[1:] + dist[1:, 0]
    windows[0, 1] = max(windows[0, 1], float(back.max(initial=0.0)))
    return {**extra, "time_windows": windows, "service_times": service, "durations": None}


def _remove(problem: Problem, solution: Any, count: int, rng: SplitMix64) -> tuple[Any, list[int]]:
    """Remove `count` random nodes; empty routes are dropped, as the core does."""
    routes = problem.routes_of(solution)
    nodes = [c for route in routes for c in route]
    for i in range(count):  # partial Fisher-Yates: the removed nodes in a random order
        j = i + rng.randrange(len(nodes) - i)
        nodes[i], nodes[j] = nodes[j], nodes[i]
    removed = nodes[:count]
    gone = set(removed)
    partial = [[c for c in route if c not in gone] for route in routes]
    return problem.solution_from_routes([route for route in partial if route]), removed


#: a problem with fewer customers than this lends its kind's generated probe instance
#: instead: on one or two customers most of an operator's code never runs
MIN_PROBE_CUSTOMERS = 10


def _cases(problem: Problem, operator_kind: str) -> tuple[ProbeCase, ...]:
    cases: list[ProbeCase] = []
    if problem.n_customers < MIN_PROBE_CUSTOMERS:
        problem = probe_problem(problem.kind)
    for harsh, fractions in zip((True, False), _COUNTS):
        sub = _sub_problem(problem, PROBE_NODES, harsh)
        customers = sub.n_customers
        for fraction in fractions:
            count = max(1, min(customers - 1 if customers > 1 else 1, int(fraction * customers)))
            seed = 7919 * (len(cases) + 1)
            rng = SplitMix64(seed)
            solution = random_solution(sub, rng)
            if operator_kind == "destroy":
                cases.append(ProbeCase(sub, solution, count, seed))
            else:
                partial, removed = _remove(problem, solution, count, rng)
                cases.append(ProbeCase(sub, partial, removed, seed))
    return tuple(cases)


def probe_cases(problem: Problem, operator_kind: str) -> list[ProbeCase]:
    """The probe inputs for an operator kind ("destroy"/"repair") bound to `problem`.

    Built from the problem itself, so that an operator only ever sees the kind of data the run
    would give it: the instance on its first nodes (at most ``PROBE_NODES``), and a twin of it
    with integral distances and two coincident nodes; on each, random feasible solutions
    (fixed seeds) and removal counts from 1 up to half the customers. Seven probes in all.
    Cached per problem while it lives.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a glns problem, got {type(problem).__name__}")
    if operator_kind not in ("destroy", "repair"):
        raise ValueError(f"operator kind must be destroy or repair, got {operator_kind!r}")
    return list(cached_per_problem(problem, ("probe", operator_kind), lambda: _cases(problem, operator_kind)))


def has_coincident_nodes(problem: Problem) -> bool:
    """Whether two distinct nodes of `problem` are at distance 0: where the python view and
    the numpy view part (x / 0.0 raises in one and is inf in the other). Cached per problem."""
    def build() -> bool:
        zero = np.asarray(view_data(problem, "numpy")["distance_matrix"]) == 0.0
        np.fill_diagonal(zero, False)
        return bool(zero.any())
    return cached_per_problem(problem, "coincident", build)


def needs_synthetic_evidence(problem: Problem) -> bool:
    """Whether a run's recorded calls on `problem` are too weak alone to decide a form that
    holds for every instance of its kind: too few customers for most of an operator's code to
    run (:data:`MIN_PROBE_CUSTOMERS`), or coincident nodes, where the views part only on the
    calls that meet them (the synthetic probes' harsh twin has such a pair; above the python
    view's size only the exact compiled numpy form is a candidate, so it does not matter)."""
    return problem.n_customers < MIN_PROBE_CUSTOMERS or (
        problem.n_nodes <= MAX_PYTHON_VIEW_NODES and has_coincident_nodes(problem))


def probe_problem(problem_kind: str) -> Problem:
    """A generated instance (50 nodes, the paper's recipe) to probe operators on when there is
    no problem to bind them to (``glns compile``)."""
    variant = problem_class(problem_kind)
    return datasets.generate(variant.kind, PROBE_NODES - variant.first_node, 9102)


# ---------------------------------------------------------------------------------------------
# Comparing outputs


def canonical(output: Any) -> Any:
    """A comparable image of an operator's output: equal images mean the core loads the same.

    The core (``sol_load``) iterates any container but str/bytes/dict and takes as a node id
    anything ``operator.index`` accepts except floats. Accordingly:

    - list and tuple (exact types) -> list of the images of the items;
    - numpy array -> the image of what iterating it yields (``arr.tolist()``; numpy booleans
      keep their own tag since the core refuses them where it takes a Python bool);
    - int and numpy integer -> ``("i", int)``; float and numpy floating -> ``("f", float)``;
    - bool -> ``("b", v)``, numpy bool -> ``("nb", v)``;
    - anything else (sets, dicts, strings, generators, subclasses) -> ``("repr", type, repr)``.

    The rule errs on the strict side: some outputs the core treats alike still differ here
    (True and 1, a route left empty, a generator), which only keeps an operator on its
    reference form.
    """
    t = type(output)
    if t is list or t is tuple:
        return [canonical(x) for x in output]
    if t is bool:
        return ("b", output)
    if t is int or isinstance(output, np.integer):
        return ("i", int(output))
    if t is float or isinstance(output, np.floating):
        return ("f", float(output))
    if isinstance(output, np.bool_):
        return ("nb", bool(output))
    if t is np.ndarray:
        if output.dtype.kind == "b":
            return _numpy_bools(output.tolist())
        return canonical(output.tolist())
    return ("repr", t.__qualname__, repr(output))


def _numpy_bools(items: Any) -> Any:
    if isinstance(items, list):
        return [_numpy_bools(x) for x in items]
    return ("nb", items)


def _difference(a: Any, b: Any, path: str = "") -> str:
    """Where image a first differs from b: " at [1][3]", " at [1]: length 4 vs 3", or ""."""
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _difference(x, y, f"{path}[{i}]")
        return f" at {path or 'the top level'}: length {len(a)} vs {len(b)}"
    return f" at {path}" if path else ""


# ---------------------------------------------------------------------------------------------
# Negotiation


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 120 else text[:117] + "..."


def _call(func: Callable, case: Any, view: str, convention: str,
          limit: float | None) -> tuple[Any, float]:
    """One probe call on fresh copies of the inputs; returns the output's image and the time."""
    first, second, third = case.prepare(view, convention)
    gc_was_on = gc.isenabled()
    gc.disable()  # as timeit does: a collection would bill the garbage of others to this call
    try:
        t0 = time.perf_counter()
        with time_limit(limit):
            out = func(first, second, third)
        seconds = time.perf_counter() - t0
    finally:
        if gc_was_on:
            gc.enable()
    return canonical(out), seconds  # at once: the operator may reuse what it returned


def negotiate(func: Callable, operator_kind: str, problem: Problem | None, convention: str, *,
              candidates: Sequence[tuple[Form, Callable]] = (), timeout: float | None = None,
              min_gain: float = 0.1, recorded: Sequence[RecordedCall] | None = None) -> Negotiation:
    """Choose the form `func` runs in: the reference (``Form("numpy")``, `func` itself) or a
    candidate that gives identical output on every probe and is faster.

    recorded: the operator's own calls in a run (:class:`RecordedCall`), replayed as the
    probes: every candidate must give the recorded output, and is timed against the recorded
    call (one call per candidate and recorded call; the reference is not called again).
    Without them, the probes are built from `problem` (:func:`probe_cases`).
    candidates: (form, callable) pairs; by default ``[(Form("python"), func)]``.
    convention: "problem_data" or "distance_matrix" (the third argument, see
    ``bridge.third_argument_convention``). timeout: the run's per-call limit, an upper bound
    of every probe's own limit (:func:`call_limit`: 20 times a normal call, at least 50 ms).
    A candidate is chosen when its speed is at least ``1 + min_gain`` times the reference's
    (times summed over the probes; on synthetic probes each call's best of 2 to 5 rounds); the
    fastest such candidate wins. If the reference fails on a synthetic probe (or exceeds its
    limit) nothing else is tried. The caller's `random` and `np.random` states are restored. Whether the python view
    fits the real instance (``views.MAX_PYTHON_VIEW_NODES``) is the caller's check.
    """
    if convention not in ("problem_data", "distance_matrix"):
        raise ValueError(f"convention must be problem_data or distance_matrix, got {convention!r}")
    pairs = list(candidates) or [(Form("python"), func)]
    if any(form == REFERENCE for form, _ in pairs):
        raise ValueError("the reference form (numpy, not compiled) cannot be a candidate")
    if recorded is not None:
        if not recorded:
            raise ValueError("no recorded calls to negotiate on")
        cases: list[Any] = list(recorded)
    elif problem is None:
        raise ValueError("negotiate needs a problem or recorded calls")
    else:
        cases = probe_cases(problem, operator_kind)
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        if recorded is not None:
            return _replay(pairs, cases, convention, timeout, min_gain)
        return _negotiate(func, pairs, cases, convention, timeout, min_gain)
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def _round(func: Callable, pairs: list[tuple[Form, Callable]], live: list[int],
           cases: list[Any], convention: str, timeout: float | None,
           expected: list[Any], errors: list[str | None], best: list[list[float]],
           tag: str) -> str | None:
    """One pass over the probes, per probe the reference and then every live candidate.

    The first pass (empty `expected`) records the reference's images; a candidate that fails
    or differs gets its entry in `errors` and is not called again. best[0][i] and
    best[1 + j][i] keep the fastest time of probe i of the reference and of candidate j.
    Returns what the reference raised, or None.
    """
    first = not expected
    for i, case in enumerate(cases):
        # a recorded call's own time is what a normal call costs; a synthetic probe's, the
        # reference's earlier probes (and at most FIRST_PROBE_LIMIT for the first)
        normal = [case.seconds] if isinstance(case, RecordedCall) else [t for t in best[0][:i] if t < math.inf]
        limit = call_limit(normal, timeout)
        try:
            image, seconds = _call(func, case, REFERENCE.view, convention, limit)
        except OperatorTimeout:
            return f"probe {i + 1}{tag}: the reference took longer than its probe limit of {limit:.3g} s"
        except _FAILURES as exc:
            return f"probe {i + 1}{tag}: {_short(exc)}"
        if isinstance(case, RecordedCall) and image != case.image:
            return (f"probe {i + 1}{tag}: the reference does not give its recorded output again "
                    f"(it depends on more than its inputs and the seeded random state)")
        if first:
            expected.append(image)
        best[0][i] = min(best[0][i], seconds)
        limit = call_limit([seconds], timeout)
        for j in live:
            if errors[j] is None:
                form, cand = pairs[j]
                errors[j], cand_seconds = _check(cand, case, i + 1, form, convention, limit,
                                                 expected[i], tag)
                best[1 + j][i] = min(best[1 + j][i], cand_seconds)
    return None


def _negotiate(func: Callable, pairs: list[tuple[Form, Callable]], cases: list[Any],
               convention: str, timeout: float | None, min_gain: float) -> Negotiation:
    m = len(pairs)
    errors: list[str | None] = [None] * m
    expected: list[Any] = []
    # per form and probe the best time over the rounds: a disturbance (GC, another process)
    # costs one call of one round, not the form's whole round
    best = [[math.inf] * len(cases) for _ in range(m + 1)]
    spent = 0.0
    for rnd in range(_MAX_ROUNDS):
        live = [j for j in range(m) if errors[j] is None]
        if rnd and (not live or (rnd >= _MIN_ROUNDS and spent >= _ROUNDS_BUDGET)):
            break
        t0 = time.perf_counter()
        ref_error = _round(func, pairs, live, cases, convention, timeout, expected, errors, best,
                           " (timing round)" if rnd else "")
        spent += time.perf_counter() - t0
        if ref_error is not None and rnd == 0:
            trial = Trial(REFERENCE, False, math.nan, ref_error)
            return Negotiation(REFERENCE, (trial,),
                               f"numpy: the reference failed ({ref_error}); nothing else tried")
        if ref_error is not None:  # it passed before: flaky, or close to its time limit
            trials = (Trial(REFERENCE, False, sum(best[0]), ref_error),) \
                + _trials(pairs, errors, best)
            return Negotiation(REFERENCE, trials, f"numpy: the reference failed ({ref_error})")
    trials = (Trial(REFERENCE, True, sum(best[0]), None),) + _trials(pairs, errors, best)
    what = "recorded calls of the run" if isinstance(cases[0], RecordedCall) else "synthetic probes"
    return Negotiation(*_choose(trials, len(cases), min_gain, what))


def _replay(pairs: list[tuple[Form, Callable]], recorded: list[RecordedCall], convention: str,
            timeout: float | None, min_gain: float) -> Negotiation:
    """Every candidate once on every recorded call: its output must be the recorded one.

    The reference is not called again: its outputs and times are the recorded ones, so the
    evidence costs one call per candidate and recorded call. A candidate's time is that one
    call's (a recorded call is real work, not a microsecond probe), and a candidate that took
    more than PRUNE_SLOWER times the fastest one so far is not replayed further: it would not
    be chosen. Whichever identical form is chosen, only the speed of the run depends on it."""
    m = len(pairs)
    errors: list[str | None] = [None] * m
    seconds = [0.0] * m
    for i, case in enumerate(recorded):
        limit = call_limit([case.seconds], timeout)
        for j, (form, cand) in enumerate(pairs):
            if errors[j] is None:
                errors[j], took = _check(cand, case, i + 1, form, convention, limit, case.image, "")
                seconds[j] += took
        live = [j for j in range(m) if errors[j] is None]
        if len(live) > 1:
            fastest = min(live, key=lambda j: seconds[j])
            for j in live:
                if seconds[j] > PRUNE_SLOWER * seconds[fastest]:
                    errors[j] = (f"probe {i + 1}: {seconds[j] / seconds[fastest]:.1f}x the time of "
                                 f"{pairs[fastest][0].label()}{_PRUNED}")
    trials = (Trial(REFERENCE, True, sum(c.seconds for c in recorded), None),) + tuple(
        Trial(form, errors[j] is None, seconds[j] if errors[j] is None else math.nan, errors[j])
        for j, (form, _) in enumerate(pairs))
    return Negotiation(*_choose(trials, len(recorded), min_gain, "recorded calls of the run"))


def _trials(pairs: list[tuple[Form, Callable]], errors: list[str | None],
            best: list[list[float]]) -> tuple[Trial, ...]:
    return tuple(Trial(form, errors[j] is None,
                       sum(best[1 + j]) if errors[j] is None else math.nan, errors[j])
                 for j, (form, _) in enumerate(pairs))


def _check(cand: Callable, case: Any, i: int, form: Form, convention: str,
           limit: float | None, expected: Any, tag: str) -> tuple[str | None, float]:
    """Run a candidate on probe i: (None or what went wrong, the call's time)."""
    try:
        image, seconds = _call(cand, case, form.view, convention, limit)
    except OperatorTimeout:
        return f"probe {i}{tag}: took longer than its probe limit of {limit:.3g} s", math.inf
    except _FAILURES as exc:
        return f"probe {i}{tag}: {_short(exc)}", math.inf
    if image != expected:
        return f"probe {i}{tag}: output differs{_difference(image, expected)}", seconds
    return None, seconds


def _choose(trials: tuple[Trial, ...], n_probes: int, min_gain: float,
            what: str = "probes") -> tuple[Form, tuple[Trial, ...], str]:
    """(chosen form, trials, reason): the fastest identical candidate if fast enough."""
    ref, others = trials[0], trials[1:]
    ok = [t for t in others if t.identical and t.seconds > 0]
    if not ok:
        why = "; ".join(f"{t.form.label()}: {t.error}" for t in others)
        return REFERENCE, trials, f"numpy: no other form is identical ({why})"
    fastest = min(ok, key=lambda t: t.seconds)
    gain = ref.seconds / fastest.seconds
    tried = "; tried " + ", ".join(
        f"{t.form.label()} {ref.seconds / t.seconds:.2f}x" if t.identical and t.seconds > 0
        else f"{t.form.label()} slower" if (t.error or "").endswith(_PRUNED)
        else f"{t.form.label()} not identical" for t in others)
    if gain >= 1.0 + min_gain:
        return (fastest.form, trials,
                f"{fastest.form.label()}: identical on {n_probes} {what}, {gain:.1f}x faster{tried}")
    return (REFERENCE, trials, f"numpy: {fastest.form.label()} is identical but {gain:.2f}x as "
                               f"fast (needs {1.0 + min_gain:.2f}x){tried}")
