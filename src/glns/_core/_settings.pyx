# RunSettings: what the loop (_alns.run_alns) needs to know, as typed attributes. Every
# setting is a required keyword, so a misspelled or forgotten one is a TypeError here rather
# than a silent default inside the loop. Values are validated in Python before they get here
# (glns.params, glns.solve); this module only refuses what would break the loop itself.


cdef class FixedSchedule:
    """Simulated annealing from T = t0, multiplied by alpha after every iteration."""

    def __init__(self, *, double t0, double alpha):
        self.t0 = t0
        self.alpha = alpha

    def __repr__(self) -> str:
        return f"FixedSchedule(t0={self.t0!r}, alpha={self.alpha!r})"


cdef class AutoSchedule:
    """Scale-aware annealing: a candidate `worse` (relative) above a greedy construction's cost
    is accepted with probability `accept` at the start; cools geometrically to `end_ratio`
    times the start temperature at the end of the budget (see glns.params.AutoTemperature)."""

    def __init__(self, *, double worse, double accept, double end_ratio):
        self.worse = worse
        self.accept = accept
        self.end_ratio = end_ratio

    def __repr__(self) -> str:
        return f"AutoSchedule(worse={self.worse!r}, accept={self.accept!r}, end_ratio={self.end_ratio!r})"


cdef class RunSettings:
    """The settings of one run: destroy range, weight update, scores, temperature schedule and
    stop budgets (None: not used; at least one is required unless `open_ended`: then the run's
    monitor, a target cost or Ctrl-C stops it). See glns.params.SolveParams."""

    def __init__(self, *, int k_min, int k_max, double decay, scores, temperature, bint adaptive,
                 iterations, time_limit, no_improvement, double restart_stall=0.0,
                 double restart_temperature=0.0, int64_t epoch_iterations=0, double epoch_growth=1.0,
                 double epoch_temperature=0.0, int epoch_starts=1, int epoch_elite=1, int epoch_crossover=0, bint open_ended=False, int64_t trace_limit=-1,
                 double load_penalty=0.0):
        if k_min < 1 or k_max < k_min:
            raise ValueError(f"invalid destroy range {k_min}..{k_max}")
        scores = tuple(float(s) for s in scores)
        if len(scores) != 4:
            raise ValueError(f"scores must be 4 numbers, got {len(scores)}")
        if not isinstance(temperature, (FixedSchedule, AutoSchedule)):
            raise TypeError(f"temperature must be FixedSchedule or AutoSchedule, got {type(temperature).__name__}")
        if iterations is None and time_limit is None and no_improvement is None and not open_ended:
            raise ValueError("no stopping criterion: give iterations, time_limit or no_improvement")
        if (iterations is not None and iterations < 0) or (
                no_improvement is not None and no_improvement < 0):
            raise ValueError(f"iterations and no_improvement must be >= 0, got {iterations}, {no_improvement}")
        if time_limit is not None and not time_limit > 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
        self.k_min = k_min
        self.k_max = k_max
        self.decay = decay
        for i in range(4):
            self.sigma[i] = scores[i]
        self.adaptive = adaptive
        self.temperature = temperature
        self.max_iterations = -1 if iterations is None else iterations
        self.max_seconds = -1.0 if time_limit is None else time_limit
        self.max_no_improvement = -1 if no_improvement is None else no_improvement
        if restart_stall > 1 or restart_temperature < 0:
            raise ValueError(f"invalid restart ({restart_stall}, {restart_temperature})")
        self.restart_stall = restart_stall
        self.restart_temperature = restart_temperature
        if (epoch_iterations < 0 or not epoch_growth >= 1 or epoch_temperature < 0
                or epoch_starts < 1 or epoch_elite < 1 or not 0 <= epoch_crossover <= 4
                or (epoch_crossover > 0 and epoch_elite < 2)):
            raise ValueError(f"invalid epochs ({epoch_iterations}, {epoch_growth}, "
                             f"{epoch_temperature}, {epoch_starts}, {epoch_elite}, {epoch_crossover})")
        self.epoch_iterations = epoch_iterations
        self.epoch_growth = epoch_growth
        self.epoch_temperature = epoch_temperature
        self.epoch_starts = epoch_starts
        self.epoch_elite = epoch_elite
        self.epoch_crossover = epoch_crossover
        if trace_limit < -1 or 0 < trace_limit < 2:
            raise ValueError(f"trace_limit must be -1 (every iteration), 0 (nothing) or >= 2, got {trace_limit}")
        self.trace_limit = trace_limit
        if not 0 <= load_penalty < 1:
            raise ValueError(f"load_penalty must be in [0, 1), got {load_penalty}")
        self.load_penalty = load_penalty

    @property
    def scores(self) -> tuple:
        """(sigma1, sigma2, sigma3, sigma4): new best, better, accepted, rejected or failed."""
        return tuple(self.sigma[i] for i in range(4))

    @property
    def iterations(self):
        return None if self.max_iterations < 0 else self.max_iterations

    @property
    def time_limit(self):
        return None if self.max_seconds < 0 else self.max_seconds

    @property
    def no_improvement(self):
        return None if self.max_no_improvement < 0 else self.max_no_improvement

    def __repr__(self) -> str:
        return (f"RunSettings(k_min={self.k_min}, k_max={self.k_max}, decay={self.decay!r}, "
                f"scores={self.scores!r}, temperature={self.temperature!r}, "
                f"adaptive={bool(self.adaptive)}, iterations={self.iterations!r}, "
                f"time_limit={self.time_limit!r}, no_improvement={self.no_improvement!r}, "
                f"restart_stall={self.restart_stall!r}, restart_temperature={self.restart_temperature!r}, "
                f"epoch_iterations={self.epoch_iterations!r}, epoch_growth={self.epoch_growth!r}, "
                f"epoch_temperature={self.epoch_temperature!r}, epoch_starts={self.epoch_starts!r}, "
                f"epoch_elite={self.epoch_elite!r}, epoch_crossover={self.epoch_crossover!r})")
