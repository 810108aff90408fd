# Shared C vocabulary of the core: problem kinds, the instance view and the solution layout.
# Declarations only; the functions that work on these live in _instance/_solution, and the
# kind codes are compared only in _kind.pxd (which derives the facts below from them).
from libc.stdint cimport int64_t, uint64_t

cdef enum:
    # Columns of Inst.near: the local search's candidates (and granular insertion's up to there)
    NEAR_COLUMNS = 20

cdef enum:
    KIND_TSP = 0
    KIND_CVRP = 1
    KIND_OVRP = 2
    KIND_VRPTW = 3

cdef struct Window:
    # A node's time window and service together, 32 bytes aligned to 32 (half a cache line):
    # a window check reads all of one node's, and three arrays cost three lines per node.
    double ready        # earliest start of service
    double due          # latest start of service
    double service      # duration of the service
    double leave        # ready + service: the earliest departure (the same float)

cdef struct Times:
    # The time data of a routed node of a timed solution that the checks read (see Sol.times).
    double leave        # earliest departure: the earliest start of service plus the service
    double late         # latest start of service

cdef struct Inst:
    int kind            # KIND_TSP / KIND_CVRP / KIND_OVRP / KIND_VRPTW (read it only in _kind.pxd)
    # facts of the kind, set by _kind.kind_init (names as the glns.problems class attributes)
    bint has_depot      # routes leave node 0 (VRP); False: the solution is one tour (TSP)
    bint closed_routes  # a route ends back at its start (TSP, CVRP; not OVRP)
    bint capacitated    # routes carry demands within `capacity` (VRP)
    int first           # first node that must be routed (1 with a depot, else 0)
    bint timed          # routes keep time windows (VRPTW; see _windows.pxd)
    int n               # number of nodes (TSP: cities; VRP: depot + customers)
    const double *dist  # n*n row-major distance matrix, or NULL: distances from `xy`
    const double *xy    # n x 2 coordinates when `dist` is NULL (read through _distance.dist)
    int rounding        # on-demand distances are rounded: _distance.ROUND_*, with the flag
                        # _distance.DEPOT_FEE when they add depot_fee
    double depot_fee    # added to every arc from or to the depot: half the fixed cost per route
                        # (a closed route has two such arcs). A dense `dist` holds it already;
                        # on-demand distances add it (_distance.dist). Never part of a travel time.
    const int64_t *demand  # n demands (all zero for TSP)
    int64_t capacity    # vehicle capacity (0 when not capacitated)
    int max_route_len   # most nodes one route can hold (capacity-bound for VRP)
    bint symmetric      # dist[a, b] == dist[b, a] for all a, b (segment reversal is free)
    double insert_floor # no insertion of a node between two others costs less than this,
                        # arc(x, v) + arc(v, y) - arc(x, y) >= insert_floor (0 on a metric,
                        # a little below with rounded distances, -inf when unknown); a bound
                        # that lets SWAP* skip pairs without changing what it finds
    int n_neigh         # columns of `neigh`
    const int *neigh    # n x n_neigh: for each node the nearest routable nodes (never itself
                        # or the depot), nearest first, ties by node id
    int n_near          # min(NEAR_COLUMNS, n_neigh)
    const int *near     # n x n_near: the candidates of the local search and of granular
                        # insertion: the first n_near columns of neigh, or on a tour from
                        # coordinates the quadrant candidates (CoreInstance, quadrant=True)
    const double *near_d  # n x n_near: dist(v, near[v][c]), stored once (the same floats)
    # time windows (timed only; else NULL / 0): service at node v starts in [win[v].ready,
    # win[v].due] and lasts win[v].service; the depot's window is the horizon (leave no earlier
    # than win[0].ready, be back no later than win[0].due). Travel time a -> b is dur[a*n + b],
    # or dist when dur is NULL.
    const Window *win
    const double *dur
    double time_eps     # tolerance of time comparisons (float sums of decimal times)
    int fleet           # most routes a solution may have (0: unlimited)

cdef struct Sol:
    int n_routes        # routes in use (TSP: always 1)
    int route_slots     # allocated route slots
    # order[k]: the slot of the k-th route (k < n_routes). Slots increase along the order, so
    # comparing two routes' slots compares their places in it; the slots not listed are free
    # (empty rows). Dropping an empty route only shortens this list (sol_drop_empty).
    int *order
    # A route in the order may be empty, so sol_drop_empty has work: set by sol_set_length
    # whenever a route is left with 0 nodes (an opened route included), cleared by
    # sol_drop_empty (which otherwise costs O(1)).
    bint may_have_empty
    int stride          # longest possible route; row length of `nodes`
    int *nodes          # the route in slot r occupies nodes[r*stride : r*stride + length[r]]
    int *length         # nodes per route
    int64_t *load       # demand per route
    int *route_of       # route of each node, -1 when unrouted (and for the depot)
    int *pos_of         # position of each node inside its route; on a tour possibly stale
                        # by up to `drift` places: read it through _solution.sol_pos
    double cost         # cost as last computed by sol_cost
    # The cost is summed per block of COST_BLOCK consecutive node ids (see sol_cost): part[b]
    # is block b's sum, valid unless stale[b]; whatever changes a node's incoming arc (or
    # whether its route ends after it) marks the node's block stale (sol_touch).
    int n_blocks
    double *part
    char *stale
    # own[v]: the cost node v owns (its incoming arc, and a closed route's way back when v is
    # last), valid when own_ok[v]; sol_touch clears own_ok, so re-summing a stale block
    # recomputes only the arcs that changed.
    double *own
    char *own_ok
    # Routes whose row, length or load changed since the solution was last made equal to its
    # twin (sol_copy / sol_sync): changed[r] per route slot, and the marked routes in
    # changed_list[0 : n_changed]. sol_sync then copies only those (see sol_mark).
    char *changed
    int *changed_list
    int n_changed
    # A tour defers the position updates of long shifts (sol_insert, sol_remove and the
    # destroys' compaction move up to n nodes by a few places): every routed node's true index
    # differs from pos_of by at most `drift`, and pos_of is exact below index `exact_below`.
    # sol_pos finds the true index in that window; sol_fix_positions makes all exact again.
    int drift
    int exact_below
    int lazy_shift      # shifts of more nodes than this are deferred (INT_MAX: none; VRP)
    # Time data of a timed instance (NULL otherwise; _windows.pyx): times[v].leave is the
    # earliest departure from routed node v given the nodes before it (its earliest start of
    # service plus the service), times[v].late the latest start that keeps the nodes after it
    # (and the return) within their windows. A route's entries are valid unless tstale[r]:
    # sol_mark sets it on every write, win_refresh recomputes.
    Times *times
    char *tstale        # per route slot
    double *troom       # per route slot: the most time between two consecutive customers a, b
                        # of the route, late[b] - (early[a] + service[a]) (-inf: fewer than
                        # two); what a customer put between them needs for its service and its
                        # travel (_route_bounds.route_untimely)
