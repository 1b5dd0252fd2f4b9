"""The event kernel: time order, IRQL order at one instant, scheduling order, cancellation,
processes and named random streams."""

from hypothesis import given
from hypothesis import strategies as st

from wddmsim.sim import DEVICE, DISPATCH, PASSIVE, Simulator, StopSimulation, stream_seed


def test_same_instant_runs_device_then_dispatch_then_passive_then_fifo():
    sim = Simulator()
    log = []
    sim.at(10, log.append, "p1", PASSIVE)
    sim.at(10, log.append, "d1", DISPATCH)
    sim.at(10, log.append, "irq", DEVICE)
    sim.at(10, log.append, "p2", PASSIVE)
    sim.at(5, log.append, "early", PASSIVE)
    assert sim.run() == 10
    assert log == ["early", "irq", "d1", "p1", "p2"]


@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from([DEVICE, DISPATCH, PASSIVE])), max_size=60))
def test_order_is_time_then_irql_then_scheduling_order(items):
    sim = Simulator()
    seen = []
    for i, (t, irql) in enumerate(items):
        sim.at(t, seen.append, (t, irql, i), irql)
    sim.run()
    assert seen == sorted(seen)


def test_cancelled_timer_never_runs_and_until_stops_time():
    sim = Simulator()
    log = []
    t = sim.after(5, log.append, "x")
    sim.after(7, log.append, "y")
    sim.after(20, log.append, "late")
    t.cancel()
    assert t.cancelled and t.time == 5
    assert sim.run(until=10) == 10
    assert log == ["y"] and sim.peek() == 20


def test_processes_sleep_wait_and_return():
    sim = Simulator()
    log = []

    def child():
        yield 30
        return "done"

    def parent():
        ev = sim.event()
        sim.after(10, ev.succeed, 42)
        v = yield ev
        log.append((sim.now, v))
        r = yield sim.process(child())
        log.append((sim.now, r))

    sim.process(parent())
    sim.run()
    assert log == [(10, 42), (40, "done")]


def test_stop_simulation_ends_run():
    sim = Simulator()

    def boom():
        raise StopSimulation("stop")

    sim.after(3, boom)
    sim.after(9, lambda: None)
    try:
        sim.run()
    except StopSimulation:
        pass
    assert sim.now == 3 and sim.peek() == 9


def test_streams_are_independent_and_seeded():
    a = Simulator(seed=5)
    b = Simulator(seed=5)
    a.stream("noise").random()
    assert a.stream("jitter").random() == b.stream("jitter").random()
    assert Simulator(seed=6).stream("jitter").random() != Simulator(seed=5).stream("jitter").random()
    assert stream_seed(5, "jitter") == stream_seed(5, "jitter") != stream_seed(5, "jitter2")


def _every_vs_at(use_every: bool):
    """A periodic timer among one-shot timers at the same instants, some scheduled before it, some
    after it, some by callbacks while the run goes on: the order of everything that ran."""
    sim = Simulator()
    log = []
    sim.at(10, log.append, "before@10", DEVICE)
    if use_every:
        assert sim.every(10, 40, 10, log.append, "tick", DEVICE) == 3
    else:
        for t in range(10, 40, 10):
            sim.at(t, log.append, "tick", DEVICE)
    sim.at(20, log.append, "after@20", DEVICE)
    sim.at(15, lambda: sim.at(30, log.append, "late@30", DEVICE))
    sim.at(30, log.append, "dispatch@30", DISPATCH)
    sim.run()
    return log, sim.events_run


def test_every_runs_in_the_order_the_same_at_calls_would_give():
    log, count = _every_vs_at(True)
    assert log == ["before@10", "tick", "tick", "after@20", "tick", "late@30", "dispatch@30"]
    assert (log, count) == _every_vs_at(False)


def test_every_holds_one_timer_whatever_the_period():
    sim = Simulator()
    hits = []
    assert sim.every(0, 10**12, 1, hits.append, 1) == 10**12
    assert sim.pending == 1
    sim.run(until=4)
    assert hits == [1] * 5 and sim.pending == 1
    assert sim.every(7, 7, 1, hits.append, 2) == 0 and sim.pending == 1
