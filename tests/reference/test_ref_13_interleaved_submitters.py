"""Reference scenario 13: windowed interleaved submitters (drm_sched's ``interleaved_submit``).

16 clients of the normal class on one node; client i submits jobs of 100 us x (i + 1), as many as
fit in 1 s / 16 of its own work, keeping a sliding window of 8 in flight (each submission waits
for the job 8 back), within a 1 s budget. Pass: every client finishes, and no client waits longer
than the policy's bound.

The bound under ``priority_quantum`` (round robin by quantum): a waiting client is served once the
other 15 have had at most one turn each. A turn lasts at most a quantum, plus the preemption's
latency (the interval granularity, 50 us), and the node changes hands between turns at the cost
of a hand-off (at most ISR + DPC + worker submission here, or the preemption's own). So no wait
exceeds 15 x (quantum + 50 us + the longest hand-off); a client can also run out of work inside
its turn, which only shortens it.
"""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}
CLIENTS = 16


def test_windowed_interleaved_submitters_finish_within_the_wait_bound():
    procs = []
    counts = []
    for i in range(CLIENTS):
        job_us = 100 * (i + 1)
        count = (1_000_000 // CLIENTS) // job_us
        counts.append(count)
        procs.append({"name": f"w{i}", "priority": "normal", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": 1, "work": f"{job_us}us", "sync": False, "window": 8,
            "count": count}}]})
    sc = scenario_from_dict({
        "name": "interleaved", "duration": "1s",
        "adapter": {"cpu_cost": COSTS, "hw_queue_depth": 2,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval",
                               "preemption_interval": "50us"}]},
        "driver": {"ddi_version": "wddm2_0", "preemption_aware": True},
        "scheduler": {"policy": "priority_quantum", "quantum": "2ms"},
        "process": procs,
    }, "<ref13>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    rows = {r["context"]: r for r in result.summary["contexts"]}
    # Every client finishes within the budget.
    assert [rows[f"w{i}/c"]["completed"] for i in range(CLIENTS)] == counts
    # The window holds: no client ever has more than 8 packets queued and not retired.
    outstanding = {}
    most = 0
    for e in trace.of("QueuePacketStart", "QueuePacketStop"):
        k = e["context"]
        outstanding[k] = outstanding.get(k, 0) + (1 if e["event"] == "QueuePacketStart" else -1)
        most = max(most, outstanding[k])
    assert most == 8
    node = result.summary["nodes"][0]
    bound = (CLIENTS - 1) * (2 * MS + 50 * US + node["handoff_max_ns"])
    worst = max(r["worst_wait_ns"] for r in rows.values())
    assert worst <= bound
    # Exactly: every client's worst wait is the other 15 clients' turns of one quantum each and the
    # 96 us the node spent changing hands between them (ISR, DPC, submission, preemption).
    assert [rows[f"w{i}/c"]["worst_wait_ns"] for i in range(CLIENTS)] == [15 * 2 * MS + 96 * US] * CLIENTS
    # Everything retired inside the 1 s budget, and the GPU time was shared equally.
    assert max(e["t"] for e in trace.of("QueuePacketStop")) < 1000 * MS
    assert result.summary["fairness"][0]["jain"] >= 0.9999
