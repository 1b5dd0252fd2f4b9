"""Reference scenario 2: a deep single queue.

One context submits 100 packets of 1 ms at once. They run in submission order, and the makespan
is 100 ms plus the submission overhead the model charges on the critical path: none in the
zero-overhead setting (exactly 100 ms), and with CPU costs exactly the costs that cannot overlap
the GPU's work. With a hardware queue of two or more packets the OS submits the next packet while
the GPU runs the current one, so only the first submission is on the critical path; with a queue of
one, every packet after the first waits for the previous one's interrupt (ISR), its DPC and its own
DxgkDdiSubmitCommand.
"""

from __future__ import annotations

import pytest

from reference.refsys import MS, ZERO_COST, build, ddi, script

N = 100
COST = dict(ZERO_COST, render=2_000, submit=10_000, isr=1_000, dpc=3_000)


def run(cost, depth):
    system, trace = build([{"name": "app", "workload": script((0, MS, N))}], cost=cost, depth=depth)
    r = system.run()
    # The summary's makespan is the last retirement (the run itself stops at its 10 s duration).
    assert r.summary["makespan_ns"] == trace.of("QueuePacketStop")[-1]["t"]
    return system, trace


@pytest.mark.parametrize("depth", [1, 2, 8])
def test_in_order_and_exactly_100_ms_without_overhead(depth):
    system, trace = run(ZERO_COST, depth)
    stops = trace.of("QueuePacketStop")
    assert [(e["seq"], e["fence"], e["status"]) for e in stops] == [(k, k, "Completed") for k in range(1, N + 1)]
    assert [e["fence"] for e in trace.of("DmaPacketStart")] == list(range(1, N + 1))
    assert [e["t"] for e in trace.of("DmaPacketStop")] == [k * MS for k in range(1, N + 1)]
    assert stops[-1]["t"] == N * MS  # makespan


def test_submit_overhead_is_on_the_critical_path_once_with_a_queue_of_two():
    system, trace = run(COST, 2)
    first_submit = COST["render"] + COST["submit"]  # the first buffer's render, then its submission
    assert [c["t"] for c in ddi(trace, "DxgkDdiSubmitCommand")][0] == first_submit
    assert [e["t"] for e in trace.of("DmaPacketStart")] == [first_submit + k * MS for k in range(N)]
    # makespan = 100 ms + 1 submission + the last completion's ISR
    assert trace.of("QueuePacketStop")[-1]["t"] == N * MS + first_submit + COST["isr"]
    assert [e["seq"] for e in trace.of("QueuePacketStop")] == list(range(1, N + 1))


def test_submit_overhead_is_paid_per_packet_with_a_queue_of_one():
    system, trace = run(COST, 1)
    first_submit = COST["render"] + COST["submit"]
    wake = COST["isr"] + COST["dpc"] + COST["submit"]  # interrupt, DPC, next DxgkDdiSubmitCommand
    starts = [e["t"] for e in trace.of("DmaPacketStart")]
    assert starts == [first_submit + k * (MS + wake) for k in range(N)]
    # makespan = 100 ms + the first submission + 99 x (ISR + DPC + submission) + the last ISR
    assert trace.of("QueuePacketStop")[-1]["t"] == N * MS + first_submit + (N - 1) * wake + COST["isr"]
    assert [e["seq"] for e in trace.of("QueuePacketStop")] == list(range(1, N + 1))
