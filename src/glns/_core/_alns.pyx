# The adaptive LNS loop (docs/method.md): roulette-wheel operator choice, simulated annealing,
# sigma outcome classes, lambda weight update, fitness F, synergy S, per-iteration cooling,
# restarts from the best solution when the search stalls.
#
# With only a time limit the annealing runs in epochs (glns.params.Epochs): their lengths are
# counted in iterations and do not depend on the budget, and nothing else in the loop reads the
# clock but the stop (and the local search's deadline, which can only shorten the last
# iteration). So a run with a longer time limit passes through every state of a shorter run
# with the same seed, and its best is never worse.
#
# Native operators run with the GIL released; the GIL is taken only around Python operators,
# every POLL_SECONDS to let Python handle signals (Ctrl-C stops the run with its best), and at
# the points a caller's monitor asks for (glns.monitor: callbacks and stop criteria).
# Python operators get fresh Python lists and return output that is checked (sol_load) before
# anything of it reaches the core's solutions; a failing operator scores sigma4.
import random as _py_random

import numpy as np

from glns.exceptions import InfeasibleSolutionError

from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.exc cimport PyErr_CheckSignals
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from libc.math cimport exp, log, pow, floor, INFINITY
from libc.stdint cimport uint64_t, int64_t

from glns._core._types cimport Inst, Sol
from glns._core._rng cimport rng_next, rng_uniform, rng_below
from glns._core._clock cimport now
from glns._core._instance cimport CoreInstance
from glns._core._solution cimport (
    Solution, sol_alloc, sol_free, sol_copy, sol_sync, sol_unmark, sol_same, sol_cost,
    sol_random_init, sol_to_py, sol_load, sol_clear,
)
from glns._core._operator cimport NativeOp, NativeOperator, run_destroy, run_repair
from glns._core._local_search cimport LoadPenalty
from glns._core._repair cimport blink_insertion, ORDER_RANDOM
from glns._core._kind cimport is_tour
from glns._core._windows cimport win_route_ok
from glns._core._crossover cimport route_crossover
from glns._core._settings cimport RunSettings, FixedSchedule, AutoSchedule
from glns._core._result cimport OperatorRecord, RunResult
from glns._core._trace cimport Trace, trace_init, trace_free, trace_iteration, trace_best, trace_arrays


#: seconds between two looks at pending signals (Ctrl-C) from the native loop
POLL_SECONDS = 0.02
#: why a run stopped (RunResult.stop_reason)
STOP_REASONS = ("iterations", "time_limit", "no_improvement", "target_cost", "interrupted",
                "callback")
cdef enum:
    STOP_ITERATIONS = 0
    STOP_TIME = 1
    STOP_NO_IMPROVEMENT = 2
    STOP_TARGET = 3
    STOP_INTERRUPTED = 4
    STOP_CALLBACK = 5
    STOP_NONE = -1


cdef int _poll_signals(list pending) noexcept:
    """STOP_INTERRUPTED when Python's signal handlers raised KeyboardInterrupt, STOP_CALLBACK
    when they raised anything else (kept in `pending`, raised once the loop has ended), else
    STOP_NONE."""
    try:
        PyErr_CheckSignals()
    except KeyboardInterrupt:
        return STOP_INTERRUPTED
    except BaseException as exc:
        pending.append(exc)
        return STOP_CALLBACK
    return STOP_NONE


cdef int _ask(object call, tuple args, list pending) noexcept:
    """STOP_CALLBACK when a monitor's callback asks to stop (returns True) or raises (the
    exception kept in `pending`), STOP_INTERRUPTED on Ctrl-C inside it, else STOP_NONE."""
    try:
        return STOP_CALLBACK if call(*args) else STOP_NONE
    except KeyboardInterrupt:
        return STOP_INTERRUPTED
    except BaseException as exc:
        pending.append(exc)
        return STOP_CALLBACK


class OperatorTimeout(BaseException):
    """Raised inside a Python operator that ran past its time limit.

    A BaseException so that operator code catching Exception does not swallow it.
    """


cdef inline int roulette(const double *w, int m, bint adaptive, uint64_t *rng) noexcept nogil:
    """Index i with probability w[i] / sum(w) (uniform when not adaptive). One draw."""
    cdef double u = rng_uniform(rng)
    cdef double total = 0.0, acc = 0.0
    cdef int i
    if not adaptive:
        i = <int>(u * m)
        return i if i < m else m - 1
    for i in range(m):
        total += w[i]
    if not total > 0:   # every weight is 0: choose uniformly
        i = <int>(u * m)
        return i if i < m else m - 1
    u *= total
    for i in range(m):
        acc += w[i]
        if u < acc:
            return i
    return m - 1


cdef class _OpTable:
    """C arrays describing a list of operators; a Python operator's NativeOp is all NULL."""
    cdef int m
    cdef NativeOp *native
    cdef double *weight
    cdef double *fitness
    cdef double *seconds
    cdef int64_t *calls
    cdef int64_t *failures
    cdef int64_t *outcomes   # m x 4
    cdef list ops
    cdef list last_error

    def __cinit__(self, list ops, str kind):
        self.m = len(ops)
        self.ops = ops
        self.last_error = [None] * self.m
        self.native = <NativeOp *> PyMem_Malloc(self.m * sizeof(NativeOp))
        self.weight = <double *> PyMem_Malloc(self.m * sizeof(double))
        self.fitness = <double *> PyMem_Malloc(self.m * sizeof(double))
        self.seconds = <double *> PyMem_Malloc(self.m * sizeof(double))
        self.calls = <int64_t *> PyMem_Malloc(self.m * sizeof(int64_t))
        self.failures = <int64_t *> PyMem_Malloc(self.m * sizeof(int64_t))
        self.outcomes = <int64_t *> PyMem_Malloc(4 * self.m * sizeof(int64_t))
        for i, op in enumerate(ops):
            memset(&self.native[i], 0, sizeof(NativeOp))
            if isinstance(op, NativeOperator):
                if (<NativeOperator> op).kind != kind:
                    raise ValueError(f"{op!r} used as a {kind} operator")
                self.native[i] = (<NativeOperator> op).op
            self.weight[i] = 1.0
            self.fitness[i] = 0.0
            self.seconds[i] = 0.0
            self.calls[i] = 0
            self.failures[i] = 0
            for j in range(4):
                self.outcomes[4 * i + j] = 0

    def __dealloc__(self):
        PyMem_Free(self.native)
        PyMem_Free(self.weight)
        PyMem_Free(self.fitness)
        PyMem_Free(self.seconds)
        PyMem_Free(self.calls)
        PyMem_Free(self.failures)
        PyMem_Free(self.outcomes)

    cdef OperatorRecord record(self):
        return OperatorRecord(
            calls=np.array([self.calls[i] for i in range(self.m)], dtype=np.int64),
            outcomes=np.array([[self.outcomes[4 * i + j] for j in range(4)]
                               for i in range(self.m)], dtype=np.int64).reshape(self.m, 4),
            failures=np.array([self.failures[i] for i in range(self.m)], dtype=np.int64),
            seconds=np.array([self.seconds[i] for i in range(self.m)], dtype=np.float64),
            weights=np.array([self.weight[i] for i in range(self.m)], dtype=np.float64),
            fitness=np.array([self.fitness[i] for i in range(self.m)], dtype=np.float64),
            last_error=self.last_error,
        )


cdef inline uint64_t _seed_python_rngs(uint64_t *rng):
    """Reseed `random` and NumPy's global RNG from the run's stream (one draw)."""
    cdef uint64_t s = rng_next(rng) >> 32
    _py_random.seed(s)
    np.random.seed(s)
    return s


cdef object _python_destroy(_OpTable ops, int d, Sol *cand, const Inst *inst, int k,
                            int *removed, int *n_removed, uint64_t *rng):
    """Call Python destroy operator d on cand. Returns None or an error message."""
    x = sol_to_py(cand, inst)
    _seed_python_rngs(rng)
    cdef double t0 = now()
    try:
        out = ops.ops[d].invoke(x, k)
    except (Exception, SystemExit, OperatorTimeout) as exc:
        ops.seconds[d] += now() - t0
        return f"raised {type(exc).__name__}: {exc}"
    ops.seconds[d] += now() - t0
    try:
        removed_obj, partial = out
    except Exception:
        return f"must return (removed, partial_solution), got {type(out).__name__}"
    try:
        return sol_load(cand, inst, partial, False, removed_obj, removed, n_removed)
    except Exception as exc:   # e.g. output whose iteration raises
        return f"unreadable output: {type(exc).__name__}: {exc}"



cdef object _python_repair(_OpTable ops, int r, Sol *cand, const Inst *inst,
                           const int *removed, int n_removed, uint64_t *rng, int *scratch):
    """Call Python repair operator r on the partial cand. Returns None or an error message."""
    partial = sol_to_py(cand, inst)
    removed_list = [removed[i] for i in range(n_removed)]
    _seed_python_rngs(rng)
    cdef double t0 = now()
    try:
        out = ops.ops[r].invoke(partial, removed_list)
    except (Exception, SystemExit, OperatorTimeout) as exc:
        ops.seconds[r] += now() - t0
        return f"raised {type(exc).__name__}: {exc}"
    ops.seconds[r] += now() - t0
    cdef int unused = 0
    try:
        return sol_load(cand, inst, out, True, None, scratch, &unused)
    except Exception as exc:   # e.g. output whose iteration raises
        return f"unreadable output: {type(exc).__name__}: {exc}"



cdef int _insertion_start(Sol *s, const Inst *c, uint64_t *rng) except -1 nogil:
    """The initial solution of a timed instance: every customer, in a random order, at its
    cheapest position that keeps the windows (blink insertion without blinks: the reference
    construction), since a random permutation cut into routes would break them."""
    cdef int m = c.n - c.first, i
    cdef int *nodes = <int *> malloc(max(m, 1) * sizeof(int))
    if nodes == NULL:
        with gil:
            raise MemoryError()
    try:
        for i in range(m):
            nodes[i] = c.first + i
        sol_clear(s, c)
        blink_insertion(s, c, nodes, m, ORDER_RANDOM, 0.0, 0, rng)
        s.cost = sol_cost(s, c)
    finally:
        free(nodes)
    return 0


cdef int _window_fault(const Sol *s, const Inst *c) noexcept nogil:
    """Whether a native repair's output breaks the fleet (1) or a time window (2), or 0: a check of
    the routes it wrote (Sol.changed_list), O(their nodes). The repairs and the local search
    keep the windows by construction; this guards the one gap, a destroy whose removals break
    them (a route that skips a customer can arrive later when travel times are rounded down
    and the customer takes no service time)."""
    cdef int i, r
    if c.fleet > 0 and s.n_routes > c.fleet:
        return 1
    for i in range(s.n_changed):
        r = s.changed_list[i]
        if s.length[r] > 0 and not win_route_ok(s, c, r):
            return 2
    return 0


cdef inline int _back_to_best(Sol *cur, Sol *cand, const Sol *best, const Inst *c) except -1 nogil:
    """A restart or a new epoch: the current solution (and its twin, the candidate) become the
    best one."""
    sol_copy(cur, best, c)
    sol_copy(cand, cur, c)
    sol_unmark(cur)
    return 0


cdef int _new_start(Sol *cur, Sol *cand, const Sol *first, bint given, const Inst *c,
                    uint64_t *rng) except -1 nogil:
    """An independent start (glns.params.Epochs.starts): the caller's initial solution again,
    or a new one drawn from the stream as the run's own start was. Returns 1 when a start by
    insertion needs more routes than the fleet (the run goes on from where it is)."""
    if given:
        sol_copy(cur, first, c)
    elif c.timed:
        _insertion_start(cand, c, rng)
        if c.fleet > 0 and cand.n_routes > c.fleet:
            sol_copy(cand, cur, c)
            sol_unmark(cur)
            return 1
        sol_copy(cur, cand, c)
    else:
        sol_random_init(cur, c, rng)
    sol_copy(cand, cur, c)
    sol_unmark(cur)
    return 0


cdef struct Elite:
    # The best distinct ends of earlier epochs (glns.params.Epochs.elite): up to cap solutions
    Sol *sols
    double *cost
    int cap
    int n


cdef int _elite_alloc(Elite *e, int cap, const Inst *c) except -1:
    cdef int i
    e.sols = <Sol *> PyMem_Malloc(cap * sizeof(Sol))
    e.cost = <double *> PyMem_Malloc(cap * sizeof(double))
    if e.sols == NULL or e.cost == NULL:
        raise MemoryError()
    memset(e.sols, 0, cap * sizeof(Sol))
    e.cap = cap
    e.n = 0
    for i in range(cap):
        sol_alloc(&e.sols[i], c)
    return 0


cdef void _elite_free(Elite *e) noexcept:
    cdef int i
    if e.sols != NULL:
        for i in range(e.cap):
            sol_free(&e.sols[i])
    PyMem_Free(e.sols)
    PyMem_Free(e.cost)
    e.sols = NULL
    e.cost = NULL
    e.cap = e.n = 0


cdef int _elite_offer(Elite *e, const Sol *s, const Inst *c) except -1 nogil:
    """An epoch's last solution joins the pool: while there is room, or in place of the worst
    when it is better; a cost already in the pool counts as the same solution (kept once)."""
    cdef int i, worst = 0
    for i in range(e.n):
        if e.cost[i] == s.cost:
            return 0
    if e.n < e.cap:
        sol_copy(&e.sols[e.n], s, c)
        e.cost[e.n] = s.cost
        e.n += 1
        return 0
    for i in range(1, e.n):
        if e.cost[i] > e.cost[worst]:
            worst = i
    if s.cost < e.cost[worst]:
        sol_copy(&e.sols[worst], s, c)
        e.cost[worst] = s.cost
    return 0


cdef const Sol *_elite_pick(const Elite *e, const Sol *best, uint64_t *rng) noexcept nogil:
    """The next epoch's start: one of the pool's solutions or the best, drawn uniformly."""
    cdef int j = <int> rng_below(rng, e.n + 1)
    return best if j == e.n else &e.sols[j]


cdef enum:
    # Children tried at each epoch start with Epochs.crossover
    _CROSSOVER_TRIES = 20

#: children tried at each epoch start with Epochs.crossover (the twin, glns.reference, reads it)
CROSSOVER_TRIES = _CROSSOVER_TRIES


cdef bint _crossover_start(Sol *cur, Sol *cand, Sol *child, const Sol *best, const Elite *e,
                           const Inst *c, int level, double deadline,
                           uint64_t *rng) except -1 nogil:
    """The next epoch's start with Epochs.crossover: the cheapest of _CROSSOVER_TRIES children
    of the best and a pool member drawn uniformly (_crossover.route_crossover) when it costs
    less than the best, else the best. A draw of a member that costs the same as the best, a
    child that needs more routes than the fleet and one that breaks a window (travel times
    that break the triangle inequality) count as tries. Returns whether a child won. The pool
    is not empty."""
    cdef int j, t, k
    cdef bint won = False
    cdef bint ok
    cdef double bar = best.cost
    for t in range(_CROSSOVER_TRIES):
        j = rng_below(rng, e.n)
        if e.cost[j] == best.cost or route_crossover(child, best, &e.sols[j], c, level, deadline, rng):
            continue
        ok = True
        if c.timed:
            for k in range(child.n_routes):
                if not win_route_ok(child, c, child.order[k]):
                    ok = False
                    break
        if ok and child.cost < bar:
            sol_copy(cur, child, c)
            bar = child.cost
            won = True
    if not won:
        _back_to_best(cur, cand, best, c)
        return False
    sol_copy(cand, cur, c)
    sol_unmark(cur)
    return True


cdef int64_t _total_demand(const Inst *c) noexcept nogil:
    cdef int64_t total = 0
    cdef int v
    for v in range(c.first, c.n):
        total += c.demand[v]
    return total


cdef class _Run:
    """Solutions and buffers of one run, freed together."""
    cdef Sol cur, cand, best
    cdef Sol first      # the caller's initial solution, kept for independent starts
    cdef Elite elite    # the ends of earlier epochs (glns.params.Epochs.elite); empty unless asked for
    cdef Sol child      # a crossover's child (glns.params.Epochs.crossover); allocated only for it
    cdef int *removed
    cdef int *scratch
    cdef Trace trace

    def __cinit__(self, CoreInstance inst):
        sol_alloc(&self.cur, &inst.c)
        sol_alloc(&self.cand, &inst.c)
        sol_alloc(&self.best, &inst.c)
        sol_alloc(&self.first, &inst.c)
        self.removed = <int *> PyMem_Malloc(max(inst.n, 1) * sizeof(int))
        self.scratch = <int *> PyMem_Malloc(max(inst.n, 1) * sizeof(int))

    def __dealloc__(self):
        sol_free(&self.cur)
        sol_free(&self.cand)
        sol_free(&self.best)
        sol_free(&self.first)
        PyMem_Free(self.removed)
        PyMem_Free(self.scratch)
        trace_free(&self.trace)
        _elite_free(&self.elite)
        sol_free(&self.child)


cdef enum:
    # From this many cities on, a tour's reference construction is granular: each city goes
    # to its cheapest position next to one of its REFERENCE_NEIGHBOURS nearest cities (the
    # full scan is O(n^2): 4.6 s at 30,000 cities).
    REFERENCE_TOUR_NODES = 400
    REFERENCE_NEIGHBOURS = 20

#: (n0, g) of the reference construction of large tours (the twin, glns.reference, reads it)
REFERENCE_GRANULAR = (REFERENCE_TOUR_NODES, REFERENCE_NEIGHBOURS)


cdef double greedy_reference_cost(CoreInstance inst, uint64_t seed) except? -1:
    """Cost of greedy insertion of all nodes in random order: the cost scale of the instance.

    It is blink insertion in a random order without blinks (the same choices as
    greedy_insertion after the same shuffle); on a tour of REFERENCE_TOUR_NODES cities or more
    each city is tried only next to its REFERENCE_NEIGHBOURS nearest."""
    cdef Solution sol = Solution(inst)
    cdef uint64_t state = seed
    cdef int m = inst.n - inst.c.first
    cdef int g = REFERENCE_NEIGHBOURS if (is_tour(&inst.c) and m >= REFERENCE_TOUR_NODES) else 0
    cdef int *nodes = <int *> PyMem_Malloc(max(m, 1) * sizeof(int))
    cdef int i
    try:
        for i in range(m):
            nodes[i] = inst.c.first + i
        sol_clear(&sol.s, &inst.c)
        blink_insertion(&sol.s, &inst.c, nodes, m, ORDER_RANDOM, 0.0, g, &state)
        return sol_cost(&sol.s, &inst.c)
    finally:
        PyMem_Free(nodes)


def reference_cost(CoreInstance inst not None, uint64_t seed=0) -> float:
    """Cost of a random-order greedy-insertion construction (used to scale temperatures)."""
    return greedy_reference_cost(inst, seed)


# Tests turn this on (check_sync) to compare, after every sol_sync of a run, the candidate with
# the current solution in full: a write to a route without its sol_mark shows as a mismatch.
cdef bint _check_sync = False


def check_sync(bint on) -> None:
    """Tests: make every following run check each sol_sync in full; a run that finds a
    mismatch stops at that iteration and raises AssertionError."""
    global _check_sync
    _check_sync = on


def run_alns(CoreInstance inst not None, list destroy_ops, list repair_ops,
             RunSettings settings not None, uint64_t seed, initial=None,
             object monitor=None) -> RunResult:
    """Run the adaptive LNS loop with `settings` (see glns.solve): native operators bound by
    glns.operators (NativeOperator), Python ones anything with invoke(). Returns a RunResult.

    monitor (glns.monitor.Monitor, optional): `every` (call iteration(...) every that many
    iterations; 0: never), `target` (stop once the best cost is at most it), `wants_best`
    (call best(solution, cost, iteration, seconds) on every new best), `wants_restart` (call
    restart(iteration, seconds, best cost, restarts)), `wants_tick` (call tick(iteration,
    seconds, best cost, current cost, restarts) every POLL_SECONDS); a call that returns True
    stops the run.
    Ctrl-C (a KeyboardInterrupt from Python's handler, looked for every POLL_SECONDS and around
    Python operators) stops it too; RunResult.stop_reason says why it stopped.
    """
    if not destroy_ops or not repair_ops:
        raise ValueError("at least one destroy and one repair operator are required")
    cdef _OpTable D = _OpTable(destroy_ops, "destroy")
    cdef _OpTable R = _OpTable(repair_ops, "repair")
    cdef _Run run = _Run(inst)
    cdef const Inst *c = &inst.c
    cdef uint64_t rng = seed
    cdef int nd = D.m, nr = R.m

    cdef int64_t max_iter = settings.max_iterations
    cdef double time_limit = settings.max_seconds
    cdef int64_t max_no_improve = settings.max_no_improvement
    cdef int k_min = settings.k_min, k_max = settings.k_max
    cdef double lam = settings.decay
    cdef double sig[4]
    for j in range(4):
        sig[j] = settings.sigma[j]
    cdef bint adaptive = settings.adaptive

    cdef double t_start = now()
    # the time limit reaches into an iteration: the local search stops at it (_local_search)
    cdef double deadline = t_start + time_limit if time_limit > 0 else 0.0
    cdef double T, T0, T_end, alpha
    cdef bint time_schedule = False, iteration_schedule = False, epoch_schedule = False
    cdef int64_t epoch_len = 0, epoch_end = 0
    cdef int starts_left = 0
    cdef bint given = initial is not None
    cdef bint crossover = False     # epochs begin from crossovers (Epochs.crossover)
    # Initial solution (docs/method.md), or a warm start given by the caller.
    cdef int unused = 0
    if initial is None and c.timed:
        _insertion_start(&run.cur, c, &rng)
        if c.fleet > 0 and run.cur.n_routes > c.fleet:
            raise InfeasibleSolutionError(
                f"the start built by insertion needs {run.cur.n_routes} routes, more than the "
                f"fleet of {c.fleet} vehicles: give an initial_solution within the fleet")
    elif initial is None:
        sol_random_init(&run.cur, c, &rng)
    else:
        err = sol_load(&run.cur, c, initial, True, None, run.scratch, &unused)
        if err is not None:
            raise InfeasibleSolutionError(f"initial solution is invalid: {err}")
    sol_copy(&run.best, &run.cur, c)
    trace_init(&run.trace, settings.trace_limit)
    trace_best(&run.trace, 0, now() - t_start, run.best.cost)
    # From here on the candidate and the current solution are twins: each iteration's
    # candidate starts as a sol_sync of the current one (O(changed routes), not O(n)).
    sol_copy(&run.cand, &run.cur, c)
    sol_unmark(&run.cur)
    cdef bint check = _check_sync
    cdef int64_t sync_mismatches = 0

    cdef FixedSchedule fixed
    cdef AutoSchedule auto
    if isinstance(settings.temperature, FixedSchedule):
        fixed = settings.temperature
        T0 = fixed.t0
        alpha = fixed.alpha
        T_end = 0.0
    else:
        # Scale-aware: accept a candidate `worse` (relative) above the reference cost with
        # probability `accept` at the start; cool geometrically to end_ratio * T0 at the budget.
        auto = settings.temperature
        scale = greedy_reference_cost(inst, seed ^ <uint64_t>0x5DEECE66D)
        T0 = -auto.worse * scale / log(auto.accept)
        T_end = T0 * auto.end_ratio
        if max_iter > 0:
            alpha = pow(auto.end_ratio, 1.0 / max_iter) if T0 > 0 else 1.0
            iteration_schedule = True
        elif ((time_limit > 0 or max_no_improve < 0) and settings.epoch_iterations > 0):
            # epochs of iterations that do not depend on the budget (module comment); also
            # when nothing but a target cost or the caller's monitor stops the run
            epoch_len = settings.epoch_iterations
            epoch_end = epoch_len
            alpha = pow(auto.end_ratio, 1.0 / epoch_len) if T0 > 0 else 1.0
            epoch_schedule = True
            starts_left = settings.epoch_starts - 1
            if given and starts_left > 0:
                sol_copy(&run.first, &run.cur, c)
            if settings.epoch_elite > 1:
                _elite_alloc(&run.elite, settings.epoch_elite, c)
                crossover = settings.epoch_crossover > 0 and not is_tour(c)
                if crossover:
                    sol_alloc(&run.child, c)
        else:
            alpha = 1.0
            time_schedule = time_limit > 0
    T = T0
    # the time schedule runs from T_a at t_a (T0 at 0, or a restart's temperature and time)
    cdef double T_a = T0, t_a = 0.0

    # Restarts (glns.params.Restart): after stall_iters iterations (an iteration budget) or
    # stall_seconds (a time budget only) without a new best since the last one or the last
    # restart, the current solution becomes the best one, at restart_ratio * T0.
    cdef double restart_ratio = settings.restart_temperature
    cdef int64_t stall_iters = -1
    cdef double stall_seconds = -1.0
    if settings.restart_stall > 0 and not epoch_schedule:
        if max_iter > 0:
            stall_iters = max(1, <int64_t>(settings.restart_stall * max_iter))
        elif time_limit > 0:
            stall_seconds = settings.restart_stall * time_limit
    cdef int64_t since_anchor = 0, restarts = 0
    cdef double t_anchor = 0.0

    # Penalised loads (_local_search.pyx): the weight starts at the cost per unit of demand
    cdef LoadPenalty pen
    memset(&pen, 0, sizeof(LoadPenalty))
    pen.target = settings.load_penalty
    if pen.target > 0 and c.capacitated:
        pen.weight = max(run.cur.cost, 1e-9) / max(_total_demand(c), 1)
        pen.low = pen.weight * 1e-3
        pen.high = pen.weight * 1e3

    cdef int64_t it = 0, since_best = 0
    cdef int stop = STOP_NONE
    cdef list pending = []
    cdef double poll_seconds = POLL_SECONDS
    cdef double next_poll = t_start + poll_seconds
    cdef int64_t every = monitor.every if monitor is not None else 0
    cdef double target = monitor.target if monitor is not None else -INFINITY
    cdef bint want_best = monitor is not None and monitor.wants_best
    cdef bint want_restart = monitor is not None and monitor.wants_restart
    cdef bint want_tick = monitor is not None and monitor.wants_tick
    cdef int d, r, sigma, k, n_removed
    cdef double t_iter, elapsed, f_new, t_op
    cdef Sol tmp
    cdef bint ok, repair_called
    synergy = np.zeros((nd, nr), dtype=np.float64)
    cdef double[:, ::1] S = synergy

    with nogil:
        while True:
            t_iter = now()
            elapsed = t_iter - t_start
            if max_iter >= 0 and it >= max_iter:
                stop = STOP_ITERATIONS
                break
            if time_limit > 0 and elapsed >= time_limit:
                stop = STOP_TIME
                break
            if max_no_improve >= 0 and since_best >= max_no_improve:
                stop = STOP_NO_IMPROVEMENT
                break
            if run.best.cost <= target:
                stop = STOP_TARGET
                break
            if t_iter >= next_poll:
                next_poll = t_iter + poll_seconds
                with gil:
                    stop = _poll_signals(pending)
                    if stop == STOP_NONE and want_tick:
                        stop = _ask(monitor.tick, (it, elapsed, run.best.cost, run.cur.cost,
                                                   restarts), pending)
                if stop != STOP_NONE:
                    break
            if every > 0 and it % every == 0 and it > 0:
                with gil:
                    stop = _ask(monitor.iteration, (it, elapsed, run.best.cost, run.cur.cost,
                                                    restarts), pending)
                if stop != STOP_NONE:
                    break
            if ((stall_iters > 0 and since_anchor >= stall_iters)
                    or (stall_seconds > 0 and elapsed - t_anchor >= stall_seconds)):
                _back_to_best(&run.cur, &run.cand, &run.best, c)
                restarts += 1
                since_anchor = 0
                t_anchor = elapsed
                T = T0 * restart_ratio
                T_a = T
                t_a = elapsed
                if iteration_schedule and T > 0:
                    alpha = pow(T_end / T, 1.0 / (max_iter - it))
                if want_restart:
                    with gil:
                        stop = _ask(monitor.restart, (it, elapsed, run.best.cost, restarts), pending)
                    if stop != STOP_NONE:
                        break
            if epoch_schedule and it >= epoch_end and starts_left > 0:
                # an independent start: as long as the first epoch, from a new start at T0
                starts_left -= 1
                if run.elite.cap > 0:
                    _elite_offer(&run.elite, &run.cur, c)
                _new_start(&run.cur, &run.cand, &run.first, given, c, &rng)
                restarts += 1
                epoch_end = it + epoch_len
                T = T0
                if want_restart:
                    with gil:
                        stop = _ask(monitor.restart, (it, elapsed, run.best.cost, restarts), pending)
                    if stop != STOP_NONE:
                        break
            elif epoch_schedule and it >= epoch_end:
                # the next epoch: from the best solution (or one drawn from the best and the
                # elite of earlier epochs' ends, or a crossover of the best and one of them),
                # cooling from epoch_temperature * T0
                if run.elite.cap > 0:
                    _elite_offer(&run.elite, &run.cur, c)
                if crossover:
                    if _crossover_start(&run.cur, &run.cand, &run.child, &run.best, &run.elite, c,
                                        settings.epoch_crossover, deadline, &rng):
                        # the child costs less than the best: a new best before the epoch's
                        # first iteration
                        sol_copy(&run.best, &run.cur, c)
                        since_best = 0
                        trace_best(&run.trace, it, now() - t_start, run.best.cost)
                        if want_best:
                            with gil:
                                stop = _ask(monitor.best, (sol_to_py(&run.best, c), run.best.cost,
                                                           it, now() - t_start), pending)
                            if stop != STOP_NONE:
                                break
                elif run.elite.cap > 0:
                    _back_to_best(&run.cur, &run.cand, _elite_pick(&run.elite, &run.best, &rng), c)
                else:
                    _back_to_best(&run.cur, &run.cand, &run.best, c)
                restarts += 1
                epoch_len = <int64_t>min(epoch_len * settings.epoch_growth, 4.0e18)   # no overflow
                epoch_end = it + epoch_len
                T = T0 * settings.epoch_temperature
                alpha = pow(T_end / T, 1.0 / epoch_len) if T > 0 else 1.0
                if want_restart:
                    with gil:
                        stop = _ask(monitor.restart, (it, elapsed, run.best.cost, restarts), pending)
                    if stop != STOP_NONE:
                        break
            if time_schedule:
                T = T_a * pow(T_end / T_a, (elapsed - t_a) / (time_limit - t_a)) if T_a > 0 else 0.0

            d = roulette(D.weight, nd, adaptive, &rng)
            r = roulette(R.weight, nr, adaptive, &rng)
            k = k_min + rng_below(&rng, k_max - k_min + 1) if k_max > k_min else k_min
            sol_sync(&run.cand, &run.cur, c)
            if check and not sol_same(&run.cand, &run.cur, c):
                sync_mismatches += 1
                break       # before the wrong candidate corrupts anything
            ok = True
            repair_called = False
            n_removed = 0
            if D.native[d].destroy != NULL:
                t_op = now()
                run_destroy(&D.native[d], &run.cand, c, k, run.removed, &n_removed, &rng)
                D.seconds[d] += now() - t_op
            else:
                with gil:
                    try:
                        err = _python_destroy(D, d, &run.cand, c, k, run.removed, &n_removed, &rng)
                    except KeyboardInterrupt:
                        stop = STOP_INTERRUPTED     # the iteration is dropped, not scored
                        err = None
                    if err is not None:
                        ok = False
                        D.failures[d] += 1
                        D.last_error[d] = err
                if stop != STOP_NONE:
                    break
            if ok:
                repair_called = True
                if R.native[r].repair != NULL:
                    t_op = now()
                    if run_repair(&R.native[r], &run.cand, c, run.removed, n_removed, &rng,
                                  deadline, &pen):
                        ok = False      # left overloaded: dropped like a rejected candidate
                    R.seconds[r] += now() - t_op
                    if c.timed and _window_fault(&run.cand, c):
                        ok = False
                        R.failures[r] += 1
                        with gil:
                            R.last_error[r] = ("more routes than the fleet has vehicles"
                                               if _window_fault(&run.cand, c) == 1
                                               else "a route breaks a time window")
                else:
                    with gil:
                        try:
                            err = _python_repair(R, r, &run.cand, c, run.removed, n_removed, &rng,
                                                 run.scratch)
                        except KeyboardInterrupt:
                            stop = STOP_INTERRUPTED
                            err = None
                        if err is not None:
                            ok = False
                            R.failures[r] += 1
                            R.last_error[r] = err
                    if stop != STOP_NONE:
                        break
            D.calls[d] += 1
            if repair_called:
                R.calls[r] += 1

            if not ok:
                sigma = 3
            else:
                f_new = run.cand.cost
                if f_new < run.best.cost:
                    sigma = 0
                elif f_new < run.cur.cost:
                    sigma = 1
                elif T > 0 and rng_uniform(&rng) < exp(-(f_new - run.cur.cost) / T):
                    sigma = 2
                else:
                    sigma = 3
                if sigma <= 2:
                    tmp = run.cur
                    run.cur = run.cand
                    run.cand = tmp
                if sigma == 0:
                    sol_copy(&run.best, &run.cur, c)

            D.weight[d] = lam * D.weight[d] + (1.0 - lam) * sig[sigma]
            D.fitness[d] += sig[sigma]
            D.outcomes[4 * d + sigma] += 1
            if repair_called:
                R.weight[r] = lam * R.weight[r] + (1.0 - lam) * sig[sigma]
                R.fitness[r] += sig[sigma]
                R.outcomes[4 * r + sigma] += 1
                S[d, r] += sig[sigma]
            if sigma == 0:
                since_best = 0
                since_anchor = 0
                t_anchor = elapsed
            else:
                since_best += 1
                since_anchor += 1
            if not time_schedule:
                T *= alpha
            it += 1
            t_op = now()
            trace_iteration(&run.trace, it, run.best.cost, run.cur.cost, t_op - t_iter, t_op - t_start)
            if sigma == 0:
                trace_best(&run.trace, it, t_op - t_start, run.best.cost)
            if sigma == 0 and want_best:
                with gil:
                    stop = _ask(monitor.best, (sol_to_py(&run.best, c), run.best.cost, it,
                                               now() - t_start), pending)
                if stop != STOP_NONE:
                    break

    total = now() - t_start
    if sync_mismatches:
        raise AssertionError(f"sol_sync left the candidate unlike the current solution "
                             f"at iteration {it}")
    if pending:
        raise pending[0]
    return RunResult(
        best=sol_to_py(&run.best, c), best_cost=run.best.cost, iterations=it, runtime=total,
        destroy=D.record(), repair=R.record(), **trace_arrays(&run.trace),
        synergy=synergy, initial_temperature=T0, restarts=restarts,
        stop_reason=STOP_REASONS[stop] if stop != STOP_NONE else "iterations",
        load_penalty=(None if pen.searches == 0 else
                      {"weight": pen.weight, "searches": pen.searches,
                       "feasible": pen.first_feasible, "repaired": pen.repaired,
                       "dropped": pen.lost}),
    )
