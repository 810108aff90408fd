# CoreInstance: owns the validated arrays of a problem and exposes them as an Inst view.
# See _instance.pyx.
from glns._core._types cimport Inst

cdef class CoreInstance:
    cdef Inst c                 # C view into the arrays below
    cdef readonly object dist   # float64 (n, n), C-contiguous, private copy; None: on demand
    cdef readonly object coords # float64 (n, 2) private copy when distances are on demand
    cdef readonly object demand # int64 (n,)
    cdef readonly object neighbours  # int32 (n, n_neigh): nearest routable nodes per node
    cdef readonly object near        # int32 (n, n_near): its first columns (Inst.near)
    cdef readonly object near_distances  # float64 (n, n_near): dist(v, near[v, c]) (Inst.near_d)
    cdef readonly object ready       # float64 (n,): time windows and service times (timed only)
    cdef readonly object due
    cdef readonly object service
    cdef object _windows             # float64: the block Inst.win points into (32-byte aligned)
    cdef readonly object durations   # float64 (n, n) travel times, or None: travel time = distance
    cdef readonly double route_cost  # fixed cost per route (Inst.depot_fee is half of it)
    cdef readonly int kind
    cdef readonly int n
    cdef readonly int n_customers  # nodes that must be routed
    cdef readonly bint symmetric
    cdef readonly double insertion_floor  # Inst.insert_floor
