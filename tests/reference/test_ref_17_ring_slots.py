"""Reference scenario 17: flow control by ring slots.

The OS hands the driver at most ``hw_queue_depth`` DMA buffers per node (the slots of the
hardware queue VidSch keeps; a new one goes out only when DMA_COMPLETED frees one). With a ring of
1, then of 2 packets: the driver never has more in flight than the limit; a high-priority packet
that arrives while the ring is full is the first one dispatched when a slot frees, ahead of the
low-priority packets that were waiting before it; and everything completes (no deadlock). The
driver here cannot preempt (``preemption_aware = false``), so flow control alone decides.
"""

from __future__ import annotations

import pytest

from reference.refsys import MS, build, ddi, names, script


def in_flight_at_the_driver(trace) -> list[int]:
    """After each DxgkDdiSubmitCommand: buffers the driver holds (submitted, not yet reported by a
    DMA_COMPLETED interrupt, whose fence completes every buffer up to it)."""
    submitted, completed, seen = 0, 0, []
    for e in trace.events:
        if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommand":
            submitted = e["args"]["SubmissionFenceId"]
            seen.append(submitted - completed)
        elif e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt":
            completed = e["args"]["DmaCompleted"]["SubmissionFenceId"]
    return seen


def system_ctx(system, hcontext: int) -> int:
    """The OS handle of the context whose driver handle is ``hcontext``."""
    return next(c.handle for c in system.contexts if c.hDriver == hcontext)


@pytest.mark.parametrize("depth", [1, 2])
def test_ring_of_depth_packets_high_priority_first_when_a_slot_frees(depth):
    low = {"name": "low", "process_priority": "below_normal", "workload": script((0, MS, 6))}
    high = {"name": "high", "process_priority": "high", "workload": script((2_500_000, MS, 1))}
    system, trace = build([low, high], depth=depth, preemption=False, duration="1s")
    r = system.run()
    # The driver never holds more than the limit, and reaches it.
    flight = in_flight_at_the_driver(trace)
    assert max(flight) == depth == r.summary["nodes"][0]["max_queued"]
    # At 2.5 ms the ring is full (packet 3 runs, then depth - 1 more wait); the high packet takes
    # the first slot that frees, at 3 ms, ahead of the low packets queued since 0.
    who = names(system)
    order = [who[e["context"]] for e in trace.of("DmaPacketQueued")]
    assert order == ["low"] * (2 + depth) + ["high"] + ["low"] * (4 - depth)
    submit_t = [(c["t"], who[system_ctx(system, c["args"]["hContext"])]) for c in ddi(trace, "DxgkDdiSubmitCommand")]
    assert submit_t[2 + depth] == (3 * MS, "high")
    # It runs behind the depth - 1 packets already on the ring (no preemption).
    high_stop = [e["t"] for e in trace.of("QueuePacketStop") if who[e["context"]] == "high"]
    assert high_stop == [(3 + depth) * MS]
    # Nothing deadlocks: all 7 complete, back to back, 7 ms.
    assert [c.completed for c in system.contexts] == [6, 1]
    assert trace.of("QueuePacketStop")[-1]["t"] == 7 * MS
