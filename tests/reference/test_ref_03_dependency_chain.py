"""Reference scenario 3: a cross-context dependency chain.

100 packets of 1 ms dealt round robin over 4 contexts (each in its own process), each packet
waiting for the one before it through a shared monitored fence (the chain workload: packet k waits
until the fence reaches k and its buffer ends with the GPU's write of k + 1; the OS holds the
context behind the wait, D3DKMTWaitForSynchronizationObjectFromGpu). Everything is submitted at
once. Pass: the packets complete in strict global order, the chain never deadlocks, and the
makespan is the sum of the durations plus the sum of the 99 wake-up latencies. A wake-up is what the
model charges between the GPU's fence write and the next packet's submission: the interrupt (ISR),
the DPC that sees the new value and releases the waiting context, and DxgkDdiSubmitCommandVirtual.
"""

from __future__ import annotations

import pytest

from reference.refsys import MS
from wddm2util import COSTS, ZERO, adapter, chain_processes, run, scenario, stops

MEMBERS, PACKETS = 4, 100


@pytest.mark.parametrize("cost", [ZERO, COSTS], ids=["zero_cost", "default_cost"])
def test_strict_order_no_deadlock_makespan_is_work_plus_wake_ups(cost):
    sc = scenario(adapter("va", cost), chain_processes(MEMBERS, PACKETS // MEMBERS), fence=[{"name": "f"}])
    system, result, events = run(sc)
    assert result.bugcheck is None and result.summary["violations"] == []
    # No deadlock: every packet completed, and the fence holds the last packet's value.
    done = stops(events, system)
    assert len(done) == PACKETS and [c.completed for c in system.contexts] == [PACKETS // MEMBERS] * MEMBERS
    assert system.adapter.wddm2.fences.read(system.fences["f"]) == PACKETS
    # Strict global order: packet k (0-based) is member k % 4's (k // 4 + 1)-th, on the GPU and out.
    member = {c.handle: i for i, c in enumerate(system.contexts)}
    order = [(member[e["context"]], e["seq"]) for e in done]
    assert order == [(k % MEMBERS, k // MEMBERS + 1) for k in range(PACKETS)]
    gpu = [e for e in events if e["event"] in ("DmaPacketStart", "DmaPacketStop") and e["kind"] == "render"]
    assert [(e["event"], member[e["context"]], e["seq"]) for e in gpu] == [
        (ev, k % MEMBERS, k // MEMBERS + 1) for k in range(PACKETS) for ev in ("DmaPacketStart", "DmaPacketStop")]
    # makespan (first start to last GPU completion) = sum of durations + 99 wake-ups.
    wake = cost["isr"] + cost["dpc"] + cost["submit"]
    starts = [e["t"] for e in gpu if e["event"] == "DmaPacketStart"]
    assert [b - a for a, b in zip(starts, starts[1:])] == [MS + wake] * (PACKETS - 1)
    assert gpu[-1]["t"] - starts[0] == PACKETS * MS + (PACKETS - 1) * wake
    # The model reports the wake-ups it charged; their sum closes the makespan.
    reported = result.summary["wddm2"]["fence_wake_latency"]
    assert (reported["count"], reported["min_ns"], reported["max_ns"]) == (PACKETS - 1, wake, wake)
    assert gpu[-1]["t"] - starts[0] == sum(PACKETS * [MS]) + reported["total_ns"]
