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
