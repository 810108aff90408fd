"""Parameters of the adaptive LNS loop (docs/method.md) and their presets."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

from glns._core._settings import AutoSchedule, FixedSchedule, RunSettings
from glns.ablation import ablated
from glns.checks import check_count
from glns.problems.renumber import RENUMBER_FROM
from glns.problems.space_filling import INITIAL_SETTINGS

__all__ = ["FixedTemperature", "AutoTemperature", "Restart", "Epochs", "LargeTour", "SolveParams",
           "SIGMA_PAPER", "SIGMA_FLAT", "SIGMA_AGGRESSIVE"]

SIGMA_PAPER = (1.5, 1.2, 0.8, 0.1)
#: a tour (TSP) counts as large from this many cities on: the default repairs turn granular
#: there (glns.solve.LARGE_TOUR_NEIGHBOURS) and LargeTour's rules apply
LARGE_TOUR_CITIES = 400
SIGMA_FLAT = (1.0, 1.0, 1.0, 0.1)
SIGMA_AGGRESSIVE = (10.0, 5.0, 2.0, 0.0)
#: SolveParams(load_penalty="auto"): penalised loads, with this share, on instances of fewer
#: than SMALL_BELOW customers, and on larger ones whose routes hold fewer than
#: SHORT_ROUTES_BELOW customers on average (Problem.customers_per_route). On larger instances
#: with long routes a penalised search makes many more moves: runs kept 13-19 % of their
#: iterations (set X, 459-783 customers, at most 30 removals). Tuned on the CVRPLIB set-X files at T/10
#: (docs/dev/history.md, "Penalised loads").
AUTO_LOAD_PENALTY = 0.3
SHORT_ROUTES_BELOW = 8.0
SMALL_BELOW = 400
#: values of SolveParams.views and SolveParams.compile
VIEW_SETTINGS = ("auto", "numpy", "python")
COMPILE_SETTINGS = ("auto", "wait", "cached", "off")


def small_or_short_routes(customers_per_route: float | None, n_customers: int) -> bool:
    """A capacitated instance of fewer than ``SMALL_BELOW`` customers, or whose routes hold
    fewer than ``SHORT_ROUTES_BELOW`` customers on average: where ``load_penalty="auto"``
    penalises loads and the default repairs of a CVRP or OVRP search with SWAP*
    (glns.solve.SWAP_STAR_REPAIR).

    Parameters
    ----------
    customers_per_route : float or None
        The instance's ``Problem.customers_per_route`` (None: no capacity).
    n_customers : int
        The instance's customers.

    Returns
    -------
    bool
        False for an instance without capacity.
    """
    return customers_per_route is not None and (n_customers < SMALL_BELOW
                                                or short_routes(customers_per_route))


def short_routes(customers_per_route: float | None) -> bool:
    """Whether a capacitated instance's routes hold fewer than ``SHORT_ROUTES_BELOW``
    customers on average (False without capacity).

    Parameters
    ----------
    customers_per_route : float or None
        The instance's ``Problem.customers_per_route`` (None: no capacity).

    Returns
    -------
    bool
    """
    return customers_per_route is not None and customers_per_route < SHORT_ROUTES_BELOW


@dataclass(frozen=True)
class FixedTemperature:
    """Geometric cooling from a fixed start temperature (the paper's schedule).

    The temperature T starts at `t0` and is multiplied by `alpha` after every iteration,
    whatever the instance's size or costs.

    Parameters
    ----------
    t0 : float, default 100.0
        The start temperature (the paper: 100); finite and >= 0.
    alpha : float, default 0.97
        The cooling factor applied after every iteration (the paper: 0.97); in (0, 1].

    Raises
    ------
    ValueError
        When `t0` or `alpha` is out of range.
    """

    t0: float = 100.0
    alpha: float = 0.97

    def __post_init__(self) -> None:
        if not (self.t0 >= 0 and math.isfinite(self.t0)):
            raise ValueError(f"t0 must be finite and >= 0, got {self.t0}")
        if not 0 < self.alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1], got {self.alpha}")

    def to_core(self, n_customers: int) -> FixedSchedule:
        """The core's typed schedule (the same at every size).

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance; unused, as the schedule does not depend
            on the size.

        Returns
        -------
        FixedSchedule
            The core's schedule with this `t0` and `alpha`.
        """
        return FixedSchedule(t0=self.t0, alpha=self.alpha)


@dataclass(frozen=True)
class AutoTemperature:
    """Scale-aware simulated annealing (the default temperature schedule).

    The start temperature accepts a candidate `worse` (a fraction, e.g. 0.01 = 1 %) above the
    cost of a greedy construction with probability `accept`; it cools geometrically to
    `end_ratio` times that at the end of the budget (iterations, or wall time when only a time
    limit is given). On an instance of n > `reference_nodes` customers the fraction is of the
    cost's share of `reference_nodes` customers (cost x reference_nodes / n): one iteration
    changes a few dozen nodes whatever n is, so the temperature follows the cost per node, not
    the size. Measured on X-n1001 and Leuven1: 2.1 % -> 0.4 % and 4.1 % -> 0.4 % above the
    best known at T/100.

    Parameters
    ----------
    worse : float, default 0.01
        How much worse than the greedy construction's cost (a fraction, > 0) a candidate
        may be to be accepted with probability `accept` at the start.
    accept : float, default 0.5
        The probability of accepting such a candidate at the start; in (0, 1).
    end_ratio : float, default 0.01
        The end temperature as a fraction of the start temperature; in (0, 1].
    reference_nodes : int or None, default 50
        On larger instances `worse` is a fraction of the cost's share of this many customers
        (a positive integer). None: of the whole cost at every size (the earlier rule).

    Raises
    ------
    ValueError
        When a parameter is out of range.
    """

    worse: float = 0.01
    accept: float = 0.5
    end_ratio: float = 0.01
    reference_nodes: int | None = 50

    def __post_init__(self) -> None:
        if not self.worse > 0:
            raise ValueError(f"worse must be > 0, got {self.worse}")
        if not 0 < self.accept < 1:
            raise ValueError(f"accept must be in (0, 1), got {self.accept}")
        if not 0 < self.end_ratio <= 1:
            raise ValueError(f"end_ratio must be in (0, 1], got {self.end_ratio}")
        if self.reference_nodes is not None and not (int(self.reference_nodes) == self.reference_nodes >= 1):
            raise ValueError(f"reference_nodes must be a positive integer or None, got {self.reference_nodes}")

    def to_core(self, n_customers: int) -> AutoSchedule:
        """The core's typed schedule for an instance of `n_customers`.

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance; above `reference_nodes` it scales `worse`
            down by ``reference_nodes / n_customers``.

        Returns
        -------
        AutoSchedule
            The core's schedule for this size.
        """
        worse = self.worse
        if self.reference_nodes is not None and n_customers > self.reference_nodes:
            worse *= self.reference_nodes / n_customers
        return AutoSchedule(worse=worse, accept=self.accept, end_ratio=self.end_ratio)


Temperature = Union[FixedTemperature, AutoTemperature]


@dataclass(frozen=True)
class Restart:
    """Restart from the best solution when the search stalls.

    When no new best solution has been found for `stall` of the budget (a fraction of the
    iterations, or of the time limit when only a time limit is given) since the last new best
    or the last restart, the current solution becomes the best one again and the temperature
    is set to `temperature` times the start temperature, from where it cools to the schedule's
    end temperature at the end of the budget (`FixedTemperature`: it goes on cooling by alpha).
    Without an iteration or time budget (only ``no_improvement``) there are no restarts; with
    only a time limit, the `Epochs` (``SolveParams.epochs``) take their place unless
    ``epochs`` is None.

    Parameters
    ----------
    stall : float, default 0.2
        The fraction of the budget without a new best after which the run restarts; in (0, 1].
    temperature : float, default 0.1
        The temperature after a restart, as a multiple of the start temperature; finite
        and >= 0.

    Raises
    ------
    ValueError
        When `stall` or `temperature` is out of range.
    """

    stall: float = 0.2
    temperature: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.stall <= 1:
            raise ValueError(f"stall must be in (0, 1], got {self.stall}")
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be finite and >= 0, got {self.temperature}")


@dataclass(frozen=True)
class Epochs:
    """With only a time limit, anneal in epochs of iterations that do not depend on the budget.

    The first epoch runs `first` x n iterations (n customers or cities, at least 1) from the
    start temperature T0 to the schedule's end temperature; each later one is `growth` times
    longer than the one before, and starts again from the best solution at `temperature` x T0
    (by default T0 itself: a full reheat), cooling to the same end temperature. The time limit
    only says when to stop, so a run is the same, iteration for iteration, as every shorter run
    with the same seed: a longer time limit never gives a worse result (docs/method.md,
    "Epochs"). They replace the stall restarts (`Restart`) of a time-only budget, and apply to
    `AutoTemperature`; with an iteration budget the annealing is tied to the iterations as
    before.

    Parameters
    ----------
    first : float, default 20.0
        Iterations of the first epoch per customer (or city); finite and > 0.
    growth : float, default 2.0
        How many times longer each epoch is than the one before; finite and >= 1.
    temperature : float, default 1.0
        The start temperature of every later epoch, as a multiple of T0; finite and >= 0.
    starts : int, default 1
        Independent starts: the first `starts` epochs are each `first` x n iterations long and
        begin from a new start solution (drawn from the run's stream, or the given initial
        solution again) rather than from the best; the epochs after them grow from the best
        of all. Hedges against a first epoch that falls into a poor basin.
    elite : int, default 1
        With more than 1, an elite pool: the last solutions of the epochs so far, the `elite`
        best of distinct cost, are kept, and each later epoch begins from one of them or from
        the best solution, drawn uniformly from the run's stream, rather than always from the
        best. With 1, every later epoch begins from the best.
    crossover : int, default 0
        With an elite pool (``elite`` >= 2) on a VRP, 1-4: each later epoch tries 20
        route-exchange children of the best solution and a pool member drawn uniformly
        (docs/method.md, "Epochs"), whose moved customers the local search improves at this
        level (a repair's ``local_search`` setting), and begins from the cheapest when it
        costs less than the best (which it then becomes), else from the best. 0: no
        crossover. Ignored on a TSP.

    Raises
    ------
    ValueError
        When a parameter is out of range.
    """

    first: float = 20.0
    growth: float = 2.0
    temperature: float = 1.0
    starts: int = 1
    elite: int = 1
    crossover: int = 0

    def __post_init__(self) -> None:
        if not (self.first > 0 and math.isfinite(self.first)):
            raise ValueError(f"first must be a finite number > 0 (iterations per customer), got {self.first}")
        if not (self.growth >= 1 and math.isfinite(self.growth)):
            raise ValueError(f"growth must be finite and >= 1, got {self.growth}")
        if isinstance(self.starts, bool) or not isinstance(self.starts, int) or self.starts < 1:
            raise ValueError(f"starts must be an integer >= 1, got {self.starts!r}")
        if isinstance(self.elite, bool) or not isinstance(self.elite, int) or self.elite < 1:
            raise ValueError(f"elite must be an integer >= 1, got {self.elite!r}")
        if (isinstance(self.crossover, bool) or not isinstance(self.crossover, int)
                or not 0 <= self.crossover <= 4):
            raise ValueError(f"crossover must be an integer in 0..4 (a local-search level), got {self.crossover!r}")
        if self.crossover and self.elite < 2:
            raise ValueError(f"crossover needs an elite pool (elite >= 2), got elite={self.elite}")
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be finite and >= 0, got {self.temperature}")

    def first_iterations(self, n_customers: int) -> int:
        """Iterations of the first epoch on an instance of `n_customers`.

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance.

        Returns
        -------
        int
            ``first x n_customers`` iterations, rounded down, at least 1.
        """
        return max(1, int(self.first * n_customers))


@dataclass(frozen=True)
class LargeTour:
    """How the loop differs on a tour (TSP) of `cities` cities or more.

    There the default repairs insert a city next to its near neighbours only (O(1) a city,
    ``glns.solve.LARGE_TOUR_NEIGHBOURS``), so an iteration that removes more cities stays
    cheap: k is capped by `max_destroy` instead of ``SolveParams.large_destroy``'s cap (which
    is for VRPs, whose regret insertion scans every route), and an `AutoTemperature`'s
    ``worse`` is multiplied by `hotter`, as twice the cities change per iteration. Tuned on
    generated uniform TSPs at n/100 x 2.4 s (n = 1,000 to 4,000: better on 24 of 26, 0.1 % on
    average); on the 20 TSPLIB files of 1,000-6,000 cities +0.92 % -> +0.43 % above the best
    known (docs/portfolio.md).

    Parameters
    ----------
    cities : int, default 400
        The tour size from which these rules apply (a positive integer).
    max_destroy : int, default 60
        The most cities a destroy removes on such a tour (a positive integer).
    hotter : float, default 2.0
        The factor on an `AutoTemperature`'s ``worse``; finite and > 0.

    Raises
    ------
    ValueError
        When a parameter is out of range.
    """

    cities: int = LARGE_TOUR_CITIES
    max_destroy: int = 60
    hotter: float = 2.0

    def __post_init__(self) -> None:
        for name in ("cities", "max_destroy"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (self.hotter > 0 and math.isfinite(self.hotter)):
            raise ValueError(f"hotter must be finite and > 0, got {self.hotter}")


@dataclass(frozen=True)
class SolveParams:
    """Parameters of the adaptive LNS loop (docs/method.md).

    The defaults are the tuned, scale-aware settings; :meth:`paper` gives the paper's preset.
    Every parameter is checked on construction.

    Parameters
    ----------
    destroy_fraction : float or tuple of (float, float), default (0.2, 0.6)
        Epsilon: nodes removed per iteration = floor(epsilon * n) (at least 1); or a range
        (low, high): k drawn uniformly from floor(low * n) .. floor(high * n) every
        iteration. In (0, 1], with low <= high.
    max_destroy : int or None, default 60
        An upper bound on k whatever n is (None: no bound). Large instances need no more
        than a few dozen removals per iteration to make progress.
    large_destroy : tuple of (int, int) or None, default (400, 30)
        (n0, cap): from n0 customers on, and on a capacitated instance whose routes hold
        fewer than ``SHORT_ROUTES_BELOW`` (8) customers on average, k is at most cap (None: no
        such bound). Cheaper iterations win there (X-n1001 at T/100: 1.3 % -> 0.4 % above the
        best known with 30 instead of 60; generated CVRPs of 300 customers and about 7 a
        route at 36 s: 0.18 % lower costs, better on 5 of 6); below n0 with longer routes a
        larger k wins at 500 iterations (the paper tables).
    large_tour : LargeTour or None, default LargeTour()
        On a TSP of 400 cities or more, k up to 60 in place of `large_destroy`'s cap, and a
        hotter `AutoTemperature` (None: the VRP rules).
    decay : float, default 0.5
        Lambda of the weight update w <- lambda w + (1 - lambda) sigma; in [0, 1].
    scores : tuple of 4 floats, default SIGMA_PAPER
        (sigma1, sigma2, sigma3, sigma4) for new best, better, accepted, rejected/failed;
        finite and >= 0.
    temperature : FixedTemperature or AutoTemperature, default AutoTemperature()
        The annealing schedule: `FixedTemperature` (the paper's) or `AutoTemperature`
        (scale-aware).
    adaptive : bool, default True
        False selects operators uniformly (the "no adaptive weights" ablation).
    restart : Restart or None, default Restart()
        Continue from the best solution, cooler, when the run has found no new best for a
        fifth of its budget (docs/method.md, "Restarts"); None: no restarts.
    op_timeout : float or None, default 60.0
        Seconds a Python operator call may take; a call past it fails (sigma4) and the run
        goes on. The default is generous (the slowest plain-Python library operator,
        regret-2, takes about 23 s a call on n=1000 with the paper's preset; typical
        operators well under 1 s) but bounded, so an operator that never returns cannot hang
        a run. Works in any thread (docs/operator-contract.md, "Time limits"); None: no limit.
    views : {"auto", "numpy", "python"}, default "auto"
        The form of ``problem_data`` a Python operator gets (docs/fast-operators.md):
        "auto" negotiates per operator by probe calls: plain-Python tuples when every probe
        gives exactly the numpy output and it is faster, else read-only numpy arrays;
        "numpy" always gives arrays (the behaviour before views existed); "python" forces the
        tuples without probing.
    compile : {"auto", "wait", "cached", "off"}, default "auto"
        Whether Python operators with source run compiled by Cython (optional extra
        ``glns[compile]``): "auto" uses a cached compiled module at once and otherwise
        compiles in the background and switches when it is ready and proven identical on the
        probes; "wait" compiles before the run starts; "cached" uses only what is already in
        the cache; "off" never compiles. In the environment, ``GLNS_COMPILE=...`` replaces
        "auto", and ``GLNS_ACCELERATE=0`` turns views and compilation off everywhere.
    initial : {"auto", "random", "space_filling"}, default "auto"
        The start solution when :func:`glns.solve` is given none: "random" (the paper's
        random start), "space_filling" (the nodes in Hilbert-curve order through their
        coordinates, cut greedily into routes by capacity; an error without coordinates or
        with time windows), or "auto": space-filling from 5,000 customers on when the
        instance has coordinates and no time windows, else random (docs/method.md, "Initial
        solution").
    epochs : Epochs or None, default Epochs()
        With only a time limit (and `AutoTemperature`), anneal in epochs of iterations that
        do not depend on the budget, so that a longer time limit never gives a worse result
        (docs/method.md, "Epochs"); None: one annealing stretched over the time limit, with
        the stall restarts.
    renumber : int or None, default 1000
        From this many customers (or cities) on, a run whose operators are all native, on an
        instance with coordinates and no distance matrix, searches a copy numbered in
        Hilbert-curve order (faster: the nodes an iteration touches lie close together in
        the core's arrays) and maps the solution back, unless its ids are that local already
        (docs/method.md, "Node order"); None: never.
    load_penalty : float, "auto" or None, default "auto"
        Penalised loads on CVRP and OVRP (docs/method.md, "Penalised loads"): the local
        search of a native repair may overload routes at a cost per unit of excess and then
        repairs them; the weight adapts so that about this share of searches ends within the
        capacity before the repair. A share in (0, 1); "auto": 0.3 on instances of fewer
        than 400 customers, and on larger ones whose routes hold fewer than 8 customers on
        average at the fewest routes the capacity allows, else off; None: every move keeps every load within the capacity. Time
        windows and tours ignore it.

    Raises
    ------
    ValueError
        When a parameter is out of range or of the wrong kind.
    """

    destroy_fraction: float | tuple[float, float] = (0.2, 0.6)
    max_destroy: int | None = 60
    large_destroy: tuple[int, int] | None = (400, 30)
    large_tour: LargeTour | None = field(default_factory=LargeTour)
    decay: float = 0.5
    scores: tuple[float, float, float, float] = SIGMA_PAPER
    temperature: Temperature = field(default_factory=AutoTemperature)
    adaptive: bool = True
    restart: Restart | None = field(default_factory=Restart)
    op_timeout: float | None = 60.0
    views: str = "auto"
    compile: str = "auto"
    initial: str = "auto"
    epochs: Epochs | None = field(default_factory=Epochs)
    renumber: int | None = RENUMBER_FROM
    load_penalty: float | str | None = "auto"

    def __post_init__(self) -> None:
        fractions = self.destroy_fraction if isinstance(self.destroy_fraction, tuple) else (self.destroy_fraction,)
        if len(fractions) not in (1, 2) or not all(0 < f <= 1 for f in fractions) or fractions[0] > fractions[-1]:
            raise ValueError(f"destroy_fraction must be in (0, 1], got {self.destroy_fraction} "
                             "(or give a range (low, high) with 0 < low <= high <= 1)")
        if self.max_destroy is not None and (int(self.max_destroy) != self.max_destroy or self.max_destroy < 1):
            raise ValueError(f"max_destroy must be a positive integer or None, got {self.max_destroy}")
        if self.large_destroy is not None and (
                len(self.large_destroy) != 2 or any(int(x) != x or x < 1 for x in self.large_destroy)):
            raise ValueError(f"large_destroy must be (n0, cap) with positive integers or None, got {self.large_destroy}")
        if self.large_tour is not None and not isinstance(self.large_tour, LargeTour):
            raise ValueError(f"large_tour must be LargeTour or None, got {self.large_tour!r}")
        if not 0 <= self.decay <= 1:
            raise ValueError(f"decay must be in [0, 1], got {self.decay}")
        if len(self.scores) != 4 or any(not (s >= 0 and math.isfinite(s)) for s in self.scores):
            raise ValueError(f"scores must be 4 finite numbers >= 0, got {self.scores}")
        if self.op_timeout is not None and not self.op_timeout > 0:
            raise ValueError(f"op_timeout must be > 0 or None, got {self.op_timeout}")
        if self.views not in VIEW_SETTINGS:
            raise ValueError(f"views must be one of {VIEW_SETTINGS}, got {self.views!r}")
        if self.initial not in INITIAL_SETTINGS:
            raise ValueError(f"initial must be one of {INITIAL_SETTINGS}, got {self.initial!r}")
        if self.compile not in COMPILE_SETTINGS:
            raise ValueError(f"compile must be one of {COMPILE_SETTINGS}, got {self.compile!r}")
        if not isinstance(self.temperature, (FixedTemperature, AutoTemperature)):
            raise ValueError(f"temperature must be FixedTemperature or AutoTemperature, got {self.temperature!r}")
        if self.restart is not None and not isinstance(self.restart, Restart):
            raise ValueError(f"restart must be Restart or None, got {self.restart!r}")
        if self.epochs is not None and not isinstance(self.epochs, Epochs):
            raise ValueError(f"epochs must be Epochs or None, got {self.epochs!r}")
        if self.renumber is not None:
            check_count(self.renumber, "renumber (customers)")
        if self.load_penalty is not None and self.load_penalty != "auto" and not (
                isinstance(self.load_penalty, (int, float)) and 0 < self.load_penalty < 1):
            raise ValueError(f'load_penalty must be in (0, 1), "auto" or None, got {self.load_penalty!r}')

    def load_penalty_share(self, customers_per_route: float | None, n_customers: int) -> float:
        """The share of penalised searches to end feasible on an instance (0.0: off).

        Parameters
        ----------
        customers_per_route, n_customers : float or None, int
            The instance's, as :func:`small_or_short_routes` takes them.

        Returns
        -------
        float
            `load_penalty` itself, or what "auto" gives for such an instance (0.0 when
            ``GLNS_ABLATE`` names ``load_penalty``: glns.ablation).
        """
        if ablated("load_penalty"):
            return 0.0
        if self.load_penalty != "auto":
            return float(self.load_penalty or 0.0)
        return AUTO_LOAD_PENALTY if small_or_short_routes(customers_per_route, n_customers) else 0.0

    @classmethod
    def paper(cls, **changes: Any) -> "SolveParams":
        """The paper's preset.

        Epsilon 0.2, lambda 0.5, sigma (1.5, 1.2, 0.8, 0.1), T0 100, alpha 0.97, the random
        start, no restarts, no epochs, no renumbering, no penalised loads.

        Parameters
        ----------
        **changes : Any
            Parameters to set differently from the preset (as for :class:`SolveParams`).

        Returns
        -------
        SolveParams
            The preset, with `changes` applied.
        """
        base = dict(temperature=FixedTemperature(100.0, 0.97), scores=SIGMA_PAPER,
                    destroy_fraction=0.2, max_destroy=None, large_destroy=None, large_tour=None, decay=0.5,
                    adaptive=True, initial="random", restart=None, epochs=None, renumber=None,
                    load_penalty=None)
        base.update(changes)
        return cls(**base)

    def _large_tour(self, n_customers: int, tour: bool) -> LargeTour | None:
        """The LargeTour rule when it applies to this instance, else None."""
        rule = self.large_tour
        return rule if tour and rule is not None and n_customers >= rule.cities else None

    def destroy_range(self, n_customers: int, tour: bool = False,
                      customers_per_route: float | None = None) -> tuple[int, int]:
        """How many nodes a destroy removes on an instance of `n_customers`.

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance.
        tour : bool, default False
            Whether the instance is a TSP (then `large_tour` applies).
        customers_per_route : float or None, optional
            The instance's ``Problem.customers_per_route`` (None: no capacity), for
            `large_destroy`'s rule on short routes.

        Returns
        -------
        tuple of (int, int)
            (k_min, k_max), both at least 1 and within the caps.
        """
        fractions = self.destroy_fraction if isinstance(self.destroy_fraction, tuple) else (self.destroy_fraction,) * 2
        k_lo, k_hi = (max(1, math.floor(f * n_customers)) for f in fractions)
        caps = [self.max_destroy] if self.max_destroy is not None else []
        large_tour = self._large_tour(n_customers, tour)
        if large_tour is not None:
            caps.append(large_tour.max_destroy)
        elif self.large_destroy is not None and (n_customers >= self.large_destroy[0]
                                                 or short_routes(customers_per_route)):
            caps.append(self.large_destroy[1])
        for cap in caps:
            k_lo, k_hi = min(k_lo, cap), min(k_hi, cap)
        return k_lo, k_hi

    def temperature_schedule(self, n_customers: int, tour: bool = False) -> FixedSchedule | AutoSchedule:
        """The core's temperature schedule on an instance of `n_customers`.

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance.
        tour : bool, default False
            Whether the instance is a TSP (then `large_tour` applies).

        Returns
        -------
        FixedSchedule or AutoSchedule
            The schedule of `temperature` for this instance.
        """
        schedule = self.temperature.to_core(n_customers)
        large_tour = self._large_tour(n_customers, tour)
        if large_tour is None or not isinstance(schedule, AutoSchedule):
            return schedule
        return AutoSchedule(worse=schedule.worse * large_tour.hotter, accept=schedule.accept,
                            end_ratio=schedule.end_ratio)

    def to_core(self, n_customers: int, *, tour: bool = False, iterations: int | None = None,
                time_limit: float | None = None, no_improvement: int | None = None,
                open_ended: bool = False, trace_limit: int = -1,
                customers_per_route: float | None = None) -> RunSettings:
        """The core's typed settings for an instance of `n_customers`, with the stop budgets.

        The budgets are validated by ``glns.solve.stop_settings``; None means not used, and at
        least one is needed unless `open_ended`.

        Parameters
        ----------
        n_customers : int
            Customers (or cities) of the instance.
        tour : bool, default False
            Whether the instance is a TSP (then `large_tour` applies).
        iterations : int or None, optional
            The iteration budget.
        time_limit : float or None, optional
            The time budget in seconds.
        no_improvement : int or None, optional
            Stop after this many iterations in a row without a new best.
        open_ended : bool, default False
            Something else stops the run (a target cost, a callback), so no budget is needed.
        trace_limit : int, default -1
            The most curve samples the run keeps (-1: every iteration, 0: none).
        customers_per_route : float or None, optional
            The instance's ``Problem.customers_per_route``, for ``load_penalty="auto"`` and
            `large_destroy`'s rule on short routes (None: no capacity, neither applies).

        Returns
        -------
        RunSettings
            The core's settings of one run.
        """
        k_min, k_max = self.destroy_range(n_customers, tour, customers_per_route)
        return RunSettings(k_min=k_min, k_max=k_max, decay=self.decay,
                           scores=tuple(float(s) for s in self.scores),
                           temperature=self.temperature_schedule(n_customers, tour), adaptive=self.adaptive,
                           iterations=iterations, time_limit=time_limit,
                           no_improvement=no_improvement,
                           restart_stall=self.restart.stall if self.restart else 0.0,
                           restart_temperature=self.restart.temperature if self.restart else 0.0,
                           epoch_iterations=self.epochs.first_iterations(n_customers) if self.epochs else 0,
                           epoch_growth=self.epochs.growth if self.epochs else 1.0,
                           epoch_temperature=self.epochs.temperature if self.epochs else 0.0,
                           epoch_starts=self.epochs.starts if self.epochs else 1,
                           epoch_elite=self.epochs.elite if self.epochs else 1,
                           epoch_crossover=self.epochs.crossover if self.epochs else 0,
                           open_ended=open_ended, trace_limit=trace_limit,
                           load_penalty=self.load_penalty_share(customers_per_route, n_customers))
