# The catalog of native operators: one declaration per operator, and entry points that run
# one operator by name on a Python solution (for tests and the plain-Python twins).
#
# A declaration is three things side by side: the operator's parameter struct (one double per
# parameter, fields named and ordered as its declared parameters, checked at import), an
# adapter with the uniform signature of _operator.pxd that reads that struct and calls the
# implementation (_destroy.pyx, _repair.pyx), and one declare_destroy/declare_repair entry:
# name, parameters (ranges, defaults, docs), problems and contract. The Python registry
# (glns.operators.NATIVE_OPERATORS), the loop's dispatch and the registry-derived tests all
# come from these entries; docs/dev/adding-a-native-operator.md is the checklist.
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.stdint cimport uint64_t

from glns._core._types cimport Inst, Sol
from glns._core._instance cimport CoreInstance
from glns._core._solution cimport Solution
from glns._core._operator cimport (Declaration, NativeOperator, destroy_adapter, repair_adapter,
                                   run_destroy, run_repair)
from glns._core._destroy cimport (random_removal, worst_removal, string_removal, related_removal,
                                  route_removal, segment_removal, radial_removal)
from glns._core._repair cimport greedy_insertion, blink_insertion, regret_insertion

from glns._core._operator import Param, declare_destroy, declare_repair
from glns.exceptions import OperatorError

cdef list _catalog = []
VRP = frozenset({"cvrp", "ovrp", "vrptw"})


# --- destroy operators ------------------------------------------------------------------------

cdef int _random_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil:
    return random_removal(s, inst, k, removed, n_removed, rng)

_catalog.append(declare_destroy(
    "random_removal", destroy_adapter(_random_removal), None,
    doc="k nodes drawn uniformly (paper seed)"))


cdef struct WorstRemoval:
    double randomness

cdef int _worst_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                        int *n_removed, uint64_t *rng) except -1 nogil:
    cdef const WorstRemoval *q = <const WorstRemoval *> p
    return worst_removal(s, inst, k, q.randomness, removed, n_removed, rng)

cdef WorstRemoval _worst_removal_fields     # zeroed; read for its field names
_catalog.append(declare_destroy(
    "worst_removal", destroy_adapter(_worst_removal), _worst_removal_fields,
    params=(Param("randomness", 3.0, 1.0, doc="exponent p: rank floor(y^p m) by saving; large p is greedy"),),
    doc="nodes with the largest removal saving, randomised (paper seed)"))


cdef struct StringRemoval:
    double max_string_len
    double split_rate
    double split_depth

cdef int _string_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil:
    cdef const StringRemoval *q = <const StringRemoval *> p
    return string_removal(s, inst, k, q.max_string_len, q.split_rate, q.split_depth, removed,
                          n_removed, rng)

cdef StringRemoval _string_removal_fields
_catalog.append(declare_destroy(
    "string_removal", destroy_adapter(_string_removal), _string_removal_fields,
    params=(Param("max_string_len", 10.0, 1.0, integer=True, doc="longest string cut from one route (SISR L_max)"),
            Param("split_rate", 0.5, 0.0, 1.0, doc="probability of the split-string variant (SISR alpha)"),
            Param("split_depth", 0.01, 0.0, 1.0,
                  doc="the preserved block grows while a uniform draw is >= this (SISR beta); small = long")),
    doc="SISR ruin: strings cut from routes near a random seed customer, about k nodes",
    removes="about k"))


cdef struct RelatedRemoval:
    double randomness

cdef int _related_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                          int *n_removed, uint64_t *rng) except -1 nogil:
    cdef const RelatedRemoval *q = <const RelatedRemoval *> p
    return related_removal(s, inst, k, q.randomness, removed, n_removed, rng)

cdef RelatedRemoval _related_removal_fields
_catalog.append(declare_destroy(
    "related_removal", destroy_adapter(_related_removal), _related_removal_fields,
    params=(Param("randomness", 6.0, 1.0, doc="exponent p: rank floor(y^p a) among routed neighbours; large p is greedy"),),
    doc="Shaw removal by distance: nodes near already removed ones, k nodes"))


cdef int _route_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                        int *n_removed, uint64_t *rng) except -1 nogil:
    return route_removal(s, inst, k, removed, n_removed, rng)

_catalog.append(declare_destroy(
    "route_removal", destroy_adapter(_route_removal), None,
    doc="all customers of random routes until at least k are removed (VRP only)",
    problems=VRP, removes="at least k"))


cdef struct SegmentRemoval:
    double segments

cdef int _segment_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                          int *n_removed, uint64_t *rng) except -1 nogil:
    cdef const SegmentRemoval *q = <const SegmentRemoval *> p
    return segment_removal(s, inst, k, q.segments, removed, n_removed, rng)

cdef SegmentRemoval _segment_removal_fields
_catalog.append(declare_destroy(
    "segment_removal", destroy_adapter(_segment_removal), _segment_removal_fields,
    params=(Param("segments", 1.0, 1.0, integer=True, doc="number of contiguous segments sharing the k nodes"),),
    doc="contiguous segments of k nodes in total at random positions"))


cdef struct RadialRemoval:
    double spread

cdef int _radial_removal(const void *p, Sol *s, const Inst *inst, int k, int *removed,
                         int *n_removed, uint64_t *rng) except -1 nogil:
    cdef const RadialRemoval *q = <const RadialRemoval *> p
    return radial_removal(s, inst, k, q.spread, removed, n_removed, rng)

cdef RadialRemoval _radial_removal_fields
_catalog.append(declare_destroy(
    "radial_removal", destroy_adapter(_radial_removal), _radial_removal_fields,
    params=(Param("spread", 1.0, 1.0, doc="the k - 1 others are drawn from the ceil(spread (k - 1)) nodes "
                                          "nearest the seed; 1: exactly the nearest"),),
    doc="radial ruin: a random seed node and k - 1 of the nodes nearest to it"))


# --- repair operators -------------------------------------------------------------------------

cdef int _greedy_insertion(const void *p, Sol *s, const Inst *inst, const int *removed,
                           int n_removed, uint64_t *rng) except -1 nogil:
    return greedy_insertion(s, inst, removed, n_removed)

_catalog.append(declare_repair(
    "greedy_insertion", repair_adapter(_greedy_insertion), None,
    doc="cheapest position, in removal order (paper seed)"))


cdef struct BlinkInsertion:
    double order
    double blink_rate
    double neighbours

cdef int _blink_insertion(const void *p, Sol *s, const Inst *inst, const int *removed,
                          int n_removed, uint64_t *rng) except -1 nogil:
    cdef const BlinkInsertion *q = <const BlinkInsertion *> p
    return blink_insertion(s, inst, removed, n_removed, q.order, q.blink_rate, q.neighbours, rng)

cdef BlinkInsertion _blink_insertion_fields
_catalog.append(declare_repair(
    "blink_insertion", repair_adapter(_blink_insertion), _blink_insertion_fields,
    params=(Param("order", 4, 0, 4, integer=True,
                  doc="0 random, 1 demand desc (TSP: random), 2 far from depot first, 3 close first, "
                      "4 one of 0..3 drawn per call (SISR)"),
            Param("blink_rate", 0.01, 0.0, 1.0, doc="probability of skipping each evaluated position"),
            Param("neighbours", 0, 0, integer=True,
                  doc="granular: only positions next to the node's G nearest neighbours (and a new "
                      "route); a tour city with none routed tries next to its whole neighbour list; "
                      "all positions when none of those has room (0 = always all)")),
    doc="SISR recreate: cheapest position in a sorted order, positions skipped at random"))


cdef struct RegretInsertion:
    double k
    double neighbours

cdef int _regret_insertion(const void *p, Sol *s, const Inst *inst, const int *removed,
                           int n_removed, uint64_t *rng) except -1 nogil:
    cdef const RegretInsertion *q = <const RegretInsertion *> p
    return regret_insertion(s, inst, removed, n_removed, q.k, q.neighbours, NULL)

cdef RegretInsertion _regret_insertion_fields
_catalog.append(declare_repair(
    "regret_insertion", repair_adapter(_regret_insertion), _regret_insertion_fields,
    params=(Param("k", 2, 2, 3, integer=True, doc="regret degree: sum of c_j - c_1 for j = 2..k"),
            Param("neighbours", 0, 0, integer=True,
                  doc="granular: only positions next to the node's G nearest neighbours (and a new "
                      "route); a tour city with none routed tries next to its whole neighbour list; "
                      "all positions when none of those has room (0 = always all)")),
    doc="regret-k insertion with cached per-route (VRP) / k-best (TSP) insertion costs"))


# --- the registry and entry points ------------------------------------------------------------

#: every native operator's declaration, in catalog order
NATIVE_OPERATORS = tuple(_catalog)
NATIVE_DESTROY = {d.name: d for d in NATIVE_OPERATORS if d.kind == "destroy"}
NATIVE_REPAIR = {d.name: d for d in NATIVE_OPERATORS if d.kind == "repair"}
if len(NATIVE_DESTROY) + len(NATIVE_REPAIR) != len(NATIVE_OPERATORS):
    raise ImportError("two native operators share a name")


cdef NativeOperator _bound(dict table, str kind, str name, object params):
    """`name` bound to `params`: None = the defaults, a mapping = named overrides (checked),
    a sequence = raw values in declaration order (not range checked: tests of the core's own
    checks)."""
    if name not in table:
        raise OperatorError(f"unknown native {kind} operator {name!r}; choose from {sorted(table)}")
    cdef Declaration d = table[name]
    if params is None or isinstance(params, dict):
        params = d.values(params or {})
    return d.bind(params)


cdef Solution _target(CoreInstance inst, routes, removed):
    """`routes` itself when it is a Solution of `inst`; else a new Solution loaded from it."""
    cdef Solution sol
    if isinstance(routes, Solution):
        sol = routes
        if sol.inst is not inst:
            raise ValueError("the Solution belongs to another instance")
        return sol
    sol = Solution(inst)
    sol.load(routes, removed)
    return sol


def apply_destroy(str name, CoreInstance inst not None, routes, int k, uint64_t seed,
                  params=None):
    """Run one native destroy operator on a copy of `routes` (for tests and twins), or in place
    on `routes` when it is a core Solution of `inst`.

    Returns (removed, partial, rng_state_after).
    """
    cdef NativeOperator op = _bound(NATIVE_DESTROY, "destroy", name, params)
    cdef Solution sol = _target(inst, routes, None)
    cdef uint64_t state = seed
    cdef int n_removed = 0
    cdef int *buf = <int *> PyMem_Malloc(max(inst.n, 1) * sizeof(int))
    try:
        run_destroy(&op.op, &sol.s, &inst.c, k, buf, &n_removed, &state)
        removed = [buf[i] for i in range(n_removed)]
    finally:
        PyMem_Free(buf)
    return removed, sol.routes(), state


def apply_repair(str name, CoreInstance inst not None, partial, removed, uint64_t seed,
                 params=None):
    """Run one native repair operator on a copy of `partial` (for tests and twins), or in place
    on `partial` when it is a core Solution of `inst`. Returns (complete, rng_state_after)."""
    cdef NativeOperator op = _bound(NATIVE_REPAIR, "repair", name, params)
    cdef Solution sol = _target(inst, partial, list(removed))
    cdef uint64_t state = seed
    cdef int n = len(removed)
    cdef int *buf = <int *> PyMem_Malloc(max(n, 1) * sizeof(int))
    try:
        for i in range(n):
            buf[i] = removed[i]
        run_repair(&op.op, &sol.s, &inst.c, buf, n, &state, 0.0, NULL)
    finally:
        PyMem_Free(buf)
    return sol.routes(), state
