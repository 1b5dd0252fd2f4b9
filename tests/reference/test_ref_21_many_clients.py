"""Reference scenario 21: many equal clients (drm_sched's ``many_clients``: 2, 3, 7, 13 and 31).

Each client loops "submit 4 jobs of 1 ms (31 clients: 2), wait for the last, go again" for
1 s / n worth of cycles, every client in the normal class, two packets in the hardware queue,
``priority_quantum`` with a 2 ms quantum. drm reports the spread of progress between the fastest
and the slowest client (``avg_max_min_delta``, in percent x 100).

The bound: round robin gives every ready client one turn in every n turns, and a turn ends at
its quantum or when the client's cycle ends; a client never gets a second cycle's worth ahead of
another before the other has had its turn, so at every instant the completed cycles of any two
clients differ by at most one. As progress is cycles done / cycles planned, the spread stays at
or below 100 / cycles planned (percent) - one cycle.
"""

from __future__ import annotations

import pytest

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}


@pytest.mark.parametrize("n", [2, 3, 7, 13, 31])
def test_many_equal_clients_stay_within_one_cycle(n):
    job_cnt = 2 if n == 31 else 4
    cycles = -(-(1_000_000 // n) // (job_cnt * 1000))
    sc = scenario_from_dict({
        "name": f"many-clients-{n}", "duration": "5s",
        "adapter": {"cpu_cost": COSTS, "hw_queue_depth": 2,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval",
                               "preemption_interval": "50us"}]},
        "driver": {"ddi_version": "wddm2_0", "preemption_aware": True},
        "scheduler": {"policy": "priority_quantum", "quantum": "2ms"},
        "process": [{"name": f"c{i}", "priority": "normal", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": job_cnt, "work": "1ms", "interval": "0us", "sync": True,
            "count": cycles}}]} for i in range(n)],
    }, "<ref21>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    done = {}
    for ctx in system.contexts:
        stops = sorted(e["t"] for e in trace.of("QueuePacketStop")
                       if e["context"] == ctx.handle and e["status"] == "Completed")
        assert len(stops) == cycles * job_cnt  # every client finishes
        done[ctx.handle] = stops[job_cnt - 1::job_cnt]  # the end of each cycle
    end = max(t[-1] for t in done.values())
    spreads = []
    for t in sorted({x for v in done.values() for x in v} | set(range(0, end, 10 * MS))):
        progress = [sum(1 for x in v if x <= t) for v in done.values()]
        spreads.append(max(progress) - min(progress))
    # At every cycle end and every 10 ms: no two clients more than one cycle apart.
    assert max(spreads) <= 1
    # drm's metric, percent x 100: (max - min) progress, at most one cycle of the plan.
    assert max(spreads) * 10_000 // cycles <= 10_000 // cycles
    # Equal shares of the GPU: Jain's index over the n clients is 1 to within one job.
    (fair,) = result.summary["fairness"]
    assert len(fair["contexts"]) == n and fair["jain"] >= 0.999
