# What the problem kind decides in the core, in one place.
#
# The kind codes (KIND_* in _types.pxd) are compared only here: kind_init turns a code into
# the facts stored in Inst (has_depot, closed_routes, capacitated, first), once, when the
# instance is built (_instance.pyx). Everything else in the core reads those facts, directly
# or through the inline hooks below, never the code. The facts have the names and meanings
# of the class attributes of the Python variants (glns.problems): a new variant whose
# solutions look like one of these (a tour, or depot routes, closed or open, within a
# capacity) needs only a row in kind_init; one with new cost or feasibility rules adds a fact
# to Inst and a hook here, and uses it where the rule applies.
#
# Header only (no .pyx): every hook is `inline noexcept nogil` on a `const Inst *`, so hot
# loops compile to a field read, never a call through a pointer.
from libc.stdint cimport int64_t, INT64_MAX
from glns._core._types cimport Inst, KIND_TSP, KIND_CVRP, KIND_OVRP, KIND_VRPTW
from glns._core._distance cimport dist


cdef inline int kind_init(Inst *inst, int kind) noexcept nogil:
    """Set inst.kind and the facts that follow from it; -1 (nothing set) for an unknown kind."""
    cdef bint has_depot, closed_routes, capacitated, timed = False
    if kind == KIND_TSP:
        has_depot, closed_routes, capacitated = False, True, False
    elif kind == KIND_CVRP:
        has_depot, closed_routes, capacitated = True, True, True
    elif kind == KIND_OVRP:
        has_depot, closed_routes, capacitated = True, False, True
    elif kind == KIND_VRPTW:
        has_depot, closed_routes, capacitated, timed = True, True, True, True
    else:
        return -1
    inst.kind = kind
    inst.has_depot = has_depot
    inst.closed_routes = closed_routes
    inst.capacitated = capacitated
    inst.timed = timed
    inst.first = 1 if has_depot else 0
    return 0


cdef inline bint is_tour(const Inst *inst) noexcept nogil:
    """The solution is one cycle through every node: route 0, kept even when empty, never a
    second route, positions wrapping around. Otherwise routes leave the depot (node 0, never
    stored), are opened when needed (vehicles are unlimited) and dropped when empty."""
    return not inst.has_depot


cdef inline int last_position(const Inst *inst, int length) noexcept nogil:
    """The last distinct insertion position of a route of `length` nodes: in a non-empty tour
    position `length` closes the same edge as position 0, so it is length - 1."""
    return length - 1 if (not inst.has_depot and length > 0) else length


cdef inline double close_cost(const Inst *inst, int a) noexcept nogil:
    """Cost of ending a depot route at its last node a: the arc back to the depot when routes
    are closed, nothing when they are open."""
    if inst.closed_routes:
        return dist(inst, a, 0)
    return 0.0


cdef inline bint fits(const Inst *inst, int64_t load, int v) noexcept nogil:
    """A route carrying `load` has room for node v (always, without a capacity)."""
    return not inst.capacitated or load + inst.demand[v] <= inst.capacity


cdef inline int64_t load_limit(const Inst *inst) noexcept nogil:
    """The most a route may carry (no limit without a capacity), for checks on whole loads."""
    return inst.capacity if inst.capacitated else INT64_MAX
