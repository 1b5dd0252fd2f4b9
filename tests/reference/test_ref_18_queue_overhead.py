"""Reference scenario 18: the queue-overhead benchmark.

A blocker (a 10 ms packet) occupies the engine while 1000 packets of 1 ms queue behind it on the
same context; from the moment the blocker leaves, the ideal is 1000 ms of GPU work. The makespan
measured from the log is compared with that ideal. With a per-submission cost c (the CPU time of
DxgkDdiSubmitCommand) and a hardware queue of two or more packets, the OS submits the next packet
while the GPU runs the current one: the overhead is pipelined away and the makespan is exactly the
ideal. The run summary reports the makespan (``makespan_ns``, the instant the last packet was
retired). With a queue of one packet each submission waits for the previous completion, and the
overhead is exactly 1000 x c (ISR and DPC cost zero here).
"""

from __future__ import annotations

import pytest

from reference.refsys import MS, ZERO_COST, build, script

N, C, BLOCKER = 1000, 20_000, 10 * MS


def run(depth):
    app = {"name": "app", "workload": script((0, BLOCKER, 1), (0, MS, N))}
    system, trace = build([app], cost=dict(ZERO_COST, submit=C), depth=depth, duration="3s")
    r = system.run()
    stops = trace.of("QueuePacketStop")
    assert [e["seq"] for e in stops] == list(range(1, N + 2)) and {e["status"] for e in stops} == {"Completed"}
    blocker_done, last = stops[0]["t"], stops[-1]["t"]
    # Each packet is its GPU work: the ideal is the 1000 ms the engine was busy after the blocker.
    assert system.gpu.engines[0].busy_ns == BLOCKER + N * MS
    assert r.summary["packets_completed"] == N + 1
    # The summary reports the makespan (the last retirement), not only when the run stopped.
    assert (r.summary["makespan_ns"], r.summary["virtual_time_ns"]) == (last, 3_000 * MS)
    return blocker_done, last - blocker_done


@pytest.mark.parametrize("depth", [2, 4])
def test_a_queue_of_two_or_more_pipelines_the_submit_cost_away(depth):
    blocker_done, makespan = run(depth)
    assert blocker_done == C + BLOCKER  # only the blocker's own submission is on the critical path
    assert makespan == N * MS


def test_a_queue_of_one_pays_the_submit_cost_per_packet():
    blocker_done, makespan = run(1)
    assert blocker_done == C + BLOCKER
    assert makespan == N * MS + N * C  # 1000 ms + 1000 x 20 us = 1020 ms
