"""Reference scenario 4: independent queues.

Four contexts, each in its own process, on the same engine. One of them is blocked: its packet
waits on a monitored fence nobody has signalled (D3DKMTWaitForSynchronizationObjectFromGpu; the OS
holds that context's later buffers, not the engine). The other three run all their work meanwhile;
everything completes, and the blocked packet runs as soon as the fence is signalled from the CPU.
Under hardware scheduling the wait is the GPU's own (a WAIT command at the head of the buffer): the
GPU's scheduler switches to the other queues while it is stalled.
"""

from __future__ import annotations

from reference.refsys import MS
from wddm2util import ZERO, adapter, scenario

from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.umd import Work

SIGNAL_AT = 200 * MS


def idle(name):
    """A process whose context the test drives through the runtime (its script packet is at 500 ms)."""
    return {"name": name, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [{"at": "500ms", "work": 0}]}}]}


def test_a_context_blocked_on_a_fence_does_not_stop_the_others_on_its_engine():
    trace = ListSink()
    system = System(scenario(adapter("va", ZERO), [idle(f"p{i}") for i in range(4)], duration="1s"), trace=trace)
    kmt, runtime = system.kmt, system.runtime
    blocked, *others = system.contexts
    fence = kmt.CreateSynchronizationObject(blocked.device, 0, ("Shared",))

    def blocked_app():
        kmt.WaitForSynchronizationObjectFromGpu(blocked, fence, 1)
        yield from runtime.submit(blocked, (Work(MS),))

    def app(ctx):
        for _ in range(25):
            yield from runtime.submit(ctx, (Work(MS),))

    def signaller():
        yield SIGNAL_AT
        kmt.SignalSynchronizationObjectFromCpu([fence], [1])

    system.sim.process(blocked_app())
    for ctx in others:
        system.sim.process(app(ctx))
    system.sim.process(signaller())
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    events = trace.events
    # The test's packets (the scripts' own empty packets come at 500 ms).
    render = [e for e in events if e["event"] in ("DmaPacketStart", "QueuePacketStop") and e.get("kind") == "render"
              and e["t"] < 500 * MS]
    first = min(e["t"] for e in render if e["event"] == "DmaPacketStart")
    done = {}
    for e in render:
        if e["event"] == "QueuePacketStop":
            assert e["status"] == "Completed"
            done.setdefault(e["context"], []).append(e["t"])
    # The three others ran their 75 packets back to back on the engine from the first start.
    assert sorted(t for c in others for t in done[c.handle]) == [first + k * MS for k in range(1, 76)]
    assert [len(done[c.handle]) for c in others] == [25, 25, 25]
    # The blocked packet started exactly at the signal and completed 1 ms later; everything completed.
    start = [e["t"] for e in render if e["event"] == "DmaPacketStart" and e["context"] == blocked.handle
             and e["seq"] == 1]
    assert start == [SIGNAL_AT] and done[blocked.handle][0] == SIGNAL_AT + MS
    assert all(c.completed == c.submitted for c in system.contexts)
    waits = [(e["event"], e["t"]) for e in events if e["event"] in ("FenceWait", "FenceWaitDone") and e["fence"] == fence.handle]
    assert waits == [("FenceWait", 0), ("FenceWaitDone", SIGNAL_AT)]
    # One wake-up, from the CPU's signal to the submission: no interrupt, no cost here.
    assert r.summary["wddm2"]["fence_wake_latency"] == {"count": 1, "total_ns": 0, "min_ns": 0, "mean_ns": 0.0,
                                                        "max_ns": 0}


def test_under_hardware_scheduling_a_queue_stalled_on_a_gpu_wait_does_not_stop_the_others():
    trace = ListSink()
    system = System(scenario(adapter("hw", ZERO), [idle(f"p{i}") for i in range(4)], duration="1s"), trace=trace)
    kmt, runtime = system.kmt, system.runtime
    blocked, *others = system.contexts
    fence = kmt.CreateSynchronizationObject(blocked.device, 0, ("Shared",))

    def blocked_app():
        yield from runtime.submit(blocked, (Work(MS),), wait=(fence, 1))  # a WAIT the GPU performs

    def app(ctx):
        for _ in range(25):
            yield from runtime.submit(ctx, (Work(MS),))

    def signaller():
        yield SIGNAL_AT
        kmt.SignalSynchronizationObjectFromCpu([fence], [1])

    system.sim.process(blocked_app())
    for ctx in others:
        system.sim.process(app(ctx))
    system.sim.process(signaller())
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    stops = [e for e in trace.events if e["event"] == "QueuePacketStop" and e["t"] < 500 * MS]
    assert {e["status"] for e in stops} == {"Completed"}
    theirs = sorted(e["t"] for e in stops if e["context"] in {c.handle for c in others})
    # The three others' 75 packets ran back to back while the first queue was stalled on the WAIT.
    first = theirs[0] - MS
    assert theirs == [first + k * MS for k in range(1, 76)]
    # The stalled buffer went on when the CPU signalled: its 1 ms of work after the signal.
    assert [e["t"] for e in stops if e["context"] == blocked.handle] == [SIGNAL_AT + MS]
    assert [c.completed for c in system.contexts] == [2, 26, 26, 26]  # with the scripts' own packets
    # The GPU waited, not the OS: no OS-held wait was released.
    assert r.summary["wddm2"]["fence_wake_latency"]["count"] == 0
