# Route bounding boxes for the repairs' pruned scans (declarations and the bound: _route_bounds.pxd).
#
# A repair call builds the boxes of the routes that can take one of its removed nodes, O(their
# nodes), and grows a box on each insertion; nothing leaves a route during a repair, so a box
# only grows and every bound stays valid for the whole call. Routes without room for the
# lightest removed node (and every route when the bounds do not apply) get no box and are
# never skipped; routes the call opens get one from their first node.
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, calloc, free

from glns._core._types cimport Inst, Sol
from glns._core._solution cimport sol_slot_end
from glns._core._distance cimport ROUND_MASK, ROUND_NINT, ROUND_TENTHS


cdef inline void _empty(RouteBounds *b, int r) noexcept nogil:
    cdef double *q = &b.box[4 * r]
    q[0] = q[1] = INFINITY
    q[2] = q[3] = -INFINITY
    b.diag[r] = b.reach[r] = 0.0


cdef int bounds_init(RouteBounds *b, const Sol *s, const Inst *inst, const int *routes,
                     int n_listed, int slots) except -1 nogil:
    """Boxes for the `n_listed` routes in `routes` and for the routes still to be opened
    (slots sol_slot_end(s) .. slots - 1). The bounds apply only to VRPs whose distances are
    computed on demand from coordinates (Euclidean, exact or rounded): a dense matrix may hold
    any distances, and small instances gain nothing."""
    cdef int r, i, t
    cdef const int *row
    b.on = inst.has_depot and inst.dist == NULL and inst.xy != NULL
    b.timed = False
    b.slots = slots
    b.boxed = NULL
    b.box = NULL
    b.diag = NULL
    b.reach = NULL
    cdef int rounding = inst.rounding & ROUND_MASK
    b.slack = 1.5 if rounding == ROUND_NINT else (0.3 if rounding == ROUND_TENTHS else 0.0)
    b.travel_slack = 0.5 if rounding == ROUND_NINT else (0.1 if rounding == ROUND_TENTHS else 0.0)
    b.timed = b.on and inst.timed and win_bounded(inst)
    if not b.on:
        return 0
    b.boxed = <char *> calloc(max(slots, 1), sizeof(char))
    b.box = <double *> malloc(4 * max(slots, 1) * sizeof(double))
    b.diag = <double *> malloc(max(slots, 1) * sizeof(double))
    b.reach = <double *> malloc(max(slots, 1) * sizeof(double))
    if b.boxed == NULL or b.box == NULL or b.diag == NULL or b.reach == NULL:
        bounds_free(b)
        with gil:
            raise MemoryError()
    for r in range(sol_slot_end(s), slots):
        _empty(b, r)
        b.boxed[r] = True
    for t in range(n_listed):
        r = routes[t]
        _empty(b, r)
        b.boxed[r] = True
        row = &s.nodes[r * s.stride]
        for i in range(s.length[r]):
            _grow(b, inst, r, row[i])
        if s.length[r] > 0:
            _refresh(b, inst, r)
    return 0


cdef void bounds_free(RouteBounds *b) noexcept nogil:
    free(b.boxed)
    free(b.box)
    free(b.diag)
    free(b.reach)
    b.boxed = NULL
    b.box = NULL
    b.diag = NULL
    b.reach = NULL
    b.on = False
    b.timed = False

