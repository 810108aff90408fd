"""Callbacks and stop criteria of solve_many: runs in worker processes report to the caller."""

import numpy as np
import pytest

import glns
from glns import Callbacks, datasets
from glns.batch import make_executor
from glns.executors.channel import DirectChannel, PipeChannel, STOP, is_event
from glns.sandbox.run_events import RunEvents, built_in_only, callbacks_per_run

BACKENDS = [("serial", None), ("process", 2)]


def _instances(n=3):
    return [datasets.generate_cvrp(30, 10 + i) for i in range(n)]


@pytest.mark.parametrize("backend,workers", BACKENDS)
def test_every_run_reports_its_new_bests_in_order_and_is_not_changed(backend, workers):
    instances = _instances()
    bests: dict[int, list] = {}
    starts, ends = [], []

    def per_run(i):
        return Callbacks(on_start=lambda p: starts.append((i, p.n_customers)),
                         on_best=lambda s, c, it, t: bests.setdefault(i, []).append((it, c, list(s))),
                         on_end=lambda r: ends.append((i, r.cost)))

    watched = glns.solve_many(instances, iterations=1500, seed=4, backend=backend, workers=workers,
                              callbacks=per_run)
    plain = glns.solve_many(instances, iterations=1500, seed=4, backend=backend, workers=workers)
    assert [r.cost for r in watched] == [r.cost for r in plain]
    assert [r.iterations for r in watched] == [r.iterations for r in plain] == [1500] * 3
    assert sorted(starts) == [(i, 30) for i in range(3)]
    assert sorted(ends) == [(i, r.cost) for i, r in enumerate(watched)]
    for i, r in enumerate(watched):
        seen = bests[i]
        # every improvement the run recorded (the start excluded), in order, the last one its result
        improvements = [(int(it), float(c)) for it, _, c in r.improvements[1:]]
        assert [(it, c) for it, c, _ in seen] == improvements
        assert seen[-1][2] == list(r.solution) and seen[-1][1] == pytest.approx(r.cost)


@pytest.mark.parametrize("backend,workers", BACKENDS)
def test_a_criterion_of_yours_stops_each_run(backend, workers):
    asked = []

    def after_3000(progress):
        asked.append(progress.iteration)
        return progress.iteration >= 3000

    out = glns.solve_many(_instances(2), seed=1, backend=backend, workers=workers, stop=after_3000)
    # no budget: the criterion alone decides, polled while the runs go on
    assert all(r.stop_reason == "callback" and r.iterations >= 3000 for r in out), [(r.stop_reason, r.iterations) for r in out]
    assert asked and all(isinstance(i, int) for i in asked)


def test_a_callback_stops_its_run_exactly_in_this_process():
    cb = Callbacks(on_iteration=lambda p: p.iteration >= 700, every=100)
    out = glns.solve_many(_instances(2), iterations=10**7, seed=1, backend="serial", callbacks=cb)
    assert [(r.stop_reason, r.iterations) for r in out] == [("callback", 700)] * 2


def test_a_callback_stops_its_run_in_a_worker_soon_after_and_the_pool_stays_usable():
    instances = _instances(2)
    with make_executor("process", 2) as pool:
        cb = Callbacks(on_iteration=lambda p: p.iteration >= 2000, every=500)
        out = glns.solve_many(instances, iterations=10**7, seed=1, executor=pool, callbacks=cb)
        assert all(r.stop_reason == "callback" and 2000 <= r.iterations < 10**7 for r in out)
        # a stop request that arrived after its run ended is ignored by the idle worker
        again = glns.solve_many(instances, iterations=800, seed=1, executor=pool)
    fresh = glns.solve_many(instances, iterations=800, seed=1, workers=2)
    assert [r.cost for r in again] == [r.cost for r in fresh]
    assert [r.iterations for r in again] == [800, 800]


def test_without_a_budget_callbacks_keep_glns_solves_default():
    instances = _instances(1)
    out = glns.solve_many(instances, seed=2, workers=1, callbacks=Callbacks(on_best=lambda *a: None))
    assert out[0].iterations == glns.solve(instances[0], seed=glns.rng.run_seed(2, 0)).iterations


def test_confined_workers_forward_events():
    bests = []
    out = glns.solve_many(_instances(1), iterations=500, seed=3, sandbox="auto", workers=1,
                          callbacks=Callbacks(on_best=lambda s, c, it, t: bests.append(c)))
    assert bests and bests[-1] == pytest.approx(out[0].cost)


def test_an_exception_in_a_callback_ends_the_batch():
    def boom(*args):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        glns.solve_many(_instances(2), iterations=300, workers=2, callbacks=Callbacks(on_best=boom))


def test_bad_callbacks_are_clear_errors():
    instances = _instances(1)
    with pytest.raises(TypeError, match="callbacks must be glns.Callbacks"):
        glns.solve_many(instances, iterations=10, callbacks=42)
    with pytest.raises(TypeError, match=r"callbacks\(0\) returned a str"):
        glns.solve_many(instances, iterations=10, callbacks=lambda i: "no")
    with pytest.raises(ValueError, match="'process' and 'serial' backends only"):
        glns.solve_many(instances, iterations=10, backend="ray", stop=lambda p: False)
    with pytest.raises(TypeError, match="stop criterion must be"):
        glns.solve_many(instances, iterations=10, stop=[glns.MaxIterations(5), "soon"])


def test_run_events_turn_events_back_into_calls():
    calls = []
    cb = Callbacks(on_iteration=lambda p: calls.append(("it", p.iteration)) or p.iteration > 5, every=3,
                   on_restart=lambda p: calls.append(("restart", p.restarts)),
                   on_best=lambda s, c, it, t: calls.append(("best", s, c)) or c < 1.0)
    events = RunEvents(["P0"], [cb], [lambda p: p.seconds > 2.0])
    assert events.wants(0) == (3, True, True, False, True)
    assert events(0, ("iteration", 6, 0.1, 9.0, 9.5, 0)) is True
    assert events(0, ("iteration", 3, 0.1, 9.0, 9.5, 0)) is False
    assert events(0, ("best", [0, 2, 1, 0], 0.5, 7, 0.2)) is True
    assert events(0, ("restart", 8, 0.3, 0.5, 0.6, 1)) is False
    assert events(0, ("tick", 9, 2.5, 0.5, 0.6, 1)) is True
    assert events(0, ("tick", 9, 1.5, 0.5, 0.6, 1)) is False
    assert calls == [("it", 6), ("it", 3), ("best", [0, 2, 1, 0], 0.5), ("restart", 1)]
    with pytest.raises(ValueError, match="unknown run event"):
        events(0, ("nonsense",))
    assert RunEvents(["P0"], [None], []).wants(0) is None
    assert callbacks_per_run(cb, 2) == [cb, cb]
    assert built_in_only([glns.MaxIterations(3), len]) == ([glns.MaxIterations(3)], [len])


def test_channels_carry_events_and_stop_requests():
    import multiprocessing

    parent, child = multiprocessing.Pipe()
    channel = PipeChannel(child)
    channel.send(("best", [1], 2.0, 3, 0.1))
    message = parent.recv()
    assert is_event(message) and message[1] == ("best", [1], 2.0, 3, 0.1)
    assert not is_event(("ok", None, None, 0.0, False))
    assert channel.stop_requested() is False
    parent.send(STOP)
    assert channel.stop_requested() is True and channel.stop_requested() is True
    seen = []
    direct = DirectChannel(4, lambda i, e: seen.append((i, e)) or e == "stop")
    direct.send("go")
    assert not direct.stop_requested()
    direct.send("stop")
    assert direct.stop_requested() and seen == [(4, "go"), (4, "stop")]
    np.testing.assert_equal(len(seen), 2)
