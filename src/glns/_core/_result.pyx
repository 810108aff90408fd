# RunResult: what run_alns returns, as typed read-only attributes (glns.solve turns it into the
# public glns.Result). Every field is a required keyword, as in RunSettings.
import numpy as np


cdef class OperatorRecord:
    """What the operators of one kind did, indexed like the operator list: calls, outcomes
    (m x 4: new best, better, accepted, rejected or failed), failures, seconds inside the
    operator, final weights, fitness (summed scores) and the last error message (or None)."""

    def __init__(self, *, calls, outcomes, failures, seconds, weights, fitness, last_error):
        self.calls = np.asarray(calls, dtype=np.int64)
        self.outcomes = np.asarray(outcomes, dtype=np.int64).reshape(len(self.calls), 4)
        self.failures = np.asarray(failures, dtype=np.int64)
        self.seconds = np.asarray(seconds, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.fitness = np.asarray(fitness, dtype=np.float64)
        self.last_error = tuple(last_error)

    def __repr__(self) -> str:
        return f"OperatorRecord(calls={self.calls.tolist()!r}, failures={self.failures.tolist()!r})"


cdef class RunResult:
    """Best solution and its cost, iterations and wall time, the cost curves and the time of
    each iteration, per-operator records, the synergy matrix S[d, r], the start temperature and
    the number of restarts."""

    def __init__(self, *, best, double best_cost, int64_t iterations, double runtime, best_curve,
                 current_curve, iteration_seconds, OperatorRecord destroy not None,
                 OperatorRecord repair not None, synergy, double initial_temperature,
                 int64_t restarts=0, str stop_reason="iterations", curve_iterations=None,
                 curve_seconds=None, improvements=None, load_penalty=None):
        self.best = best
        self.best_cost = best_cost
        self.iterations = iterations
        self.runtime = runtime
        self.best_curve = best_curve
        self.current_curve = current_curve
        self.iteration_seconds = iteration_seconds
        self.destroy = destroy
        self.repair = repair
        self.synergy = synergy
        self.initial_temperature = initial_temperature
        self.restarts = restarts
        self.stop_reason = stop_reason
        n = len(best_curve)
        self.curve_iterations = (np.arange(1, n + 1, dtype=np.int64) if curve_iterations is None
                                 else np.asarray(curve_iterations, dtype=np.int64))
        self.curve_seconds = (np.cumsum(iteration_seconds) if curve_seconds is None
                              else np.asarray(curve_seconds, dtype=np.float64))
        self.load_penalty = load_penalty
        self.improvements = (np.empty((0, 3)) if improvements is None
                             else np.asarray(improvements, dtype=np.float64).reshape(-1, 3))

    def __repr__(self) -> str:
        return (f"RunResult(best_cost={self.best_cost!r}, iterations={self.iterations}, "
                f"runtime={self.runtime:.3f})")
