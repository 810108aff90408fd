# Nodes ranked by a double key: smallest key first, equal keys by ascending node id, a total
# order, so a ranking never depends on qsort's (unstable) handling of ties.

ctypedef struct Keyed:
    double key
    int node


cdef inline bint keyed_before(const Keyed *x, const Keyed *y) noexcept nogil:
    return x.key < y.key or (x.key == y.key and x.node < y.node)


cdef inline int keyed_cmp(const void *a, const void *b) noexcept nogil:
    """qsort comparator of Keyed entries in the order of keyed_before."""
    cdef const Keyed *x = <const Keyed *> a
    cdef const Keyed *y = <const Keyed *> b
    if x.key < y.key:
        return -1
    if x.key > y.key:
        return 1
    return x.node - y.node
