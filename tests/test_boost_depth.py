"""The starvation boost at any hardware-queue depth (issue 26).

docs/scheduling.md, "The starvation boost": a ready context that has waited 10 quanta without
running is picked ahead of higher priorities once, and once its packet runs the OS does not preempt
it for one quantum (or until it stops running). A high-class hog and a below-normal context on one
node, 8 ms packets each, quantum 2 ms (starvation after 20 ms), preemption every 100 us, no CPU
costs: with a preempting driver the low context runs exactly one quantum every 20 + 2 ms, whatever
the depth of the hardware queue. Before the fix the boost waited for a free hardware-queue slot and
the boosted packet then waited on the hardware queue behind the hog's next 8 ms buffer: the low
context ran 2 ms of every 26 ms at depth 1, of every 34 ms at depth 2 and less still at depth 4.
"""

from __future__ import annotations

import pytest

from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import ZERO, scenario_of

MS = 1_000_000


def build(depth: int, *, preemption_aware: bool = True, lo_work: str = "8ms"):
    sc = scenario_of({
        "name": "boost", "duration": "2s",
        "adapter": {"ddi_version": "wddm2_0", "preemption_aware": preemption_aware, "cpu_cost": ZERO,
                    "hw_queue_depth": depth,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval",
                               "preemption_interval": "100us"}]},
        "scheduler": {"policy": "priority_quantum", "quantum": "2ms"},
        "process": [
            {"name": "hi", "priority": "high", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "script", "packets": [{"at": 0, "work": "8ms"}] * 100}}]},
            {"name": "lo", "priority": "below_normal", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "script", "packets": [{"at": 0, "work": lo_work}] * 100}}]},
        ],
    }, "<boost>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return system, trace, result


def turns(trace, ctx):
    """``ctx``'s stretches on the GPU, (start, stop), from DmaPacketStart / DmaPacketStop."""
    out, since = [], None
    for e in trace.of("DmaPacketStart", "DmaPacketStop"):
        mine = e["context"] == ctx.handle
        if e["event"] == "DmaPacketStart":
            if mine and since is None:
                since = e["t"]
            elif not mine and since is not None:
                out.append((since, e["t"]))
                since = None
        elif mine and since is not None and e["status"] == "Preempted":
            out.append((since, e["t"]))
            since = None
    return [(a, b) for a, b in out if b > a]


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_the_boost_buys_one_quantum_every_starvation_plus_quantum_at_any_depth(depth):
    system, trace, result = build(depth)
    hi, lo = system.contexts
    hog_done = max(e["t"] for e in trace.of("DmaPacketStop") if e["context"] == hi.handle)
    # The hog's 800 ms of work, 20 ms in every 22: its last ms ends as the low context's 40th
    # turn would begin.
    assert hog_done == 40 * 22 * MS - 2 * MS
    mine = [t for t in turns(trace, lo) if t[0] < hog_done]
    # Boosted the instant it has waited 20 ms, running at once, for exactly one quantum.
    assert mine == [(20 * MS + 22 * MS * k, 22 * MS + 22 * MS * k) for k in range(39)]
    # Each boost is a preemption for the low context at the instant of its starvation (reason
    # ``starvation``), except at depth 1 when a hog packet completes at that instant (every second
    # turn: the hog's 20 ms between two turns are 8 ms packets resumed 4 ms in): the freed slot goes
    # to the low context, there is nothing to preempt. Each turn ends with the hog's preemption at
    # the quantum's end, except every fourth, where the low context's 8 ms packet completes as its
    # fourth quantum ends.
    hog_stops = {e["t"] for e in trace.of("DmaPacketStop") if e["context"] == hi.handle and e["status"] == "Completed"}
    assert [k for k, (a, _b) in enumerate(mine) if a in hog_stops] == list(range(1, 39, 2))
    reqs = [(e["t"], e["reason"], e["for"]) for e in trace.of("PreemptRequest") if e["t"] < hog_done]
    expected = []
    for k, (a, b) in enumerate(mine):
        if depth > 1 or k % 2 == 0:
            expected.append((a, "starvation", lo.handle))
        if k % 4 != 3:
            expected.append((b, "priority", hi.handle))
    assert reqs == expected
    rows = {c["context"]: c for c in result.summary["contexts"]}
    assert rows["lo/c"]["worst_wait_ns"] == 20 * MS
    assert rows["hi/c"]["worst_wait_ns"] == 2 * MS


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_a_boost_ends_early_when_the_boosted_packet_ends(depth):
    """The low context's packets are 1 ms: its boosted turn ends when its packet does (the hog's
    next packet is ready behind it), so it runs 1 ms every 21 ms, at any depth."""
    system, trace, _ = build(depth, lo_work="1ms")
    hi, lo = system.contexts
    hog_done = max(e["t"] for e in trace.of("DmaPacketStop") if e["context"] == hi.handle)
    mine = [t for t in turns(trace, lo) if t[0] < hog_done]
    assert mine == [(20 * MS + 21 * MS * k, 21 * MS + 21 * MS * k) for k in range(len(mine))]
    assert hog_done == 800 * MS + len(mine) * MS


@pytest.mark.parametrize("depth, first, period", [(1, 24, 32), (2, 24, 40), (4, 24, 56)])
def test_without_preemption_the_boost_waits_for_a_slot_and_the_packets_ahead(depth, first, period):
    """A driver that cannot preempt: the OS can boost only when a hardware-queue slot frees, and the
    boosted packet waits behind the depth - 1 hog packets already there, then runs whole (8 ms).
    The low context gets 8 ms of every ``period`` ms, its first boosted packet queued at 24 ms."""
    system, trace, _ = build(depth, preemption_aware=False)
    hi, lo = system.contexts
    hog_done = max(e["t"] for e in trace.of("DmaPacketStop") if e["context"] == hi.handle)
    mine = [t for t in turns(trace, lo) if t[0] < hog_done]
    queued = [e["t"] for e in trace.of("DmaPacketQueued") if e["context"] == lo.handle]
    assert queued[0] == first * MS
    start = first * MS + (depth - 1) * 8 * MS
    assert mine[:5] == [(start + period * MS * k, start + 8 * MS + period * MS * k) for k in range(5)]
